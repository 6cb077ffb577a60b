// The "mum" mixing step of wyhash, a reader of short runs of octets and the hashing built from
// them, shared by the blocklist's name hashes, the cache's keys and the local zone.
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

/// `n` octets at `p` folded into `h` eight at a time, one multiply each (byte-wise FNV-1a took
/// one dependent multiply per octet, 3-4 times as long for a typical name). The caller seeds `h`
/// with the length: it fixes how the last, partial word is read.
[[nodiscard]] inline std::uint64_t fold_octets(std::uint64_t h, const std::uint8_t* p,
                                               std::size_t n) noexcept {
    constexpr std::uint64_t kMultiplier = 0xE7037ED1A0B428DBULL;
    while (n > 0) {
        const std::size_t take = n < 8 ? n : 8;
        h = mum(h ^ load_up_to_8(p, take), kMultiplier);
        p += take;
        n -= take;
    }
    return h;
}

/// The splitmix64 finaliser: every output bit depends on every input bit, so the low bits that
/// pick a slot and the high bits that pick a shard are both well spread.
[[nodiscard]] inline std::uint64_t avalanche(std::uint64_t h) noexcept {
    h = (h ^ (h >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27U)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31U);
}

}  // namespace moat
