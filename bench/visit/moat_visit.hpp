// The parse benchmark's visit with dnsmoat's wire library: decode and touch everything
// (see visit_stats.hpp for the exact sequence every library follows).
#pragma once

#include <array>
#include <span>

#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "visit_stats.hpp"

namespace moat::bench {

inline void visit_name(VisitStats& s, wire::NameView name) noexcept {
    s.begin_name();
    for (const auto label : name) {
        s.label(label.data(), label.size());
    }
    s.end_name();
}

/// Visits one record's RDATA; false when it does not match its type.
inline bool visit_rdata(VisitStats& s, const wire::RecordView& rr,
                        wire::SuffixCache* cache) noexcept {
    using wire::RrType;
    switch (rr.type) {
        case RrType::a:
        case RrType::aaaa: {
            const std::size_t want = rr.type == RrType::a ? 4 : 16;
            if (rr.rdata_length != want) {
                return false;
            }
            s.bytes(rr.message.data() + rr.rdata_offset, want);
            return true;
        }
        case RrType::ns:
        case RrType::cname:
        case RrType::ptr: {
            auto r = wire::rdata::read_name(rr, cache);
            if (r) {
                visit_name(s, r->name);
            }
            return r.has_value();
        }
        case RrType::mx: {
            auto r = wire::rdata::read_mx(rr, cache);
            if (r) {
                s.value(r->preference);
                visit_name(s, r->exchange);
            }
            return r.has_value();
        }
        case RrType::soa: {
            auto r = wire::rdata::read_soa(rr, cache);
            if (r) {
                visit_name(s, r->mname);
                visit_name(s, r->rname);
                s.value(r->serial);
                s.value(r->refresh);
                s.value(r->retry);
                s.value(r->expire);
                s.value(r->minimum);
            }
            return r.has_value();
        }
        case RrType::txt: {
            auto r = wire::rdata::read_txt(rr);
            if (r) {
                for (const auto str : r->strings) {
                    s.bytes(str.data(), str.size());
                }
            }
            return r.has_value();
        }
        case RrType::opt: {
            auto r = wire::rdata::read_opt(rr);
            if (r) {
                for (const auto option : r->options) {
                    s.value(option.key);
                    s.bytes(option.value.data(), option.value.size());
                }
            }
            return r.has_value();
        }
        default: {
            // Other types as uncompressed RDATA: names inside SRV, NAPTR, RP... may be
            // compressed and must be visited as the other libraries see them.
            thread_local std::array<std::uint8_t, wire::kMaxMessageSize + 2 * 255> buffer;
            auto n = wire::decompress_rdata(rr, buffer);
            if (n) {
                s.bytes(buffer.data(), *n);
            }
            return n.has_value();
        }
    }
}

/// Parses `msg` and visits all of it; false on any error.
inline bool visit_message(VisitStats& s, std::span<const std::uint8_t> msg) noexcept {
    auto view = wire::MessageView::parse(msg);
    if (!view) {
        return false;
    }
    const wire::Header& h = view->header();
    s.value(h.id);
    s.value(h.flags);
    s.value(h.qdcount);
    s.value(h.ancount);
    s.value(h.nscount);
    s.value(h.arcount);
    if (auto q = view->question()) {
        visit_name(s, q->qname);
        s.value(static_cast<std::uint16_t>(q->qtype));
        s.value(static_cast<std::uint16_t>(q->qclass));
    }
    wire::RecordRange records = view->records();
    for (const wire::RecordView& rr : records) {
        ++s.records;
        visit_name(s, rr.owner);
        s.value(static_cast<std::uint16_t>(rr.type));
        s.value(rr.rclass);
        s.value(rr.ttl);
        if (!visit_rdata(s, rr, records.suffix_cache())) {
            return false;
        }
    }
    return !records.error();
}

}  // namespace moat::bench
