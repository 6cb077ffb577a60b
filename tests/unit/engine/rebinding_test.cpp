// DNS-rebinding protection: which addresses are internal, and what happens to an upstream answer
// that gives a public name one (empty answer, EDE 17, not cached), with the exemptions (off by
// default, allow-listed domains, conditional routes).
#include "rebinding.hpp"

#include <gtest/gtest.h>

#include "engine_fixtures.hpp"

namespace moat::engine {
namespace {

using test::Harness;
using test::ReplySpec;
using wire::RrType;

IpAddress v6_of(std::initializer_list<std::uint8_t> head, std::uint8_t last = 0) {
    IpAddress ip{{}, true};
    std::size_t i = 0;
    for (const auto b : head) {
        ip.bytes[i++] = b;
    }
    ip.bytes[15] = last;
    return ip;
}

TEST(RebindingRanges, InternalAddressesAndTheirEdges) {
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(192, 168, 1, 5)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(10, 255, 255, 255)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(127, 0, 0, 1)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(169, 254, 0, 1)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(0, 0, 0, 0)));
    EXPECT_FALSE(is_internal_address(IpAddress::v4_of(172, 15, 255, 255)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(172, 16, 0, 0)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(172, 31, 255, 255)));
    EXPECT_FALSE(is_internal_address(IpAddress::v4_of(172, 32, 0, 0)));
    EXPECT_FALSE(is_internal_address(IpAddress::v4_of(100, 63, 255, 255)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(100, 64, 0, 0)));
    EXPECT_TRUE(is_internal_address(IpAddress::v4_of(100, 127, 255, 255)));
    EXPECT_FALSE(is_internal_address(IpAddress::v4_of(100, 128, 0, 0)));
    EXPECT_FALSE(is_internal_address(IpAddress::v4_of(198, 51, 100, 7)));
    EXPECT_TRUE(is_internal_address(v6_of({}, 0)));            // ::
    EXPECT_TRUE(is_internal_address(v6_of({}, 1)));            // ::1
    EXPECT_FALSE(is_internal_address(v6_of({}, 2)));           // ::2
    EXPECT_TRUE(is_internal_address(v6_of({0xfd, 0x00}, 5)));  // ULA
    EXPECT_TRUE(is_internal_address(v6_of({0xfe, 0x80}, 1)));  // link-local
    EXPECT_TRUE(is_internal_address(v6_of({0xfe, 0xbf}, 1)));  // fe80::/10 ends here
    EXPECT_FALSE(is_internal_address(v6_of({0xfe, 0xc0}, 1)));
    EXPECT_FALSE(is_internal_address(v6_of({0x20, 0x01, 0x0d, 0xb8}, 1)));
    IpAddress mapped = v6_of({}, 1);
    mapped.bytes[10] = 0xFF;
    mapped.bytes[11] = 0xFF;
    mapped.bytes[12] = 10;
    EXPECT_TRUE(is_internal_address(mapped)) << "::ffff:10.0.0.1";
}

ReplySpec a_reply(const char* owner, std::array<std::uint8_t, 4> address) {
    ReplySpec r;
    r.records.push_back(test::a_rr(owner, address));
    return r;
}

Decision ask(Harness& h, const char* qname, const ReplySpec& reply, RrType qtype = RrType::a) {
    const Decision d = h.decide({.qname = qname, .qtype = qtype, .edns = true});
    EXPECT_EQ(d.action, Action::forward) << qname;
    return h.complete(reply);
}

TEST(EngineRebinding, OffByDefault) {
    Harness h;
    EXPECT_EQ(ask(h, "evil.example", a_reply("evil.example", {192, 168, 1, 1})).outcome,
              Outcome::forwarded);
}

TEST(EngineRebinding, InternalAddressForAPublicNameIsFilteredAndNotCached) {
    Harness h;
    h.options.rebind_protection = true;
    const Decision d = ask(h, "Evil.Example", a_reply("evil.example", {192, 168, 1, 1}));
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::blocked);
    const auto a = h.answer();
    EXPECT_EQ(a.rcode, 0U);
    EXPECT_TRUE(a.records.empty());
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{17});
    EXPECT_EQ(a.qname, "Evil.Example.");
    EXPECT_EQ(h.decide({.qname = "evil.example"}).action, Action::forward) << "must not be cached";

    ReplySpec six;
    six.records.push_back(
        {wire::Section::answer, "six.example", RrType::aaaa, 300,
         wire::encode::aaaa({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5})});
    EXPECT_EQ(ask(h, "six.example", six, RrType::aaaa).outcome, Outcome::blocked);
}

TEST(EngineRebinding, PublicAddressesPass) {
    Harness h;
    h.options.rebind_protection = true;
    EXPECT_EQ(ask(h, "fine.example", a_reply("fine.example", {198, 51, 100, 7})).outcome,
              Outcome::forwarded);
}

TEST(EngineRebinding, AllowedDomainsAndConditionalRoutesAreExempt) {
    Harness h;
    h.options.rebind_protection = true;
    h.options.rebind_allowed = {test::name("plex.direct")};
    h.options.conditional = {ConditionalRoute{{test::name("lan")}}};
    EXPECT_EQ(ask(h, "192-168-1-9.abc.plex.direct",
                  a_reply("192-168-1-9.abc.plex.direct", {192, 168, 1, 9}))
                  .outcome,
              Outcome::forwarded);
    EXPECT_EQ(ask(h, "nas.lan", a_reply("nas.lan", {192, 168, 1, 10})).outcome, Outcome::forwarded);
    EXPECT_EQ(ask(h, "plex.direct.example", a_reply("plex.direct.example", {10, 0, 0, 1})).outcome,
              Outcome::blocked);
}

}  // namespace
}  // namespace moat::engine
