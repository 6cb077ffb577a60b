#include "timer.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace moat::bench {
namespace {

TimerInfo g_info;  // written once, by calibrate_timer()

constexpr std::size_t kOverheadSamples = 10'000;
constexpr auto kCalibration = std::chrono::milliseconds(50);

#if defined(__x86_64__)
/// CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every P- and C-state, so
/// ticks convert to time with one factor.
bool invariant_tsc() noexcept {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    if (__get_cpuid(0x80000000U, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007U) {
        return false;
    }
    __get_cpuid(0x80000007U, &eax, &ebx, &ecx, &edx);
    return (edx & (1U << 8U)) != 0;
}

/// Ticks per nanosecond from two reads of both clocks ~50 ms apart (a busy wait, so the
/// thread is not descheduled in between more than the scheduler insists on).
double calibrate_tsc() noexcept {
    const auto s0 = std::chrono::steady_clock::now();
    const Ticks c0 = detail::read_counter();
    auto s1 = s0;
    while (s1 - s0 < kCalibration) {
        s1 = std::chrono::steady_clock::now();
    }
    const Ticks c1 = detail::read_counter();
    const double ns = std::chrono::duration<double, std::nano>(s1 - s0).count();
    return ns / static_cast<double>(c1 - c0);
}
#endif

Ticks measure_overhead() {
    std::vector<Ticks> d(kOverheadSamples);
    for (Ticks& v : d) {
        const Ticks t0 = tick_begin();
        const Ticks t1 = tick_end();
        v = t1 - t0;
    }
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    return d[d.size() / 2];
}

/// The step the counter advances by: the greatest common divisor of many back-to-back
/// differences (a read takes longer than one step, so the smallest difference would overstate
/// it; a counter with 1-tick steps gives a GCD of 1 within a few reads).
Ticks measure_resolution() noexcept {
    constexpr int kReads = 10'000;
    Ticks step = 0;
    Ticks prev = detail::read_counter();
    for (int i = 0; i < kReads && step != 1; ++i) {
        const Ticks t = detail::read_counter();
        step = std::gcd(step, t - prev);
        prev = t;
    }
    return step == 0 ? 1 : step;
}

}  // namespace

const TimerInfo& calibrate_timer() {
#if defined(__x86_64__)
    if (invariant_tsc()) {
        detail::g_use_counter = true;
        g_info.source = "tsc";
        g_info.ns_per_tick = calibrate_tsc();
    }
#elif defined(__aarch64__)
    Ticks freq = 0;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    if (freq != 0) {
        detail::g_use_counter = true;
        g_info.source = "cntvct_el0";
        g_info.ns_per_tick = 1e9 / static_cast<double>(freq);
    }
#endif
    g_info.overhead = measure_overhead();
    g_info.resolution = measure_resolution();
    return g_info;
}

const TimerInfo& timer() noexcept { return g_info; }

}  // namespace moat::bench
