// Turning an upstream answer into the stored form: what the cache keeps and every client's
// answer starts from. ID 0, our flags (the upstream's AD, never its AA), the lower-cased question
// of the cache key, every record but OPT.
//
// Most upstream answers are that form already but for the header, the case of the question and
// a trailing OPT, so those are copied with the three fixed; only the others (an OPT that is not
// the last record, a question that is not the key's) are rebuilt record by record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "moat/cache/cache_key.hpp"
#include "moat/cache/record_walk.hpp"
#include "moat/wire/message_view.hpp"

namespace moat::engine {

/// The stored form's size, and what its answer section holds: the CNAME and rebinding checks
/// that follow need not parse an answer without such records.
struct NormalisedReply {
    std::size_t size = 0;  ///< 0: the reply cannot be used
    bool has_cname = false;
    bool has_address = false;  ///< an A or AAAA record
    bool walked = false;       ///< the records were noted in the caller's cache::RecordWalk
};

/// The stored form of `reply` in `scratch`, copied or rebuilt. `rdata` is a reusable buffer.
/// Size 0 when the reply does not parse or is no answer to one question. A copy notes its
/// records in `walk` (when given) for cache::Cache::insert, and says so (`walked`).
NormalisedReply normalise_reply(std::span<const std::uint8_t> reply, const cache::CacheKey& key,
                                std::vector<std::uint8_t>& scratch,
                                std::vector<std::uint8_t>& rdata,
                                cache::RecordWalk* walk = nullptr);

/// The copy alone: size 0 when `view` (of an answer to one question) is not the stored form but
/// for its header, question case and a last OPT record. For the tests, which compare it with
/// the rebuild.
NormalisedReply copy_reply(const wire::MessageView& view, const cache::CacheKey& key,
                           std::vector<std::uint8_t>& scratch, std::vector<std::uint8_t>& rdata,
                           cache::RecordWalk* walk = nullptr);

/// The rebuild alone: every record but OPT written afresh, names compressed by our builder.
NormalisedReply rebuild_reply(const wire::MessageView& view, const cache::CacheKey& key,
                              std::vector<std::uint8_t>& scratch,
                              std::vector<std::uint8_t>& rdata) noexcept;

}  // namespace moat::engine
