// What the dashboard's overview shows, kept in memory so it answers at once: queries, blocked and
// cached per 10-minute bucket over the last 24 hours, and the most asked names, most blocked names
// and busiest clients over the same day.
//
// The rankings are approximate but bounded: each bucket keeps at most kTopSlots names per ranking
// with the space-saving algorithm (Metwally et al., 2005), so a flood of random names costs a
// fixed amount of memory, and any name asked more often than 1/kTopSlots of a bucket's queries is
// always counted, with an over-count of at most that share. Counts per bucket are exact.
//
// Fed from the log writer's thread (after the privacy level: a hidden name is never ranked) and
// read by the API on the event loop, hence the mutex. Rebuilt at start from the log's last day
// (Database::replay). Times are microseconds since the Unix epoch, passed in (no clock here).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "moat/core/string_map.hpp"
#include "moat/querylog/entry.hpp"
#include "moat/querylog/summary.hpp"

namespace moat::querylog {

/// The heaviest keys of one stream in bounded memory (space-saving).
///
/// The keys kept sit in a hash map searched by string_view; a binary min-heap of pointers to its
/// entries, ordered by count, names the entry a newcomer replaces. A flood of distinct names,
/// each one replacing the smallest, so costs a few swaps per name rather than a scan of every
/// slot, and the replaced entry's node (its string's buffer too) is reused for the newcomer.
/// The heap is built by the first add() after release_heap(), so a counter no longer fed holds
/// only its keys and counts.
class TopCounter {
public:
    explicit TopCounter(std::size_t slots) : slots_(slots) {}
    // The heap points into the map's nodes: a copy would point into the original's. A move
    // carries the nodes over, and the pointers with them.
    TopCounter(const TopCounter&) = delete;
    TopCounter& operator=(const TopCounter&) = delete;
    TopCounter(TopCounter&&) noexcept = default;
    TopCounter& operator=(TopCounter&&) noexcept = default;
    ~TopCounter() = default;

    /// Counts saturate at 2^32 - 1, four billion in one counter (a bucket is 10 minutes).
    void add(std::string_view key, std::uint64_t weight);
    /// Frees the heap (8 bytes a key kept); the next add() builds it again from the counts.
    void release_heap() noexcept {
        heap_.clear();
        heap_.shrink_to_fit();
    }
    /// Every key kept, with its (possibly over-estimated) count.
    template <typename F>
    void for_each(F&& f) const {
        for (const auto& [key, slot] : counts_) {
            f(key, std::uint64_t{slot.count});
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return counts_.size(); }

private:
    struct Slot {  // 8 bytes, as the 64-bit count alone was before the heap
        std::uint32_t count = 0;
        std::uint32_t heap_index = 0;  ///< where heap_ points at this entry
    };
    using Kept = StringMap<Slot>::value_type;

    void build_heap();
    /// Moves heap_[i] towards the leaves until no child counts less (after its count grew).
    void sift_down(std::size_t i) noexcept;
    /// Moves heap_[i] towards the root until its parent counts no more (a new entry).
    void sift_up(std::size_t i) noexcept;
    void place(std::size_t i, Kept* kept) noexcept {
        heap_[i] = kept;
        kept->second.heap_index = static_cast<std::uint32_t>(i);
    }

    std::size_t slots_;
    StringMap<Slot> counts_;
    std::vector<Kept*> heap_;  ///< min-heap by count; pointers to map nodes stay valid on rehash
};

/// The outcome classes the overview counts.
struct Counts {
    std::uint64_t queries = 0;
    std::uint64_t blocked = 0;
    std::uint64_t cached = 0;     ///< cached and stale
    std::uint64_t forwarded = 0;  ///< answered by an upstream
    std::uint64_t local = 0;
    std::uint64_t errors = 0;  ///< refused, formerr, notimp, servfail, dropped

    void add(std::string_view outcome, std::uint64_t n) noexcept;
    Counts& operator+=(const Counts& o) noexcept;
};

struct BucketCounts {
    std::int64_t start_us = 0;
    Counts counts;
};

class RollingStats {
public:
    static constexpr std::int64_t kBucketUs = 600'000'000;  // 10 minutes
    static constexpr std::size_t kBuckets = 144;            // 24 hours
    static constexpr std::size_t kTopSlots = 256;           // names per ranking per bucket

    RollingStats();

    /// One query as the log stored it (after the privacy level).
    void add(const Entry& entry);
    /// Only counted, never ranked (privacy "anonymous").
    void count(const Entry& entry);
    /// `n` queries of one kind at `time_us` (rebuilding from the log): domain and client may be
    /// empty when not to be ranked.
    void add(std::int64_t time_us, std::string_view outcome, std::string_view domain,
             std::string_view client, std::uint64_t n);
    /// One query answered just now (the log writer's feed; domain and client may be empty).
    void add_now(std::int64_t time_us, std::string_view outcome, std::string_view domain,
                 std::string_view client) {
        add(time_us, outcome, domain, client, 1, true);
    }

    /// The last 24 h as of `now_us`.
    [[nodiscard]] Counts totals(std::int64_t now_us) const;
    /// Every bucket of the last 24 h as of `now_us`, oldest first, empty ones included.
    [[nodiscard]] std::vector<BucketCounts> history(std::int64_t now_us) const;
    struct Top {
        std::vector<Ranked> domains;
        std::vector<Ranked> blocked;
        std::vector<Ranked> clients;
        std::size_t distinct_clients = 0;  ///< clients ranked in the day (at most the slots kept)
    };
    [[nodiscard]] Top top(std::int64_t now_us, std::size_t count) const;

private:
    struct Bucket {
        std::int64_t index = -1;  ///< start / kBucketUs; -1: never used
        Counts counts;
        TopCounter domains{kTopSlots};
        TopCounter blocked{kTopSlots};
        TopCounter clients{kTopSlots};

        void release_heaps() noexcept {
            domains.release_heap();
            blocked.release_heap();
            clients.release_heap();
        }
    };
    /// The bucket for `time_us`, reset first if it held an older period; null when `time_us` is
    /// older than the day the ring holds, unless the query happened just now (`live`): then the
    /// wall clock went back more than a day, and the ring follows it.
    Bucket* bucket_for(std::int64_t time_us, bool live);
    void add(std::int64_t time_us, std::string_view outcome, std::string_view domain,
             std::string_view client, std::uint64_t n, bool live);
    [[nodiscard]] bool live(const Bucket& b, std::int64_t now_us) const noexcept;

    mutable std::mutex mutex_;
    std::vector<Bucket> ring_;
    std::int64_t newest_index_ = -1;
    /// The buckets last fed by queries as they come and by the rebuild from the log, the only
    /// ones whose rankings hold heaps: a bucket is fed for its 10 minutes, and the rebuild feeds
    /// one bucket after another while queries go on coming (two feeds, so that neither makes the
    /// other's heaps be built again at every row).
    Bucket* fed_live_ = nullptr;
    Bucket* fed_rebuilt_ = nullptr;
};

}  // namespace moat::querylog
