// The names a snapshot's regex rules were found not to match, remembered by one query path.
//
// Regex rules (RE2::Set) are the costliest step of a lookup that no hashed rule decides: the
// set's DFA walks the dotted name, and RE2 takes a read lock on its DFA cache for every search
// (with 32 rules, 22% of a cached answer's time in `dnsmoat-bench-engine`). A household asks the
// same few thousand names over and over, and a snapshot never changes, so whether its set
// matches a name is worth remembering. Only "no rule matches" is kept (it does not depend on the
// client's group; a match is rare and then must be looked at rule by rule anyway).
//
// A slot holds a 64-bit key made of the name's hash and the matcher's identity, which is unique
// in the process (a replaced snapshot's keys never match again, even at a reused address). Two
// names would be confused only if their keys were equal, the same odds as the hashed tables'
// collisions (name_hash_set.hpp). Direct-mapped, 8,192 slots (64 KiB). Not thread-safe: one per
// engine, like the engine itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moat::filter {

class RegexMemo {
public:
    static constexpr std::size_t kSlots = 8192;

    RegexMemo() : slots_(kSlots, 0) {}

    /// The key of a name (its hash, name_hash.hpp) for the matcher with identity `matcher`.
    /// Never 0, the value of an empty slot.
    [[nodiscard]] static std::uint64_t key_of(std::uint64_t name_hash,
                                              std::uint64_t matcher) noexcept {
        const std::uint64_t key = name_hash ^ (matcher * 0x9E3779B97F4A7C15ULL);
        return key == 0 ? 1 : key;
    }

    /// Whether `key` was remembered as a name no rule matches.
    [[nodiscard]] bool remembers(std::uint64_t key) const noexcept {
        return slots_[key & (kSlots - 1)] == key;
    }
    void remember(std::uint64_t key) noexcept { slots_[key & (kSlots - 1)] = key; }

private:
    std::vector<std::uint64_t> slots_;
};

}  // namespace moat::filter
