// Counters of the answer cache, summed over its shards by Cache::stats().
//
// A snapshot: each counter is read once with relaxed ordering, so the fields need not agree with
// each other exactly while other threads use the cache. Counters only grow, except entries and
// bytes, which are gauges.
#pragma once

#include <cstdint>

namespace moat::cache {

struct Stats {
    std::uint64_t hits = 0;        ///< fresh answers served
    std::uint64_t stale_hits = 0;  ///< expired answers served (LookupMode::stale, optimistic)
    std::uint64_t prefetches = 0;  ///< hits that asked for a refresh (Hit::refresh), either kind
    std::uint64_t misses = 0;      ///< lookups that found nothing usable (including no_space)
    std::uint64_t inserts = 0;     ///< answers stored (a replacement counts as one insert)
    std::uint64_t rejected = 0;    ///< answers not stored (any insert error)
    std::uint64_t evictions = 0;   ///< entries removed to respect the byte bound
    std::uint64_t entries = 0;     ///< entries held now
    std::uint64_t bytes = 0;       ///< octets held now, as the byte bound counts them
};

}  // namespace moat::cache
