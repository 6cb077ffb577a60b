// Per-iteration durations and their percentiles.
//
// Every timed iteration is kept (not a histogram), so the percentiles are exact nearest-rank
// values over all iterations. Storage is allocated up front: add() in the timed loop only
// writes a slot, never allocates. Durations are stored as raw timer ticks and converted, with
// the timer's own overhead subtracted, when summarised.
#pragma once

#include <cstddef>
#include <vector>

#include "timer.hpp"

namespace moat::bench {

/// Figures of one measured row, in microseconds.
struct Summary {
    std::size_t ops = 0;
    double p50_us = 0;
    double p95_us = 0;
    double p99_us = 0;
    double max_us = 0;
    double mean_us = 0;
    /// 1 / mean: operations per second of one thread doing nothing else (timer cost excluded).
    double ops_per_s = 0;
};

class Samples {
public:
    explicit Samples(std::size_t capacity) : ticks_(capacity) {}

    /// Records one duration; silently ignored beyond the capacity (a harness bug, not a figure).
    void add(Ticks duration) noexcept {
        if (size_ < ticks_.size()) {
            ticks_[size_++] = duration;
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return ticks_.size(); }
    void clear() noexcept { size_ = 0; }

    /// Percentiles over the recorded durations, overhead-corrected (sorts a copy).
    [[nodiscard]] Summary summarize() const;

private:
    std::vector<Ticks> ticks_;
    std::size_t size_ = 0;
};

}  // namespace moat::bench
