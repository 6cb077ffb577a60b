// One lock's worth of the answer cache: a hash table of entries, a CLOCK ring for eviction, a
// byte budget and the blocks of evicted entries kept for the next ones. Private to the cache
// module; Cache spreads keys over its shards by hash.
//
// Invariants (under the exclusive lock): every entry is owned by ring[entry.ring_index] and
// indexed once in `index`; the other ring slots are null and listed in `free_slots`; `bytes` is
// the sum of the entries' charges and never exceeds the budget after an insert; the recycler's
// parked blocks are not charged and stay under a 64th of the budget. Entry keys point
// into the entry's own storage, which does not move while the entry lives.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <tl/expected.hpp>
#include <vector>

#include "entry_index.hpp"
#include "entry_recycler.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_error.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/cache/options.hpp"
#include "moat/cache/stats.hpp"
#include "moat/core/clock.hpp"
#include "moat/core/guarded.hpp"
#include "prepared_answer.hpp"

namespace moat::cache {

/// A key that points at a name stored elsewhere: the probe form of CacheKey and the map key.
struct KeyRef {
    const std::uint8_t* name = nullptr;
    std::uint64_t hash = 0;
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;
    std::uint8_t name_length = 0;
    bool dnssec_ok = false;
    std::uint8_t partition = 0;

    static KeyRef of(const CacheKey& key) noexcept {
        return {key.name().data(),
                key.hash(),
                key.qtype(),
                key.qclass(),
                static_cast<std::uint8_t>(key.name().size()),
                key.dnssec_ok(),
                key.partition()};
    }
};

struct KeyRefEqual {
    bool operator()(const KeyRef& a, const KeyRef& b) const noexcept;
};

/// A stored answer, allocated as one block: this header, then, back to back, the lower-cased key
/// name, the offset of each TTL field in the answer (native-endian u16s) and the answer bytes.
/// A hit touches the header's line, which usually holds the start of the name too, and then the
/// answer; there is no second allocation to chase.
struct Entry {
    KeyRef key;  ///< its name points into the entry's own storage
    Clock::time_point inserted;
    Clock::duration lifetime{};  ///< whole seconds
    std::uint32_t charge = 0;    ///< octets counted against the budget
    std::uint32_t ring_index = 0;
    std::uint32_t storage_size = 0;  ///< octets stored after the header
    /// When a hit last asked for this answer's refresh (Hit::refresh): 1 + the entry's age in
    /// whole seconds then; 0 if none has. Claimed by compare-exchange under the shared lock, so
    /// that only one of the hits that see it unclaimed (or due again) asks.
    mutable std::atomic<std::uint32_t> refresh_asked{0};
    std::uint16_t ttl_count = 0;  ///< TTL offsets stored after the name
    std::uint8_t name_length = 0;
    /// CLOCK reference bit: set by hits under the shared lock, cleared by the sweeping writer.
    mutable std::atomic<bool> referenced{false};
    /// The blocklist snapshot that last passed this name, as Cache::lookup() was told
    /// (`passed_under`); 0 when none has. Set by hits under the shared lock. In the header's
    /// padding: the entry keeps its 64 octets.
    mutable std::atomic<std::uint32_t> passed_under{0};

    struct Free {
        void operator()(Entry* entry) const noexcept;
    };
    using Owner = std::unique_ptr<Entry, Free>;
    /// A new entry in `block`, from operator new or EntryRecycler, with `storage_size` octets
    /// after the header.
    static Owner make(void* block, std::size_t storage_size) noexcept;

    /// The octets the block of an entry storing `storage_size` octets has.
    [[nodiscard]] static constexpr std::size_t block_size(std::size_t storage_size) noexcept {
        return EntryRecycler::block_size(sizeof(Entry) + storage_size);
    }

    [[nodiscard]] std::uint8_t* storage() noexcept {
        return reinterpret_cast<std::uint8_t*>(this + 1);
    }
    [[nodiscard]] const std::uint8_t* storage() const noexcept {
        return reinterpret_cast<const std::uint8_t*>(this + 1);
    }
    [[nodiscard]] const std::uint8_t* ttl_offsets() const noexcept {
        return storage() + name_length;
    }
    [[nodiscard]] std::span<const std::uint8_t> answer() const noexcept {
        const std::size_t skip = name_length + ttl_count * sizeof(std::uint16_t);
        return {storage() + skip, storage_size - skip};
    }
};

class alignas(64) Shard {
public:
    /// `clock` and `options` must outlive the shard.
    Shard(const Clock& clock, const Options& options, std::size_t max_bytes) noexcept
        : clock_(clock),
          options_(options),
          max_bytes_(max_bytes),
          table_(std::in_place, max_bytes / kParkedShare) {}

    /// Cache::lookup() and Cache::lookup_if_passed(): `passed` is the snapshot mark to record
    /// on a hit, or with `required` the one the entry must already hold (else Errc::unchecked,
    /// nothing written or counted).
    tl::expected<Hit, Errc> lookup(const CacheKey& key, std::uint16_t id,
                                   std::span<std::uint8_t> out, LookupMode mode,
                                   Clock::time_point now, std::uint32_t passed = 0,
                                   bool required = false) noexcept;
    tl::expected<void, Errc> insert(const CacheKey& key, const PreparedAnswer& prepared);
    void count_rejected() noexcept { rejected_.fetch_add(1, std::memory_order_relaxed); }
    /// Prefetches the index slot of `hash` from the hints publish_gauges() leaves (no lock).
    void prefetch(std::uint64_t hash) const noexcept {
        const std::uint8_t* const slots = slots_hint_.load(std::memory_order_relaxed);
        if (slots != nullptr) {
            const std::size_t slot = hash & slot_mask_hint_.load(std::memory_order_relaxed);
            __builtin_prefetch(slots + slot * EntryIndex::kSlotBytes);
        }
    }
    /// Under the shared lock, prefetches the first lines of the entry whose slot holds `hash`;
    /// false when no slot does.
    [[nodiscard]] bool prefetch_entry(std::uint64_t hash) const noexcept;
    void note_miss() noexcept { misses_.fetch_add(1, std::memory_order_relaxed); }
    void erase(const CacheKey& key) noexcept;
    void flush() noexcept;
    /// Adds this shard's counters to `stats`.
    void add_to(Stats& stats) const noexcept;

private:
    /// The recycler keeps at most this share of the budget: enough blocks of the common
    /// classes for a full cache's evict-one-store-one turnover (a 32 MiB cache in 16 shards
    /// parks up to 32 KiB each, 200 blocks of a one-address answer).
    static constexpr std::size_t kParkedShare = 64;

    struct Table {
        explicit Table(std::size_t parked_limit) noexcept : recycler(parked_limit) {}

        EntryIndex index;
        std::vector<Entry::Owner> ring;  ///< owns the entries; null slots are free
        std::vector<std::size_t> free_slots;
        std::size_t hand = 0;
        std::size_t bytes = 0;
        EntryRecycler recycler;
    };

    /// Serves `entry` into `out`; the shared lock is held.
    tl::expected<Hit, Errc> serve(const Entry& entry, const CacheKey& key, std::uint16_t id,
                                  std::span<std::uint8_t> out, LookupMode mode,
                                  Clock::time_point now) const noexcept;
    /// True when a fresh hit on `entry` at `age` is the one to ask for its refresh: it is in the
    /// entry's last tenth and no hit has asked before (claims the entry's refresh when so).
    [[nodiscard]] bool claims_refresh(const Entry& entry, Clock::duration age) const noexcept;
    /// True when an optimistic hit on the expired `entry` at `age` is the one to ask for its
    /// refresh: no hit has asked in the last stale_ttl seconds (claims it when so).
    [[nodiscard]] bool claims_stale_refresh(const Entry& entry, Clock::duration age) const noexcept;
    /// True when a lookup in `mode` may serve an expired entry.
    [[nodiscard]] bool serves_expired(LookupMode mode) const noexcept;
    /// True when expired entries are kept for the stale or optimistic modes.
    [[nodiscard]] bool keeps_expired() const noexcept {
        return options_.serve_stale || options_.optimistic;
    }
    /// True when `entry` can serve no lookup any more, fresh or stale.
    [[nodiscard]] bool dead(const Entry& entry, Clock::time_point now) const noexcept;
    /// Unindexes `entry` and hands its block to the recycler.
    void remove(Table& table, Entry& entry) noexcept;
    /// Evicts one entry by CLOCK; the table must not be empty.
    void evict_one(Table& table, Clock::time_point now);
    void publish_gauges(const Table& table) noexcept;

    const Clock& clock_;
    const Options& options_;
    std::size_t max_bytes_;
    Guarded<Table, std::shared_mutex> table_;

    std::atomic<std::uint64_t> hits_{0};
    std::atomic<std::uint64_t> stale_hits_{0};
    std::atomic<std::uint64_t> prefetches_{0};
    std::atomic<std::uint64_t> misses_{0};
    std::atomic<std::uint64_t> inserts_{0};
    std::atomic<std::uint64_t> rejected_{0};
    std::atomic<std::uint64_t> evictions_{0};
    std::atomic<std::uint64_t> entries_{0};  ///< mirrors of the table, for lock-free stats
    std::atomic<std::uint64_t> bytes_{0};
    // Where the index's slots are, for prefetch(): written under the exclusive lock whenever
    // the gauges are, read without it. Only ever a hint.
    std::atomic<const std::uint8_t*> slots_hint_{nullptr};
    std::atomic<std::size_t> slot_mask_hint_{0};
};

}  // namespace moat::cache
