#include "moat/lists/state_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

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

tl::expected<void, std::string> rename_durably(const std::filesystem::path& from,
                                               const std::filesystem::path& to) {
    if (auto synced = sync_path(from, false); !synced) {
        return synced;
    }
    if (::rename(from.c_str(), to.c_str()) != 0) {
        return tl::unexpected(errno_text("cannot rename " + from.string() + " to", to));
    }
    return sync_path(to.parent_path(), true);
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
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.close();
        if (!out) {
            std::filesystem::remove(tmp);
            return tl::unexpected(errno_text("cannot write", tmp));
        }
    }
    auto renamed = rename_durably(tmp, path);
    if (!renamed) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
    }
    return renamed;
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

tl::expected<void, std::string> StateDir::install_copy(const std::string& key) const {
    return rename_durably(partial_path(key), copy_path(key));
}

}  // namespace moat::lists
