#include "special_names.hpp"

#include <algorithm>

#include "name_match.hpp"

namespace moat::engine {
namespace {

bool same(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

SpecialNames::SpecialNames(bool block_icloud_private_relay)
    : canary_(name_of("use-application-dns.net")),
      private_relay_{name_of("mask.icloud.com"), name_of("mask-h2.icloud.com")},
      resolver_arpa_(name_of("resolver.arpa")),
      mdns_(name_of("local")),
      block_private_relay_(block_icloud_private_relay) {}

SpecialAnswer SpecialNames::classify(std::span<const std::uint8_t> lower_qname) const noexcept {
    if (same(lower_qname, canary_.wire())) {
        return SpecialAnswer::nxdomain;
    }
    if (block_private_relay_ &&
        std::any_of(private_relay_.begin(), private_relay_.end(),
                    [&](const wire::Name& n) { return same(lower_qname, n.wire()); })) {
        return SpecialAnswer::nxdomain;
    }
    if (is_under(lower_qname, resolver_arpa_.wire())) {
        return SpecialAnswer::nodata;
    }
    if (is_under(lower_qname, mdns_.wire())) {
        return SpecialAnswer::nxdomain;
    }
    return SpecialAnswer::none;
}

}  // namespace moat::engine
