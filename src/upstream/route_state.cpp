#include "route_state.hpp"

#include <algorithm>
#include <cstddef>

namespace moat::upstream {

RouteState::RouteState(const Route& route, const RouteState* previous) {
    for (const ServerAddress& a : route.servers) {
        ServerState s;
        s.address = a;
        s.text = a.text.empty() ? endpoint_text(a.address, a.port) : a.text;
        if (previous != nullptr) {
            for (const ServerState& old : previous->servers_) {
                if (old.address == a) {
                    s = old;
                }
            }
        }
        servers_.push_back(s);
    }
}

bool RouteState::resting(const ServerState& s,
                         std::chrono::steady_clock::time_point now) const noexcept {
    return s.consecutive_failures >= kFailuresToRest && now - s.last_failure < kRestTime;
}

void RouteState::order(Strategy strategy, RandomSource& random,
                       std::chrono::steady_clock::time_point now,
                       std::pmr::vector<std::size_t>& idx) const {
    // Resting servers go last (still tried if every other one fails), in config order. Two
    // passes rather than std::stable_partition, which takes a temporary buffer from the heap on
    // every query.
    idx.clear();
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if (!resting(servers_[i], now)) {
            idx.push_back(i);
        }
    }
    const auto healthy_end = static_cast<std::ptrdiff_t>(idx.size());
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if (resting(servers_[i], now)) {
            idx.push_back(i);
        }
    }
    if (strategy == Strategy::fastest && healthy_end != 0) {
        // Ties in config order, as a stable sort would leave them, without its heap buffer.
        std::sort(idx.begin(), idx.begin() + healthy_end, [&](std::size_t a, std::size_t b) {
            const auto ra = servers_[a].srtt;  // unmeasured (0) first: probes them
            const auto rb = servers_[b].srtt;
            return ra != rb ? ra < rb : a < b;
        });
        const auto healthy = static_cast<std::size_t>(healthy_end);
        if (healthy > 1 && random.below(kProbeOneIn) == 0) {
            std::swap(idx[0], idx[1 + random.below(healthy - 1)]);
        }
    }
}

void RouteState::succeeded(std::size_t server, std::chrono::microseconds rtt) noexcept {
    ServerState& s = servers_[server];
    s.srtt = s.srtt.count() == 0 ? rtt : (s.srtt * 7 + rtt) / 8;  // RFC 6298-style smoothing
    s.recent_rtts[s.rtt_samples % s.recent_rtts.size()] =
        static_cast<std::uint32_t>(std::min<std::int64_t>(rtt.count(), UINT32_MAX));
    ++s.rtt_samples;
    s.consecutive_failures = 0;
    ++s.counts.answered;
}

std::chrono::microseconds RouteState::p90_rtt(std::size_t server,
                                              std::chrono::microseconds fallback) const {
    const ServerState& s = servers_[server];
    const std::size_t n = std::min(s.rtt_samples, s.recent_rtts.size());
    if (n == 0) {
        return fallback;
    }
    std::array<std::uint32_t, 32> sorted = s.recent_rtts;
    const auto end = sorted.begin() + static_cast<std::ptrdiff_t>(n);
    const std::size_t rank = (n * 9 + 9) / 10 - 1;  // nearest rank: ceil(0.9 n) - 1
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), end);
    return std::chrono::microseconds(sorted[rank]);
}

void RouteState::failed(std::size_t server, std::chrono::steady_clock::time_point now,
                        std::chrono::microseconds penalty) noexcept {
    ServerState& s = servers_[server];
    ++s.consecutive_failures;
    s.last_failure = now;
    s.srtt = std::max(s.srtt, penalty);
    ++s.counts.errors;
}

void RouteState::timed_out(std::size_t server, std::chrono::steady_clock::time_point now,
                           std::chrono::microseconds penalty) noexcept {
    failed(server, now, penalty);
    ServerCounts& c = servers_[server].counts;
    --c.errors;
    ++c.timeouts;
}

}  // namespace moat::upstream
