#include "special_names.hpp"

namespace moat::engine {

SpecialNames::SpecialNames(bool block_icloud_private_relay) {
    checks_.push_back({KnownZone("use-application-dns.net"), true, SpecialAnswer::nxdomain});
    if (block_icloud_private_relay) {
        checks_.push_back({KnownZone("mask.icloud.com"), true, SpecialAnswer::nxdomain});
        checks_.push_back({KnownZone("mask-h2.icloud.com"), true, SpecialAnswer::nxdomain});
    }
    checks_.push_back({KnownZone("resolver.arpa"), false, SpecialAnswer::nodata});
    checks_.push_back({KnownZone("local"), false, SpecialAnswer::nxdomain});
}

SpecialAnswer SpecialNames::classify(std::span<const std::uint8_t> lower_qname,
                                     const filter::SuffixHashes& hashes) const noexcept {
    for (const Check& check : checks_) {
        if (check.exact ? check.zone.is(lower_qname, hashes)
                        : check.zone.holds(lower_qname, hashes)) {
            return check.answer;
        }
    }
    return SpecialAnswer::none;
}

}  // namespace moat::engine
