// What the engine is told by the app (mapped from the config file; the engine never sees it).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moat/core/clock.hpp"
#include "moat/core/ip.hpp"
#include "moat/core/mac.hpp"
#include "moat/engine/pauses.hpp"
#include "moat/wire/name.hpp"

namespace moat::engine {

class RateLimiter;

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

/// A weekly window of local time in which some of a group's lists count.
struct ScheduleWindow {
    std::vector<std::uint32_t> lists;  ///< list ids (filter::ListSpec::id)
    std::uint8_t days = 0x7F;          ///< bit d: the window starts on day d (0 = Monday)
    std::uint32_t from_minute = 0;     ///< after local midnight, 0..1439
    std::uint32_t to_minute = 0;       ///< <= from_minute: ends the next day
};

/// A client group: who is in it and what applies to them.
struct GroupOptions {
    std::string name;
    std::vector<Cidr> clients;
    std::vector<MacAddress> macs;  ///< looked up through EngineOptions::neighbours
    /// List ids the group uses; ignored when `every_list`.
    std::vector<std::uint32_t> lists;
    bool every_list = true;
    std::vector<ScheduleWindow> schedule;       ///< lists named here count only inside a window
    std::optional<BlockingMode> blocking_mode;  ///< unset: EngineOptions::blocking's mode
    /// The upstream route of the group's own resolvers (0: the default upstreams), and the
    /// cache partition of their answers (0: shared with the default upstreams).
    std::size_t route = 0;
    std::uint8_t cache_partition = 0;
    bool filter_aaaa = false;  ///< AAAA questions get an empty answer (broken IPv6 networks)
};

/// Where the hardware address of a client comes from (the kernel's neighbour table, read by the
/// app). Called on the query path only when a group names MAC addresses; must not block.
class NeighbourLookup {
public:
    NeighbourLookup() = default;
    NeighbourLookup(const NeighbourLookup&) = delete;
    NeighbourLookup& operator=(const NeighbourLookup&) = delete;
    virtual ~NeighbourLookup() = default;
    [[nodiscard]] virtual std::optional<MacAddress> mac_of(const IpAddress& ip) const noexcept = 0;
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
    /// Answer ANY questions over UDP with one synthesised HINFO record (RFC 8482 §4.2) instead
    /// of forwarding them: the largest answers a spoofed source could aim at someone else.
    /// Streams (TCP, DoT, DoH) still forward them.
    bool minimal_any = true;
    /// TTL of local answers and of `localhost`, seconds.
    std::uint32_t local_ttl = 300;
    /// Client groups in order (a client is in the first that names it); empty: everyone is in
    /// `default_group`. The default group's `clients` and `macs` are ignored.
    std::vector<GroupOptions> groups;
    GroupOptions default_group;
    /// Wall time for schedules (local time zone); must outlive the engine when a group has a
    /// schedule. Null: no window is ever open.
    const Clock* clock = nullptr;
    const NeighbourLookup* neighbours = nullptr;  ///< null: MAC addresses never match
    /// Blocking paused by the user (needs `clock`); null: never paused.
    const Pauses* pauses = nullptr;
    /// Per-client rate limit (needs `clock`); null: none. Consulted before access control, so
    /// a flood from outside costs no more than its drop.
    RateLimiter* rate_limiter = nullptr;
};

}  // namespace moat::engine
