// The servers of one route with what we learnt about them: smoothed RTT and recent failures.
// The order of servers for each new query follows the strategy.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <vector>

#include "moat/upstream/options.hpp"
#include "moat/upstream/stats.hpp"
#include "random_source.hpp"

namespace moat::upstream {

struct ServerState {
    ServerAddress address;
    std::string text;                   ///< "ADDR:PORT" for logs
    std::chrono::microseconds srtt{0};  ///< 0: not measured yet
    unsigned consecutive_failures = 0;
    std::chrono::steady_clock::time_point last_failure{};
    ServerCounts counts;  ///< since the start; kept across reconfigurations
    /// The last round trips (microseconds), for the p90 the hedge strategy waits.
    std::array<std::uint32_t, 32> recent_rtts{};
    std::size_t rtt_samples = 0;  ///< ever taken; the newest is at (rtt_samples - 1) % 32
};

class RouteState {
public:
    /// Keeps the history of servers present in `previous` (may be null).
    RouteState(const Route& route, const RouteState* previous);

    /// Indexes into servers() in the order to try them for one query, into `out`.
    void order(Strategy strategy, RandomSource& random, std::chrono::steady_clock::time_point now,
               std::pmr::vector<std::size_t>& out) const;
    [[nodiscard]] std::pmr::vector<std::size_t> order(
        Strategy strategy, RandomSource& random, std::chrono::steady_clock::time_point now) const {
        std::pmr::vector<std::size_t> out;
        order(strategy, random, now, out);
        return out;
    }
    void sent(std::size_t server) noexcept { ++servers_[server].counts.sent; }
    void succeeded(std::size_t server, std::chrono::microseconds rtt) noexcept;
    /// An attempt that failed (an error answer, a send or TCP failure); counted as an error.
    void failed(std::size_t server, std::chrono::steady_clock::time_point now,
                std::chrono::microseconds penalty) noexcept;
    /// An attempt that got no answer in time; counted as a timeout.
    void timed_out(std::size_t server, std::chrono::steady_clock::time_point now,
                   std::chrono::microseconds penalty) noexcept;

    /// The server was slow enough that the next one was asked too (hedge).
    void hedged(std::size_t server) noexcept { ++servers_[server].counts.hedged; }
    /// The 90th percentile of the server's recent round trips; `fallback` before any.
    [[nodiscard]] std::chrono::microseconds p90_rtt(std::size_t server,
                                                    std::chrono::microseconds fallback) const;

    [[nodiscard]] const std::vector<ServerState>& servers() const noexcept { return servers_; }

    /// Failures in a row after which a server is tried last, for kRestTime.
    static constexpr unsigned kFailuresToRest = 3;
    static constexpr std::chrono::seconds kRestTime{10};
    /// One query in kProbeOneIn tries a random other server first under `fastest`.
    static constexpr std::size_t kProbeOneIn = 20;

private:
    [[nodiscard]] bool resting(const ServerState& s,
                               std::chrono::steady_clock::time_point now) const noexcept;
    std::vector<ServerState> servers_;
};

}  // namespace moat::upstream
