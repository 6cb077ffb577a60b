#include "forward_query.hpp"

#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"

namespace moat::engine {

void build_forward_query(const cache::CacheKey& key, bool checking_disabled,
                         std::uint16_t udp_payload_size, std::span<const std::uint8_t> options,
                         std::vector<std::uint8_t>& out) {
    out.clear();
    wire::MessageBuilder b(&out, wire::kMaxMessageSize);
    b.header().id = 0;
    b.header().flags = static_cast<std::uint16_t>(wire::Header::kRd |
                                                  (checking_disabled ? wire::Header::kCd : 0U));
    wire::EdnsOptions edns;
    edns.udp_payload_size = udp_payload_size;
    edns.dnssec_ok = key.dnssec_ok();
    edns.options = options;
    // A question of at most 259 octets and an OPT with one ECS option always fit 64 KiB.
    (void)b.set_edns(edns);
    (void)b.add_question(key.name(), static_cast<wire::RrType>(key.qtype()),
                         static_cast<wire::RrClass>(key.qclass()));
    (void)b.finish();
}

}  // namespace moat::engine
