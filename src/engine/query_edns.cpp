#include "query_edns.hpp"

#include <cstddef>
#include <optional>
#include <span>

#include "moat/wire/rdata.hpp"

namespace moat::engine {
namespace {

constexpr std::size_t kOptionHeader = 4;  // an EDNS option's code and length

/// Takes an OPT record into `result`; an error means FORMERR.
tl::expected<void, wire::WireError> take_opt(const wire::RecordView& rr, QueryEdns& result) {
    if (result.client.present || !rr.owner.is_root() || rr.section != wire::Section::additional) {
        return tl::unexpected(wire::WireError{wire::Errc::bad_opt, rr.rdata_offset});
    }
    auto opt = wire::rdata::read_opt(rr);
    if (!opt) {
        return tl::unexpected(opt.error());
    }
    result.client.present = true;
    result.client.dnssec_ok = opt->dnssec_ok;
    result.client.udp_payload_size = opt->udp_payload_size;
    result.version = opt->version;
    for (const wire::rdata::KeyValue kv : opt->options) {
        if (kv.key == kEdnsOptionClientSubnet && result.client_subnet.empty()) {
            // The option's code and length come right before its data in the OPT's RDATA.
            result.client_subnet =
                std::span(kv.value.data() - kOptionHeader, kOptionHeader + kv.value.size());
        }
    }
    return {};
}

}  // namespace

tl::expected<QueryEdns, wire::WireError> read_query_edns(const wire::MessageView& query) {
    QueryEdns result;
    const wire::Header& h = query.header();
    if (h.ancount == 0 && h.nscount == 0 && h.arcount == 0) {
        return result;  // the usual query without EDNS: nothing after the question
    }
    // The usual query with EDNS: its OPT alone, read in place.
    if (const std::optional<wire::RecordView> rr = query.lone_root_additional();
        rr && rr->type == wire::RrType::opt) {
        if (auto taken = take_opt(*rr, result); !taken) {
            return tl::unexpected(taken.error());
        }
        return result;
    }
    // Every record is walked, so a section that announces more than it holds is FORMERR.
    auto records = query.records();
    for (const wire::RecordView& rr : records) {
        if (rr.type != wire::RrType::opt) {
            continue;
        }
        if (auto taken = take_opt(rr, result); !taken) {
            return tl::unexpected(taken.error());
        }
    }
    if (records.error()) {
        return tl::unexpected(*records.error());
    }
    return result;
}

}  // namespace moat::engine
