// Special-use names that dnsmoat answers itself instead of forwarding (docs/daemon.md):
//   use-application-dns.net          NXDOMAIN: Firefox's canary; it then keeps using this
//                                    resolver instead of switching to its own DoH provider.
//   mask.icloud.com, mask-h2.icloud.com
//                                    NXDOMAIN when blocking iCloud Private Relay is on (it would
//                                    take Apple devices' traffic past every list).
//   resolver.arpa and below          NODATA: DDR (RFC 9462) discovery; we advertise no
//                                    encrypted endpoint here.
//   local and below                  NXDOMAIN: multicast DNS names (RFC 6762) never go to a
//                                    unicast upstream; local records for them still answer.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "moat/wire/name.hpp"

namespace moat::engine {

enum class SpecialAnswer : std::uint8_t { none, nxdomain, nodata };

class SpecialNames {
public:
    explicit SpecialNames(bool block_icloud_private_relay);

    /// How to answer `lower_qname` (lower-cased, uncompressed wire form); none: not special.
    [[nodiscard]] SpecialAnswer classify(std::span<const std::uint8_t> lower_qname) const noexcept;

private:
    wire::Name canary_;
    std::array<wire::Name, 2> private_relay_;
    wire::Name resolver_arpa_;
    wire::Name mdns_;
    bool block_private_relay_;
};

}  // namespace moat::engine
