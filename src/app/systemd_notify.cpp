#include "systemd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <system_error>

#include "environment.hpp"
#include "moat/core/log.hpp"

namespace moat::app {
namespace {

/// One line for STATUS=: newlines would start a new assignment.
std::string one_line(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    return out;
}

}  // namespace

SystemdNotifier SystemdNotifier::from_environment() {
    SystemdNotifier n;
    if (const char* path = env_text("NOTIFY_SOCKET"); path != nullptr && *path != '\0') {
        if ((path[0] == '/' || path[0] == '@') &&
            std::strlen(path) < sizeof(sockaddr_un::sun_path)) {
            n.socket_path_ = path;
        } else {
            log::warn("systemd: NOTIFY_SOCKET \"{}\" is not a usable socket path", path);
        }
    }
    // The watchdog is ours only when WATCHDOG_PID is unset or names this process.
    const auto usec = env_number("WATCHDOG_USEC");
    const auto pid = env_number("WATCHDOG_PID");
    if (n.enabled() && usec && *usec > 0 && (!pid || *pid == static_cast<long long>(::getpid()))) {
        n.watchdog_interval_ = std::chrono::microseconds(*usec / 2);
    }
    return n;
}

void SystemdNotifier::send(std::string_view message) const {
    if (!enabled()) {
        return;
    }
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
    auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path_.size());
    if (socket_path_[0] == '@') {
        address.sun_path[0] = '\0';  // abstract namespace: no terminating NUL counted
    } else {
        length += 1;
    }
    const ssize_t sent = ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                                  reinterpret_cast<const sockaddr*>(&address), length);
    const int error = errno;
    ::close(fd);
    if (sent < 0) {
        log::debug("systemd: cannot notify {}: {}", socket_path_,
                   std::system_category().message(error));
    }
}

void SystemdNotifier::ready(std::string_view status) const {
    send("READY=1\nSTATUS=" + one_line(status));
}

void SystemdNotifier::reloading() const {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const long long usec = static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\nSTATUS=reloading");
}

void SystemdNotifier::stopping() const { send("STOPPING=1\nSTATUS=stopping"); }

void SystemdNotifier::status(std::string_view text) const { send("STATUS=" + one_line(text)); }

void SystemdNotifier::watchdog() const { send("WATCHDOG=1"); }

}  // namespace moat::app
