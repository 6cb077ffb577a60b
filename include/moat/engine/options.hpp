// What the engine is told by the app (mapped from the config file; the engine never sees it).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/wire/name.hpp"

namespace moat::engine {

enum class BlockingMode : std::uint8_t {
    null_ip,   ///< 0.0.0.0 / :: for A/AAAA, NODATA for other types
    nxdomain,  ///< NXDOMAIN
    refused,   ///< REFUSED
    custom,    ///< the custom addresses for A/AAAA, NODATA for other types
};

struct BlockingOptions {
    BlockingMode mode = BlockingMode::null_ip;
    IpAddress custom_ipv4 = IpAddress::v4_of(0, 0, 0, 0);
    IpAddress custom_ipv6{{}, true};
    std::uint32_t ttl = 2;  ///< seconds
    /// Block a forwarded answer whose CNAME chain leads to a blocked name (unless the query
    /// name itself matched an allow rule); such an answer is not cached.
    bool cname_inspection = true;
    /// Put the blocking list's name in the EXTRA-TEXT of the EDE 15 (Blocked) of an answer, so
    /// a client (`dig`, `kdig`) sees which list blocked the name.
    bool ede_list_name = true;
};

/// Names under `domains` (and the domains themselves) are forwarded to upstream route `index`
/// (route 0 is the default upstreams; conditional routes count from 1).
struct ConditionalRoute {
    std::vector<wire::Name> domains;
};

struct EngineOptions {
    /// Clients outside every prefix get REFUSED. Empty: nobody is served.
    std::vector<Cidr> allowed_clients;
    BlockingOptions blocking;
    /// In config order; the route of the first entry is 1.
    std::vector<ConditionalRoute> conditional;
    /// Remove EDNS Client Subnet before forwarding (privacy); off: the client's ECS is passed on.
    bool strip_ecs = true;
    /// Answer reverse lookups of private ranges (RFC 1918, CGNAT, ULA, link-local; RFC 6303)
    /// with NXDOMAIN instead of leaking them upstream, unless a conditional route covers them.
    bool answer_private_reverse = true;
    /// The EDNS UDP payload size we advertise and the cap of UDP answers (DNS flag day 2020).
    std::uint16_t udp_payload_size = 1232;
    /// Answer iCloud Private Relay's names (mask.icloud.com, mask-h2.icloud.com) with NXDOMAIN,
    /// so Apple devices do not route around the lists. (The Firefox canary, `resolver.arpa` and
    /// `.local` are always answered here: src/engine/special_names.hpp.)
    bool block_icloud_private_relay = true;
    /// DNS-rebinding protection: an upstream answer with an internal address (RFC 1918,
    /// loopback, link-local, CGNAT, ULA) for a name outside `rebind_allowed` and outside every
    /// conditional route gets an empty answer with EDE 17 (Filtered) instead. Off by default.
    bool rebind_protection = false;
    std::vector<wire::Name> rebind_allowed;  ///< these domains and everything below them
    /// TTL of local answers and of `localhost`, seconds.
    std::uint32_t local_ttl = 300;
};

}  // namespace moat::engine
