// A stream connection's idle timeout, kept without touching its timer on every query.
//
// Why: re-arming an Asio timer cancels the wait in progress, and the cancelled wait's handler
// is posted (with operation_aborted); before a posted handler runs, Asio polls the sockets once
// more. Over TCP, DoT and DoH that was an extra system call per query (docs/benchmarks.md).
// Activity here is a clock read; the timer runs out at most once per timeout and then waits for
// what is left of it.
#pragma once

#include <asio/steady_timer.hpp>
#include <chrono>
#include <system_error>
#include <utility>

namespace moat::server {

class IdleWatch {
public:
    using Clock = std::chrono::steady_clock;

    template <typename Executor>
    IdleWatch(const Executor& executor, Clock::duration timeout)
        : timer_(executor), timeout_(timeout) {}

    /// The connection did something: its idle time counts from now.
    void touch() noexcept { last_activity_ = Clock::now(); }

    /// Calls `handler(error_code)` once nothing touched the watch for the whole timeout, or
    /// with operation_aborted after cancel(). The handler must keep the watch's owner, and so
    /// the watch, alive (a connection's handler holds a shared_ptr to it).
    template <typename Handler>
    void wait(Handler handler) {
        timer_.expires_at(last_activity_ + timeout_);
        timer_.async_wait([this, handler = std::move(handler)](const std::error_code& ec) mutable {
            if (!ec && Clock::now() - last_activity_ < timeout_) {
                wait(std::move(handler));  // touched since the wait began: wait for the rest
                return;
            }
            handler(ec);
        });
    }

    void cancel() { timer_.cancel(); }

private:
    asio::steady_timer timer_;
    Clock::duration timeout_;
    Clock::time_point last_activity_ = Clock::now();
};

}  // namespace moat::server
