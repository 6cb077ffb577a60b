// Errors of the cache module: why a lookup found nothing usable or why an answer was not stored.
//
// Each is one small enum value, cheap to return on the hot path. Most insert "errors" are normal
// policy outcomes (SERVFAIL is never cached); the engine counts them and forwards as usual.
// Converts to std::error_code for callers that mix error sources.
#pragma once

#include <cstdint>
#include <system_error>

namespace moat::cache {

enum class Errc : std::uint8_t {
    miss = 1,           ///< lookup: no entry, or it expired (and no stale answer was allowed)
    no_space,           ///< lookup: the caller's buffer is smaller than the stored answer
    unchecked,          ///< lookup_if_passed: stored, but not yet passed by this blocklist
    malformed,          ///< insert: the answer does not parse (header, question or records)
    not_a_response,     ///< insert: QR clear or an opcode other than QUERY
    question_mismatch,  ///< insert: the answer's question is not the key's
    uncacheable_rcode,  ///< insert: SERVFAIL, REFUSED, FORMERR, NOTIMP or an extended rcode
    truncated,          ///< insert: TC set
    no_soa,             ///< insert: NXDOMAIN or NODATA without an SOA in the authority section
    zero_ttl,           ///< insert: the clamped lifetime is zero seconds
    too_large,          ///< insert: the entry alone exceeds a shard's byte budget
};

/// A short fixed phrase for `code`, e.g. "negative answer without SOA".
[[nodiscard]] const char* reason(Errc code) noexcept;

[[nodiscard]] const std::error_category& cache_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(Errc code) noexcept {
    return {static_cast<int>(code), cache_category()};
}

}  // namespace moat::cache

template <>
struct std::is_error_code_enum<moat::cache::Errc> : std::true_type {};
