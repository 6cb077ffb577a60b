// Per-operation timing for operations of 0.05 to a few microseconds.
//
// std::chrono::steady_clock costs 30-100 ns per read on this project's KVM VMs and rounds to the
// clock source's resolution, which is as long as the operations measured. So the harness reads
// the CPU's counter instead:
//   x86-64   the TSC, fenced: LFENCE; RDTSC; LFENCE. RDTSCP would make the end read wait for
//            the operation without the first fence, but KVM guests do not always expose it (the
//            project VM lists no `rdtscp` flag), and the fenced RDTSC orders just as well on
//            Intel and on AMD (Linux makes LFENCE dispatch-serialising there). Used only when
//            CPUID reports an invariant TSC; calibrated once against steady_clock over ~50 ms.
//   aarch64  CNTVCT_EL0 after an ISB, at the frequency CNTFRQ_EL0 reports.
//   other    steady_clock, in nanoseconds.
// The cost of a begin/end pair around nothing (the median of 10,000) is measured at calibration
// and subtracted from every sample by Samples (clamped at zero). The counter's step is measured
// too: on the project VM the TSC advances 21 ticks (10 ns) at a time, so every figure is a
// multiple of ~10 ns there and differences below that are not resolved.
//
// Use:   const Ticks t0 = tick_begin(); op(); const Ticks t1 = tick_end(); samples.add(t1 - t0);
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace moat::bench {

using Ticks = std::uint64_t;

/// What calibration found; fixed for the life of the process.
struct TimerInfo {
    const char* source = "steady_clock";  ///< "tsc", "cntvct_el0" or "steady_clock"
    double ns_per_tick = 1.0;
    Ticks overhead = 0;    ///< median ticks of an empty begin/end pair
    Ticks resolution = 1;  ///< smallest step the counter was seen to take (a VM may coarsen it)
    [[nodiscard]] double overhead_ns() const noexcept {
        return static_cast<double>(overhead) * ns_per_tick;
    }
    [[nodiscard]] double resolution_ns() const noexcept {
        return static_cast<double>(resolution) * ns_per_tick;
    }
};

namespace detail {
/// Set once by calibrate_timer(), before any measurement: the hardware counter is usable.
inline bool g_use_counter = false;

inline Ticks steady_ns() noexcept {
    return static_cast<Ticks>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count());
}

[[gnu::always_inline]] inline Ticks read_counter() noexcept {
#if defined(__x86_64__)
    if (g_use_counter) {
        _mm_lfence();  // earlier instructions finish before the read...
        const Ticks t = __rdtsc();
        _mm_lfence();  // ...and later ones do not start before it
        return t;
    }
#elif defined(__aarch64__)
    if (g_use_counter) {
        Ticks t = 0;
        asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(t) : : "memory");
        return t;
    }
#endif
    return steady_ns();
}
}  // namespace detail

[[gnu::always_inline]] inline Ticks tick_begin() noexcept { return detail::read_counter(); }
[[gnu::always_inline]] inline Ticks tick_end() noexcept { return detail::read_counter(); }

/// Picks the counter, calibrates it and measures its overhead. Call once, early in main().
const TimerInfo& calibrate_timer();
/// The calibration result (calibrate_timer() must have run).
const TimerInfo& timer() noexcept;

/// Makes the compiler treat `value` as used, so a timed call whose result is otherwise ignored
/// is not removed (the same trick as benchmark::DoNotOptimize).
template <typename T>
[[gnu::always_inline]] inline void keep(const T& value) noexcept {
    asm volatile("" : : "r,m"(value) : "memory");
}

}  // namespace moat::bench
