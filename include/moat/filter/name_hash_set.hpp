// A compact, immutable open-addressing set of 64-bit name hashes with a small payload per entry
// (the index of the list the rule came from, a flag byte, and optionally the rule's line number).
//
// Layout: three (or four) parallel arrays, so a probe touches 8-byte keys only until it hits.
// Slots: capacity = entries / 0.8 rounded up (not a power of two; the slot of a hash is
// ((hash >> 32) * capacity) >> 32), linear probing, key 0 = empty. About 11 bytes per slot plus 4
// when line numbers are kept. Built once by the Compiler, then only read (thread-safe for readers).
//
// Collisions: keys are full 64-bit hashes, with no text kept to confirm a hit. With n rules and a
// query of k labels, a name in no list is wrongly matched with probability about k * n / 2^64:
// for n = 10^6 and k = 4, 2e-13 per query, i.e. once in ~10^4 years at 1000 queries/s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moat::filter {

class NameHashSet {
public:
    /// One entry as the compiler collects it.
    struct Entry {
        std::uint64_t hash = 0;
        std::uint32_t line = 0;  ///< 1-based line of the rule in its list
        std::uint16_t list = 0;  ///< index of the list in the snapshot
        std::uint8_t flags = 0;  ///< kImportant, ...
    };
    static constexpr std::uint8_t kImportant = 1;

    static constexpr std::uint32_t kNotFound = 0xFFFFFFFFU;

    NameHashSet() = default;

    /// The first slot probed for `hash`: its top 32 bits scaled to [0, capacity).
    [[nodiscard]] static std::uint32_t home(std::uint64_t hash, std::uint32_t capacity) noexcept {
        return static_cast<std::uint32_t>(((hash >> 32U) * capacity) >> 32U);
    }
    /// Builds from entries (duplicates allowed: the first of a hash keeps list and line, flags
    /// are or-ed). `keep_lines` stores line numbers for explanations.
    NameHashSet(std::vector<Entry>& entries, bool keep_lines);

    /// Slot index of `hash`, or kNotFound. Never allocates.
    [[nodiscard]] std::uint32_t find(std::uint64_t hash) const noexcept {
        if (capacity_ == 0) {
            return kNotFound;
        }
        std::uint32_t slot = home(hash, capacity_);
        for (;;) {
            const std::uint64_t k = keys_[slot];
            if (k == hash) {
                return slot;
            }
            if (k == 0) {
                return kNotFound;
            }
            if (++slot == capacity_) {
                slot = 0;
            }
        }
    }

    [[nodiscard]] std::uint16_t list(std::uint32_t slot) const noexcept { return lists_[slot]; }
    [[nodiscard]] std::uint8_t flags(std::uint32_t slot) const noexcept { return flags_[slot]; }
    /// The rule's line number, or 0 when lines were not kept.
    [[nodiscard]] std::uint32_t line(std::uint32_t slot) const noexcept {
        return lines_.empty() ? 0 : lines_[slot];
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// Bytes of heap memory held.
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    std::vector<std::uint64_t> keys_;
    std::vector<std::uint16_t> lists_;
    std::vector<std::uint8_t> flags_;
    std::vector<std::uint32_t> lines_;
    std::uint32_t capacity_ = 0;
    std::size_t size_ = 0;
};

}  // namespace moat::filter
