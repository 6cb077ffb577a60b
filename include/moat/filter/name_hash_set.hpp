// A compact, immutable set of 64-bit name hashes with a small payload per entry (the index of the
// list the rule came from, an "important" bit, and optionally the rule's line number).
//
// Layout: the hashes sorted, in parallel arrays (keys; 2-byte list-and-flag; 4-byte line when
// kept), plus a directory over the top `bits` of the hash: entries with top bits b sit in
// [directory[b], directory[b + 1]). The directory has a power of two of buckets, one per 2-4
// entries up to 2^16 buckets (256 KiB, about 262,000 entries), then as few as keep it there, down
// to one per 8-16 entries (name_hash_set.cpp): a directory that stays in the CPU's caches spares
// a lookup one wait for memory. A lookup reads one directory word and then one run of keys (one
// or two cache lines, fetched at once), and a miss stops at the first larger key. The keys are
// stored without the top bits the directory gives (packed_keys.hpp): 6 bytes each from about
// 130,000 entries, 7 from about 500, 8 below.
// No load factor is wasted: about 12.3 bytes per entry with line numbers at 1,000,000 (6 + 2 +
// 4 + 0.26 for the directory), 8.3 without.
//
// Building (Builder) keeps memory to one copy: entries are appended to the same parallel arrays
// the set keeps, each in its own mapping grown in place (mapped_array.hpp: no copy, no second
// array, no page moved), then sorted in place (sort_entries.hpp: American-flag radix passes on the
// top bits and an insertion sort per bucket of 2-4). Duplicates are merged: the earliest
// (list, line) keeps the line, the payload becomes the set of their lists (list_sets.hpp),
// important bits are or-ed. Last, one pass packs the keys and writes the directory, whose pages
// grow as the keys' pages are given back, and the line numbers, kept in 3 bytes while building,
// are widened to 4 as the narrow columns' pages are given back. The peak is the entries with full
// 8-byte keys, 13 bytes an entry, plus up to 16 KiB populated ahead in each array.
//
// Collisions: keys are full 64-bit hashes, with no text kept to confirm a hit. With n rules and a
// query of k labels, a name in no list is wrongly matched with probability about k * n / 2^64:
// for n = 10^6 and k = 4, 2e-13 per query, i.e. once in ~10^4 years at 1000 queries/s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "moat/filter/list_sets.hpp"
#include "moat/filter/mapped_array.hpp"
#include "moat/filter/packed_keys.hpp"

namespace moat::filter {

struct Columns;  // sort_entries.hpp: the builder's columns as its sort sees them

class NameHashSet {
public:
    static constexpr std::uint32_t kNotFound = 0xFFFFFFFFU;
    /// The largest line number kept: a builder holds 3 bytes of each (a rule past it gets 0).
    static constexpr std::uint32_t kMaxLine = 0xFFFFFF;
    /// List indexes are 15 bits: the top bit of the list word is the important flag.
    static constexpr std::uint16_t kMaxList = 0x7FFF;
    /// The list word's top bit: the rule is important (it wins over allow rules).
    static constexpr std::uint16_t kImportantBit = 0x8000;

    class Builder;

    NameHashSet() = default;

    /// Index of `hash`, or kNotFound. Never allocates.
    [[nodiscard]] std::uint32_t find(std::uint64_t hash) const noexcept {
        return find_in(probe(hash), hash);
    }

    // A lookup in three steps, for callers that look up several hashes at once (the suffixes
    // of a query name): prefetch() every directory word, then probe() every bucket, which also
    // prefetches its keys and their payload, then find_in() each. The cache misses of all the
    // lookups then overlap instead of queuing one after another (two rounds of memory latency,
    // not two per suffix, and a match's list and line arrive with its key instead of a round
    // later).

    /// Asks the CPU to fetch the directory word of `hash`.
    void prefetch(std::uint64_t hash) const noexcept {
        if (!directory_.empty()) {
            __builtin_prefetch(&directory_[bucket_of(hash)]);
        }
    }
    /// The range of entries that may hold `hash`.
    /// (No member initialisers: arrays of probes are filled as needed, not zeroed first.)
    struct Probe {
        std::uint32_t begin;
        std::uint32_t end;
    };
    /// Reads the directory for `hash` and asks the CPU to fetch its run of keys, and the list
    /// and line words beside them.
    [[nodiscard]] Probe probe(std::uint64_t hash) const noexcept {
        if (directory_.empty()) {
            return {0, 0};
        }
        const std::size_t bucket = bucket_of(hash);
        const Probe p{directory_[bucket], directory_[bucket + 1]};
        if (p.begin < p.end) {
            // The whole run (8-16 keys, one or two cache lines; each key is read as a whole
            // word, packed_keys.hpp), and the payload of a match in the same round: a blocked
            // verdict reads its list and line, which would otherwise wait for the key compare.
            prefetch_span(keys_.address(p.begin), keys_.address(p.end - 1) + sizeof(std::uint64_t));
            prefetch_span(&meta_[p.begin], &meta_[p.end - 1] + 1);
            if (!lines_.empty()) {
                prefetch_span(&lines_[p.begin], &lines_[p.end - 1] + 1);
            }
        }
        return p;
    }
    /// Index of `hash` within a probe of it, or kNotFound.
    [[nodiscard]] std::uint32_t find_in(Probe p, std::uint64_t hash) const noexcept {
        const std::uint64_t wanted = keys_.stored_form(hash);
        for (std::uint32_t i = p.begin; i < p.end; ++i) {
            const std::uint64_t k = keys_.at(i);
            if (k >= wanted) {
                return k == wanted ? i : kNotFound;
            }
        }
        return kNotFound;
    }

    /// The rule's list set (ListSets): its list when a single list has it.
    [[nodiscard]] std::uint16_t list(std::uint32_t index) const noexcept {
        return static_cast<std::uint16_t>(meta_[index] & kMaxList);
    }
    [[nodiscard]] bool important(std::uint32_t index) const noexcept {
        return (meta_[index] & kImportantBit) != 0;
    }
    /// The rule's line number, or 0 when lines were not kept.
    [[nodiscard]] std::uint32_t line(std::uint32_t index) const noexcept {
        return lines_.empty() ? 0 : lines_[index];
    }

    [[nodiscard]] std::size_t size() const noexcept { return meta_.size(); }
    [[nodiscard]] bool empty() const noexcept { return meta_.empty(); }
    /// Bytes stored per key (see packed_keys.hpp).
    [[nodiscard]] unsigned key_bytes() const noexcept { return keys_.width(); }
    /// Bytes of heap memory held.
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    /// Asks the CPU to fetch every cache line of [first, last), which is not empty.
    template <typename T>
    static void prefetch_span(const T* first, const T* last) noexcept {
        constexpr std::ptrdiff_t kLine = 64;
        const auto* at = reinterpret_cast<const char*>(first);
        const auto* end = reinterpret_cast<const char*>(last);
        for (; at < end; at += kLine) {
            __builtin_prefetch(at);
        }
        __builtin_prefetch(end - 1);  // the last line, when the steps from `first` skip it
    }

    [[nodiscard]] std::size_t bucket_of(std::uint64_t hash) const noexcept {
        // shift_ is at most 63: a set has at least two buckets.
        return static_cast<std::size_t>(hash >> shift_);
    }

    PackedKeys keys_;
    MappedArray<std::uint16_t> meta_;   ///< list index | kImportantBit
    MappedArray<std::uint32_t> lines_;  ///< empty when line numbers are not kept
    MappedArray<std::uint32_t> directory_;
    unsigned shift_ = 63;
};

/// Collects entries, then builds the set. One builder per table per rebuild; not thread-safe but
/// for sort_piece() on pieces apart.
class NameHashSet::Builder {
public:
    explicit Builder(bool keep_lines);
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;
    Builder(Builder&&) noexcept;
    Builder& operator=(Builder&&) noexcept;
    ~Builder();

    /// Adds one rule; `list` must be at most kMaxList. Throws std::bad_alloc when memory runs out.
    void add(std::uint64_t hash, std::uint16_t list, bool important, std::uint32_t line) {
        // Room in every column first: a failure leaves the columns the same length.
        keys_.reserve_one();
        meta_.reserve_one();
        if (keep_lines_) {
            line_low_.reserve_one();
            line_high_.reserve_one();
            const std::uint32_t kept = line <= kMaxLine ? line : 0;
            line_low_.append(static_cast<std::uint16_t>(kept));
            line_high_.append(static_cast<std::uint8_t>(kept >> 16U));
        }
        keys_.append(hash);
        meta_.append(static_cast<std::uint16_t>(list | (important ? kImportantBit : 0U)));
    }

    /// Appends the entries of `others` (builders filled on other threads) and empties them,
    /// moving their columns' pages instead of copying them (MappedArray::absorb). The largest
    /// of all keeps its columns; before each other's pages are put at the end, the columns are
    /// padded to a page boundary with copies of the last entry: duplicates of one rule in one
    /// list, which build() merges into that rule. All must keep line numbers alike. The set
    /// built is the same whatever order entries came in. Throws std::bad_alloc, after which
    /// the builders are not to be built (the compile they serve is lost).
    void absorb(std::span<Builder* const> others) {
        std::size_t total = size();
        for (Builder* other : others) {
            total += other->size();
        }
        for (Builder* other : others) {
            if (other->size() > size()) {
                std::swap(*this, *other);
            }
        }
        if (total == size()) {
            return;  // the others are all empty
        }
        // Room for everything first, padding included: once a column holds pages moved from
        // another it cannot be resized in place (MappedArray::absorb).
        const std::size_t step = padding_step();
        total += (others.size() + 1) * step;
        keys_.reserve(total);
        meta_.reserve(total);
        if (keep_lines_) {
            line_low_.reserve(total);
            line_high_.reserve(total);
        }
        for (Builder* other : others) {
            if (other->size() == 0) {
                continue;
            }
            pad_to_page();
            keys_.absorb(std::move(other->keys_));
            meta_.absorb(std::move(other->meta_));
            line_low_.absorb(std::move(other->line_low_));
            line_high_.absorb(std::move(other->line_high_));
        }
    }

    [[nodiscard]] std::size_t size() const noexcept { return keys_.size(); }

    /// Builds the set; the builder is empty afterwards. A name added by several lists keeps
    /// the earliest (list, line) and gets the id of their set from `sets` as its list.
    NameHashSet build(ListSets& sets);

    // build() in three steps, for a caller with threads to share them (Compiler::build):
    // spread() on one thread, then sort_piece(i, sets) for every i < pieces(), at once on any
    // threads, then finish(). The set is the same as build()'s.

    /// The sort's first pass over every entry (sort_entries.hpp), which cuts the rest into
    /// pieces apart. Throws std::bad_alloc.
    void spread();
    /// After spread(): the pieces the rest of the sort is cut into.
    [[nodiscard]] std::size_t pieces() const noexcept;
    /// Sorts one piece and merges its duplicates. Pieces apart may be sorted at once. Throws
    /// std::bad_alloc, std::logic_error before spread(), std::out_of_range for no such piece.
    void sort_piece(std::size_t piece, ListSets& sets);
    /// Once every piece is sorted: joins them, packs the keys and writes the directory. The
    /// builder is empty afterwards. Throws std::logic_error before spread() on a builder with
    /// entries.
    NameHashSet finish();

private:
    /// Entries that fill whole pages in every column: the narrowest column (the lines' high
    /// bytes) needs the most.
    static std::size_t padding_step() noexcept { return mapping::page_size(); }
    /// Appends copies of the last entry until every column ends on a page boundary.
    void pad_to_page() {
        const std::size_t step = padding_step();
        const std::size_t n = size();
        const std::size_t padded = (n + step - 1) / step * step;
        const std::uint16_t meta = meta_[n - 1];
        for (std::size_t i = n; i < padded; ++i) {
            add(keys_[n - 1], static_cast<std::uint16_t>(meta & kMaxList),
                (meta & kImportantBit) != 0, keep_lines_ ? line_of(n - 1) : 0);
        }
    }

    [[nodiscard]] std::uint32_t line_of(std::size_t i) const noexcept {
        return line_low_[i] | (std::uint32_t{line_high_[i]} << 16U);
    }
    /// The set's column of line numbers, 4 bytes each, from the builder's two narrow ones,
    /// whose pages are given back as they are read.
    [[nodiscard]] MappedArray<std::uint32_t> widen_lines(std::size_t count);

    /// What spread() leaves for the sort's later steps (name_hash_set.cpp).
    struct Sorting;
    /// The columns as the sort sees them.
    [[nodiscard]] Columns columns() noexcept;
    /// What spread() left; `step` names the caller in the error when spread() has not run.
    [[nodiscard]] Sorting& sorting(const char* step);

    bool keep_lines_;
    MappedArray<std::uint64_t> keys_;
    MappedArray<std::uint16_t> meta_;
    // Line numbers in two columns, 3 bytes an entry instead of 4: the build's peak is its
    // columns with full 8-byte keys, and this is a seventh of it.
    MappedArray<std::uint16_t> line_low_;
    MappedArray<std::uint8_t> line_high_;
    std::unique_ptr<Sorting> sorting_;
};

}  // namespace moat::filter
