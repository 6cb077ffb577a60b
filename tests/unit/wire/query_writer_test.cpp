// write_query (include/moat/wire/query_writer.hpp): the one-question query sent upstream on a
// cache miss, written in one pass. It must be the octets MessageBuilder writes for the same
// query, with and without OPT, for every name shape; and it must refuse what the builder refuses.
#include "moat/wire/query_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "unit/support/wire_writer.hpp"

namespace moat::wire {
namespace {

using test::wire_name;

/// The same query through MessageBuilder, as src/engine/forward_query.cpp built it before.
std::vector<std::uint8_t> built(const OneQuestionQuery& q) {
    std::vector<std::uint8_t> out;
    MessageBuilder b(&out, kMaxMessageSize);
    b.header().id = q.id;
    b.header().flags = q.flags;
    if (q.edns != nullptr) {
        EXPECT_TRUE(b.set_edns(*q.edns));
    }
    EXPECT_TRUE(b.add_question(q.qname, q.qtype, q.qclass));
    EXPECT_TRUE(b.finish());
    return out;
}

std::vector<std::uint8_t> written(const OneQuestionQuery& q) {
    std::vector<std::uint8_t> out{1, 2, 3};  // replaced, not appended to
    EXPECT_TRUE(write_query(q, out));
    return out;
}

TEST(WriteQuery, IsTheBuildersQueryForEveryNameAndOpt) {
    const std::string label63(63, 'a');
    const std::string longest =
        label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
    const std::vector<std::string> names = {
        ".", "com", "Example.COM", "a.b.c.d.e.f.g.h.example.net", label63 + ".example", longest};
    const std::vector<std::uint8_t> ecs = {0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2};  // ECS 192.0.2/24
    EdnsOptions plain;
    EdnsOptions dnssec;
    dnssec.udp_payload_size = 4096;
    dnssec.dnssec_ok = true;
    EdnsOptions small_with_ecs;
    small_with_ecs.udp_payload_size = 100;  // sent as 512, as the builder sends it
    small_with_ecs.options = ecs;
    EdnsOptions version1;
    version1.version = 1;
    const std::vector<const EdnsOptions*> opts = {nullptr, &plain, &dnssec, &small_with_ecs,
                                                  &version1};
    int compared = 0;
    for (const std::string& text : names) {
        const std::vector<std::uint8_t> name = wire_name(text);
        ASSERT_EQ(name.back(), 0);
        for (const EdnsOptions* edns : opts) {
            for (const std::uint16_t flags :
                 {Header::kRd, std::uint16_t(Header::kRd | Header::kCd), std::uint16_t{0}}) {
                for (const RrType type : {RrType::a, RrType::aaaa, RrType::https, RrType::ptr}) {
                    const OneQuestionQuery q{.id = 0xBEEF,
                                             .flags = flags,
                                             .qname = name,
                                             .qtype = type,
                                             .qclass = RrClass::in,
                                             .edns = edns};
                    ASSERT_EQ(written(q), built(q)) << text << " type " << to_u16(type);
                    ++compared;
                }
            }
        }
    }
    EXPECT_EQ(compared, 6 * 5 * 3 * 4);
}

TEST(WriteQuery, ParsesBackToItsQuestionAndOpt) {
    const std::vector<std::uint8_t> name = wire_name("www.example.org");
    EdnsOptions edns;
    edns.udp_payload_size = 1232;
    edns.dnssec_ok = true;
    const std::vector<std::uint8_t> out = written(
        {.id = 7, .flags = Header::kRd, .qname = name, .qtype = RrType::aaaa, .edns = &edns});
    const auto view = MessageView::parse(out);
    ASSERT_TRUE(view) << describe(view.error());
    EXPECT_EQ(view->header().id, 7);
    EXPECT_EQ(view->header().qdcount, 1);
    EXPECT_EQ(view->header().arcount, 1);
    ASSERT_NE(view->question(), nullptr);
    EXPECT_TRUE(view->question()->qname.iequals(name));
    EXPECT_EQ(view->question()->qtype, RrType::aaaa);
    const auto opt = view->lone_root_additional();
    ASSERT_TRUE(opt);
    EXPECT_EQ(opt->type, RrType::opt);
    EXPECT_EQ(opt->rclass, 1232);            // the UDP payload size
    EXPECT_EQ(opt->ttl & 0x8000U, 0x8000U);  // DO
}

TEST(WriteQuery, RefusesWhatIsNotAnUncompressedNameAndLeavesNothing) {
    const std::vector<std::vector<std::uint8_t>> bad = {
        {},                        // no name at all
        {3, 'c', 'o', 'm'},        // no root label
        {0xC0, 12},                // a compression pointer
        {64, 'x'},                 // a label longer than 63 (and cut short)
        {3, 'c', 'o', 'm', 0, 0},  // octets after the root
    };
    for (const std::vector<std::uint8_t>& name : bad) {
        std::vector<std::uint8_t> out{1, 2, 3};
        const Status status = write_query({.flags = Header::kRd, .qname = name}, out);
        ASSERT_FALSE(status);
        EXPECT_EQ(status.error().code, Errc::bad_argument);
        EXPECT_TRUE(out.empty());
    }
    std::vector<std::uint8_t> longer(256, 0);  // 128 one-octet labels and more: over 255 octets
    for (std::size_t i = 0; i + 2 < longer.size(); i += 2) {
        longer[i] = 1;
        longer[i + 1] = 'a';
    }
    std::vector<std::uint8_t> out;
    EXPECT_FALSE(write_query({.qname = longer}, out));
}

}  // namespace
}  // namespace moat::wire
