// Helpers for the upstream tests: queries and upstream replies built with wire::MessageBuilder,
// replies read back with wire::MessageView, and server addresses. Allocates freely (tests only).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "moat/core/bytes.hpp"
#include "moat/core/ip.hpp"
#include "moat/upstream/options.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/types.hpp"

namespace moat::upstream::test {

inline wire::Name name(std::string_view text) { return wire::Name::from_text(text).value(); }

inline ServerAddress server_v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d,
                               std::uint16_t port = 53) {
    return {IpAddress::v4_of(a, b, c, d), port};
}

inline ServerAddress loopback(std::uint16_t port) { return server_v4(127, 0, 0, 1, port); }

inline ServerAddress loopback_v6(std::uint16_t port) {
    IpAddress ip{{}, true};
    ip.bytes[15] = 1;
    return {ip, port};
}

struct QuerySpec {
    std::uint16_t id = 0xBEEF;
    std::string_view qname = "www.example.com";
    wire::RrType qtype = wire::RrType::a;
    wire::RrClass qclass = wire::RrClass::in;
    std::uint16_t flags = wire::Header::kRd;
    bool edns = true;
};

inline std::vector<std::uint8_t> make_query(const QuerySpec& spec = {}) {
    std::vector<std::uint8_t> out;
    wire::MessageBuilder b(&out);
    b.header().id = spec.id;
    b.header().flags = spec.flags;
    if (spec.edns) {
        EXPECT_TRUE(b.set_edns(wire::EdnsOptions{}));
    }
    EXPECT_TRUE(b.add_question(name(spec.qname), spec.qtype, spec.qclass));
    EXPECT_TRUE(b.finish());
    return out;
}

/// How a reply differs from the plain answer to its query.
struct ReplySpec {
    std::optional<std::uint16_t> id{};  ///< default: the query's ID
    std::uint16_t flags = wire::Header::kQr | wire::Header::kRd | wire::Header::kRa;
    wire::Rcode rcode = wire::Rcode::noerror;
    std::optional<std::string_view> qname{};         ///< default: the query's name, as written
    std::optional<wire::RrType> qtype{};             ///< default: the query's type
    std::optional<wire::RrClass> qclass{};           ///< default: the query's class
    std::size_t questions = 1;                       ///< how many times the question is written
    std::optional<std::array<std::uint8_t, 4>> a{};  ///< an A record in the answer
};

/// A reply to `query` (as it reached the server).
inline std::vector<std::uint8_t> make_reply(std::span<const std::uint8_t> query,
                                            const ReplySpec& spec = {}) {
    std::vector<std::uint8_t> out;
    const auto view = wire::MessageView::parse(query);
    EXPECT_TRUE(view && view->question() != nullptr) << "the query does not parse";
    if (!view || view->question() == nullptr) {
        return out;
    }
    const wire::Question& q = *view->question();
    const wire::Name qname = spec.qname ? name(*spec.qname) : wire::Name::from_view(q.qname);
    wire::MessageBuilder b(&out);
    b.header().id = spec.id.value_or(view->header().id);
    b.header().flags = spec.flags;
    b.set_rcode(spec.rcode);
    for (std::size_t i = 0; i < spec.questions; ++i) {
        EXPECT_TRUE(
            b.add_question(qname, spec.qtype.value_or(q.qtype), spec.qclass.value_or(q.qclass)));
    }
    if (spec.a) {
        EXPECT_TRUE(b.add_record(wire::Section::answer, qname.wire(), wire::RrType::a,
                                 wire::to_u16(wire::RrClass::in), 300, wire::encode::a(*spec.a)));
    }
    EXPECT_TRUE(b.finish());
    return out;
}

/// The ID of a message (0 when it is shorter than a header).
inline std::uint16_t id_of(std::span<const std::uint8_t> message) {
    return message.size() >= 2 ? load_u16(message.data()) : std::uint16_t{0};
}

/// What a test wants to know about a reply.
struct ReadReply {
    bool parsed = false;
    wire::Header header;
    std::string qname;  ///< presentation form, as written
    std::vector<std::array<std::uint8_t, 4>> a;
};

inline ReadReply read_reply(std::span<const std::uint8_t> bytes) {
    ReadReply r;
    const auto view = wire::MessageView::parse(bytes);
    if (!view) {
        return r;
    }
    r.header = view->header();
    if (const wire::Question* q = view->question()) {
        r.qname = q->qname.to_text();
    }
    auto records = view->records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::a) {
            const auto a = wire::rdata::read_a(rr);
            EXPECT_TRUE(a);
            if (a) {
                r.a.push_back(a->address);
            }
        }
    }
    r.parsed = !records.error();
    return r;
}

}  // namespace moat::upstream::test
