#include "sort_entries.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace moat::filter {
namespace {

/// Entries ahead of a bucket's next slot to prefetch: two cache lines of keys (8 and 32 gave
/// less and the same).
constexpr std::uint32_t kPrefetchAhead = 16;

/// One American-flag pass, in place: moves every entry of buckets [0, buckets) into its bucket.
/// `next[b]` starts at bucket b's first slot and `end_of(b)` is its end; `bucket_of(key)` is the
/// bucket of a key (relative to the same origin). Each swap puts one entry in its final bucket,
/// so the pass is linear.
template <typename EndOf, typename BucketOf>
void flag_pass(Columns& c, std::uint32_t* next, std::size_t buckets, EndOf end_of,
               BucketOf bucket_of) noexcept {
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::uint32_t end = end_of(b);
        while (next[b] < end) {
            const std::uint32_t i = next[b];
            const std::size_t home = bucket_of(c.keys[i]);
            if (home == b) {
                ++next[b];
            } else {
                const std::uint32_t to = next[home]++;
                // Every bucket fills front to back: 256 write streams, too many for the CPU's
                // prefetcher. Asking for a later slot of this stream now has it in cache when a
                // swap reaches it; without, the first pass waits on memory at every cache line.
                c.prefetch(std::min(to + kPrefetchAhead, end_of(home)));
                c.swap(i, to);
            }
        }
    }
}

/// Counts the entries [begin, end) per bucket into `starts` (buckets + 1 slots) and turns the
/// counts into where each bucket starts: starts[b] for bucket b, starts[buckets] == end.
template <typename BucketOf>
void bucket_starts(const Columns& c, std::uint32_t begin, std::uint32_t end, std::uint32_t* starts,
                   std::size_t buckets, BucketOf bucket_of) noexcept {
    std::fill_n(starts, buckets + 1, 0U);
    for (std::uint32_t i = begin; i < end; ++i) {
        ++starts[bucket_of(c.keys[i]) + 1];
    }
    starts[0] = begin;
    for (std::size_t b = 1; b <= buckets; ++b) {
        starts[b] += starts[b - 1];
    }
}

}  // namespace

unsigned sort_bits(std::size_t entries) noexcept {
    const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(entries / 4, 2));
    return static_cast<unsigned>(std::countr_zero(buckets));
}

CoarseBuckets spread_coarse(Columns& c, std::size_t n, unsigned bits) noexcept {
    // Two flag passes keep the swaps cache-friendly: this one spreads over at most 256 coarse
    // buckets (256 write streams), sort_fine() sorts each coarse bucket, small enough to stay in
    // cache, on the remaining bits; then each of those buckets (2-4 entries) by insertion.
    const unsigned coarse_bits = std::min(bits, kCoarseBits);
    CoarseBuckets b;
    b.count = std::size_t{1} << coarse_bits;
    const auto coarse_of = [&](std::uint64_t key) {
        return static_cast<std::size_t>(key >> (64 - coarse_bits));
    };
    bucket_starts(c, 0, static_cast<std::uint32_t>(n), b.start.data(), b.count, coarse_of);
    std::array<std::uint32_t, 256> next{};
    std::copy_n(b.start.begin(), b.count, next.begin());
    flag_pass(
        c, next.data(), b.count, [&](std::size_t k) { return b.start[k + 1]; }, coarse_of);
    return b;
}

std::size_t sort_fine(Columns& c, const CoarseBuckets& b, unsigned bits, std::size_t first,
                      std::size_t last, ListSets& sets) {
    const unsigned fine_bits = bits - std::min(bits, kCoarseBits);
    const std::size_t fine = std::size_t{1} << fine_bits;
    std::vector<std::uint32_t> fine_start(fine + 1);
    std::vector<std::uint32_t> fine_next(fine);
    const std::uint32_t front = b.start[first];
    std::size_t kept = front;
    for (std::size_t k = first; k < last; ++k) {
        const std::uint32_t begin = b.start[k];
        const std::uint32_t end = b.start[k + 1];
        const std::size_t first_fine = k << fine_bits;
        const auto fine_of = [&](std::uint64_t key) {
            return static_cast<std::size_t>(key >> (64 - bits)) - first_fine;
        };
        bucket_starts(c, begin, end, fine_start.data(), fine, fine_of);
        std::copy_n(fine_start.begin(), fine, fine_next.begin());
        flag_pass(
            c, fine_next.data(), fine, [&](std::size_t f) { return fine_start[f + 1]; }, fine_of);
        for (std::size_t f = 0; f < fine; ++f) {
            for (std::size_t i = fine_start[f] + 1; i < fine_start[f + 1]; ++i) {
                for (std::size_t j = i; j > fine_start[f] && c.less(j, j - 1); --j) {
                    c.swap(j, j - 1);
                }
            }
        }
        // Compact forward: `kept` never passes `i`, and equal keys sit in one bucket, next to
        // each other, the one to keep first.
        for (std::size_t i = begin; i < end; ++i) {
            if (kept > front && c.keys[kept - 1] == c.keys[i]) {
                std::uint16_t& survivor = c.meta[kept - 1];
                const std::uint16_t lists =
                    sets.merge(static_cast<std::uint16_t>(survivor & NameHashSet::kMaxList),
                               static_cast<std::uint16_t>(c.meta[i] & NameHashSet::kMaxList));
                survivor = static_cast<std::uint16_t>(
                    lists | ((survivor | c.meta[i]) & NameHashSet::kImportantBit));
                continue;
            }
            if (kept != i) {
                c.move(i, kept);
            }
            ++kept;
        }
    }
    return kept - front;
}

}  // namespace moat::filter
