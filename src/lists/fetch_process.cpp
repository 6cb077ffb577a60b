#include "moat/lists/fetch_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "status_json.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in a header

namespace moat::lists {
namespace {

using Json = nlohmann::json;

constexpr int kPollMs = 100;
constexpr std::chrono::seconds kSlackPerList{10};

const char* result_text(RefreshResult r) {
    switch (r) {
        case RefreshResult::updated: return "updated";
        case RefreshResult::unchanged: return "unchanged";
        case RefreshResult::failed: return "failed";
    }
    return "failed";
}

/// A one-way channel whose ends close themselves: a pipe, or a socket pair for the request,
/// whose writer sends with MSG_NOSIGNAL so a child that died first cannot raise SIGPIPE in a
/// process that did not ignore it.
class Pipe {
public:
    enum class Kind : std::uint8_t { pipe, socket };

    explicit Pipe(Kind kind) {
        std::array<int, 2> fds{-1, -1};
        const int made = kind == Kind::pipe
                             ? ::pipe2(fds.data(), O_CLOEXEC)
                             : ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data());
        if (made == 0) {
            read_ = fds[0];
            write_ = fds[1];
        }
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    [[nodiscard]] bool ok() const noexcept { return read_ >= 0; }
    [[nodiscard]] int read_end() const noexcept { return read_; }
    [[nodiscard]] int write_end() const noexcept { return write_; }
    void close_read() noexcept { close_fd(read_); }
    void close_write() noexcept { close_fd(write_); }

private:
    static void close_fd(int& fd) noexcept {
        if (fd >= 0) {
            ::close(fd);
            fd = -1;
        }
    }
    int read_ = -1;
    int write_ = -1;
};

/// Starts `exe fetch-lists` with `in` as its stdin and `out` as its stdout; -1 on failure.
pid_t spawn_fetcher(const std::filesystem::path& exe, const Pipe& in, const Pipe& out) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.read_end(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out.write_end(), STDOUT_FILENO);
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);  // no DNS sockets
    const std::string path = exe.string();
    std::string arg0 = path;
    std::string arg1 = "fetch-lists";
    std::array<char*, 3> argv{arg0.data(), arg1.data(), nullptr};
    pid_t pid = -1;
    if (::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
        pid = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

/// Sends all of `text` to the socket `fd`; false when the child went away first.
bool send_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// Reads the child's stdout to its end; kills the child on `cancel` or at `deadline`.
std::string collect(int fd, pid_t pid, const std::atomic<bool>& cancel,
                    std::chrono::steady_clock::time_point deadline, std::string& why) {
    std::string text;
    std::array<char, 4096> buf{};
    for (;;) {
        if (cancel.load(std::memory_order_relaxed) ||
            std::chrono::steady_clock::now() >= deadline) {
            why = cancel ? "abandoned (shutting down)" : "the list fetcher took too long";
            ::kill(pid, SIGKILL);
            return text;
        }
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, kPollMs) <= 0) {
            continue;
        }
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return text;
        }
        text.append(buf.data(), static_cast<std::size_t>(n));
    }
}

RefreshResult result_of(std::string_view text) {
    return text == "updated"     ? RefreshResult::updated
           : text == "unchanged" ? RefreshResult::unchanged
                                 : RefreshResult::failed;
}

/// One result line of the child: the list's key, result and status.
std::string result_line(const std::string& key, const RefreshOutcome& o) {
    const Json line{{"key", key},
                    {"result", result_text(o.result)},
                    {"saved", o.saved},
                    {"status", detail::status_document(o.status)}};
    // Invalid lines in the status are list text: any bytes must not make dump() throw.
    return line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

/// The whole result lines of the child's output, by key. A line cut short by a kill is not
/// one: that list counts as unreported.
std::map<std::string, RefreshOutcome> read_results(std::string_view text) {
    std::map<std::string, RefreshOutcome> out;
    for (std::size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n')) {
        const Json line = Json::parse(text.substr(0, nl), nullptr, false);
        text.remove_prefix(nl + 1);
        if (!line.is_object() || !line.contains("status")) {
            continue;
        }
        auto status = detail::status_from_document(line["status"]);
        if (!status) {
            continue;
        }
        RefreshOutcome o;
        o.result = result_of(line.value("result", ""));
        o.saved = line.value("saved", false);
        o.status = std::move(*status);
        out.insert_or_assign(line.value("key", ""), std::move(o));
    }
    return out;
}

/// The outcome of a list the child did not report: a failed attempt, so that the schedule backs
/// off from it, though the child could not write it down.
RefreshOutcome unreported(const StateDir& dir, const std::string& key, const ListSource& s,
                          const std::string& why) {
    RefreshOutcome o;
    o.status = dir.read_status(key).value_or(ListStatus{});
    o.status.name = s.name;
    o.status.url = s.url;
    o.status.last_error = why.empty() ? "the list fetcher did not report" : why;
    o.status.last_attempt = unix_now();
    ++o.status.failures;
    o.saved = false;
    return o;
}

std::string exit_text(int status) {
    if (WIFEXITED(status)) {
        return "the list fetcher exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return "the list fetcher was killed by signal " + std::to_string(WTERMSIG(status));
    }
    return "the list fetcher failed";
}

}  // namespace

std::string to_json(const FetchRequest& r) {
    Json sources = Json::array();
    for (const ListSource& s : r.sources) {
        sources.push_back({{"name", s.name},
                           {"url", s.url},
                           {"format", static_cast<int>(s.format)},
                           {"subdomains", s.include_subdomains},
                           {"refresh", s.refresh.count()}});
    }
    Json held = Json::object();
    for (const auto& [key, status] : r.held) {
        held[key] = detail::status_document(status);
    }
    const FetchOptions& f = r.policy.fetch;
    return Json{{"state_dir", r.state_dir},
                {"connect_timeout_ms", f.connect_timeout.count()},
                {"timeout_ms", f.timeout.count()},
                {"max_bytes", f.max_bytes},
                {"ca_file", f.ca_file},
                {"user_agent", f.user_agent},
                {"max_shrink_percent", r.policy.max_shrink_percent},
                {"sources", sources},
                {"held", held}}
        .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<FetchRequest> request_from_json(std::string_view text) {
    const Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return std::nullopt;
    }
    try {
        FetchRequest r;
        r.state_dir = doc.at("state_dir").get<std::string>();
        FetchOptions& f = r.policy.fetch;
        f.connect_timeout = std::chrono::milliseconds(doc.at("connect_timeout_ms").get<long>());
        f.timeout = std::chrono::milliseconds(doc.at("timeout_ms").get<long>());
        f.max_bytes = doc.at("max_bytes").get<std::uint64_t>();
        f.ca_file = doc.at("ca_file").get<std::string>();
        f.user_agent = doc.at("user_agent").get<std::string>();
        r.policy.max_shrink_percent = doc.at("max_shrink_percent").get<std::uint32_t>();
        for (const Json& s : doc.at("sources")) {
            const int format = s.at("format").get<int>();
            if (format < 0 || format > static_cast<int>(filter::ListFormat::regex)) {
                return std::nullopt;
            }
            r.sources.push_back({s.at("name").get<std::string>(), s.at("url").get<std::string>(),
                                 static_cast<filter::ListFormat>(format),
                                 s.at("subdomains").get<bool>(),
                                 std::chrono::seconds(s.at("refresh").get<long>())});
        }
        const Json held = doc.value("held", Json::object());  // absent from older parents
        for (const auto& [key, doc_status] : held.items()) {
            auto status = detail::status_from_document(doc_status);
            if (!status) {
                return std::nullopt;
            }
            r.held.emplace(key, std::move(*status));
        }
        return r;
    } catch (const Json::exception&) {
        return std::nullopt;
    }
}

std::vector<RefreshOutcome> refresh_in_child(const std::filesystem::path& exe,
                                             const FetchRequest& request,
                                             const std::atomic<bool>& cancel) {
    const StateDir dir(request.state_dir);
    FetchRequest sent = request;
    for (const ListSource& s : request.sources) {
        const std::string key = StateDir::key_of(s.name, s.url);
        if (auto held = dir.held_status(key)) {
            sent.held.insert_or_assign(key, std::move(*held));
        }
    }
    std::string why;
    std::string lines;
    Pipe in(Pipe::Kind::socket);
    Pipe out(Pipe::Kind::pipe);
    const pid_t pid = in.ok() && out.ok() ? spawn_fetcher(exe, in, out) : -1;
    if (pid < 0) {
        why = "cannot start the list fetcher " + exe.string();
    } else {
        in.close_read();
        out.close_write();
        const bool delivered = send_all(in.write_end(), to_json(sent));
        in.close_write();
        const auto per_list =
            request.policy.fetch.connect_timeout + request.policy.fetch.timeout + kSlackPerList;
        const auto deadline = std::chrono::steady_clock::now() +
                              per_list * static_cast<std::int64_t>(request.sources.size());
        lines = collect(out.read_end(), pid, cancel, deadline, why);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (why.empty() && (!delivered || status != 0)) {
            why = exit_text(status);
        }
    }
    std::map<std::string, RefreshOutcome> reported = read_results(lines);
    std::vector<RefreshOutcome> outcomes;
    for (const ListSource& s : request.sources) {
        const std::string key = StateDir::key_of(s.name, s.url);
        const auto it = reported.find(key);
        RefreshOutcome o =
            it != reported.end() ? std::move(it->second) : unreported(dir, key, s, why);
        // This process's memory follows the disk: what the child could not write is held here.
        if (o.saved) {
            dir.release_status(key);
        } else {
            dir.hold_status(key, o.status);
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

int serve_fetch_request(std::istream& in, std::ostream& out) {
    std::string text;
    std::array<char, 4096> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
        text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    }
    const auto request = request_from_json(text);
    if (!request) {
        return 2;
    }
    const StateDir dir(request->state_dir);
    for (const auto& [key, status] : request->held) {
        dir.hold_status(key, status);  // newer than the files: refresh_list starts from these
    }
    for (const ListSource& source : request->sources) {
        const RefreshOutcome o = refresh_list(source, dir, request->policy, unix_now());
        // Flushed per list: a parent that kills the child mid-way still has these.
        out << result_line(StateDir::key_of(source.name, source.url), o) << std::flush;
    }
    return 0;
}

}  // namespace moat::lists
