// Big-endian loads and stores on raw byte pointers.
//
// The caller guarantees the bytes are in bounds; these helpers exist so the wire code reads as
// "load a 16-bit field" rather than as shifts, and so the compiler sees one load it can fuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moat {

[[nodiscard]] inline std::uint16_t load_u16(const std::uint8_t* p) noexcept {
    return static_cast<std::uint16_t>((static_cast<unsigned>(p[0]) << 8U) | p[1]);
}

[[nodiscard]] inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
    return (static_cast<std::uint32_t>(p[0]) << 24U) | (static_cast<std::uint32_t>(p[1]) << 16U) |
           (static_cast<std::uint32_t>(p[2]) << 8U) | static_cast<std::uint32_t>(p[3]);
}

inline void store_u16(std::uint8_t* p, std::uint16_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 8U);
    p[1] = static_cast<std::uint8_t>(v);
}

inline void store_u32(std::uint8_t* p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 24U);
    p[1] = static_cast<std::uint8_t>(v >> 16U);
    p[2] = static_cast<std::uint8_t>(v >> 8U);
    p[3] = static_cast<std::uint8_t>(v);
}

/// Equality of two byte ranges of length `n`, inlined for the short lengths of most DNS names:
/// whole 8-octet words, the tail as one overlapping word (no per-byte loop, no library call).
[[nodiscard]] inline bool equal_bytes(const std::uint8_t* a, const std::uint8_t* b,
                                      std::size_t n) noexcept {
    if (n > 32) {
        return std::memcmp(a, b, n) == 0;  // long: the library's vector loop wins
    }
    if (n < 8) {
        for (std::size_t i = 0; i < n; ++i) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }
    std::uint64_t wa = 0;
    std::uint64_t wb = 0;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
        std::memcpy(&wa, a + i, 8);
        std::memcpy(&wb, b + i, 8);
        if (wa != wb) {
            return false;
        }
    }
    std::memcpy(&wa, a + n - 8, 8);
    std::memcpy(&wb, b + n - 8, 8);
    return wa == wb;
}

}  // namespace moat
