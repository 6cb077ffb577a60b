// The "mum" mixing step of wyhash and a reader of short runs of octets, shared by the
// blocklist's name hashes and the cache's keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moat {

__extension__ typedef unsigned __int128 Uint128;  // NOLINT(modernize-use-using): __extension__

/// The 128-bit product of a and b folded to 64 bits: one multiply with full avalanche of both
/// operands into the middle bits.
[[nodiscard]] inline std::uint64_t mum(std::uint64_t a, std::uint64_t b) noexcept {
    const Uint128 product = static_cast<Uint128>(a) * b;
    return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64U);
}

/// The `n` (1..8) octets at `p` as one word, reading none past them: two overlapping 4-octet
/// loads for 4..8 octets, three single octets for 1..3 (as wyhash reads its tails). For a given n
/// the word determines the octets, so a hash that folds n in stays collision-free. (A memcpy of
/// n octets into a zeroed word is stored piecewise and read back whole, which the CPU cannot
/// forward from its store buffer: a stall of about 15 cycles each time.)
[[nodiscard]] inline std::uint64_t load_up_to_8(const std::uint8_t* p, std::size_t n) noexcept {
    if (n >= 4) {
        std::uint32_t low = 0;
        std::uint32_t high = 0;
        std::memcpy(&low, p, sizeof low);
        std::memcpy(&high, p + n - 4, sizeof high);
        return low | (std::uint64_t{high} << 32U);
    }
    return (std::uint64_t{p[0]} << 16U) | (std::uint64_t{p[n >> 1U]} << 8U) | p[n - 1];
}

}  // namespace moat
