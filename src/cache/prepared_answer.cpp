#include "prepared_answer.hpp"

#include <algorithm>
#include <cstddef>

#include "moat/core/bytes.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "ttl.hpp"

namespace moat::cache {

namespace {

/// The header and question checks, on the octets.
tl::expected<void, Errc> check_header(const CacheKey& key, std::span<const std::uint8_t> answer) {
    if (answer.size() < wire::kHeaderSize) {
        return tl::unexpected(Errc::malformed);
    }
    const wire::Header header = wire::Header::load(answer.data());
    if (!header.qr() || header.opcode() != wire::Opcode::query) {
        return tl::unexpected(Errc::not_a_response);
    }
    if (header.tc()) {
        return tl::unexpected(Errc::truncated);
    }
    const auto rcode = static_cast<wire::Rcode>(header.rcode_low());
    if (rcode != wire::Rcode::noerror && rcode != wire::Rcode::nxdomain) {
        return tl::unexpected(Errc::uncacheable_rcode);
    }
    if (header.qdcount != 1 || !key.is_question_of(answer)) {
        return tl::unexpected(Errc::question_mismatch);
    }
    return {};
}

/// What both entry points share once the records are walked: the lifetime, and the bytes with
/// their TTLs clamped.
tl::expected<void, Errc> prepare_from_walk(std::span<const std::uint8_t> answer,
                                           const RecordWalk& walk, const Options& options,
                                           PreparedAnswer& prepared) {
    if (walk.malformed()) {
        return tl::unexpected(Errc::malformed);
    }
    if (walk.extended_rcode()) {
        return tl::unexpected(Errc::uncacheable_rcode);
    }
    const wire::Header header = wire::Header::load(answer.data());
    prepared.negative = static_cast<wire::Rcode>(header.rcode_low()) == wire::Rcode::nxdomain ||
                        walk.answers() == 0;
    const std::uint32_t max_ttl = std::max(options.min_ttl, options.max_ttl);
    std::uint32_t cap = max_ttl;
    if (prepared.negative) {
        if (!walk.soa_ttl()) {
            return tl::unexpected(Errc::no_soa);
        }
        // RFC 2308 §5: the negative TTL is min(SOA TTL, SOA MINIMUM), then our clamps.
        cap = std::min(std::max(*walk.soa_ttl(), options.min_ttl), options.max_negative_ttl);
    }

    prepared.bytes.assign(answer.begin(), answer.end());
    prepared.ttl_offsets = walk.ttl_offsets();
    std::uint32_t lifetime = cap;
    for (const std::uint16_t offset : prepared.ttl_offsets) {
        if (offset + std::size_t{4} > answer.size()) {
            return tl::unexpected(Errc::malformed);  // a caller's walk of other octets
        }
        std::uint8_t* const field = prepared.bytes.data() + offset;
        const std::uint32_t ttl =
            std::min(std::clamp(sanitise_ttl(load_u32(field)), options.min_ttl, max_ttl), cap);
        store_u32(field, ttl);
        lifetime = std::min(lifetime, ttl);
    }
    if (lifetime == 0) {
        return tl::unexpected(Errc::zero_ttl);
    }
    prepared.lifetime = lifetime;
    return {};
}

}  // namespace

tl::expected<void, Errc> prepare_answer(const CacheKey& key, std::span<const std::uint8_t> answer,
                                        const Options& options, PreparedAnswer& prepared) {
    if (answer.size() > wire::kMaxMessageSize) {
        return tl::unexpected(Errc::malformed);
    }
    const auto view = wire::MessageView::parse(answer);
    if (!view) {
        return tl::unexpected(Errc::malformed);
    }
    if (auto checked = check_header(key, answer); !checked) {
        return tl::unexpected(checked.error());
    }
    RecordWalk& walk = prepared.own_walk;
    walk.clear();
    auto records = view->records();
    for (const wire::RecordView& rr : records) {
        if (!walk.add(rr, records.suffix_cache())) {
            break;
        }
    }
    if (records.error()) {
        return tl::unexpected(Errc::malformed);
    }
    return prepare_from_walk(answer, walk, options, prepared);
}

tl::expected<void, Errc> prepare_walked_answer(const CacheKey& key,
                                               std::span<const std::uint8_t> answer,
                                               const RecordWalk& walk, const Options& options,
                                               PreparedAnswer& prepared) {
    if (answer.size() > wire::kMaxMessageSize) {
        return tl::unexpected(Errc::malformed);
    }
    if (auto checked = check_header(key, answer); !checked) {
        return tl::unexpected(checked.error());
    }
    return prepare_from_walk(answer, walk, options, prepared);
}

}  // namespace moat::cache
