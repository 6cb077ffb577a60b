// Sorting a NameHashSet's entries while it is built: in place, by key, duplicates merged, with
// no memory beyond the entries but one coarse bucket's counters. (The set's peak while it is
// built is its entries with full 8-byte keys; a directory-sized array beside them would add 1 MiB
// at 1,000,000 rules. See packed_keys.hpp.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "moat/filter/list_sets.hpp"
#include "moat/filter/name_hash_set.hpp"

namespace moat::filter {

/// The parallel arrays being sorted; one swap moves an entry in all of them.
struct Columns {
    std::uint64_t* keys;
    std::uint16_t* meta;      ///< list index | NameHashSet::kImportantBit
    std::uint16_t* line_low;  ///< a line number's low 16 bits; null when lines are not kept
    std::uint8_t* line_high;  ///< its bits 16-23; null when lines are not kept

    void swap(std::size_t a, std::size_t b) noexcept {
        std::swap(keys[a], keys[b]);
        std::swap(meta[a], meta[b]);
        if (line_low != nullptr) {
            std::swap(line_low[a], line_low[b]);
            std::swap(line_high[a], line_high[b]);
        }
    }
    /// Asks the CPU to fetch entry i (at most one past the last) for writing.
    void prefetch(std::size_t i) const noexcept {
        __builtin_prefetch(keys + i, 1);
        __builtin_prefetch(meta + i, 1);
        if (line_low != nullptr) {
            __builtin_prefetch(line_low + i, 1);
            __builtin_prefetch(line_high + i, 1);
        }
    }
    [[nodiscard]] std::uint32_t line(std::size_t i) const noexcept {
        return line_low == nullptr ? 0 : line_low[i] | (std::uint32_t{line_high[i]} << 16U);
    }
    /// Sort order: hash, then the earliest list and line first (the one a duplicate keeps).
    [[nodiscard]] bool less(std::size_t a, std::size_t b) const noexcept {
        if (keys[a] != keys[b]) {
            return keys[a] < keys[b];
        }
        const auto list_a = meta[a] & NameHashSet::kMaxList;
        const auto list_b = meta[b] & NameHashSet::kMaxList;
        return list_a != list_b ? list_a < list_b : line(a) < line(b);
    }
    /// Entry `from` moves to `to` (to <= from).
    void move(std::size_t from, std::size_t to) noexcept {
        keys[to] = keys[from];
        meta[to] = meta[from];
        if (line_low != nullptr) {
            line_low[to] = line_low[from];
            line_high[to] = line_high[from];
        }
    }
};

/// log2 of the sort's bucket count: a power of two with 2-4 entries per bucket, at least two
/// buckets, so that the insertion sort of each bucket is short.
[[nodiscard]] unsigned sort_bits(std::size_t entries) noexcept;

/// The bits of a key the first pass spreads on (at most): 256 coarse buckets.
inline constexpr unsigned kCoarseBits = 8;

/// Where each coarse bucket starts after spread_coarse(); start[count] is the end.
struct CoarseBuckets {
    std::array<std::uint32_t, 257> start{};
    std::size_t count = 0;
};

/// The first pass of the sort: moves entries [0, n) into their coarse bucket (the top
/// min(bits, kCoarseBits) bits of the key), in place.
CoarseBuckets spread_coarse(Columns& c, std::size_t n, unsigned bits) noexcept;

/// The rest of the sort for coarse buckets [first, last): sorts them by key on the remaining
/// bits, then keeps one entry per key, at the front of the range (from b.start[first]): the
/// earliest (list, line), its list word the set of all their lists (from `sets`), important if
/// any was. Returns how many are kept. Equal keys share a coarse bucket, so ranges apart can be
/// sorted at once on different threads (ListSets::merge is locked).
std::size_t sort_fine(Columns& c, const CoarseBuckets& b, unsigned bits, std::size_t first,
                      std::size_t last, ListSets& sets);

}  // namespace moat::filter
