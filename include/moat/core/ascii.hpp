// ASCII-only case folding. DNS compares names case-insensitively for ASCII letters only
// (RFC 4343); bytes >= 0x80 compare exactly, so no locale is ever involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace moat {

[[nodiscard]] constexpr std::uint8_t ascii_lower(std::uint8_t c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<std::uint8_t>(c | 0x20U) : c;
}

/// True when the two byte ranges of length `n` are equal ignoring ASCII case.
[[nodiscard]] inline bool ascii_iequal(const std::uint8_t* a, const std::uint8_t* b,
                                       std::size_t n) noexcept {
    // Most comparisons meet the same spelling (a name the upstream echoed as it was asked, a
    // header name as written): memcmp settles those several octets at a time.
    if (n == 0 || std::memcmp(a, b, n) == 0) {
        return true;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] != b[i] && ascii_lower(a[i]) != ascii_lower(b[i])) {
            return false;
        }
    }
    return true;
}

/// True when the two texts are equal ignoring ASCII case (header names, type mnemonics).
[[nodiscard]] inline bool ascii_iequal(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
           ascii_iequal(reinterpret_cast<const std::uint8_t*>(a.data()),
                        reinterpret_cast<const std::uint8_t*>(b.data()), a.size());
}

}  // namespace moat
