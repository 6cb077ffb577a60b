#include "moat/wire/query_writer.hpp"

#include <algorithm>
#include <cstring>

#include "moat/core/bytes.hpp"
#include "moat/wire/header.hpp"
#include "writer_common.hpp"

namespace moat::wire {

Status write_query(const OneQuestionQuery& query, std::vector<std::uint8_t>& out) {
    out.clear();
    if (!detail::is_uncompressed_name(query.qname) ||
        (query.edns != nullptr && query.edns->options.size() > 0xFFFF)) {
        return fail_at(Errc::bad_argument, kHeaderSize);
    }
    const std::size_t options = query.edns != nullptr ? query.edns->options.size() : 0;
    const std::size_t opt = query.edns != nullptr ? detail::kOptFixed + options : 0;
    out.resize(kHeaderSize + query.qname.size() + 4 + opt);
    std::uint8_t* p = out.data();

    Header header;
    header.id = query.id;
    header.flags = query.flags;
    header.qdcount = 1;
    header.arcount = query.edns != nullptr ? 1 : 0;
    header.store(p);
    p += kHeaderSize;
    std::memcpy(p, query.qname.data(), query.qname.size());
    p += query.qname.size();
    store_u16(p, to_u16(query.qtype));
    store_u16(p + 2, to_u16(query.qclass));
    p += 4;
    if (query.edns != nullptr) {
        const EdnsOptions& edns = *query.edns;
        *p++ = 0;  // owner: the root
        store_u16(p, to_u16(RrType::opt));
        store_u16(p + 2, std::max<std::uint16_t>(edns.udp_payload_size, kClassicUdpSize));
        // The extended rcode (the TTL's top octet) of a query is 0.
        store_u32(p + 4, (static_cast<std::uint32_t>(edns.version) << 16U) |
                             (edns.dnssec_ok ? 0x8000U : 0U));
        store_u16(p + 8, static_cast<std::uint16_t>(options));
        if (options != 0) {
            std::memcpy(p + 10, edns.options.data(), options);
        }
    }
    return {};
}

}  // namespace moat::wire
