// Where forwarded queries go and how patiently (mapped by the app from the config's [upstream]).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moat/core/ip.hpp"

namespace moat::upstream {

enum class Protocol : std::uint8_t {
    udp,    ///< plain DNS: UDP, then TCP for a truncated answer
    tls,    ///< DNS over TLS (RFC 7858), one reused connection with pipelining
    https,  ///< DNS over HTTPS (RFC 8484), one reused HTTP/2 connection
};

struct ServerAddress {
    ServerAddress() = default;
    /// A plain DNS server.
    ServerAddress(IpAddress a, std::uint16_t p) : address(a), port(p) {}

    IpAddress address;
    std::uint16_t port = 53;
    Protocol protocol = Protocol::udp;
    /// TLS and HTTPS: the name the certificate must carry, sent as SNI (an address in text
    /// form checks the certificate's IP entries). HTTPS: also the :authority.
    std::string name;
    std::string path;      ///< HTTPS: the URL path
    bool resolve = false;  ///< `address` unknown: resolve `name` through Options::bootstrap
    /// SPKI SHA-256 pins (base64): the certificate's key must be one of them; empty: any key
    /// the CA vouches for.
    std::vector<std::string> pins;
    std::string text;  ///< as configured ("tls://9.9.9.9#dns.quad9.net"); "" for ADDR:PORT

    friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

enum class Strategy : std::uint8_t {
    failover,  ///< in order, skipping servers that failed repeatedly
    fastest,   ///< lowest smoothed RTT first, probing the others now and then
    hedge,     ///< in order; the next one is asked too once hedge_delay passes unanswered
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
    /// hedge: the delay before the next server is asked too; absent: the p90 of the current
    /// server's recent round trips (kDefaultHedgeDelay until it has some).
    std::optional<std::chrono::milliseconds> hedge_delay;
    /// Plain DNS servers that resolve the names of encrypted upstreams.
    std::vector<ServerAddress> bootstrap;
    /// PEM file of the CAs encrypted upstreams are verified against; "" for the system store.
    std::string tls_ca_file;
};

inline constexpr std::chrono::milliseconds kDefaultHedgeDelay{100};

}  // namespace moat::upstream
