// Special-use names that dnsmoat answers itself instead of forwarding (docs/daemon.md):
//   localhost and below              the loopback addresses (RFC 6761 §6.3), asked apart
//                                    (is_localhost()) because the engine answers them first.
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

#include <cstdint>
#include <span>
#include <vector>

#include "moat/filter/name_hash.hpp"
#include "name_match.hpp"

namespace moat::engine {

enum class SpecialAnswer : std::uint8_t { none, nxdomain, nodata };

class SpecialNames {
public:
    explicit SpecialNames(bool block_icloud_private_relay);

    /// How to answer `lower_qname` (lower-cased, uncompressed wire form), whose suffix hashes
    /// are `hashes` (the pipeline has them for every query); none: not special.
    [[nodiscard]] SpecialAnswer classify(std::span<const std::uint8_t> lower_qname,
                                         const filter::SuffixHashes& hashes) const noexcept;
    /// True for localhost and the names below it (RFC 6761 §6.3), which the engine answers with
    /// loopback addresses before classify() is asked.
    [[nodiscard]] bool is_localhost(std::span<const std::uint8_t> lower_qname,
                                    const filter::SuffixHashes& hashes) const noexcept {
        return localhost_.holds(lower_qname, hashes);
    }

private:
    /// One special name or zone and its answer, tested in the order above.
    struct Check {
        KnownZone zone;
        bool exact;  ///< the name itself only, not the names below it
        SpecialAnswer answer;
    };

    KnownZone localhost_{"localhost"};
    std::vector<Check> checks_;
};

}  // namespace moat::engine
