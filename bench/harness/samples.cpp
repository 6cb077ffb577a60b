#include "samples.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moat::bench {
namespace {

/// Nearest rank: the smallest value with at least p of all values at or below it.
double nearest_rank(const std::vector<double>& sorted, double p) noexcept {
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Summary Samples::summarize() const {
    Summary s;
    s.ops = size_;
    if (size_ == 0) {
        return s;
    }
    const TimerInfo& t = timer();
    std::vector<double> us(size_);
    for (std::size_t i = 0; i < size_; ++i) {
        const Ticks net = ticks_[i] > t.overhead ? ticks_[i] - t.overhead : 0;
        us[i] = static_cast<double>(net) * t.ns_per_tick / 1000.0;
    }
    std::sort(us.begin(), us.end());
    s.p50_us = nearest_rank(us, 0.50);
    s.p95_us = nearest_rank(us, 0.95);
    s.p99_us = nearest_rank(us, 0.99);
    s.max_us = us.back();
    s.mean_us = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(size_);
    s.ops_per_s = s.mean_us > 0 ? 1e6 / s.mean_us : 0;
    return s;
}

}  // namespace moat::bench
