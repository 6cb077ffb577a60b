// Time as the modules below the I/O layer see it: through an interface, so TTLs, schedules and
// timeouts are tested with a clock the test moves by hand.
//
// Layers 0-3 never read the real clock; `app` hands them a CoarseClock, tests a ManualClock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>  // clock_gettime(), CLOCK_MONOTONIC_COARSE (POSIX, through glibc's <time.h>)

namespace moat {

class Clock {
public:
    using duration = std::chrono::nanoseconds;
    /// A monotonic instant: for TTLs, timeouts and rates. Never goes backwards.
    using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;

    Clock() = default;
    Clock(const Clock&) = delete;
    Clock& operator=(const Clock&) = delete;
    virtual ~Clock() = default;

    [[nodiscard]] virtual time_point now() const noexcept = 0;
    /// Wall-clock time (for schedules "at 21:00" and log timestamps); may jump.
    [[nodiscard]] virtual std::chrono::system_clock::time_point wall() const noexcept = 0;
};

/// The real clocks.
class SystemClock final : public Clock {
public:
    [[nodiscard]] time_point now() const noexcept override {
        return std::chrono::time_point_cast<duration>(std::chrono::steady_clock::now());
    }
    [[nodiscard]] std::chrono::system_clock::time_point wall() const noexcept override {
        return std::chrono::system_clock::now();
    }
};

/// The real clocks, the monotonic one at the kernel tick's resolution (CLOCK_MONOTONIC_COARSE,
/// 1 to 4 ms steps): the vDSO returns the time of the last tick without reading a hardware
/// counter, about 6 ns a read where steady_clock costs 26 on the project's VMs. The daemon's
/// clock: the cache ages entries in whole seconds and the rate limiter refills at most a few
/// hundred tokens a second, and both read the clock on every query. Instants are on
/// steady_clock's scale and never ahead of it; they lag it by the time since the last tick the
/// kernel handled (3.3-7.3 ms on the project's VM, which handles ticks late). wall() is the fine
/// clock (log timestamps).
class CoarseClock final : public Clock {
public:
    [[nodiscard]] time_point now() const noexcept override {
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
    }
    [[nodiscard]] std::chrono::system_clock::time_point wall() const noexcept override {
        return std::chrono::system_clock::now();
    }
    /// The step of now(), as the kernel reports it.
    [[nodiscard]] static duration resolution() noexcept {
        timespec ts{};
        ::clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
        return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    }
};

/// A clock that moves only when told to. Thread-safe, so a test may advance it while the code
/// under test reads it.
class ManualClock final : public Clock {
public:
    [[nodiscard]] time_point now() const noexcept override {
        return time_point(duration(monotonic_ns_.load(std::memory_order_acquire)));
    }
    [[nodiscard]] std::chrono::system_clock::time_point wall() const noexcept override {
        return std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                duration(wall_ns_.load(std::memory_order_acquire))));
    }
    /// Moves both clocks forward by `d`.
    void advance(duration d) noexcept {
        monotonic_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
        wall_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
    }
    /// Sets the wall clock (which, unlike the monotonic one, may jump either way).
    void set_wall(std::chrono::system_clock::time_point t) noexcept {
        wall_ns_.store(std::chrono::duration_cast<duration>(t.time_since_epoch()).count(),
                       std::memory_order_release);
    }

private:
    std::atomic<std::int64_t> monotonic_ns_{0};
    std::atomic<std::int64_t> wall_ns_{0};
};

}  // namespace moat
