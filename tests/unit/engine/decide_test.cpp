// Engine::decide(): parse errors, access control, EDNS, localhost, blocking modes, allow rules,
// private reverse zones, conditional routes and the query sent upstream.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {
namespace {

using test::Answer;
using test::Harness;
using test::QuerySpec;
using wire::Header;
using wire::RrType;

constexpr unsigned kNoError = 0;
constexpr unsigned kFormErr = 1;
constexpr unsigned kNxDomain = 3;
constexpr unsigned kNotImp = 4;
constexpr unsigned kRefused = 5;
constexpr unsigned kBadVers = 16;

// ---- parse errors ------------------------------------------------------------------------------

TEST(EngineDecide, ShorterThanAHeaderIsDropped) {
    Harness h;
    const std::vector<std::uint8_t> eleven(11, 0);
    const Decision d = h.decide_raw(eleven);
    EXPECT_EQ(d.action, Action::drop);
    EXPECT_EQ(d.outcome, Outcome::dropped);
    EXPECT_EQ(d.size, 0U);
    const std::vector<std::uint8_t> none;
    EXPECT_EQ(h.decide_raw(none).action, Action::drop);
}

TEST(EngineDecide, AResponseIsNeverAnswered) {
    Harness h;
    QuerySpec q;
    q.flags = Header::kQr | Header::kRd;
    const Decision d = h.decide(q);
    EXPECT_EQ(d.action, Action::drop);
    EXPECT_EQ(d.outcome, Outcome::dropped);
}

TEST(EngineDecide, TruncatedQuestionIsFormerrWithTheQueryId) {
    Harness h;
    auto query = test::make_query({.id = 0x4242, .qname = "www.example.com"});
    query.resize(wire::kHeaderSize + 5);  // cut inside the first label
    const Decision d = h.decide_raw(query);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x4242);
    EXPECT_TRUE(a.header.qr());
    EXPECT_EQ(a.rcode, kFormErr);
    EXPECT_EQ(a.header.qdcount, 0);
}

TEST(EngineDecide, NotifyAndUpdateAreNotImplemented) {
    for (const wire::Opcode op : {wire::Opcode::notify, wire::Opcode::update}) {
        Harness h;
        QuerySpec q;
        q.id = 0x0101;
        q.opcode = op;
        const Decision d = h.decide(q);
        ASSERT_EQ(d.action, Action::respond);
        EXPECT_EQ(d.outcome, Outcome::notimp);
        const Answer a = h.answer();
        EXPECT_EQ(a.header.id, 0x0101);
        EXPECT_TRUE(a.header.qr());
        EXPECT_EQ(a.rcode, kNotImp);
        EXPECT_EQ(a.header.opcode(), op) << "the opcode is echoed";
    }
}

TEST(EngineDecide, NotImplementedAnswerCarriesOptWhenTheQueryHadOne) {
    Harness h;
    QuerySpec q;
    q.opcode = wire::Opcode::notify;
    q.edns = true;
    q.dnssec_ok = true;
    const Decision d = h.decide(q);
    ASSERT_EQ(d.action, Action::respond);
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, kNotImp);
    EXPECT_EQ(a.header.opcode(), wire::Opcode::notify);
    EXPECT_EQ(a.header.qdcount, 1) << "the question is echoed";
    EXPECT_TRUE(a.has_opt) << "RFC 6891 §7: an EDNS query gets OPT back";
}

TEST(EngineDecide, ZoneTransfersAreNotImplemented) {
    Harness h;
    QuerySpec q;
    q.qtype = static_cast<RrType>(252);  // AXFR
    const Decision d = h.decide(q);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::notimp);
    EXPECT_EQ(h.answer().rcode, kNotImp);
}

TEST(EngineDecide, TwoQuestionsAreFormerr) {
    Harness h;
    std::vector<std::uint8_t> query;
    wire::MessageBuilder b(&query);
    b.header().id = 0x0202;
    b.header().flags = Header::kRd;
    ASSERT_TRUE(b.add_question(test::name("a.example"), RrType::a));
    ASSERT_TRUE(b.add_question(test::name("b.example"), RrType::a));
    ASSERT_TRUE(b.finish());
    const Decision d = h.decide_raw(query);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0202);
    EXPECT_EQ(a.rcode, kFormErr);
}

TEST(EngineDecide, TwoOptRecordsAreFormerr) {
    Harness h;
    auto query = test::make_query({.id = 0x0303, .edns = true});
    // A second OPT: root, type 41, class 1232, ttl 0, rdlength 0.
    const std::array<std::uint8_t, 11> opt{0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0};
    query.insert(query.end(), opt.begin(), opt.end());
    query[11] = 2;  // ARCOUNT
    const Decision d = h.decide_raw(query);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0303);
    EXPECT_EQ(a.rcode, kFormErr);
}

TEST(EngineDecide, EdnsVersionOneIsBadvers) {
    Harness h;
    const Decision d = h.decide({.id = 0x0404, .edns = true, .edns_version = 1});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0404);
    ASSERT_TRUE(a.has_opt) << "BADVERS needs an OPT to carry its upper bits";
    EXPECT_EQ(a.rcode, kBadVers);
    EXPECT_EQ(a.header.rcode_low(), 0);
    EXPECT_EQ(a.edns_version, 0) << "we answer with the version we speak";
}

// ---- access control ----------------------------------------------------------------------------

TEST(EngineDecide, ClientOutsideAllowedPrefixesIsRefused) {
    Harness h;
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    const Decision d = h.decide({.id = 0x0505, .qname = "WWW.Example.com"},
                                test::client_at(test::v4(10, 0, 0, 1)));
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::refused);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0505);
    EXPECT_EQ(a.rcode, kRefused);
    EXPECT_EQ(a.qname, "WWW.Example.com.");
    EXPECT_TRUE(a.records.empty());
    EXPECT_EQ(h.engine().stats().get(Outcome::refused), 1U);
}

TEST(EngineDecide, ClientInsideAllowedPrefixIsServed) {
    Harness h;
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    const Decision d = h.decide({.qname = "localhost"}, test::client_at(test::v4(192, 168, 1, 77)));
    EXPECT_EQ(d.outcome, Outcome::local);
}

TEST(EngineDecide, Ipv4MappedClientOfAnAllowedIpv4PrefixIsServed) {
    Harness h;
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    EXPECT_EQ(
        h.decide({.qname = "localhost"}, test::client_at(test::v4_mapped(192, 168, 1, 9))).outcome,
        Outcome::local);
    EXPECT_EQ(
        h.decide({.qname = "localhost"}, test::client_at(test::v4_mapped(192, 168, 2, 9))).outcome,
        Outcome::refused);
}

TEST(EngineDecide, EmptyAllowListServesNobody) {
    Harness h;
    h.options.allowed_clients.clear();
    EXPECT_EQ(h.decide({.qname = "localhost"}).outcome, Outcome::refused);
}

TEST(EngineDecide, RefusedEvenWhenTheQuestionIsUnreadable) {
    Harness h;
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    auto query = test::make_query({.id = 0x0606});
    query.resize(wire::kHeaderSize + 3);
    const Decision d = h.decide_raw(query, test::client_at(test::v4(10, 0, 0, 1)));
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::refused);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0606);
    EXPECT_EQ(a.rcode, kRefused);
}

// RFC 6891 §7: a responder MUST include an OPT in its response to a request with one; RFC 8914
// §4.19 gives info code 18 (Prohibited) for a client refused by access control.
TEST(EngineDecide, RefusedEdnsClientGetsOptWithEdeProhibited) {
    Harness h;
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    const Decision d = h.decide({.qname = "www.example.com", .edns = true},
                                test::client_at(test::v4(10, 0, 0, 1)));
    ASSERT_EQ(d.outcome, Outcome::refused);
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, kRefused);
    EXPECT_TRUE(a.has_opt) << "no OPT in the answer to an EDNS query";
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{18});
}

TEST(EngineDecide, ArcountWithoutTheRecordIsFormerr) {
    Harness h;
    auto query = test::make_query({.id = 0x0707});
    query[11] = 1;  // ARCOUNT 1, nothing follows the question
    const Decision d = h.decide_raw(query);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    EXPECT_EQ(h.answer().header.id, 0x0707);
    EXPECT_EQ(h.answer().rcode, kFormErr);
}

// ---- localhost ---------------------------------------------------------------------------------

TEST(EngineDecide, LocalhostAnswersLoopbackAuthoritatively) {
    Harness h;
    for (const char* qname : {"localhost", "foo.localhost", "LocalHost"}) {
        SCOPED_TRACE(qname);
        Decision d = h.decide({.id = 7, .qname = qname, .qtype = RrType::a});
        ASSERT_EQ(d.action, Action::respond);
        EXPECT_EQ(d.outcome, Outcome::local);
        Answer a = h.answer();
        EXPECT_EQ(a.header.id, 7);
        EXPECT_TRUE(a.header.qr());
        EXPECT_TRUE(a.header.aa());
        EXPECT_TRUE(a.header.rd());
        EXPECT_TRUE(a.header.ra());
        EXPECT_EQ(a.rcode, kNoError);
        EXPECT_EQ(a.qname, std::string(qname) + ".");
        ASSERT_EQ(a.records.size(), 1U);
        EXPECT_EQ(a.records[0].type, RrType::a);
        EXPECT_EQ(a.records[0].owner, std::string(qname) + ".");
        EXPECT_EQ(a.records[0].rdata, test::bytes4(127, 0, 0, 1));
        EXPECT_EQ(a.records[0].ttl, h.options.local_ttl);

        d = h.decide({.qname = qname, .qtype = RrType::aaaa});
        EXPECT_EQ(d.outcome, Outcome::local);
        a = h.answer();
        EXPECT_TRUE(a.header.aa());
        ASSERT_EQ(a.records.size(), 1U);
        EXPECT_EQ(a.records[0].type, RrType::aaaa);
        std::vector<std::uint8_t> loopback6(16, 0);
        loopback6[15] = 1;
        EXPECT_EQ(a.records[0].rdata, loopback6);
    }
}

TEST(EngineDecide, LocalhostOtherTypeIsNodata) {
    Harness h;
    const Decision d = h.decide({.qname = "localhost", .qtype = RrType::mx});
    EXPECT_EQ(d.outcome, Outcome::local);
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, kNoError);
    EXPECT_TRUE(a.header.aa());
    EXPECT_TRUE(a.records.empty());
}

TEST(EngineDecide, LoopbackReverseIsLocalhost) {
    Harness h;
    Decision d = h.decide({.qname = "1.0.0.127.in-addr.arpa", .qtype = RrType::ptr});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::local);
    Answer a = h.answer();
    EXPECT_TRUE(a.header.aa());
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::ptr);
    EXPECT_EQ(a.records[0].target, "localhost.");

    d = h.decide(
        {.qname = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa",
         .qtype = RrType::ptr});
    EXPECT_EQ(d.outcome, Outcome::local);
    a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].target, "localhost.");
}

TEST(EngineDecide, LocalhostAnswerCarriesOptWhenAsked) {
    Harness h;
    h.decide({.qname = "localhost", .edns = true, .dnssec_ok = true});
    const Answer a = h.answer();
    ASSERT_TRUE(a.has_opt);
    EXPECT_TRUE(a.dnssec_ok);
    EXPECT_EQ(a.opt_udp_size, h.options.udp_payload_size);
    EXPECT_TRUE(a.ede.empty());
    h.decide({.qname = "localhost"});
    EXPECT_FALSE(h.answer().has_opt);
}

// ---- blocking ----------------------------------------------------------------------------------

class EngineBlocking : public ::testing::Test {
protected:
    void SetUp() override { h_.block("ads.example.com\n"); }
    Harness h_;
};

TEST_F(EngineBlocking, NullModeAnswersZeroAddresses) {
    h_.options.blocking.ttl = 42;
    Decision d = h_.decide({.id = 11, .qname = "Ads.Example.com", .qtype = RrType::a});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::blocked);
    EXPECT_EQ(d.verdict.action, filter::Action::blocked);
    EXPECT_EQ(d.verdict.line, 1U);
    Answer a = h_.answer();
    EXPECT_EQ(a.header.id, 11);
    EXPECT_EQ(a.rcode, kNoError);
    EXPECT_TRUE(a.header.ra());
    EXPECT_TRUE(a.header.rd());
    EXPECT_EQ(a.qname, "Ads.Example.com.");
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::a);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(0, 0, 0, 0));
    EXPECT_EQ(a.records[0].ttl, 42U);
    EXPECT_FALSE(a.has_opt);

    d = h_.decide({.qname = "ads.example.com", .qtype = RrType::aaaa});
    EXPECT_EQ(d.outcome, Outcome::blocked);
    a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].type, RrType::aaaa);
    EXPECT_EQ(a.records[0].rdata, std::vector<std::uint8_t>(16, 0));
    EXPECT_EQ(a.records[0].ttl, 42U);

    d = h_.decide({.qname = "ads.example.com", .qtype = RrType::mx});
    EXPECT_EQ(d.outcome, Outcome::blocked);
    a = h_.answer();
    EXPECT_EQ(a.rcode, kNoError);
    EXPECT_TRUE(a.records.empty()) << "NODATA for other types";
}

// The answer's question is the query's name as the client spelled it, read in place from the
// query. That is possible because a question's name never holds a compression pointer: the only
// octets before it are the header's, where no pointer may lead (here to offset 4, whose 0 would
// read as the root), so such a query is FORMERR.
TEST_F(EngineBlocking, TheQuestionIsEchoedAsSpelledAndHoldsNoPointer) {
    EXPECT_EQ(h_.decide({.qname = "aDS.exAMPLE.com"}).outcome, Outcome::blocked);
    EXPECT_EQ(h_.answer().qname, "aDS.exAMPLE.com.");

    const std::vector<std::uint8_t> pointed = {
        0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // header, RD
        3,    'A',  'd',  's',  7,    'E',  'x',  'a',  'm',  'p',  'l',  'e',   //
        3,    'C',  'o',  'M',  0xC0, 0x04,                                      // -> offset 4
        0x00, 0x01, 0x00, 0x01};                                                 // A IN
    const Decision d = h_.decide_raw(pointed);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::formerr);
    EXPECT_EQ(h_.answer().header.id, 0x1234);
}

TEST_F(EngineBlocking, TheNextQueryUsesANewlyPublishedSnapshot) {
    // The engine keeps the snapshot it read until the publisher's version moves on.
    EXPECT_EQ(h_.decide({.qname = "ads.example.com"}).outcome, Outcome::blocked);
    h_.block("tracker.example.net\n");
    EXPECT_EQ(h_.decide({.qname = "ads.example.com"}).action, Action::forward);
    EXPECT_EQ(h_.decide({.qname = "tracker.example.net"}).outcome, Outcome::blocked);
    h_.block("ads.example.com\n");
    EXPECT_EQ(h_.decide({.qname = "ads.example.com"}).outcome, Outcome::blocked);
    EXPECT_EQ(h_.decide({.qname = "tracker.example.net"}).action, Action::forward);
}

TEST_F(EngineBlocking, ARegexPublishedLaterBlocksANameTheRegexesMissedBefore) {
    // The engine remembers names its snapshot's regex rules do not match; a new snapshot's
    // rules are searched again.
    h_.block("ads.example.com\n(^|\\.)doubleclick\\.net$\n");
    EXPECT_EQ(h_.decide({.qname = "tracker.example.org"}).action, Action::forward);
    EXPECT_EQ(h_.decide({.qname = "tracker.example.org"}).action, Action::forward);
    EXPECT_EQ(h_.decide({.qname = "ad.doubleclick.net"}).outcome, Outcome::blocked);
    h_.block("ads.example.com\n^tracker\\.\n");
    EXPECT_EQ(h_.decide({.qname = "tracker.example.org"}).outcome, Outcome::blocked);
    EXPECT_EQ(h_.decide({.qname = "ad.doubleclick.net"}).action, Action::forward);
}

TEST_F(EngineBlocking, ARefreshLetsTheReplacedSnapshotGoWithoutAQuery) {
    auto first = test::snapshot_of("first.example\n", {});
    const std::weak_ptr<const filter::Snapshot> watch = first;
    h_.publish(std::move(first));
    EXPECT_EQ(h_.decide({.qname = "first.example"}).outcome, Outcome::blocked);
    h_.block("second.example\n");
    EXPECT_FALSE(watch.expired()) << "held by the engine until its next query or a refresh";
    h_.engine().refresh_snapshot();
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(h_.decide({.qname = "second.example"}).outcome, Outcome::blocked);
}

TEST_F(EngineBlocking, EdeBlockedWhenTheQueryHadEdns) {
    h_.decide({.qname = "ads.example.com", .edns = true, .dnssec_ok = true});
    const Answer a = h_.answer();
    ASSERT_TRUE(a.has_opt);
    EXPECT_TRUE(a.dnssec_ok);
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{15});
    EXPECT_EQ(a.ede_text, std::vector<std::string>{"block"}) << "the list's name";
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(0, 0, 0, 0));
}

TEST_F(EngineBlocking, EdeWithoutTheListNameWhenTurnedOff) {
    h_.options.blocking.ede_list_name = false;
    h_.decide({.qname = "ads.example.com", .edns = true});
    const Answer a = h_.answer();
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{15});
    EXPECT_EQ(a.ede_text, std::vector<std::string>{""});
}

TEST_F(EngineBlocking, NxdomainMode) {
    h_.options.blocking.mode = BlockingMode::nxdomain;
    const Decision d = h_.decide({.qname = "ads.example.com", .edns = true});
    EXPECT_EQ(d.outcome, Outcome::blocked);
    const Answer a = h_.answer();
    EXPECT_EQ(a.rcode, kNxDomain);
    EXPECT_TRUE(a.records.empty());
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{15});
}

TEST_F(EngineBlocking, RefusedMode) {
    h_.options.blocking.mode = BlockingMode::refused;
    const Decision d = h_.decide({.qname = "ads.example.com", .edns = true});
    EXPECT_EQ(d.outcome, Outcome::blocked);
    const Answer a = h_.answer();
    EXPECT_EQ(a.rcode, kRefused);
    EXPECT_TRUE(a.records.empty());
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{15});
}

TEST_F(EngineBlocking, CustomMode) {
    h_.options.blocking.mode = BlockingMode::custom;
    h_.options.blocking.custom_ipv4 = test::v4(192, 168, 1, 2);
    h_.options.blocking.custom_ipv6 = test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 2});
    h_.decide({.qname = "ads.example.com", .qtype = RrType::a});
    Answer a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(192, 168, 1, 2));
    h_.decide({.qname = "ads.example.com", .qtype = RrType::aaaa});
    a = h_.answer();
    ASSERT_EQ(a.records.size(), 1U);
    const auto want = test::v6({0xfd00, 0, 0, 0, 0, 0, 0, 2}).bytes;
    EXPECT_EQ(a.records[0].rdata, std::vector<std::uint8_t>(want.begin(), want.end()));
    h_.decide({.qname = "ads.example.com", .qtype = RrType::txt});
    a = h_.answer();
    EXPECT_EQ(a.rcode, kNoError);
    EXPECT_TRUE(a.records.empty());
}

TEST_F(EngineBlocking, UnlistedNameAndSubdomainOfAnExactRuleAreForwarded) {
    EXPECT_EQ(h_.decide({.qname = "www.example.com"}).action, Action::forward);
    EXPECT_EQ(h_.decide({.qname = "x.ads.example.com"}).action, Action::forward);
}

TEST(EngineDecide, AllowRuleBeatsBlockRule) {
    Harness h;
    h.block("||example.com^\n", "good.example.com\n");
    Decision d = h.decide({.qname = "good.example.com"});
    EXPECT_EQ(d.action, Action::forward);
    EXPECT_EQ(d.outcome, Outcome::pending);
    EXPECT_EQ(d.verdict.action, filter::Action::allowed);
    EXPECT_EQ(h.pending.verdict.action, filter::Action::allowed);
    d = h.decide({.qname = "bad.example.com"});
    EXPECT_EQ(d.outcome, Outcome::blocked);
}

TEST(EngineDecide, LocalRecordsWinOverTheBlocklist) {
    Harness h;
    h.block("nas.lan\n");
    h.local.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
    EXPECT_EQ(h.decide({.qname = "nas.lan"}).outcome, Outcome::local);
}

// ---- private reverse zones and conditional routes ----------------------------------------------

TEST(EngineDecide, PrivateReverseIsNxdomainAuthoritatively) {
    Harness h;
    for (const char* qname :
         {"5.1.168.192.in-addr.arpa", "1.0.0.10.in-addr.arpa", "9.9.20.172.in-addr.arpa",
          "1.1.64.100.in-addr.arpa", "4.3.2.10.IN-ADDR.Arpa",
          "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa"}) {
        SCOPED_TRACE(qname);
        const Decision d = h.decide({.id = 99, .qname = qname, .qtype = RrType::ptr});
        ASSERT_EQ(d.action, Action::respond);
        EXPECT_EQ(d.outcome, Outcome::local);
        const Answer a = h.answer();
        EXPECT_EQ(a.header.id, 99);
        EXPECT_EQ(a.rcode, kNxDomain);
        EXPECT_TRUE(a.header.aa());
        EXPECT_TRUE(a.records.empty());
    }
}

TEST(EngineDecide, PublicReverseIsForwarded) {
    Harness h;
    for (const char* qname :
         {"5.113.0.203.in-addr.arpa", "1.1.32.172.in-addr.arpa", "1.1.128.100.in-addr.arpa",
          // Private zones' names, but not at the end of the name, or under another top label.
          "1.0.0.10.in-addr.arpa.example", "1.0.0.10.in-addr.xarpa", "1.0.0.10.in-addr.arp"}) {
        SCOPED_TRACE(qname);
        EXPECT_EQ(h.decide({.qname = qname, .qtype = RrType::ptr}).action, Action::forward);
    }
}

TEST(EngineDecide, PrivateReverseCanBeForwardedWhenTurnedOff) {
    Harness h;
    h.options.answer_private_reverse = false;
    const Decision d = h.decide({.qname = "5.1.168.192.in-addr.arpa", .qtype = RrType::ptr});
    EXPECT_EQ(d.action, Action::forward);
    EXPECT_EQ(h.pending.route, 0U);
}

TEST(EngineDecide, ConditionalRouteCoveringAPrivateReverseZoneForwardsThere) {
    Harness h;
    h.options.conditional = {{{test::name("corp.example")}},
                             {{test::name("lan"), test::name("168.192.in-addr.arpa")}}};
    const Decision d = h.decide({.qname = "5.1.168.192.in-addr.arpa", .qtype = RrType::ptr});
    ASSERT_EQ(d.action, Action::forward);
    EXPECT_EQ(d.outcome, Outcome::pending);
    EXPECT_EQ(h.pending.route, 2U);
    // Another private range is still answered here.
    EXPECT_EQ(h.decide({.qname = "1.0.0.10.in-addr.arpa", .qtype = RrType::ptr}).outcome,
              Outcome::local);
}

TEST(EngineDecide, ConditionalRouteSelection) {
    Harness h;
    h.options.conditional = {{{test::name("lan")}}, {{test::name("corp.example")}}};
    struct Case {
        const char* qname;
        std::size_t route;
    };
    for (const Case c :
         {Case{"lan", 1}, Case{"nas.lan", 1}, Case{"A.B.LAN", 1}, Case{"xlan", 0},
          Case{"lan.xlan", 0}, Case{"lan.example", 0}, Case{"corp.example", 2},
          Case{"www.Corp.Example", 2}, Case{"xcorp.example", 0}, Case{"example", 0}}) {
        SCOPED_TRACE(c.qname);
        const Decision d = h.decide({.qname = c.qname});
        ASSERT_EQ(d.action, Action::forward);
        EXPECT_EQ(h.pending.route, c.route);
    }
}

TEST(EngineDecide, FirstMatchingConditionalRouteWins) {
    Harness h;
    h.options.conditional = {{{test::name("example")}}, {{test::name("corp.example")}}};
    h.decide({.qname = "www.corp.example"});
    EXPECT_EQ(h.pending.route, 1U);
}

// ---- the query sent upstream -------------------------------------------------------------------

struct Upstream {
    wire::Header header;
    std::string qname;
    RrType qtype{};
    bool has_opt = false;
    bool dnssec_ok = false;
    std::vector<std::uint8_t> ecs;
};

Upstream read_upstream(const std::vector<std::uint8_t>& bytes) {
    Upstream u;
    const Answer a = test::read_answer(bytes);
    u.header = a.header;
    u.qname = a.qname;
    u.qtype = a.qtype;
    u.has_opt = a.has_opt;
    u.dnssec_ok = a.dnssec_ok;
    u.ecs = a.ecs;
    EXPECT_TRUE(a.records.empty());
    return u;
}

TEST(EngineDecide, ForwardBuildsACanonicalUpstreamQuery) {
    Harness h;
    const Decision d =
        h.decide({.id = 0x7777, .qname = "WwW.ExAmPlE.CoM", .qtype = RrType::aaaa, .flags = 0});
    ASSERT_EQ(d.action, Action::forward);
    EXPECT_EQ(d.outcome, Outcome::pending);
    EXPECT_EQ(d.size, 0U);
    EXPECT_EQ(h.pending.client_id, 0x7777);
    EXPECT_EQ(h.pending.qname.to_text(), "WwW.ExAmPlE.CoM.");
    EXPECT_EQ(h.pending.route, 0U);
    EXPECT_FALSE(h.pending.edns.present);
    EXPECT_EQ(h.pending.transport, Transport::udp);
    const Upstream u = read_upstream(h.pending.upstream_query);
    EXPECT_FALSE(u.header.qr());
    EXPECT_EQ(u.header.opcode(), wire::Opcode::query);
    EXPECT_TRUE(u.header.rd()) << "we always ask for recursion";
    EXPECT_EQ(u.header.id, 0);
    EXPECT_EQ(u.header.qdcount, 1);
    EXPECT_EQ(u.qname, "www.example.com.");
    EXPECT_EQ(u.qtype, RrType::aaaa);
    EXPECT_TRUE(u.has_opt);
    EXPECT_FALSE(u.dnssec_ok);
    EXPECT_TRUE(u.ecs.empty());
}

TEST(EngineDecide, ForwardCarriesTheClientsDoBitAndCd) {
    Harness h;
    h.decide({.qname = "www.example.com",
              .flags = Header::kRd | Header::kCd,
              .edns = true,
              .dnssec_ok = true});
    ASSERT_FALSE(h.pending.upstream_query.empty());
    Upstream u = read_upstream(h.pending.upstream_query);
    EXPECT_TRUE(u.has_opt);
    EXPECT_TRUE(u.dnssec_ok);
    EXPECT_TRUE(u.header.cd());
    EXPECT_TRUE(h.pending.edns.present);
    EXPECT_TRUE(h.pending.edns.dnssec_ok);
    EXPECT_TRUE(h.pending.key.dnssec_ok());

    h.decide({.qname = "www.example.com", .edns = true, .dnssec_ok = false});
    u = read_upstream(h.pending.upstream_query);
    EXPECT_TRUE(u.has_opt);
    EXPECT_FALSE(u.dnssec_ok);
    EXPECT_FALSE(u.header.cd());
}

TEST(EngineDecide, ClientSubnetIsStrippedByDefault) {
    Harness h;
    ASSERT_TRUE(h.options.strip_ecs);
    h.decide({.qname = "www.example.com", .edns = true, .edns_options = test::ecs_option()});
    const Upstream u = read_upstream(h.pending.upstream_query);
    EXPECT_TRUE(u.has_opt);
    EXPECT_TRUE(u.ecs.empty());
}

TEST(EngineDecide, ClientSubnetIsPassedOnWhenNotStripped) {
    Harness h;
    h.options.strip_ecs = false;
    h.decide({.qname = "www.example.com", .edns = true, .edns_options = test::ecs_option()});
    const Upstream u = read_upstream(h.pending.upstream_query);
    const auto opt = test::ecs_option();
    EXPECT_EQ(u.ecs, std::vector<std::uint8_t>(opt.begin() + 4, opt.end()));
    // No ECS from the client: none upstream either.
    h.decide({.qname = "www.example.com", .edns = true});
    EXPECT_TRUE(read_upstream(h.pending.upstream_query).ecs.empty());
}

TEST(EngineDecide, TcpTransportIsRemembered) {
    Harness h;
    h.decide({.qname = "www.example.com"},
             test::client_at(test::v4(192, 168, 1, 5), Transport::tcp));
    EXPECT_EQ(h.pending.transport, Transport::tcp);
}

}  // namespace
}  // namespace moat::engine
