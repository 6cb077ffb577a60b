// LocalZone (hosts text, records, reverse names, generated PTRs) and the engine's answers from
// it: A/AAAA/CNAME/TXT, CNAME chasing inside the zone, NODATA, generated PTRs.
#include "moat/engine/local_zone.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {
namespace {

using test::Answer;
using test::Harness;
using wire::RrType;

const std::vector<LocalRecord>* find(const LocalZone& zone, std::string_view text) {
    const wire::Name n = test::name(text);
    const wire::Name lower = wire::Name::from_view_lower(n.view());
    return zone.find(lower.wire());
}

// ---- reverse_name ------------------------------------------------------------------------------

TEST(EngineReverseName, Ipv4) {
    EXPECT_EQ(reverse_name(test::v4(192, 168, 1, 10)).to_text(), "10.1.168.192.in-addr.arpa.");
    EXPECT_EQ(reverse_name(test::v4(10, 0, 0, 255)).to_text(), "255.0.0.10.in-addr.arpa.");
}

TEST(EngineReverseName, Ipv6) {
    EXPECT_EQ(reverse_name(test::v6({0x2001, 0x0db8, 0, 0, 0, 0, 0, 1})).to_text(),
              "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.");
    EXPECT_EQ(reverse_name(test::v6({0xfd12, 0x3456, 0x789a, 0xbcde, 0, 0, 0, 0xabcd})).to_text(),
              "d.c.b.a.0.0.0.0.0.0.0.0.0.0.0.0.e.d.c.b.a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa.");
}

// ---- LocalZone ---------------------------------------------------------------------------------

TEST(EngineLocalZone, FindIsByLowerCasedName) {
    LocalZone zone;
    EXPECT_TRUE(zone.empty());
    zone.add_address(test::name("NAS.Lan"), test::v4(192, 168, 1, 10));
    EXPECT_FALSE(zone.empty());
    EXPECT_EQ(zone.name_count(), 1U);
    const auto* records = find(zone, "nas.lan");
    ASSERT_NE(records, nullptr);
    ASSERT_EQ(records->size(), 1U);
    EXPECT_EQ((*records)[0].type, RrType::a);
    EXPECT_EQ((*records)[0].rdata, test::bytes4(192, 168, 1, 10));
    EXPECT_EQ(find(zone, "other.lan"), nullptr);
    EXPECT_EQ(find(zone, "lan"), nullptr);
}

TEST(EngineLocalZone, DuplicateRecordsAreKeptOnce) {
    LocalZone zone;
    zone.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
    zone.add_address(test::name("NAS.lan"), test::v4(192, 168, 1, 10));
    zone.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 11));
    ASSERT_NE(find(zone, "nas.lan"), nullptr);
    EXPECT_EQ(find(zone, "nas.lan")->size(), 2U);
}

TEST(EngineLocalZone, ThousandsOfNamesAreEachFoundWithTheirOwnRecords) {
    // Enough names to grow the index many times over; each name's address encodes its number,
    // so a lookup that landed on another name's slot would show.
    LocalZone zone;
    constexpr int kNames = 5000;
    for (int i = 0; i < kNames; ++i) {
        zone.add_address(test::name("Host" + std::to_string(i) + ".example.lan"),
                         test::v4(10, static_cast<std::uint8_t>(i >> 16),
                                  static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)));
    }
    EXPECT_EQ(zone.name_count(), static_cast<std::size_t>(kNames));
    for (int i = 0; i < kNames; ++i) {
        const auto* records = find(zone, "host" + std::to_string(i) + ".EXAMPLE.lan");
        ASSERT_NE(records, nullptr) << i;
        ASSERT_EQ(records->size(), 1U) << i;
        EXPECT_EQ((*records)[0].rdata,
                  test::bytes4(10, static_cast<std::uint8_t>(i >> 16),
                               static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)))
            << i;
    }
    for (int i = kNames; i < 2 * kNames; ++i) {
        EXPECT_EQ(find(zone, "host" + std::to_string(i) + ".example.lan"), nullptr) << i;
    }
    EXPECT_EQ(find(zone, "example.lan"), nullptr);
    EXPECT_EQ(find(zone, "host1.example.lan.example.lan"), nullptr);
    // A copy (the engine takes the zone by value) answers the same.
    const LocalZone copy = zone;
    ASSERT_NE(find(copy, "host4999.example.lan"), nullptr);
    EXPECT_EQ(find(copy, "host5000.example.lan"), nullptr);
}

TEST(EngineLocalZone, AnEmptyZoneFindsNothing) {
    const LocalZone zone;
    EXPECT_EQ(find(zone, "nas.lan"), nullptr);
    EXPECT_EQ(find(zone, "."), nullptr);
}

TEST(EngineLocalZone, LongTxtIsSplitIntoStringsOf255) {
    LocalZone zone;
    zone.add_txt(test::name("t.lan"), std::string(300, 'x'));
    const auto* records = find(zone, "t.lan");
    ASSERT_NE(records, nullptr);
    ASSERT_EQ(records->size(), 1U);
    const auto& rdata = (*records)[0].rdata;
    ASSERT_EQ(rdata.size(), 302U);
    EXPECT_EQ(rdata[0], 255);
    EXPECT_EQ(rdata[256], 45);
}

TEST(EngineLocalZone, HostsTextGoodAndBadLines) {
    LocalZone zone;
    const auto errors = zone.add_hosts_text(
        "# a comment\n"                             // 1
        "192.168.1.10  nas.lan nas   # trailing\n"  // 2
        "\n"                                        // 3
        "fd00::10\tnas.lan\r\n"                     // 4
        "192.168.1.20\n"                            // 5: no name
        "300.1.1.1 bad-address.lan\n"               // 6
        "192.168.1.30 good.lan bad..name\n"         // 7: one good name, one bad
        "   \t  \n"                                 // 8
        "not-an-ip printer.lan\n"                   // 9
        "192.168.1.40 last.lan");                   // 10: no final newline
    ASSERT_EQ(errors.size(), 4U);
    EXPECT_EQ(errors[0].line, 5U);
    EXPECT_EQ(errors[1].line, 6U);
    EXPECT_NE(errors[1].reason.find("300.1.1.1"), std::string::npos) << errors[1].reason;
    EXPECT_EQ(errors[2].line, 7U);
    EXPECT_NE(errors[2].reason.find("bad..name"), std::string::npos) << errors[2].reason;
    EXPECT_EQ(errors[3].line, 9U);
    for (const auto& e : errors) {
        EXPECT_FALSE(e.reason.empty());
    }

    const auto* nas = find(zone, "nas.lan");
    ASSERT_NE(nas, nullptr);
    ASSERT_EQ(nas->size(), 2U);
    EXPECT_EQ((*nas)[0].type, RrType::a);
    EXPECT_EQ((*nas)[0].rdata, test::bytes4(192, 168, 1, 10));
    EXPECT_EQ((*nas)[1].type, RrType::aaaa);
    const auto want6 = test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 0x10}).bytes;
    EXPECT_EQ((*nas)[1].rdata, std::vector<std::uint8_t>(want6.begin(), want6.end()));
    EXPECT_NE(find(zone, "nas"), nullptr);
    EXPECT_NE(find(zone, "good.lan"), nullptr);
    EXPECT_NE(find(zone, "last.lan"), nullptr);
    EXPECT_EQ(find(zone, "bad-address.lan"), nullptr);
    EXPECT_EQ(find(zone, "printer.lan"), nullptr);
    EXPECT_EQ(zone.name_count(), 4U);  // nas.lan, nas, good.lan, last.lan
}

TEST(EngineLocalZone, HostsTextWithOnlyCommentsHasNoErrors) {
    LocalZone zone;
    EXPECT_TRUE(zone.add_hosts_text("").empty());
    EXPECT_TRUE(zone.add_hosts_text("# nothing\n\n   # still nothing\n").empty());
    EXPECT_TRUE(zone.empty());
}

TEST(EngineLocalZone, GenerateReverseAddsPtrs) {
    LocalZone zone;
    zone.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
    zone.add_address(test::name("nas.lan"), test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 0x10}));
    zone.generate_reverse();
    const auto* v4ptr = find(zone, "10.1.168.192.in-addr.arpa");
    ASSERT_NE(v4ptr, nullptr);
    ASSERT_EQ(v4ptr->size(), 1U);
    EXPECT_EQ((*v4ptr)[0].type, RrType::ptr);
    EXPECT_EQ((*v4ptr)[0].rdata, wire::encode::name(test::name("nas.lan")));
    const auto* v6ptr =
        find(zone, reverse_name(test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 0x10})).to_text());
    ASSERT_NE(v6ptr, nullptr);
    ASSERT_EQ(v6ptr->size(), 1U);
    EXPECT_EQ((*v6ptr)[0].rdata, wire::encode::name(test::name("nas.lan")));
}

TEST(EngineLocalZone, GenerateReverseKeepsAnExplicitPtr) {
    LocalZone zone;
    zone.add_name_record(reverse_name(test::v4(192, 168, 1, 10)), RrType::ptr,
                         test::name("printer.lan"));
    zone.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
    zone.generate_reverse();
    zone.generate_reverse();  // twice: still one PTR
    const auto* ptr = find(zone, "10.1.168.192.in-addr.arpa");
    ASSERT_NE(ptr, nullptr);
    ASSERT_EQ(ptr->size(), 1U);
    EXPECT_EQ((*ptr)[0].rdata, wire::encode::name(test::name("printer.lan")));
}

TEST(EngineLocalZone, GenerateReverseGivesOnePtrPerAddress) {
    LocalZone zone;
    ASSERT_TRUE(zone.add_hosts_text("192.168.1.10 nas.lan nas\n").empty());
    zone.generate_reverse();
    const auto* ptr = find(zone, "10.1.168.192.in-addr.arpa");
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(ptr->size(), 1U);
}

// For a hosts line "ADDRESS CANONICAL ALIAS...", the generated PTR names the canonical (first)
// name, as the hosts(5) convention and gethostbyaddr() do, not whichever name sorts first.
TEST(EngineLocalZone, GeneratedPtrNamesTheCanonicalHostsName) {
    LocalZone zone;
    ASSERT_TRUE(zone.add_hosts_text("192.168.1.10 nas.lan nas\n").empty());
    zone.generate_reverse();
    const auto* ptr = find(zone, "10.1.168.192.in-addr.arpa");
    ASSERT_NE(ptr, nullptr);
    ASSERT_EQ(ptr->size(), 1U);
    const auto got = wire::Name::from_wire((*ptr)[0].rdata);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->to_text(), "nas.lan.");
}

// ---- the engine's answers from the local zone --------------------------------------------------

class EngineLocalAnswers : public ::testing::Test {
protected:
    void SetUp() override {
        h_.local.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
        h_.local.add_address(test::name("nas.lan"), test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 0x10}));
        h_.local.add_name_record(test::name("www.lan"), RrType::cname, test::name("nas.lan"));
        h_.local.add_name_record(test::name("old.lan"), RrType::cname, test::name("www.lan"));
        h_.local.add_name_record(test::name("ext.lan"), RrType::cname,
                                 test::name("www.example.com"));
        h_.local.add_txt(test::name("nas.lan"), "v=hello");
        h_.local.generate_reverse();
        h_.options.local_ttl = 120;
    }
    Harness h_;
};

TEST_F(EngineLocalAnswers, AAndAaaa) {
    Decision d = h_.decide({.id = 3, .qname = "NAS.lan", .qtype = RrType::a});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::local);
    Answer a = h_.answer();
    EXPECT_EQ(a.header.id, 3);
    EXPECT_TRUE(a.header.aa());
    EXPECT_TRUE(a.header.ra());
    EXPECT_TRUE(a.header.rd());
    EXPECT_EQ(a.rcode, 0U);
    EXPECT_EQ(a.qname, "NAS.lan.");
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].owner, "NAS.lan.");
    EXPECT_EQ(a.records[0].rdata, test::bytes4(192, 168, 1, 10));
    EXPECT_EQ(a.records[0].ttl, 120U);

    h_.decide({.qname = "nas.lan", .qtype = RrType::aaaa});
    a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::aaaa);
    const auto want6 = test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 0x10}).bytes;
    EXPECT_EQ(a.records[0].rdata, std::vector<std::uint8_t>(want6.begin(), want6.end()));
}

TEST_F(EngineLocalAnswers, Txt) {
    h_.decide({.qname = "nas.lan", .qtype = RrType::txt});
    const Answer a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::txt);
    EXPECT_EQ(a.records[0].texts, std::vector<std::string>{"v=hello"});
}

TEST_F(EngineLocalAnswers, CnameIsChasedInsideTheZone) {
    h_.decide({.qname = "www.lan", .qtype = RrType::a});
    Answer a = h_.answer();
    EXPECT_TRUE(a.header.aa());
    ASSERT_EQ(a.records.size(), 2U);
    EXPECT_EQ(a.records[0].owner, "www.lan.");
    EXPECT_EQ(a.records[0].type, RrType::cname);
    EXPECT_EQ(a.records[0].target, "nas.lan.");
    EXPECT_EQ(a.records[1].owner, "nas.lan.");
    EXPECT_EQ(a.records[1].type, RrType::a);
    EXPECT_EQ(a.records[1].rdata, test::bytes4(192, 168, 1, 10));

    // Two hops.
    h_.decide({.qname = "old.lan", .qtype = RrType::aaaa});
    a = h_.answer();
    ASSERT_EQ(a.records.size(), 3U);
    EXPECT_EQ(a.records[0].target, "www.lan.");
    EXPECT_EQ(a.records[1].target, "nas.lan.");
    EXPECT_EQ(a.records[2].type, RrType::aaaa);
}

TEST_F(EngineLocalAnswers, CnameQueryGetsTheCnameOnly) {
    h_.decide({.qname = "www.lan", .qtype = RrType::cname});
    const Answer a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::cname);
    EXPECT_EQ(a.records[0].target, "nas.lan.");
}

TEST_F(EngineLocalAnswers, CnameOutOfTheZoneStopsAtTheCname) {
    const Decision d = h_.decide({.qname = "ext.lan", .qtype = RrType::a});
    EXPECT_EQ(d.outcome, Outcome::local);
    const Answer a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::cname);
    EXPECT_EQ(a.records[0].target, "www.example.com.");
}

TEST_F(EngineLocalAnswers, CnameLoopEnds) {
    h_.local.add_name_record(test::name("loop1.lan"), RrType::cname, test::name("loop2.lan"));
    h_.local.add_name_record(test::name("loop2.lan"), RrType::cname, test::name("loop1.lan"));
    const Decision d = h_.decide({.qname = "loop1.lan", .qtype = RrType::a});
    ASSERT_EQ(d.action, Action::respond);
    const Answer a = h_.answer();
    EXPECT_GE(a.records.size(), 2U);
    EXPECT_LE(a.records.size(), 8U);
    for (const auto& r : a.records) {
        EXPECT_EQ(r.type, RrType::cname);
    }
}

TEST_F(EngineLocalAnswers, LocalNameWithoutTheTypeIsNodata) {
    const Decision d = h_.decide({.qname = "nas.lan", .qtype = RrType::mx});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::local);
    const Answer a = h_.answer();
    EXPECT_EQ(a.rcode, 0U);
    EXPECT_TRUE(a.header.aa());
    EXPECT_TRUE(a.records.empty());
}

TEST_F(EngineLocalAnswers, GeneratedPtrForALocalAddress) {
    Decision d = h_.decide({.qname = "10.1.168.192.in-addr.arpa", .qtype = RrType::ptr});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::local);
    Answer a = h_.answer();
    EXPECT_TRUE(a.header.aa());
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::ptr);
    EXPECT_EQ(a.records[0].target, "nas.lan.");

    // The neighbour in the same private range is not local: NXDOMAIN, not forwarded.
    d = h_.decide({.qname = "11.1.168.192.in-addr.arpa", .qtype = RrType::ptr});
    EXPECT_EQ(d.outcome, Outcome::local);
    EXPECT_EQ(h_.answer().rcode, 3U);
}

TEST_F(EngineLocalAnswers, AnyGetsEveryRecord) {
    h_.decide({.qname = "nas.lan", .qtype = RrType::any});
    EXPECT_EQ(h_.answer().records.size(), 3U);  // A, AAAA, TXT
}

TEST_F(EngineLocalAnswers, SubdomainOfALocalNameIsNotLocal) {
    EXPECT_EQ(h_.decide({.qname = "x.nas.lan"}).action, Action::forward);
}

TEST(EngineLocalZone, ConfigPtrForLoopbackWins) {
    Harness h;
    h.local.add_name_record(reverse_name(test::v4(127, 0, 0, 1)), RrType::ptr,
                            test::name("myhost.lan"));
    h.decide({.qname = "1.0.0.127.in-addr.arpa", .qtype = RrType::ptr});
    const Answer a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].target, "myhost.lan.");
}

// DNS names compare case-insensitively, so `www2.lan CNAME NAS.lan` is followed to nas.lan's A
// although the zone keys its names lower-cased.
TEST_F(EngineLocalAnswers, CnameTargetWithCapitalsIsChased) {
    h_.local.add_name_record(test::name("www2.lan"), RrType::cname, test::name("NAS.lan"));
    h_.decide({.qname = "www2.lan", .qtype = RrType::a});
    const Answer a = h_.answer();
    ASSERT_EQ(a.records.size(), 2U) << "expected CNAME + A; got only the CNAME";
    EXPECT_EQ(a.records[1].type, RrType::a);
}

}  // namespace
}  // namespace moat::engine
