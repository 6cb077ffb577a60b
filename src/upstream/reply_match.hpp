// Is this datagram the answer to the query we sent? (ID, QR, the same question.)
#pragma once

#include <cstdint>
#include <span>

namespace moat::upstream {

enum class ReplyCheck : std::uint8_t {
    accept,       ///< our answer; use it
    error_rcode,  ///< our answer, but SERVFAIL, REFUSED, NOTIMP or FORMERR: try another server
    truncated,    ///< our answer with TC set: retry over TCP
    wrong_id,
    wrong_question,
    malformed,  ///< not a parsable DNS response
};

[[nodiscard]] const char* to_text(ReplyCheck check) noexcept;

/// `query` is the query as we wrote and sent it (one question, its name uncompressed); `reply`
/// what came back.
[[nodiscard]] ReplyCheck check_reply(std::span<const std::uint8_t> query,
                                     std::span<const std::uint8_t> reply) noexcept;

}  // namespace moat::upstream
