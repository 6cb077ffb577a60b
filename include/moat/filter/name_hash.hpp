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
#include <cstring>
#include <string_view>

#include "moat/wire/types.hpp"

namespace moat::filter {

/// Murmur3's 64-bit finaliser: a bijection with full avalanche.
[[nodiscard]] constexpr std::uint64_t fmix64(std::uint64_t k) noexcept {
    k ^= k >> 33U;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33U;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33U;
    return k;
}

inline constexpr std::uint64_t kNameHashSeed = 0x9E3779B97F4A7C15ULL;

/// Extends the hash of a parent name by one (lower-case) label of 1..63 octets.
[[nodiscard]] inline std::uint64_t hash_label(std::uint64_t parent, const std::uint8_t* label,
                                              std::size_t n) noexcept {
    std::uint64_t h = fmix64(parent ^ (n * 0x100000001B3ULL));
    while (n >= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, label, 8);
        h = fmix64(h ^ w);
        label += 8;
        n -= 8;
    }
    if (n > 0) {
        std::uint64_t w = 0;
        std::memcpy(&w, label, n);
        h = fmix64(h ^ w);
    }
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
struct SuffixHashes {
    std::array<std::uint64_t, wire::kMaxLabels> hash{};
    std::array<std::uint8_t, wire::kMaxLabels> offset{};  ///< wire offset where suffix i starts
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
};

}  // namespace moat::filter
