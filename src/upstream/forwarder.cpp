#include "moat/upstream/forwarder.hpp"

#include <asio/post.hpp>

#include "encrypted_pool.hpp"
#include "flight.hpp"
#include "moat/core/log.hpp"
#include "random_source.hpp"
#include "route_state.hpp"
#include "udp_pool.hpp"

namespace moat::upstream {
namespace {

RandomSource& random_source() {
    static RandomSource source;  // the event loop's thread only
    return source;
}

std::vector<std::shared_ptr<RouteState>> make_routes(
    const Options& options, const std::vector<std::shared_ptr<RouteState>>& previous) {
    std::vector<std::shared_ptr<RouteState>> routes;
    for (std::size_t i = 0; i < options.routes.size(); ++i) {
        const RouteState* old = i < previous.size() ? previous[i].get() : nullptr;
        routes.push_back(std::make_shared<RouteState>(options.routes[i], old));
    }
    return routes;
}

}  // namespace

Forwarder::Forwarder(asio::io_context& io, Options options)
    : io_(io),
      options_(std::move(options)),
      routes_(make_routes(options_, {})),
      memory_(make_flight_memory()),
      flights_(memory_.get()),
      stats_(std::make_shared<Stats>()),
      pool_(std::make_unique<UdpPool>(io, random_source(), stats_)),
      encrypted_(std::make_unique<EncryptedPool>(io)),
      deadlines_(std::make_unique<FlightDeadlines>(io)),
      start_at_turn_end_(TurnEnd::of(io), [this] { start_flights(); }) {
    if (const std::string error = encrypted_->configure(options_); !error.empty()) {
        log::error("upstream: {}; encrypted upstreams cannot be used", error);
    }
}

Forwarder::~Forwarder() {
    cancel_all();
    encrypted_->shutdown();
}

void Forwarder::forward(std::span<const std::uint8_t> query, std::size_t route, Callback done) {
    Stats::bump(stats_->queries);
    const bool routable =
        route < routes_.size() && !routes_[route]->servers().empty() && query.size() >= 12;
    // Identical questions share one upstream query: the key is the route and every byte of the
    // query after the ID (name, type, class, DO, options). Joining costs no socket, so it is
    // allowed even when max_in_flight distinct questions are out.
    if (routable) {
        key_scratch_.resize(query.size() + kRouteOctets);
        write_flight_key(query, route, key_scratch_);
        if (const auto it = flights_.find(flight_key(key_scratch_)); it != flights_.end()) {
            Stats::bump(stats_->coalesced);
            it->second->add_waiter(std::move(done));
            return;
        }
    }
    if (!routable || flights_.size() >= options_.max_in_flight) {
        if (routable) {
            Stats::bump(stats_->overloaded);
        }
        Stats::bump(stats_->failed);
        asio::post(io_, [done = std::move(done)] { done(Result{}); });
        return;
    }
    auto flight = std::allocate_shared<Flight>(SharedPoolAllocator<Flight>(memory_), *this, io_,
                                               *pool_, *encrypted_, *deadlines_, routes_[route],
                                               route, FlightSettings::of(options_), query, memory_,
                                               random_source(), stats_);
    flight->add_waiter(std::move(done));
    flights_.emplace(flight->key(), flight);
    starting_.push_back(std::move(flight));
    start_at_turn_end_.defer();
}

void Forwarder::start_flights() {
    std::swap(started_, starting_);
    for (const auto& flight : started_) {
        flight->start();  // does nothing when cancelled meanwhile
    }
    started_.clear();
}

void Forwarder::reconfigure(Options options) {
    options_ = std::move(options);
    routes_ = make_routes(options_, routes_);
    if (const std::string error = encrypted_->configure(options_); !error.empty()) {
        log::error("upstream: {}; encrypted upstreams cannot be used", error);
    }
}

void Forwarder::cancel_all() {
    auto flights = std::move(flights_);
    flights_.clear();
    for (auto& [key, flight] : flights) {
        flight->cancel();
    }
}

void Forwarder::finished(std::string_view key) { flights_.erase(key); }

}  // namespace moat::upstream

namespace moat::upstream {

std::vector<ServerReport> Forwarder::servers() const {
    std::vector<ServerReport> out;
    for (std::size_t route = 0; route < routes_.size(); ++route) {
        for (const ServerState& s : routes_[route]->servers()) {
            out.push_back({s.text, route, s.srtt, s.consecutive_failures, s.counts});
        }
    }
    return out;
}

}  // namespace moat::upstream
