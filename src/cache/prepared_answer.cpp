#include "prepared_answer.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>

#include "moat/core/bytes.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"

namespace moat::cache {

namespace {

/// Octets between a record's TTL field and its RDATA: the TTL itself and RDLENGTH.
constexpr std::size_t kTtlToRdata = 6;

/// What the walk over the records found; the TTL offsets go straight into the caller's vector.
struct Walk {
    std::optional<std::uint32_t> soa_ttl;  ///< min(SOA TTL, SOA MINIMUM) from the authority
    std::size_t answers = 0;               ///< non-OPT records in the answer section
    bool extended_rcode = false;           ///< OPT carries upper rcode bits
};

/// RFC 2181 §8: a TTL with the top bit set is treated as zero.
std::uint32_t sanitise(std::uint32_t ttl) noexcept { return (ttl & 0x80000000U) != 0 ? 0 : ttl; }

/// Fills `offsets` with the offset of every record's TTL field (OPT aside).
tl::expected<Walk, Errc> walk_records(const wire::MessageView& view,
                                      std::vector<std::uint16_t>& offsets) {
    Walk walk;
    offsets.clear();
    auto records = view.records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            walk.extended_rcode = walk.extended_rcode || (rr.ttl >> 24U) != 0;
            continue;
        }
        offsets.push_back(static_cast<std::uint16_t>(rr.rdata_offset - kTtlToRdata));
        if (rr.section == wire::Section::answer) {
            ++walk.answers;
        } else if (rr.section == wire::Section::authority && rr.type == wire::RrType::soa) {
            const auto soa = wire::rdata::read_soa(rr, records.suffix_cache());
            if (!soa) {
                return tl::unexpected(Errc::malformed);
            }
            const std::uint32_t ttl = std::min(sanitise(rr.ttl), sanitise(soa->minimum));
            walk.soa_ttl = walk.soa_ttl ? std::min(*walk.soa_ttl, ttl) : ttl;
        }
    }
    if (records.error()) {
        return tl::unexpected(Errc::malformed);
    }
    return walk;
}

/// The header and question checks; the records are not looked at.
tl::expected<void, Errc> check_header(const CacheKey& key, const wire::MessageView& view) {
    const wire::Header& header = view.header();
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
    const auto question = view.question();
    if (header.qdcount != 1 || !question || wire::to_u16(question->qtype) != key.qtype() ||
        wire::to_u16(question->qclass) != key.qclass() || !question->qname.iequals(key.name())) {
        return tl::unexpected(Errc::question_mismatch);
    }
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
    if (auto checked = check_header(key, *view); !checked) {
        return tl::unexpected(checked.error());
    }
    auto walk = walk_records(*view, prepared.ttl_offsets);
    if (!walk) {
        return tl::unexpected(walk.error());
    }
    if (walk->extended_rcode) {
        return tl::unexpected(Errc::uncacheable_rcode);
    }

    prepared.negative =
        static_cast<wire::Rcode>(view->header().rcode_low()) == wire::Rcode::nxdomain ||
        walk->answers == 0;
    const std::uint32_t max_ttl = std::max(options.min_ttl, options.max_ttl);
    std::uint32_t cap = max_ttl;
    if (prepared.negative) {
        if (!walk->soa_ttl) {
            return tl::unexpected(Errc::no_soa);
        }
        // RFC 2308 §5: the negative TTL is min(SOA TTL, SOA MINIMUM), then our clamps.
        cap = std::min(std::max(*walk->soa_ttl, options.min_ttl), options.max_negative_ttl);
    }

    prepared.bytes.assign(answer.begin(), answer.end());
    std::uint32_t lifetime = cap;
    for (const std::uint16_t offset : prepared.ttl_offsets) {
        std::uint8_t* const field = prepared.bytes.data() + offset;
        const std::uint32_t ttl =
            std::min(std::clamp(sanitise(load_u32(field)), options.min_ttl, max_ttl), cap);
        store_u32(field, ttl);
        lifetime = std::min(lifetime, ttl);
    }
    if (lifetime == 0) {
        return tl::unexpected(Errc::zero_ttl);
    }
    prepared.lifetime = lifetime;
    return {};
}

}  // namespace moat::cache
