// Sends queries to upstream resolvers over UDP (TCP when the answer is truncated), DNS over TLS or
// DNS over HTTPS, and hands back the first acceptable answer.
//
// Per query: a random 16-bit ID from the kernel's CSPRNG, sent on a random socket of a small
// pool, each on a random source port and replaced after a few hundred queries (udp_pool.hpp);
// an answer counts only when it comes from the server's address and port, carries that ID and
// the same question (name case-insensitively, type, class). Anything else is ignored and counted
// (Stats::ignored), which keeps blind spoofing as hard as the ID and ports allow.
// Servers are tried per the strategy (`hedge`: the next server is also asked once the current
// one has been slower than its usual p90, and the first good answer wins); an attempt that times
// out or answers SERVFAIL, REFUSED, NOTIMP or FORMERR moves to the next server, while earlier
// attempts stay open so a late answer still wins. After total_timeout, or when every server has
// failed, the query fails. Identical questions in flight (same route, same query bytes apart from
// the ID) share one upstream query.
//
// Runs on one asio::io_context, from its thread only. Callbacks run on that thread; the reply
// span is valid during the call only.
#pragma once

#include <asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "moat/upstream/options.hpp"
#include "moat/upstream/stats.hpp"
#include "moat/upstream/turn_end.hpp"

namespace moat::upstream {

struct Result {
    bool ok = false;
    std::span<const std::uint8_t> reply;  ///< the answer (ok only)
    std::string server;                   ///< "ADDR:PORT" of the server that answered (ok only)
};

using Callback = std::function<void(const Result&)>;

class RouteState;
class Flight;
class UdpPool;
class EncryptedPool;
struct FlightDeadlines;

class Forwarder {
public:
    Forwarder(asio::io_context& io, Options options);
    ~Forwarder();
    Forwarder(const Forwarder&) = delete;
    Forwarder& operator=(const Forwarder&) = delete;

    /// Forwards `query` (a complete DNS query; its ID is replaced) on `route`. `done` runs
    /// exactly once, later (never inside this call).
    void forward(std::span<const std::uint8_t> query, std::size_t route, Callback done);

    /// New servers and timeouts for queries from now on; queries in flight finish as they began.
    /// Servers that stay keep their health and RTT history.
    void reconfigure(Options options);

    /// Fails every query in flight now (shutdown).
    void cancel_all();

    [[nodiscard]] std::size_t in_flight() const noexcept { return flights_.size(); }
    [[nodiscard]] const Stats& stats() const noexcept { return *stats_; }
    /// Every server of every route with its RTT and counts, route by route in config order.
    [[nodiscard]] std::vector<ServerReport> servers() const;
    [[nodiscard]] const Options& options() const noexcept { return options_; }

private:
    friend class Flight;
    void finished(std::string_view key);
    void start_flights();

    asio::io_context& io_;
    Options options_;
    std::vector<std::shared_ptr<RouteState>> routes_;
    /// What flights allocate, theirs and this map's nodes (FlightMemory, in
    /// src/upstream/flight_memory.hpp). Declared before the map, so it is destroyed after it.
    std::shared_ptr<std::pmr::memory_resource> memory_;
    /// Keyed by a view of the flight's own key (Flight::key()), which lives as long as the
    /// entry holds the flight: one copy of the key per question, not two.
    std::pmr::unordered_map<std::string_view, std::shared_ptr<Flight>> flights_;
    /// The key of the query being forwarded, to look for a flight to join (reused: its capacity
    /// stays).
    std::vector<std::uint8_t> key_scratch_;
    std::shared_ptr<Stats> stats_;
    std::unique_ptr<UdpPool> pool_;  ///< the UDP sockets every query shares (udp_pool.hpp)
    /// The DoT and DoH servers with their connections (encrypted_pool.hpp).
    std::unique_ptr<EncryptedPool> encrypted_;
    /// Every flight's attempt and total deadlines, one timer per kind (deadlines.hpp).
    std::unique_ptr<FlightDeadlines> deadlines_;
    /// Flights created this turn, started at its end (never inside forward(), whose caller may
    /// not be ready for an answer yet); a swap partner keeps both vectors' capacity.
    std::vector<std::shared_ptr<Flight>> starting_;
    std::vector<std::shared_ptr<Flight>> started_;
    /// start_flights() at the end of the turn. Last: destroyed first.
    TurnEnd::Task start_at_turn_end_;
};

}  // namespace moat::upstream
