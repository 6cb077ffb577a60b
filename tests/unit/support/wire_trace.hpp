// A text trace of everything the zero-copy reader yields for one message: header, questions,
// every record of records() and of each section range, and every typed RDATA read with the
// range's suffix cache. Names are printed with their offset, length, label count and text, so two
// traces are equal only when the decoder gave the same views. Used to prove that the suffix cache
// changes nothing (suffix_cache_test, fuzz_wire_parse). No GoogleTest dependency.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::test {

inline std::string hex(std::span<const std::uint8_t> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const std::uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4U]);
        out.push_back(kDigits[b & 0x0FU]);
    }
    return out;
}

inline std::string error_text(const wire::WireError& e) {
    return "error " + std::to_string(static_cast<int>(e.code)) + "@" + std::to_string(e.offset) +
           " (" + wire::reason(e.code) + ")";
}

/// A name view with everything that identifies it.
inline std::string name_repr(const wire::NameView& v) {
    return v.to_text() + "[off=" + std::to_string(v.offset()) +
           " len=" + std::to_string(v.length()) + " labels=" + std::to_string(v.label_count()) +
           "]";
}

inline std::string rdata_repr(const wire::rdata::Any& any) {
    namespace r = wire::rdata;
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, r::A> || std::is_same_v<T, r::Aaaa>) {
                return "addr " + hex(v.address);
            } else if constexpr (std::is_same_v<T, r::NameRdata>) {
                return "name " + name_repr(v.name);
            } else if constexpr (std::is_same_v<T, r::Mx>) {
                return "mx " + std::to_string(v.preference) + " " + name_repr(v.exchange);
            } else if constexpr (std::is_same_v<T, r::Txt>) {
                std::string s = "txt";
                for (const auto str : v.strings) {
                    s += " '" + hex(str) + "'";
                }
                return s;
            } else if constexpr (std::is_same_v<T, r::Soa>) {
                return "soa " + name_repr(v.mname) + " " + name_repr(v.rname) + " " +
                       std::to_string(v.serial) + " " + std::to_string(v.refresh) + " " +
                       std::to_string(v.retry) + " " + std::to_string(v.expire) + " " +
                       std::to_string(v.minimum);
            } else if constexpr (std::is_same_v<T, r::Srv>) {
                return "srv " + std::to_string(v.priority) + " " + std::to_string(v.weight) + " " +
                       std::to_string(v.port) + " " + name_repr(v.target);
            } else if constexpr (std::is_same_v<T, r::Caa>) {
                return "caa " + std::to_string(v.flags) + " " + hex(v.tag) + " " + hex(v.value);
            } else if constexpr (std::is_same_v<T, r::Svcb>) {
                std::string s = "svcb " + std::to_string(v.priority) + " " + name_repr(v.target);
                for (const auto kv : v.params) {
                    s += " " + std::to_string(kv.key) + "=" + hex(kv.value);
                }
                return s;
            } else if constexpr (std::is_same_v<T, r::Opt>) {
                std::string s =
                    "opt udp=" + std::to_string(v.udp_payload_size) +
                    " ext=" + std::to_string(v.extended_rcode) + " v=" + std::to_string(v.version) +
                    " do=" + std::to_string(v.dnssec_ok ? 1 : 0) + " z=" + std::to_string(v.z);
                for (const auto kv : v.options) {
                    s += " " + std::to_string(kv.key) + "=" + hex(kv.value);
                }
                return s;
            } else if constexpr (std::is_same_v<T, r::Ds>) {
                return "ds " + std::to_string(v.key_tag) + " " + std::to_string(v.algorithm) + " " +
                       std::to_string(v.digest_type) + " " + hex(v.digest);
            } else if constexpr (std::is_same_v<T, r::Dnskey>) {
                return "dnskey " + std::to_string(v.flags) + " " + std::to_string(v.protocol) +
                       " " + std::to_string(v.algorithm) + " " + hex(v.public_key);
            } else if constexpr (std::is_same_v<T, r::Rrsig>) {
                return "rrsig " + std::to_string(static_cast<unsigned>(v.type_covered)) + " " +
                       std::to_string(v.algorithm) + " " + std::to_string(v.labels) + " " +
                       std::to_string(v.original_ttl) + " " + std::to_string(v.expiration) + " " +
                       std::to_string(v.inception) + " " + std::to_string(v.key_tag) + " " +
                       name_repr(v.signer) + " " + hex(v.signature);
            } else if constexpr (std::is_same_v<T, r::Nsec>) {
                std::string s = "nsec " + name_repr(v.next);
                for (const auto t : v.types) {
                    s += " " + std::to_string(static_cast<unsigned>(t));
                }
                return s;
            } else if constexpr (std::is_same_v<T, r::Nsec3>) {
                std::string s = "nsec3 " + std::to_string(v.hash_algorithm) + " " +
                                std::to_string(v.flags) + " " + std::to_string(v.iterations) + " " +
                                hex(v.salt) + " " + hex(v.next_hashed_owner);
                for (const auto t : v.types) {
                    s += " " + std::to_string(static_cast<unsigned>(t));
                }
                return s;
            } else {
                static_assert(std::is_same_v<T, r::Opaque>);
                return "opaque " + hex(v.bytes);
            }
        },
        any);
}

inline std::string record_repr(const wire::RecordView& rr) {
    return "rr sec=" + std::to_string(static_cast<int>(rr.section)) + " " + name_repr(rr.owner) +
           " type=" + std::to_string(static_cast<unsigned>(rr.type)) +
           " class=" + std::to_string(rr.rclass) + " ttl=" + std::to_string(rr.ttl) +
           " rdata=" + std::to_string(rr.rdata_offset) + "+" + std::to_string(rr.rdata_length);
}

/// Appends the trace of one range (records, typed RDATA, final error and position).
inline void trace_range(wire::RecordRange range, std::vector<std::string>& out) {
    std::size_t count = 0;
    for (const wire::RecordView& rr : range) {
        ++count;
        out.push_back(record_repr(rr));
        auto typed = wire::rdata::read(rr, range.suffix_cache());
        out.push_back(typed ? "  " + rdata_repr(*typed) : "  " + error_text(typed.error()));
    }
    out.push_back("end count=" + std::to_string(count) +
                  " pos=" + std::to_string(range.position()) +
                  (range.error() ? " " + error_text(*range.error()) : std::string(" ok")));
    // A second pass (begin() restarts) must see the same number of records.
    std::size_t again = 0;
    for (const wire::RecordView& rr : range) {
        static_cast<void>(rr);
        ++again;
    }
    if (again != count) {
        out.push_back("restart count mismatch " + std::to_string(again));
    }
}

/// The full trace of `msg` read with `options`.
inline std::vector<std::string> trace_message(std::span<const std::uint8_t> msg,
                                              wire::ParseOptions options) {
    std::vector<std::string> out;
    auto view = wire::MessageView::parse(msg, options);
    if (!view) {
        out.push_back("parse " + error_text(view.error()));
        return out;
    }
    const wire::Header& h = view->header();
    out.push_back("header id=" + std::to_string(h.id) + " flags=" + std::to_string(h.flags) +
                  " qd=" + std::to_string(h.qdcount) + " an=" + std::to_string(h.ancount) +
                  " ns=" + std::to_string(h.nscount) + " ar=" + std::to_string(h.arcount) +
                  " answer_offset=" + std::to_string(view->answer_offset()));
    if (auto q = view->question()) {
        out.push_back("question " + name_repr(q->qname) +
                      " type=" + std::to_string(static_cast<unsigned>(q->qtype)) +
                      " class=" + std::to_string(static_cast<unsigned>(q->qclass)));
    }
    out.emplace_back("records:");
    trace_range(view->records(), out);
    for (const wire::Section s :
         {wire::Section::answer, wire::Section::authority, wire::Section::additional}) {
        out.push_back("section " + std::to_string(static_cast<int>(s)) + ":");
        trace_range(view->section(s), out);
    }
    return out;
}

}  // namespace moat::test
