// 64-bit hashes of a domain name and of each of its suffixes, the keys of the filter's tables.
//
// The hash of a name is built label by label from the right (TLD first): h(root) = seed,
// h(label.parent) = step(h(parent), label). So one right-to-left walk over a query name yields
// the hash of every suffix ("a.b.example.com", "b.example.com", "example.com", "com"), which is
// what subdomain rules need, without building any string. Labels must already be lower-case.
// The value 0 is reserved for empty table slots and is never returned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "moat/core/mix.hpp"
#include "moat/wire/types.hpp"

namespace moat::filter {

inline constexpr std::uint64_t kNameHashSeed = 0x9E3779B97F4A7C15ULL;
/// Constants xor-ed into each multiplicand. Every byte of kDataMask has its top bit set, so a
/// word of name octets (ASCII) xor-ed with it is never 0, and a step can never lose the hash of
/// the parent by multiplying it by zero.
inline constexpr std::uint64_t kChainMask = 0xA0761D6478BD642FULL;
inline constexpr std::uint64_t kDataMask = 0xE7037ED1A0B428DBULL | 0x8080808080808080ULL;

/// Extends the hash of a parent name by one (lower-case) label of 1..63 octets: one multiply per
/// 8 octets, the label's length folded into the first (so "ab" + "c" differs from "a" + "bc").
[[nodiscard]] inline std::uint64_t hash_label(std::uint64_t parent, const std::uint8_t* label,
                                              std::size_t n) noexcept {
    std::uint64_t h = parent ^ (static_cast<std::uint64_t>(n) << 56U);
    std::size_t left = n;
    do {
        const std::size_t take = left < 8 ? left : 8;
        h = mum(h ^ kChainMask, load_up_to_8(label, take) ^ kDataMask);
        label += take;
        left -= take;
    } while (left > 0);
    return h == 0 ? 1 : h;
}

/// Hash of a lower-case dotted name without trailing dot ("example.com"); "" is the root.
/// The caller has validated the name (no empty label).
[[nodiscard]] inline std::uint64_t hash_dotted(std::string_view name) noexcept {
    std::uint64_t h = kNameHashSeed;
    std::size_t end = name.size();
    while (end > 0) {
        const std::size_t dot = name.rfind('.', end - 1);
        const std::size_t start = dot == std::string_view::npos ? 0 : dot + 1;
        h = hash_label(h, reinterpret_cast<const std::uint8_t*>(name.data()) + start, end - start);
        end = dot == std::string_view::npos ? 0 : dot;
    }
    return h;
}

/// The hashes of every suffix of an uncompressed, lower-case wire-form name.
/// out[0] is the whole name, out[count-1] its last label (TLD); the root is not included.
/// Only [0, count) of the arrays is set: they are left unzeroed because zeroing them (1.1 KiB)
/// would cost more than the hashing of a typical name.
struct SuffixHashes {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): compute() sets [0, count)
    std::array<std::uint64_t, wire::kMaxLabels> hash;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): as above
    std::array<std::uint8_t, wire::kMaxLabels> offset;  ///< wire offset where suffix i starts
    std::size_t count = 0;

    /// `wire` must be a valid root-terminated uncompressed name.
    void compute(const std::uint8_t* wire) noexcept {
        count = 0;
        std::size_t at = 0;
        while (wire[at] != 0) {
            offset[count++] = static_cast<std::uint8_t>(at);
            at += 1U + wire[at];
        }
        std::uint64_t h = kNameHashSeed;
        for (std::size_t i = count; i-- > 0;) {
            const std::size_t o = offset[i];
            h = hash_label(h, wire + o + 1, wire[o]);
            hash[i] = h;
        }
    }
    /// The hash of the whole name; the root's is the seed.
    [[nodiscard]] std::uint64_t whole() const noexcept {
        return count > 0 ? hash[0] : kNameHashSeed;
    }
};

/// The hash of a whole uncompressed, lower-case wire-form name (SuffixHashes::whole()).
[[nodiscard]] inline std::uint64_t hash_wire_name(const std::uint8_t* wire) noexcept {
    SuffixHashes hashes;
    hashes.compute(wire);
    return hashes.whole();
}

}  // namespace moat::filter
