// The round trip used by corpus_test and fuzz_wire_roundtrip: copy every question and record of a
// valid message out (to_record), write them again with MessageBuilder, read the result back and
// compare. No GoogleTest dependency.
//
// What "the same" means, and why:
//  * Header ID and flags: identical.
//  * Questions and record owners: equal as names (case-insensitive, RFC 4343). The builder
//    compresses case-insensitively (a later "www.example.com" may point at an earlier
//    "WWW.Example.COM"), so the decompressed copy can carry the earlier name's case.
//  * Type, class, TTL: identical.
//  * RDATA: identical octets, except the names the builder may compress: the names of the RFC 1035
//    types (NS, MD, MF, CNAME, MB, MG, MR, PTR, MINFO, SOA, MX), which are compared as names for
//    the reason above. The layouts are written out here from RFC 1035 §3.3, independently of the
//    library's table. Every other type's RDATA is written in full by the builder and must come
//    back byte for byte.
//  * OPT: the builder writes it itself (set_edns) as the last additional record, so it is compared
//    field by field: UDP size (the builder sends values below 512 as 512, RFC 6891 §6.2.5),
//    extended rcode, version, DO and the options, byte for byte. The 15 Z bits are not carried
//    (RFC 6891 §6.1.4: senders set them to zero), nor is the OPT's position in the section.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/name_decoder.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/validate.hpp"
#include "wire_trace.hpp"

namespace moat::test {

struct OwnedQuestion {
    wire::Name name;
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;
};

struct OwnedOpt {
    std::uint16_t udp_payload_size = 0;
    std::uint8_t extended_rcode = 0;
    std::uint8_t version = 0;
    bool dnssec_ok = false;
    std::vector<std::uint8_t> options;
};

/// Everything a message carries, owned.
struct MessageContent {
    wire::Header header;
    std::vector<OwnedQuestion> questions;
    std::vector<std::pair<wire::Section, wire::Record>> records;  ///< OPT excluded
    std::optional<OwnedOpt> opt;
    std::size_t opt_count = 0;
};

/// Copies everything out of `msg`; an error text when any part cannot be read.
inline tl::expected<MessageContent, std::string> extract(std::span<const std::uint8_t> msg) {
    auto view = wire::MessageView::parse(msg);
    if (!view) {
        return tl::unexpected("parse: " + error_text(view.error()));
    }
    MessageContent content;
    content.header = view->header();
    std::size_t pos = wire::kHeaderSize;
    for (std::size_t i = 0; i < content.header.qdcount; ++i) {
        auto name = wire::decode_name(msg, pos, msg.size(), nullptr);
        if (!name || name->end + 4U > msg.size()) {
            return tl::unexpected(std::string("question walk failed"));
        }
        pos = name->end;
        content.questions.push_back(
            {wire::Name::from_view(name->view),
             static_cast<std::uint16_t>((msg[pos] << 8U) | msg[pos + 1]),
             static_cast<std::uint16_t>((msg[pos + 2] << 8U) | msg[pos + 3])});
        pos += 4;
    }
    if (pos != view->answer_offset()) {
        return tl::unexpected("question walk ends at " + std::to_string(pos) + ", parse() at " +
                              std::to_string(view->answer_offset()));
    }
    wire::RecordRange records = view->records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            auto opt = wire::rdata::read_opt(rr);
            if (!opt) {
                return tl::unexpected("read_opt: " + error_text(opt.error()));
            }
            ++content.opt_count;
            content.opt =
                OwnedOpt{opt->udp_payload_size, opt->extended_rcode, opt->version, opt->dnssec_ok,
                         std::vector<std::uint8_t>(opt->options.bytes().begin(),
                                                   opt->options.bytes().end())};
            continue;
        }
        auto record = wire::to_record(rr);
        if (!record) {
            return tl::unexpected("to_record of " + record_repr(rr) + ": " +
                                  error_text(record.error()));
        }
        content.records.emplace_back(rr.section, std::move(*record));
    }
    if (records.error()) {
        return tl::unexpected("records: " + error_text(*records.error()));
    }
    return content;
}

/// Size of the content written without any compression: when it fits in 65535 octets the
/// builder has no excuse to fail.
inline std::size_t uncompressed_size(const MessageContent& c) {
    std::size_t n = wire::kHeaderSize;
    for (const auto& q : c.questions) {
        n += q.name.length() + 4;
    }
    for (const auto& [section, r] : c.records) {
        n += r.owner.length() + 10 + r.rdata.size();
    }
    if (c.opt) {
        n += 11 + c.opt->options.size();
    }
    return n;
}

/// Writes `c` with a vector-backed builder limited to 65535 octets.
inline tl::expected<std::vector<std::uint8_t>, std::string> rebuild(const MessageContent& c) {
    std::vector<std::uint8_t> out;
    wire::MessageBuilder builder(&out, wire::kMaxMessageSize);
    builder.header().id = c.header.id;
    builder.header().flags = c.header.flags;
    for (const auto& q : c.questions) {
        auto ok = builder.add_question(q.name, static_cast<wire::RrType>(q.qtype),
                                       static_cast<wire::RrClass>(q.qclass));
        if (!ok) {
            return tl::unexpected("add_question: " + error_text(ok.error()));
        }
    }
    if (c.opt) {
        const wire::EdnsOptions edns{c.opt->udp_payload_size, c.opt->version, c.opt->dnssec_ok,
                                     c.opt->options};
        if (auto ok = builder.set_edns(edns); !ok) {
            return tl::unexpected("set_edns: " + error_text(ok.error()));
        }
        builder.set_rcode(static_cast<wire::Rcode>((unsigned{c.opt->extended_rcode} << 4U) |
                                                   c.header.rcode_low()));
    }
    for (const auto& [section, record] : c.records) {
        if (auto ok = builder.add(section, record); !ok) {
            return tl::unexpected("add " + record.owner.to_text() + " type " +
                                  std::to_string(wire::to_u16(record.type)) + " class " +
                                  std::to_string(record.rclass) + " rdlen " +
                                  std::to_string(record.rdata.size()) + ": " +
                                  error_text(ok.error()));
        }
    }
    auto done = builder.finish();
    if (!done) {
        return tl::unexpected("finish: " + error_text(done.error()));
    }
    return std::vector<std::uint8_t>(done->begin(), done->end());
}

namespace detail {

/// End of the uncompressed name at `pos`, or nullopt when it does not fit.
inline std::optional<std::size_t> name_end(std::span<const std::uint8_t> b, std::size_t pos) {
    while (pos < b.size()) {
        const std::uint8_t len = b[pos];
        if (len == 0) {
            return pos + 1;
        }
        if (len > 63) {
            return std::nullopt;
        }
        pos += len + 1U;
    }
    return std::nullopt;
}

inline bool names_iequal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    auto na = wire::Name::from_wire(a);
    auto nb = wire::Name::from_wire(b);
    return na && nb && *na == *nb;
}

}  // namespace detail

/// RDATA equality as described in the file comment.
inline bool rdata_equal(wire::RrType type, std::span<const std::uint8_t> a,
                        std::span<const std::uint8_t> b) {
    if (std::equal(a.begin(), a.end(), b.begin(), b.end())) {
        return true;  // also the empty RDATA of RFC 2136 deletions
    }
    // Layout of the RFC 1035 types the builder compresses: octets before the first name, number
    // of names, octets after the names.
    std::size_t head = 0;
    std::size_t names = 0;
    switch (static_cast<std::uint16_t>(type)) {
        case 2:   // NS
        case 3:   // MD
        case 4:   // MF
        case 5:   // CNAME
        case 7:   // MB
        case 8:   // MG
        case 9:   // MR
        case 12:  // PTR
            names = 1;
            break;
        case 14:  // MINFO
        case 6:   // SOA (then 20 octets)
            names = 2;
            break;
        case 15:  // MX
            head = 2;
            names = 1;
            break;
        default: return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
    const auto at = [](std::span<const std::uint8_t> s, std::size_t i) {
        return s.begin() + static_cast<std::ptrdiff_t>(i);
    };
    if (a.size() < head || b.size() < head || !std::equal(a.begin(), at(a, head), b.begin())) {
        return false;
    }
    std::size_t pa = head;
    std::size_t pb = head;
    for (std::size_t i = 0; i < names; ++i) {
        const auto ea = detail::name_end(a, pa);
        const auto eb = detail::name_end(b, pb);
        if (!ea || !eb || !detail::names_iequal(a.subspan(pa, *ea - pa), b.subspan(pb, *eb - pb))) {
            return false;
        }
        pa = *ea;
        pb = *eb;
    }
    return std::equal(at(a, pa), a.end(), at(b, pb), b.end());
}

/// Nullopt when `rebuilt` carries the same message as `original`, else what differs.
inline std::optional<std::string> compare(const MessageContent& original,
                                          const MessageContent& rebuilt) {
    if (original.header.id != rebuilt.header.id || original.header.flags != rebuilt.header.flags) {
        return "header id/flags differ: " + std::to_string(original.header.flags) + " vs " +
               std::to_string(rebuilt.header.flags);
    }
    if (original.questions.size() != rebuilt.questions.size()) {
        return std::string("question count differs");
    }
    for (std::size_t i = 0; i < original.questions.size(); ++i) {
        const auto& a = original.questions[i];
        const auto& b = rebuilt.questions[i];
        if (!(a.name == b.name) || a.qtype != b.qtype || a.qclass != b.qclass) {
            return "question " + std::to_string(i) + " differs: " + a.name.to_text() + " vs " +
                   b.name.to_text();
        }
    }
    if (original.records.size() != rebuilt.records.size()) {
        return "record count differs: " + std::to_string(original.records.size()) + " vs " +
               std::to_string(rebuilt.records.size());
    }
    for (std::size_t i = 0; i < original.records.size(); ++i) {
        const auto& [sa, a] = original.records[i];
        const auto& [sb, b] = rebuilt.records[i];
        if (sa != sb || !(a.owner == b.owner) || a.type != b.type || a.rclass != b.rclass ||
            a.ttl != b.ttl || !rdata_equal(a.type, a.rdata, b.rdata)) {
            return "record " + std::to_string(i) + " differs: " + a.owner.to_text() + " type " +
                   std::to_string(wire::to_u16(a.type)) + " rdata " + hex(a.rdata) + " vs " +
                   b.owner.to_text() + " type " + std::to_string(wire::to_u16(b.type)) + " rdata " +
                   hex(b.rdata);
        }
    }
    if (original.opt.has_value() != rebuilt.opt.has_value()) {
        return std::string("OPT presence differs");
    }
    if (original.opt) {
        const OwnedOpt& a = *original.opt;
        const OwnedOpt& b = *rebuilt.opt;
        const auto udp = std::max<std::uint16_t>(a.udp_payload_size, 512);
        if (udp != b.udp_payload_size || a.extended_rcode != b.extended_rcode ||
            a.version != b.version || a.dnssec_ok != b.dnssec_ok || a.options != b.options) {
            return std::string("OPT differs");
        }
    }
    return std::nullopt;
}

/// Outcome of a whole round trip of a message validate() accepted.
struct RoundTrip {
    enum class Status { same, too_big, failed };
    Status status = Status::failed;
    std::string why;
    std::vector<std::uint8_t> rebuilt;
};

inline RoundTrip round_trip(std::span<const std::uint8_t> msg) {
    RoundTrip result;
    auto original = extract(msg);
    if (!original) {
        result.why = "extract original: " + original.error();
        return result;
    }
    if (uncompressed_size(*original) > wire::kMaxMessageSize) {
        result.status = RoundTrip::Status::too_big;
        return result;
    }
    auto bytes = rebuild(*original);
    if (!bytes) {
        result.why = "rebuild: " + bytes.error();
        return result;
    }
    result.rebuilt = std::move(*bytes);
    if (auto ok = wire::validate(result.rebuilt); !ok) {
        result.why = "validate rebuilt: " + error_text(ok.error());
        return result;
    }
    auto again = extract(result.rebuilt);
    if (!again) {
        result.why = "extract rebuilt: " + again.error();
        return result;
    }
    if (auto diff = compare(*original, *again)) {
        result.why = *diff;
        return result;
    }
    result.status = RoundTrip::Status::same;
    return result;
}

}  // namespace moat::test
