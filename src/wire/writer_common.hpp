// What the two writers of messages share: MessageBuilder (message_builder.cpp) and write_query
// (query_writer.cpp). Both take names in uncompressed wire form from their callers and check
// them the same way; both write an OPT record of the same fixed part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "moat/wire/types.hpp"

namespace moat::wire::detail {

/// An OPT record's octets before its options: the root owner, type, class, TTL, RDLENGTH.
inline constexpr std::size_t kOptFixed = 11;

/// Length of the uncompressed name at the start of `p` (at most `available` octets), or 0 when
/// there is no valid one. The writers check raw inputs this way instead of copying them into a
/// Name; a Name is valid by construction.
inline std::size_t uncompressed_name_length(const std::uint8_t* p, std::size_t available) noexcept {
    std::size_t at = 0;
    while (at < available && at < kMaxNameLength) {
        const std::uint8_t len = p[at];
        if (len == 0) {
            return at + 1;
        }
        if (len > kMaxLabelLength) {
            return 0;
        }
        at += len + 1U;
    }
    return 0;
}

inline bool is_uncompressed_name(std::span<const std::uint8_t> wire) noexcept {
    return !wire.empty() && uncompressed_name_length(wire.data(), wire.size()) == wire.size();
}

}  // namespace moat::wire::detail
