#include "moat/cache/record_walk.hpp"

#include <algorithm>

#include "moat/wire/rdata.hpp"
#include "ttl.hpp"

namespace moat::cache {

namespace {

/// Octets between a record's TTL field and its RDATA: the TTL itself and RDLENGTH.
constexpr std::size_t kTtlToRdata = 6;

}  // namespace

void RecordWalk::clear() noexcept {
    ttl_offsets_.clear();
    soa_ttl_.reset();
    answers_ = 0;
    extended_rcode_ = false;
    malformed_ = false;
}

bool RecordWalk::add(const wire::RecordView& rr, wire::SuffixCache* names) {
    if (rr.type == wire::RrType::opt) {
        extended_rcode_ = extended_rcode_ || (rr.ttl >> 24U) != 0;
        return true;
    }
    ttl_offsets_.push_back(static_cast<std::uint16_t>(rr.rdata_offset - kTtlToRdata));
    if (rr.section == wire::Section::answer) {
        ++answers_;
    } else if (rr.section == wire::Section::authority && rr.type == wire::RrType::soa) {
        const auto soa = wire::rdata::read_soa(rr, names);
        if (!soa) {
            malformed_ = true;
            return false;
        }
        const std::uint32_t ttl = std::min(sanitise_ttl(rr.ttl), sanitise_ttl(soa->minimum));
        soa_ttl_ = soa_ttl_ ? std::min(*soa_ttl_, ttl) : ttl;
    }
    return true;
}

}  // namespace moat::cache
