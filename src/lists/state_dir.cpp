#include "moat/lists/state_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "moat/core/guarded.hpp"

namespace moat::lists {
namespace {

std::string errno_text(const std::string& what, const std::filesystem::path& path) {
    return what + " " + path.string() + ": " +
           std::error_code(errno, std::generic_category()).message();
}

/// fsync of a file or directory by path; rename() is durable only once the directory is synced.
tl::expected<void, std::string> sync_path(const std::filesystem::path& path, bool directory) {
    const int fd =
        ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) {
        return tl::unexpected(errno_text("cannot open", path));
    }
    const int rc = ::fsync(fd);
    const int saved = errno;
    ::close(fd);
    if (rc != 0) {
        errno = saved;
        return tl::unexpected(errno_text("cannot sync", path));
    }
    return {};
}

/// Renames and syncs the directory, so the new name survives a power cut.
tl::expected<void, std::string> rename_synced(const std::filesystem::path& from,
                                              const std::filesystem::path& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) {
        return tl::unexpected(errno_text("cannot rename " + from.string() + " to", to));
    }
    return sync_path(to.parent_path(), true);
}

tl::expected<void, std::string> rename_durably(const std::filesystem::path& from,
                                               const std::filesystem::path& to) {
    if (auto synced = sync_path(from, false); !synced) {
        return synced;
    }
    return rename_synced(from, to);
}

/// Writes and syncs `content` to `tmp`; errors name `target`, the file the caller asked for.
/// Plain POSIX calls: errno says why (a full or read-only disk), and nothing throws.
tl::expected<void, std::string> write_synced(const std::filesystem::path& tmp,
                                             const std::filesystem::path& target,
                                             std::string_view content) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return tl::unexpected(errno_text("cannot write", target));
    }
    int error = 0;
    while (!content.empty() && error == 0) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n > 0) {
            content.remove_prefix(static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            error = n == 0 ? EIO : errno;
        }
    }
    if (error == 0 && ::fsync(fd) != 0) {
        error = errno;
    }
    if (::close(fd) != 0 && error == 0) {
        error = errno;
    }
    if (error != 0) {
        errno = error;
        return tl::unexpected(errno_text("cannot write", target));
    }
    return {};
}

/// The statuses the disk refused, by status file path; shared by every StateDir of the process
/// (they are made wherever a status is needed), guarded as the refresher's worker thread holds
/// them while the event loop reads them.
Guarded<std::map<std::string, ListStatus>>& held_statuses() {
    static Guarded<std::map<std::string, ListStatus>> held;
    return held;
}

std::uint32_t fnv1a32(std::string_view text) noexcept {
    std::uint32_t h = 2166136261U;
    for (const char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
    }
    return h;
}

}  // namespace

tl::expected<void, std::string> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view content) {
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    auto written =
        write_synced(tmp, path, content).and_then([&] { return rename_synced(tmp, path); });
    if (!written) {
        std::error_code ignored;  // a read-only disk refuses this too; the error above says why
        std::filesystem::remove(tmp, ignored);
    }
    return written;
}

tl::expected<void, std::string> StateDir::ensure() const {
    std::error_code ec;
    std::filesystem::create_directories(root_, ec);
    if (ec) {
        return tl::unexpected("cannot create the list state directory " + root_.string() + ": " +
                              ec.message());
    }
    if (::access(root_.c_str(), W_OK | X_OK) != 0) {
        return tl::unexpected(errno_text("cannot write to the list state directory", root_));
    }
    return {};
}

std::string StateDir::key_of(std::string_view name, std::string_view url) {
    std::string key;
    for (const char c : name.substr(0, 64)) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_';
        key.push_back(safe ? c : '_');
    }
    constexpr std::string_view kHex = "0123456789abcdef";
    const std::uint32_t hash = fnv1a32(url);
    key.push_back('-');
    for (int shift = 28; shift >= 0; shift -= 4) {
        key.push_back(kHex[(hash >> static_cast<unsigned>(shift)) & 0xFU]);
    }
    return key;
}

std::filesystem::path StateDir::copy_path(const std::string& key) const {
    return root_ / (key + ".list");
}

std::filesystem::path StateDir::status_path(const std::string& key) const {
    return root_ / (key + ".json");
}

std::filesystem::path StateDir::partial_path(const std::string& key) const {
    return root_ / (key + ".list.part");
}

std::optional<ListStatus> StateDir::read_status(const std::string& key) const {
    if (auto held = held_status(key)) {
        return held;
    }
    std::ifstream in(status_path(key), std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return status_from_json(text.str());
}

tl::expected<void, std::string> StateDir::write_status(const std::string& key,
                                                       const ListStatus& status) const {
    return write_file_atomically(status_path(key), to_json(status));
}

std::optional<ListStatus> StateDir::held_status(const std::string& key) const {
    return held_statuses().with(
        [path = status_path(key).string()](const auto& held) -> std::optional<ListStatus> {
            const auto it = held.find(path);
            return it == held.end() ? std::nullopt : std::optional<ListStatus>(it->second);
        });
}

void StateDir::hold_status(const std::string& key, const ListStatus& status) const {
    held_statuses().with(
        [&, path = status_path(key).string()](auto& held) { held.insert_or_assign(path, status); });
}

void StateDir::release_status(const std::string& key) const {
    held_statuses().with([path = status_path(key).string()](auto& held) { held.erase(path); });
}

tl::expected<void, std::string> StateDir::install_copy(const std::string& key) const {
    return rename_durably(partial_path(key), copy_path(key));
}

}  // namespace moat::lists
