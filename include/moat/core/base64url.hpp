// base64url (RFC 4648 §5: the alphabet with '-' and '_' for '+' and '/') without padding, as
// DoH carries a query in the `dns` parameter of a GET (RFC 8484 §4.1: "Padding characters for
// base64url MUST NOT be included").
//
// The decoder is strict, so each byte string has exactly one accepted spelling:
//   * only the 64 alphabet characters; '=', '+', '/', whitespace and anything else are refused
//     (RFC 8484 strips padding, so a '=' is a client bug, not something to tolerate);
//   * a length of 4k+1 characters cannot come from any input and is refused;
//   * the unused low bits of the last character must be zero (RFC 4648 §3.5 lets a decoder
//     refuse them; every encoder writes zeros).
// It writes into the caller's span and allocates nothing. The encoder returns a std::string; it
// serves tests and clients, not the query path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace moat {
namespace detail {

inline constexpr std::string_view kBase64UrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
inline constexpr std::uint8_t kBase64UrlInvalid = 0xFF;

/// The 6-bit value of each character, kBase64UrlInvalid for characters outside the alphabet.
inline constexpr std::array<std::uint8_t, 256> kBase64UrlValues = [] {
    std::array<std::uint8_t, 256> values{};
    values.fill(kBase64UrlInvalid);
    for (std::size_t i = 0; i < kBase64UrlAlphabet.size(); ++i) {
        values[static_cast<unsigned char>(kBase64UrlAlphabet[i])] = static_cast<std::uint8_t>(i);
    }
    return values;
}();

}  // namespace detail

/// Octets that `chars` characters of unpadded base64url decode to; nullopt for a length of 4k+1,
/// which no input produces.
[[nodiscard]] constexpr std::optional<std::size_t> base64url_decoded_size(
    std::size_t chars) noexcept {
    const std::size_t tail = chars % 4;
    if (tail == 1) {
        return std::nullopt;
    }
    return chars / 4 * 3 + (tail == 0 ? 0 : tail - 1);
}

/// Decodes unpadded base64url `in` into the front of `out` and returns the octets written.
/// nullopt when `in` is not canonical unpadded base64url (see above) or `out` is too small;
/// `out` is checked before anything is written, but on a bad character its contents are
/// unspecified.
[[nodiscard]] inline std::optional<std::size_t> base64url_decode(
    std::string_view in, std::span<std::uint8_t> out) noexcept {
    const std::optional<std::size_t> size = base64url_decoded_size(in.size());
    if (!size || *size > out.size()) {
        return std::nullopt;
    }
    std::uint32_t bits = 0;  // the pending input, 6 bits per character
    unsigned count = 0;      // characters in `bits`
    std::size_t written = 0;
    for (const char c : in) {
        const std::uint8_t value = detail::kBase64UrlValues[static_cast<unsigned char>(c)];
        if (value == detail::kBase64UrlInvalid) {
            return std::nullopt;
        }
        bits = (bits << 6U) | value;
        if (++count == 4) {
            out[written++] = static_cast<std::uint8_t>(bits >> 16U);
            out[written++] = static_cast<std::uint8_t>(bits >> 8U);
            out[written++] = static_cast<std::uint8_t>(bits);
            bits = 0;
            count = 0;
        }
    }
    if (count == 2) {  // 12 bits: one octet and 4 unused bits
        if ((bits & 0x0FU) != 0) {
            return std::nullopt;
        }
        out[written++] = static_cast<std::uint8_t>(bits >> 4U);
    } else if (count == 3) {  // 18 bits: two octets and 2 unused bits
        if ((bits & 0x03U) != 0) {
            return std::nullopt;
        }
        out[written++] = static_cast<std::uint8_t>(bits >> 10U);
        out[written++] = static_cast<std::uint8_t>(bits >> 2U);
    }
    return written;
}

/// Encodes `in` as base64url without padding.
[[nodiscard]] inline std::string base64url_encode(std::span<const std::uint8_t> in) {
    std::string out;
    out.reserve((in.size() * 4 + 2) / 3);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const std::uint32_t bits = (std::uint32_t{in[i]} << 16U) |
                                   (std::uint32_t{in[i + 1]} << 8U) | std::uint32_t{in[i + 2]};
        out += detail::kBase64UrlAlphabet[(bits >> 18U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[(bits >> 12U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[(bits >> 6U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[bits & 0x3FU];
    }
    const std::size_t rest = in.size() - i;
    if (rest == 1) {
        const std::uint32_t bits = std::uint32_t{in[i]} << 4U;  // 12 bits, low 4 zero
        out += detail::kBase64UrlAlphabet[(bits >> 6U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[bits & 0x3FU];
    } else if (rest == 2) {
        const std::uint32_t bits = ((std::uint32_t{in[i]} << 8U) | in[i + 1]) << 2U;  // 18 bits
        out += detail::kBase64UrlAlphabet[(bits >> 12U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[(bits >> 6U) & 0x3FU];
        out += detail::kBase64UrlAlphabet[bits & 0x3FU];
    }
    return out;
}

}  // namespace moat
