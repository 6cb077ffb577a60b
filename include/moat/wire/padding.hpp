// EDNS(0) Padding (RFC 7830, option code 12) added to a response that is already built, with the
// Block-Length Padding policy of RFC 8467 §4.1: the whole message grows to a multiple of 468
// octets, so its size tells an observer of an encrypted transport little about the name.
//
// When to pad (the caller's decision, these functions only report and apply):
//   * RFC 8467 §4.1 / RFC 7830 §4: a responder MUST pad the response when the query carried a
//     Padding option, MAY pad when the query had EDNS but no Padding, and MUST NOT pad when the
//     query had no EDNS at all. query_wants_padding() answers the first case; we pad only then,
//     since a client that does not pad its queries has already given its size away.
//   * RFC 7830 §6: padding on a cleartext transport hides nothing and only costs bytes, so
//     callers pad on DoT and DoH only.
//
// pad_response() edits the caller's buffer in place and allocates nothing. The padding option
// is appended to the OPT record, which must be the last record of the message (MessageBuilder
// writes it there); the option's four header octets always make the message grow, so a message
// whose size is already a multiple of the block grows by a whole block. That keeps RFC 7830 §4's
// "MUST pad" literal (the client sees the option) at the cost of one block in a rare case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "moat/wire/message_view.hpp"

namespace moat::wire {

inline constexpr std::uint16_t kEdnsOptionPadding = 12;  ///< RFC 7830 §3
/// Responses are padded to a multiple of this many octets (RFC 8467 §4.1).
inline constexpr std::size_t kResponsePaddingBlock = 468;

/// Octets of the option header (code, length) that padding adds before its zeros.
inline constexpr std::size_t kPaddingOptionHeader = 4;

/// True when the query's OPT record carries a Padding option (of any length). False when it has
/// no OPT, or when its additional section or OPT does not parse.
[[nodiscard]] bool query_wants_padding(const MessageView& query) noexcept;
/// The same for a query still in bytes; false when its header or question does not parse.
[[nodiscard]] bool query_wants_padding(std::span<const std::uint8_t> query) noexcept;

/// The length pad_response() gives a `length`-octet message: the next multiple of `block` past
/// length + 4. A buffer this large always has room, unless the result passes 65535 (then
/// pad_response() declines). `block` must not be 0.
[[nodiscard]] constexpr std::size_t padded_length(
    std::size_t length, std::size_t block = kResponsePaddingBlock) noexcept {
    return (length + kPaddingOptionHeader + block - 1) / block * block;
}

/// Pads the response held in the first `length` octets of `buffer` to the next multiple of
/// `block` octets past length + 4 (the option header), writing zero octets (RFC 7830 §3), and
/// returns the new length. The message grows only inside `buffer`, never past 65535 octets.
/// Returns `length` and leaves every octet untouched when the message does not parse, has no
/// OPT, has an OPT that is not its last record or already carries a Padding option, or when the
/// padded message would not fit in `buffer` (a partial pad is not attempted) or `block` is 0.
[[nodiscard]] std::size_t pad_response(std::span<std::uint8_t> buffer, std::size_t length,
                                       std::size_t block = kResponsePaddingBlock) noexcept;

}  // namespace moat::wire
