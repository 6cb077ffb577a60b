// One question on its way upstream: the attempts on each server in turn (UDP, then TCP when the
// answer was truncated), their deadlines, and the callers waiting for the answer.
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "deadlines.hpp"
#include "encrypted_pool.hpp"
#include "flight_memory.hpp"
#include "moat/upstream/forwarder.hpp"
#include "random_source.hpp"
#include "route_state.hpp"
#include "udp_pool.hpp"

namespace moat::upstream {

/// The settings a flight reads, copied from Options for each query: no containers, so starting a
/// flight does not copy every route's server list (and its strings) as a copy of Options would.
struct FlightSettings {
    Strategy strategy = Strategy::failover;
    std::chrono::milliseconds timeout{};
    std::chrono::milliseconds total_timeout{};
    std::optional<std::chrono::milliseconds> hedge_delay;

    static FlightSettings of(const Options& o) noexcept {
        return {o.strategy, o.timeout, o.total_timeout, o.hedge_delay};
    }
};

/// The forwarder's deadline lists (deadlines.hpp), one for each kind of a flight's deadline: in
/// each, nearly every flight waits the same time, so a new deadline belongs at the end. (Hedge
/// delays, a few milliseconds, have a list of their own: in a list of full timeouts, each would
/// be walked back past all of them to its place.)
struct FlightDeadlines {
    explicit FlightDeadlines(asio::io_context& io) : attempts(io), hedges(io), totals(io) {}
    Deadlines attempts;  ///< when the current server has had its whole timeout
    Deadlines hedges;    ///< when the next server is asked beside a slow one (strategy hedge)
    Deadlines totals;    ///< when the whole question fails
};

/// The coalescing key of a query on a route: every octet of the query after the ID, then the
/// route's number. Written into `out` (query.size() + kRouteOctets octets); flight_key() views it.
void write_flight_key(std::span<const std::uint8_t> query, std::size_t route,
                      std::span<std::uint8_t> out) noexcept;
inline constexpr std::size_t kRouteOctets = sizeof(std::size_t);
/// The key within what write_flight_key() wrote: the ID's two octets left out.
[[nodiscard]] inline std::string_view flight_key(std::span<const std::uint8_t> written) noexcept {
    return {reinterpret_cast<const char*>(written.data()) + 2, written.size() - 2};
}

/// Made with std::allocate_shared and a SharedPoolAllocator of `memory`, and allocating
/// everything it holds from there too (flight_memory.hpp).
class Flight : public std::enable_shared_from_this<Flight> {
public:
    /// `query` is at least a header long.
    Flight(Forwarder& owner, asio::io_context& io, UdpPool& pool, EncryptedPool& encrypted,
           FlightDeadlines& deadlines, std::shared_ptr<RouteState> route, std::size_t route_index,
           FlightSettings settings, std::span<const std::uint8_t> query,
           std::shared_ptr<FlightMemory> memory, RandomSource& random,
           std::shared_ptr<Stats> stats);

    ~Flight();
    Flight(const Flight&) = delete;
    Flight& operator=(const Flight&) = delete;

    void add_waiter(Callback done) {
        // Nearly every flight has one waiter: it is kept in place, without a vector to allocate.
        if (!first_waiter_) {
            first_waiter_ = std::move(done);
        } else {
            more_waiters_.push_back(std::move(done));
        }
    }
    void start();
    /// The coalescing key (write_flight_key) the owner files this flight under.
    [[nodiscard]] std::string_view key() const noexcept { return flight_key(keyed_query_); }
    /// Fails the query now (the owner is shutting down).
    void cancel() { finish(false, {}, {}); }

private:
    using Clock = std::chrono::steady_clock;

    /// One UDP query to one server, on a socket of the pool.
    struct UdpAttempt final : ReplySink {
        UdpAttempt(Flight& f, std::size_t index, FlightAllocator memory)
            : flight(f), server_index(index), sent(memory) {}
        void on_datagram(std::span<const std::uint8_t> reply,
                         const asio::ip::udp::endpoint& from) override {
            flight.on_datagram(*this, reply, from);
        }
        void on_send_failed(const std::error_code& error) override {
            flight.on_send_failed(*this, error);
        }
        Flight& flight;
        asio::ip::udp::endpoint server;
        std::size_t server_index = 0;
        std::pmr::vector<std::uint8_t> sent;  ///< the query with this attempt's ID
        UdpPool::Ticket ticket;
        Clock::time_point started;
        bool open = true;
    };
    /// One of the flight's deadlines: calls a member of the flight when due.
    class Due final : public Deadlines::Entry {
    public:
        Due(Flight& flight, void (Flight::*handler)()) : flight_(flight), handler_(handler) {}
        Due(const Due&) = delete;
        Due& operator=(const Due&) = delete;
        Due(Due&&) = delete;
        Due& operator=(Due&&) = delete;
        ~Due() override = default;

    private:
        void on_due() override { (flight_.*handler_)(); }
        Flight& flight_;
        void (Flight::*handler_)();
    };
    struct TcpAttempt {
        explicit TcpAttempt(asio::io_context& io) : socket(io) {}
        asio::ip::tcp::socket socket;
        std::size_t server_index = 0;
        std::vector<std::uint8_t> framed;  ///< two-octet length + query
        std::array<std::uint8_t, 2> length{};
        std::vector<std::uint8_t> body;
        Clock::time_point started;
        bool open = true;
    };

    void next_attempt(Clock::time_point now);
    bool start_udp(std::size_t server, Clock::time_point now);
    /// DoT or DoH: the query goes out on the server's shared connection.
    bool start_encrypted(std::size_t server, Clock::time_point now);
    void on_encrypted_reply(std::size_t server, std::span<const std::uint8_t> sent,
                            std::span<const std::uint8_t> reply,
                            std::chrono::steady_clock::time_point started);
    /// How long the current attempt has before the next server is asked (hedge: the delay).
    [[nodiscard]] std::chrono::milliseconds attempt_delay(bool hedging) const;
    void on_datagram(UdpAttempt& a, std::span<const std::uint8_t> reply,
                     const asio::ip::udp::endpoint& from);
    void on_send_failed(UdpAttempt& a, const std::error_code& error);
    /// Stops waiting for `a`'s answer.
    void close(UdpAttempt& a) noexcept;
    void start_tcp(std::size_t server);
    void on_tcp_reply(TcpAttempt& a);
    void attempt_failed(std::size_t server, bool was_current);
    void arm_attempt_deadline(Clock::time_point now);
    void on_attempt_due();
    void on_total_due();
    std::vector<std::uint8_t> with_new_id();
    void finish(bool ok, std::span<const std::uint8_t> reply, const std::string& server);
    /// The query as the client's side sent it (its ID is rewritten per attempt).
    [[nodiscard]] std::span<const std::uint8_t> query() const noexcept {
        return std::span(keyed_query_).first(keyed_query_.size() - kRouteOctets);
    }

    /// First, so it is destroyed last: every member below allocates from it.
    std::shared_ptr<FlightMemory> memory_;
    Forwarder* owner_;
    asio::io_context& io_;
    UdpPool& pool_;
    EncryptedPool& encrypted_;
    FlightDeadlines& deadlines_;
    std::shared_ptr<RouteState> route_;
    FlightSettings settings_;
    /// write_flight_key()'s layout: the query, then the route. query() and key() view it.
    std::pmr::vector<std::uint8_t> keyed_query_;
    RandomSource& random_;
    std::shared_ptr<Stats> stats_;
    Callback first_waiter_;
    std::vector<Callback> more_waiters_;  ///< callers that joined the first one's question
    std::pmr::vector<std::size_t> order_;
    std::size_t next_ = 0;            ///< next index into order_
    std::size_t current_server_ = 0;  ///< server of the attempt whose deadline is armed
    bool attempt_hedging_ = false;    ///< the armed attempt deadline is a hedge's delay
    Due total_due_{*this, &Flight::on_total_due};
    Due attempt_due_{*this, &Flight::on_attempt_due};
    /// A list: the pool holds each attempt's address until it is cancelled.
    std::pmr::list<UdpAttempt> udp_;
    std::vector<std::unique_ptr<TcpAttempt>> tcp_;
    bool done_ = false;
};

}  // namespace moat::upstream
