// The service manager's notification protocol (sd_notify(3)): datagrams of "KEY=VALUE" lines to
// the Unix socket named by $NOTIFY_SOCKET. dnsmoat.service is Type=notify: READY=1 once the
// lists are loaded and the sockets bound, RELOADING=1 then READY=1 around a reload, STATUS=
// with a summary for `systemctl status`, WATCHDOG=1 from the event loop. Outside systemd (no
// $NOTIFY_SOCKET) every call does nothing. The protocol is a stable, documented interface, so
// it is spoken here directly rather than through libsystemd.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace moat::app {

class SystemdNotifier {
public:
    /// Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID; an unusable socket path is
    /// reported once and turns the notifier off.
    static SystemdNotifier from_environment();

    [[nodiscard]] bool enabled() const noexcept { return !socket_path_.empty(); }
    /// How often to send WATCHDOG=1 (half of WatchdogSec=); nullopt when no watchdog is set.
    [[nodiscard]] std::optional<std::chrono::microseconds> watchdog_interval() const noexcept {
        return watchdog_interval_;
    }

    void ready(std::string_view status) const;
    /// RELOADING=1 with the CLOCK_MONOTONIC time systemd 253+ asks for (older ones ignore it).
    void reloading() const;
    void stopping() const;
    void status(std::string_view text) const;
    void watchdog() const;

    /// Sends `message` ("KEY=VALUE" lines); a failure is logged at debug level, nothing more.
    void send(
        std::string_view message) const;  // NOLINT(modernize-use-nodiscard): callers may ignore it

private:
    std::string socket_path_;  ///< a leading '@' names an abstract socket
    std::optional<std::chrono::microseconds> watchdog_interval_;
};

}  // namespace moat::app
