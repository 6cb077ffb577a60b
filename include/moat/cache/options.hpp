// Knobs of the answer cache. `app` fills them from the config file; the cache never reads config.
//
// All durations are whole seconds as DNS TTLs are. Values out of range are brought into range by
// the Cache constructor (see each field), never rejected, so a config mistake cannot stop a start.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moat::cache {

struct Options {
    /// Upper bound of the cache's own accounting (answer bytes + key + TTL offsets + a fixed
    /// per-entry overhead), in octets. Split evenly over the shards. Default 32 MiB.
    std::size_t max_bytes = std::size_t{32} << 20U;
    /// Number of independently locked shards; rounded up to a power of two in 1..256. More shards
    /// mean fewer readers and writers on the same lock. Tests use 1 to see a single LRU order.
    std::size_t shards = 16;

    /// Every record TTL is raised to at least this (seconds). Default 0: answers are kept for
    /// exactly as long as the authority says.
    std::uint32_t min_ttl = 0;
    /// Every record TTL is lowered to at most this (seconds). Default 1 day.
    std::uint32_t max_ttl = 86400;
    /// Negative answers (NXDOMAIN, NODATA) live at most this long (seconds), after the RFC 2308
    /// min(SOA TTL, SOA MINIMUM) and the min_ttl raise. Default 1 hour (RFC 2308 §5 suggests
    /// 1 to 3 hours as a maximum). 0 disables negative caching.
    std::uint32_t max_negative_ttl = 3600;

    /// Keep expired entries for serve-stale lookups (RFC 8767). Off (and `optimistic` off too):
    /// LookupMode::stale behaves as LookupMode::fresh and expired entries are the first evicted.
    bool serve_stale = false;
    /// TTL written into every record of a stale answer (seconds). RFC 8767 §4 suggests 30.
    std::uint32_t stale_ttl = 30;
    /// How long after expiry an entry may still be served stale (seconds). Default 1 day
    /// (RFC 8767 §5 suggests 1 to 3 days).
    std::uint32_t max_stale_age = 86400;

    /// Refresh popular entries before they expire (unbound's `prefetch`): the first fresh hit in
    /// the last tenth of an entry's lifetime says so (Hit::refresh), once per stored answer, and
    /// the caller asks the upstream again while the client gets the cached answer. A name asked
    /// for steadily then never waits for the upstream after its first answer. (Not the CPU
    /// memory prefetch of Cache::prefetch(), which is a hint for the next lookup.)
    bool prefetch = true;
    /// Optimistic answers (unbound's `serve-expired`, AdGuard Home's optimistic cache): a lookup
    /// in LookupMode::optimistic also serves an expired entry within max_stale_age, with
    /// stale_ttl, and asks for its refresh (Hit::refresh), again every stale_ttl while no new
    /// answer replaced it (RFC 8767 §5's wait before the next try). Keeps expired entries as
    /// serve_stale does, and implies it. Off: LookupMode::optimistic behaves as fresh.
    bool optimistic = false;
};

}  // namespace moat::cache
