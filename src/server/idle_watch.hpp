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

    /// True once nothing touched the watch for the whole timeout.
    [[nodiscard]] bool timed_out() const noexcept {
        return Clock::now() - last_activity_ >= timeout_;
    }

    /// Calls `handler(error_code)` when the timeout, counted from the last touch, runs out (at
    /// once if it has). A touch meanwhile does not move the wait: the handler checks
    /// timed_out() and waits again for the rest.
    template <typename Handler>
    void wait(Handler&& handler) {
        timer_.expires_at(last_activity_ + timeout_);
        timer_.async_wait(std::forward<Handler>(handler));
    }

    void cancel() { timer_.cancel(); }

private:
    asio::steady_timer timer_;
    Clock::duration timeout_;
    Clock::time_point last_activity_ = Clock::now();
};

}  // namespace moat::server
