// Test answers for the cache tests, built with wire::MessageBuilder, and readers of what a
// lookup wrote. Allocates freely; never used inside a counted (allocation-free) section.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "moat/cache/cache_key.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/types.hpp"

namespace moat::cache::test {

inline wire::Name name(std::string_view text) { return wire::Name::from_text(text).value(); }

inline CacheKey key(std::string_view qname, wire::RrType qtype = wire::RrType::a,
                    bool dnssec_ok = false, wire::RrClass qclass = wire::RrClass::in) {
    const wire::Name n = name(qname);
    return CacheKey::make(n.view(), qtype, qclass, dnssec_ok);
}

/// One record to put in an answer.
struct Rr {
    wire::Section section = wire::Section::answer;
    std::string_view owner;
    wire::RrType type = wire::RrType::a;
    std::uint32_t ttl = 300;
    std::vector<std::uint8_t> rdata;
};

inline Rr a_record(std::string_view owner, std::uint32_t ttl, std::uint8_t last_octet = 1) {
    return {wire::Section::answer, owner, wire::RrType::a, ttl,
            wire::encode::a({192, 0, 2, last_octet})};
}

inline Rr soa_record(std::string_view zone, std::uint32_t ttl, std::uint32_t minimum) {
    return {wire::Section::authority, zone, wire::RrType::soa, ttl,
            wire::encode::soa(name("ns1.example."), name("hostmaster.example."), 1, 7200, 900,
                              1209600, minimum)};
}

struct AnswerSpec {
    std::string_view qname = "www.example.com";
    wire::RrType qtype = wire::RrType::a;
    wire::RrClass qclass = wire::RrClass::in;
    wire::Rcode rcode = wire::Rcode::noerror;
    std::uint16_t extra_flags = 0;  ///< e.g. Header::kTc
    bool response = true;
    bool edns = false;
    bool dnssec_ok = false;
    std::vector<Rr> records;
};

inline std::vector<std::uint8_t> build(const AnswerSpec& spec) {
    std::vector<std::uint8_t> out;
    wire::MessageBuilder builder(&out);
    builder.header().id = 0x1234;
    builder.header().flags =
        static_cast<std::uint16_t>((spec.response ? wire::Header::kQr : 0U) | wire::Header::kRd |
                                   wire::Header::kRa | spec.extra_flags);
    builder.set_rcode(spec.rcode);
    if (spec.edns) {
        wire::EdnsOptions edns;
        edns.dnssec_ok = spec.dnssec_ok;
        EXPECT_TRUE(builder.set_edns(edns));
    }
    EXPECT_TRUE(builder.add_question(name(spec.qname), spec.qtype, spec.qclass));
    for (const Rr& rr : spec.records) {
        const wire::Name owner = name(rr.owner);
        EXPECT_TRUE(builder.add_record(rr.section, owner.wire(), rr.type, wire::to_u16(spec.qclass),
                                       rr.ttl, rr.rdata));
    }
    EXPECT_TRUE(builder.finish());
    return out;
}

/// A NOERROR answer for www.example.com A with one record of `ttl`.
inline std::vector<std::uint8_t> simple_answer(std::string_view qname = "www.example.com",
                                               std::uint32_t ttl = 300,
                                               std::uint8_t last_octet = 1) {
    AnswerSpec spec;
    spec.qname = qname;
    spec.records.push_back(a_record(qname, ttl, last_octet));
    return build(spec);
}

/// What a lookup wrote, read back.
struct Served {
    std::uint16_t id = 0;
    std::vector<std::uint32_t> ttls;      ///< every record but OPT, in wire order
    std::vector<std::uint8_t> addresses;  ///< last octet of each A record
    std::vector<std::uint8_t> qname;      ///< the question name as written
};

inline Served read_served(std::span<const std::uint8_t> bytes) {
    Served served;
    const auto view = wire::MessageView::parse(bytes);
    EXPECT_TRUE(view);
    if (!view) {
        return served;
    }
    served.id = view->header().id;
    const auto question = view->question();
    EXPECT_TRUE(question);
    if (question) {
        served.qname.assign(bytes.begin() + wire::kHeaderSize,
                            bytes.begin() + static_cast<std::ptrdiff_t>(wire::kHeaderSize +
                                                                        question->qname.length()));
    }
    auto records = view->records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            continue;
        }
        served.ttls.push_back(rr.ttl);
        if (rr.type == wire::RrType::a) {
            served.addresses.push_back(rr.rdata()[3]);
        }
    }
    EXPECT_FALSE(records.error());
    return served;
}

}  // namespace moat::cache::test
