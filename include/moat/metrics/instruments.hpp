// Counters, gauges and latency histograms for the Prometheus endpoint.
//
// Each instrument has one writer thread (the event loop that owns it: the design's per-thread
// shard), so an update is a relaxed load and store of a plain word, with no locked instruction
// on the query path; any thread may read, and sees a value at most a moment old. An instrument
// written from more than one thread needs one instance per thread, summed when read.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace moat::metrics {

class Counter {
public:
    /// Writer thread only.
    void add(std::uint64_t n = 1) noexcept {
        value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t value() const noexcept {
        return value_.load(std::memory_order_relaxed);
    }

private:
    std::atomic<std::uint64_t> value_{0};
};

/// A level (connections open, queries in flight) and the highest it has been.
class PeakGauge {
public:
    /// Writer thread only.
    void set(std::uint64_t v) noexcept {
        value_.store(v, std::memory_order_relaxed);
        if (v > peak_.load(std::memory_order_relaxed)) {
            peak_.store(v, std::memory_order_relaxed);
        }
    }
    [[nodiscard]] std::uint64_t value() const noexcept {
        return value_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t peak() const noexcept {
        return peak_.load(std::memory_order_relaxed);
    }

private:
    std::atomic<std::uint64_t> value_{0};
    std::atomic<std::uint64_t> peak_{0};
};

/// Durations in fixed buckets from 50 us to 5 s: a cache hit, a LAN upstream, a distant one and a
/// timeout each land in their own.
class LatencyHistogram {
public:
    static constexpr std::array<std::uint32_t, 14> kBoundsUs{
        50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000};

    /// Writer thread only.
    void observe(std::uint32_t us) noexcept { observe(us, 1); }
    /// `n` observations of the same duration (the answers of one batch). Writer thread only.
    void observe(std::uint32_t us, std::uint64_t n) noexcept {
        std::size_t i = 0;
        while (i < kBoundsUs.size() && us > kBoundsUs[i]) {
            ++i;
        }
        bump(counts_[i], n);
        bump(sum_us_, std::uint64_t{us} * n);
    }
    /// Observations in bucket i (not cumulative); i == kBoundsUs.size() is above every bound.
    [[nodiscard]] std::uint64_t bucket(std::size_t i) const noexcept {
        return counts_[i].load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t sum_us() const noexcept {
        return sum_us_.load(std::memory_order_relaxed);
    }

private:
    static void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
        a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::array<std::atomic<std::uint64_t>, kBoundsUs.size() + 1> counts_{};
    std::atomic<std::uint64_t> sum_us_{0};
};

}  // namespace moat::metrics
