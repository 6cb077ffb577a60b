// Insert-time analysis of an upstream answer: is it cacheable, for how long, and where are the
// TTL fields a hit must rewrite. Private to the cache module.
//
// All parsing happens here or in the caller's RecordWalk, once per insert, so a lookup only
// copies bytes and patches the offsets found then. The prepared bytes are a copy of the answer
// with every record TTL already clamped (and, for a negative answer, capped at the negative
// TTL); a hit subtracts the age.
#pragma once

#include <cstdint>
#include <span>
#include <tl/expected.hpp>
#include <vector>

#include "moat/cache/cache_error.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/cache/options.hpp"
#include "moat/cache/record_walk.hpp"

namespace moat::cache {

/// Filled by prepare_answer(); one per thread is reused, so its vectors keep their capacity and
/// an insert takes nothing from the heap but the entry it stores.
struct PreparedAnswer {
    std::vector<std::uint8_t> bytes;  ///< the answer, TTLs clamped
    RecordWalk own_walk;              ///< the walk, when prepare_answer() made it
    /// Offset of each TTL field in bytes (no OPT): own_walk's or the caller's walk's.
    std::span<const std::uint16_t> ttl_offsets;
    std::uint32_t lifetime = 0;  ///< seconds: the smallest stored TTL (> 0)
    bool negative = false;       ///< NXDOMAIN or NODATA
};

/// Checks `answer` against the caching rules (see docs/cache.md) and prepares it for `key` in
/// `out` (whatever it held is replaced), parsing and walking its records.
tl::expected<void, Errc> prepare_answer(const CacheKey& key, std::span<const std::uint8_t> answer,
                                        const Options& options, PreparedAnswer& out);

/// The same with the records already walked by the caller into `walk`, which must outlive the
/// use of `out`: the header and question are checked, the records not parsed again.
tl::expected<void, Errc> prepare_walked_answer(const CacheKey& key,
                                               std::span<const std::uint8_t> answer,
                                               const RecordWalk& walk, const Options& options,
                                               PreparedAnswer& out);

}  // namespace moat::cache
