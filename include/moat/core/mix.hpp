// The "mum" mixing step of wyhash, shared by the blocklist's name hashes and the cache's keys.
#pragma once

#include <cstdint>

namespace moat {

__extension__ typedef unsigned __int128 Uint128;  // NOLINT(modernize-use-using): __extension__

/// The 128-bit product of a and b folded to 64 bits: one multiply with full avalanche of both
/// operands into the middle bits.
[[nodiscard]] inline std::uint64_t mum(std::uint64_t a, std::uint64_t b) noexcept {
    const Uint128 product = static_cast<Uint128>(a) * b;
    return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64U);
}

}  // namespace moat
