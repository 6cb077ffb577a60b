// Sorting a NameHashSet's entries while it is built: in place, by key, duplicates merged, with
// no memory beyond the entries but one coarse bucket's counters. (The set's peak while it is
// built is its entries with full 8-byte keys; a directory-sized array beside them would add 1 MiB
// at 1,000,000 rules. See packed_keys.hpp.)
#pragma once

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
    std::uint16_t* meta;   ///< list index | NameHashSet::kImportantBit
    std::uint32_t* lines;  ///< null when line numbers are not kept

    void swap(std::size_t a, std::size_t b) noexcept {
        std::swap(keys[a], keys[b]);
        std::swap(meta[a], meta[b]);
        if (lines != nullptr) {
            std::swap(lines[a], lines[b]);
        }
    }
    /// Asks the CPU to fetch entry i (at most one past the last) for writing.
    void prefetch(std::size_t i) const noexcept {
        __builtin_prefetch(keys + i, 1);
        __builtin_prefetch(meta + i, 1);
        if (lines != nullptr) {
            __builtin_prefetch(lines + i, 1);
        }
    }
    [[nodiscard]] std::uint32_t line(std::size_t i) const noexcept {
        return lines == nullptr ? 0 : lines[i];
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
        if (lines != nullptr) {
            lines[to] = lines[from];
        }
    }
};

/// log2 of the directory's bucket count: a power of two with 2-4 entries per bucket, at least
/// two buckets.
[[nodiscard]] unsigned directory_bits(std::size_t entries) noexcept;

/// Sorts entries [0, n) by key, spreading them first on the top `bits` of the key, then keeps
/// one entry per key, at the front: the earliest (list, line), its list word the set of all
/// their lists (from `sets`), important if any was. Returns how many are kept.
std::size_t sort_and_merge(Columns& c, std::size_t n, unsigned bits, ListSets& sets);

}  // namespace moat::filter
