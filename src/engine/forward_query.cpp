#include "forward_query.hpp"

#include "moat/wire/header.hpp"
#include "moat/wire/query_writer.hpp"

namespace moat::engine {

void build_forward_query(const cache::CacheKey& key, bool checking_disabled,
                         std::uint16_t udp_payload_size, std::span<const std::uint8_t> options,
                         std::vector<std::uint8_t>& out) {
    wire::EdnsOptions edns;
    edns.udp_payload_size = udp_payload_size;
    edns.dnssec_ok = key.dnssec_ok();
    edns.options = options;
    // The key's name is a valid uncompressed name and the options one ECS option, so this cannot
    // fail.
    (void)wire::write_query({.id = 0,
                             .flags = static_cast<std::uint16_t>(
                                 wire::Header::kRd | (checking_disabled ? wire::Header::kCd : 0U)),
                             .qname = key.name(),
                             .qtype = static_cast<wire::RrType>(key.qtype()),
                             .qclass = static_cast<wire::RrClass>(key.qclass()),
                             .edns = &edns},
                            out);
}

}  // namespace moat::engine
