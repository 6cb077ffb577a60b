// The build benchmark's input and operation with dnsmoat: records decoded from a fixture once,
// beforehand, then written again with full compression, either into a reused span or into a
// growing vector.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"

namespace moat::bench {

struct BuildInput {
    wire::Header header;
    wire::Name qname;
    wire::RrType qtype{};
    wire::RrClass qclass{};
    bool has_question = false;
    std::vector<std::pair<wire::Section, wire::Record>> records;
    std::optional<wire::EdnsOptions> edns;
    wire::Rcode rcode{};  ///< the full 12-bit code when there is an OPT record
    std::vector<std::uint8_t> edns_options;
};

/// Decodes `msg` into a BuildInput (the OPT record becomes EdnsOptions). Empty on error.
inline std::optional<BuildInput> prepare_build(std::span<const std::uint8_t> msg) {
    auto view = wire::MessageView::parse(msg);
    if (!view) {
        return std::nullopt;
    }
    BuildInput in;
    in.header = view->header();
    if (auto q = view->question()) {
        in.has_question = true;
        in.qname = wire::Name::from_view(q->qname);
        in.qtype = q->qtype;
        in.qclass = q->qclass;
    }
    wire::RecordRange records = view->records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            auto opt = wire::rdata::read_opt(rr);
            if (!opt) {
                return std::nullopt;
            }
            in.edns_options.assign(opt->options.bytes().begin(), opt->options.bytes().end());
            in.edns = wire::EdnsOptions{opt->udp_payload_size, opt->version, opt->dnssec_ok, {}};
            in.rcode =
                static_cast<wire::Rcode>((opt->extended_rcode << 4U) | in.header.rcode_low());
            continue;
        }
        auto record = wire::to_record(rr);
        if (!record) {
            return std::nullopt;
        }
        in.records.emplace_back(rr.section, std::move(*record));
    }
    if (records.error()) {
        return std::nullopt;
    }
    if (in.edns) {
        in.edns->options = in.edns_options;
    }
    return in;
}

/// Writes `in` with `builder` (already reset). Returns the message size, 0 on error.
inline std::size_t build_message(wire::MessageBuilder& builder, const BuildInput& in) noexcept {
    builder.header().id = in.header.id;
    builder.header().flags = in.header.flags;
    if (in.has_question && !builder.add_question(in.qname, in.qtype, in.qclass)) {
        return 0;
    }
    if (in.edns) {
        if (!builder.set_edns(*in.edns)) {
            return 0;
        }
        builder.set_rcode(in.rcode);
    }
    for (const auto& [section, record] : in.records) {
        if (!builder.add(section, record)) {
            return 0;
        }
    }
    auto out = builder.finish();
    return out ? out->size() : 0;
}

}  // namespace moat::bench
