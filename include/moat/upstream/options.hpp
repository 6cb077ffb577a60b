// Where forwarded queries go and how patiently (mapped by the app from the config's [upstream]).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "moat/core/ip.hpp"

namespace moat::upstream {

struct ServerAddress {
    IpAddress address;
    std::uint16_t port = 53;

    friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

enum class Strategy : std::uint8_t {
    failover,  ///< in order, skipping servers that failed repeatedly
    fastest,   ///< lowest smoothed RTT first, probing the others now and then
};

/// One group of servers. Route 0 is the default upstreams; routes 1.. are conditional forwards.
struct Route {
    std::vector<ServerAddress> servers;
};

struct Options {
    std::vector<Route> routes;
    Strategy strategy = Strategy::failover;
    std::chrono::milliseconds timeout{2000};        ///< one attempt on one server
    std::chrono::milliseconds total_timeout{5000};  ///< the whole query, then failure
    /// Distinct questions in flight at once; more are failed at once (the client gets SERVFAIL)
    /// rather than letting a flood hold unbounded sockets and memory.
    std::size_t max_in_flight = 4096;
};

}  // namespace moat::upstream
