// The answer cache: upstream answers stored as ready-to-send wire bytes, keyed by CacheKey.
//
// Insert (on the miss path) parses the answer once, decides whether and how long to keep it
// (TTL clamps, RFC 2308 negative caching; docs/cache.md has the rules) and records where every
// TTL field sits. Lookup (the hot path) is one hash probe under a shard's shared lock, a copy
// into the caller's buffer, the caller's ID stamped and each TTL lowered by the entry's age in
// whole seconds: no parsing and no heap allocation.
//
// Concurrency: the key's hash picks one of Options::shards shards, each a hash table behind its
// own reader-writer lock (Guarded<..., std::shared_mutex>). Readers of a shard run in parallel;
// an insert, an eviction or flush() takes that shard's lock exclusively. Eviction is CLOCK (an
// LRU approximation): a hit sets the entry's reference bit with a relaxed atomic store, so it
// needs no exclusive lock; a full shard sweeps its ring, clearing bits and evicting the first
// entry without one (or any entry past its serve-stale window). Counters are relaxed atomics.
//
// Time comes from the moat::Clock given at construction, which must outlive the cache. The cache
// owns copies of everything it stores; the caller's buffers are used only during a call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <tl/expected.hpp>
#include <vector>

#include "moat/cache/cache_error.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/cache/options.hpp"
#include "moat/cache/record_walk.hpp"
#include "moat/cache/stats.hpp"
#include "moat/core/clock.hpp"

namespace moat::cache {

enum class LookupMode : std::uint8_t {
    fresh,       ///< only unexpired entries
    stale,       ///< also expired ones within Options::max_stale_age (RFC 8767); only when every
                 ///< upstream failed, and only if Options::serve_stale (or optimistic) is on
    optimistic,  ///< a client's lookup when Options::optimistic is on: fresh entries as in
                 ///< `fresh`, expired ones as in `stale` but asking for their refresh
};

/// A successful lookup.
struct Hit {
    std::size_t size = 0;  ///< octets of the answer written at the start of the caller's buffer
    bool stale = false;    ///< the entry had expired; every TTL is Options::stale_ttl
    /// The caller should ask the upstream again and insert() its answer, so that the next hits
    /// find the entry renewed. Set for the first hit in the last tenth of a fresh entry's
    /// lifetime (Options::prefetch), once per stored answer, whichever thread makes it; and in
    /// LookupMode::optimistic for the first hit on an expired entry, then again once
    /// Options::stale_ttl has passed since the last ask. Never by a lookup in LookupMode::stale.
    bool refresh = false;
};

class Shard;

class Cache {
public:
    /// `clock` must outlive the cache. Out-of-range options are brought into range (options()).
    explicit Cache(const Clock& clock, const Options& options = {});
    ~Cache();
    Cache(const Cache&) = delete;
    Cache& operator=(const Cache&) = delete;
    Cache(Cache&&) = delete;
    Cache& operator=(Cache&&) = delete;

    /// Writes the cached answer for `key` into `out` with `id` stamped and TTLs aged.
    /// Errc::miss when absent or expired; Errc::no_space when `out` is too small (also a miss in
    /// the counters). When the key came from CacheKey::from_query(), the question echoes the
    /// query's letter case. Allocation-free.
    tl::expected<Hit, Errc> lookup(const CacheKey& key, std::uint16_t id,
                                   std::span<std::uint8_t> out,
                                   LookupMode mode = LookupMode::fresh) noexcept;
    /// As above at a time the caller read from the same clock: a server that reads the clock
    /// once per batch of datagrams saves one clock read per query (about 70-110 ns on a VM
    /// without a fast vDSO clock, more than the rest of a hit).
    tl::expected<Hit, Errc> lookup(const CacheKey& key, std::uint16_t id,
                                   std::span<std::uint8_t> out, Clock::time_point now,
                                   LookupMode mode = LookupMode::fresh) noexcept;

    /// The blocklist check a hit can skip. An entry remembers the mark of the blocklist snapshot
    /// that last passed its name (filter::Snapshot::serial(), truncated; 0 is no mark), as told
    /// by lookup_noting_pass(). lookup_if_passed() serves it only when it holds `mark`, so that
    /// a caller who has not yet run that snapshot on the name can answer without it; otherwise
    /// Errc::unchecked (stored, but not passed by this snapshot: nothing written, nothing
    /// counted) or a lookup()'s error. The mark says only "no rule of every list matched": a
    /// caller that counts some lists, or found an allow rule, neither asks nor tells.
    tl::expected<Hit, Errc> lookup_if_passed(const CacheKey& key, std::uint16_t id,
                                             std::span<std::uint8_t> out, LookupMode mode,
                                             std::uint32_t mark) noexcept;
    /// lookup() by a caller whose blocklist snapshot `mark` has just passed the key's name: a
    /// hit remembers the mark (none when 0).
    tl::expected<Hit, Errc> lookup_noting_pass(const CacheKey& key, std::uint16_t id,
                                               std::span<std::uint8_t> out, LookupMode mode,
                                               std::uint32_t mark) noexcept;

    /// Asks the CPU to fetch the index slot where a lookup of `key` starts, so that its memory
    /// read overlaps the caller's other work (the engine runs the blocklist meanwhile). Takes no
    /// lock and reads nothing but two relaxed atomics: a slot array replaced since only makes
    /// the hint useless, and a prefetch never faults.
    void prefetch(const CacheKey& key) const noexcept;
    /// The next step, once the slot prefetch() asked for has had time to arrive: under the
    /// shard's shared lock, finds the slot holding the key's hash (comparing no name, which
    /// would wait for the entry) and asks the CPU to fetch the start of that entry, so that the
    /// entry's read overlaps the caller's other reads (the blocklist's keys) instead of
    /// following them. Costs a lock round trip; worth it only where the entry is likely cold.
    /// False when no slot holds the key's hash: a lookup now would miss, and the caller may
    /// skip it and note_miss() instead.
    [[nodiscard]] bool prefetch_entry(const CacheKey& key) const noexcept;
    /// Counts a miss for `key` as a lookup would, for a caller that prefetch_entry() told the
    /// key is absent.
    void note_miss(const CacheKey& key) noexcept;

    /// Stores `answer` (an upstream response to the query `key` was made from), replacing any
    /// entry for the key. The error says why it was not stored; nothing changes then.
    tl::expected<void, Errc> insert(const CacheKey& key, std::span<const std::uint8_t> answer);
    /// The same for an answer whose records the caller has walked into `walk`, at the offsets
    /// they have in `answer`: its header and question are checked, its records not parsed again.
    tl::expected<void, Errc> insert(const CacheKey& key, std::span<const std::uint8_t> answer,
                                    const RecordWalk& walk);

    /// Drops the entry for `key`, if any: an upstream's new answer to it that must not be
    /// served (Engine::refresh) leaves no expired one to be served instead.
    void erase(const CacheKey& key) noexcept;

    /// Drops every entry. Counters other than entries and bytes keep their values.
    void flush() noexcept;

    /// Counters summed over the shards (relaxed reads; see stats.hpp).
    [[nodiscard]] Stats stats() const noexcept;

    /// The options in effect, after range corrections.
    [[nodiscard]] const Options& options() const noexcept { return options_; }

private:
    [[nodiscard]] Shard& shard_for(std::uint64_t hash) const noexcept {
        // The top bits: the hash table buckets use the low ones.
        return *shards_[shard_shift_ >= 64 ? 0 : hash >> shard_shift_];
    }

    const Clock& clock_;
    Options options_;
    unsigned shard_shift_ = 64;  ///< 64 - log2(shard count)
    std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace moat::cache
