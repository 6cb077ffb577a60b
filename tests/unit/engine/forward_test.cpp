// Engine::complete() and Engine::fail(): the client's answer from an upstream reply, the cache
// behind it (hits, ageing, DO keys), truncation for UDP, SERVFAIL and serve-stale, and Stats.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/stats.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {
namespace {

using std::chrono::seconds;
using test::Answer;
using test::Harness;
using test::QuerySpec;
using test::ReplySpec;
using wire::Header;
using wire::RrType;

constexpr unsigned kServFail = 2;
constexpr unsigned kNxDomain = 3;
constexpr std::uint16_t kEdeStale = 3;
constexpr std::uint16_t kEdeNoReachableAuthority = 22;

ReplySpec one_a(std::uint32_t ttl = 300) {
    ReplySpec r;
    r.records.push_back(test::a_rr("www.example.com", {93, 184, 216, 34}, ttl));
    return r;
}

/// An answer of `count` A records for big.example.com: 12 + 21 + 16 per record octets.
ReplySpec many_a(std::size_t count) {
    ReplySpec r;
    for (std::size_t i = 0; i < count; ++i) {
        r.records.push_back(
            test::a_rr("big.example.com", {10, 0, 0, static_cast<std::uint8_t>(i + 1)}));
    }
    return r;
}

/// decide() must forward; then complete() with `reply`.
Decision forward_and_complete(Harness& h, const QuerySpec& q, const ReplySpec& reply) {
    const Decision d = h.decide(q);
    EXPECT_EQ(d.action, Action::forward);
    if (d.action != Action::forward) {
        return d;
    }
    return h.complete(reply);
}

// ---- complete() --------------------------------------------------------------------------------

TEST(EngineComplete, AnswerHasTheClientsIdCaseAndFlags) {
    Harness h;
    const Decision d = forward_and_complete(h, {.id = 0x1111, .qname = "WwW.Example.COM"}, one_a());
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::forwarded);
    EXPECT_EQ(d.size, h.last().size());
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x1111);
    EXPECT_TRUE(a.header.qr());
    EXPECT_TRUE(a.header.rd());
    EXPECT_TRUE(a.header.ra());
    EXPECT_FALSE(a.header.tc());
    EXPECT_FALSE(a.header.aa());
    EXPECT_EQ(a.rcode, 0U);
    EXPECT_EQ(a.header.qdcount, 1);
    EXPECT_EQ(a.qname, "WwW.Example.COM.");
    EXPECT_EQ(a.qtype, RrType::a);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].section, wire::Section::answer);
    EXPECT_EQ(a.records[0].type, RrType::a);
    EXPECT_EQ(a.records[0].ttl, 300U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 34));
    EXPECT_FALSE(a.has_opt) << "the query had no OPT";
}

// We are no authority for a forwarded name, whatever the upstream is: neither the forwarded
// answer nor the cached one says so. The upstream's AD is passed on to a client that asks for it
// (RFC 6840 §5.8: with AD or DO in its query).
TEST(EngineComplete, TheUpstreamsAuthoritativeBitIsNotPassedOnItsAdIs) {
    Harness h;
    ReplySpec authoritative = one_a();
    authoritative.flags |= Header::kAa | Header::kAd;
    const std::uint16_t rd_ad = Header::kRd | Header::kAd;
    forward_and_complete(h, {.id = 1, .qname = "www.example.com", .flags = rd_ad}, authoritative);
    Answer a = h.answer();
    EXPECT_FALSE(a.header.aa()) << "forwarded";
    EXPECT_TRUE(a.header.ad()) << "forwarded";

    ASSERT_EQ(h.decide({.id = 2, .qname = "www.example.com", .flags = rd_ad}).outcome,
              Outcome::cached);
    a = h.answer();
    EXPECT_FALSE(a.header.aa()) << "from the cache";
    EXPECT_TRUE(a.header.ad()) << "from the cache";
}

TEST(EngineComplete, RdIsEchoedNotForced) {
    Harness h;
    forward_and_complete(h, {.qname = "www.example.com", .flags = 0}, one_a());
    const Answer a = h.answer();
    EXPECT_FALSE(a.header.rd());
    EXPECT_TRUE(a.header.ra());
}

TEST(EngineComplete, OptOnlyWhenTheQueryHadOne) {
    Harness h;
    forward_and_complete(h, {.qname = "www.example.com", .edns = true, .dnssec_ok = true}, one_a());
    Answer a = h.answer();
    ASSERT_TRUE(a.has_opt);
    EXPECT_TRUE(a.dnssec_ok);
    EXPECT_EQ(a.opt_udp_size, h.options.udp_payload_size);
    EXPECT_TRUE(a.ede.empty());
    EXPECT_EQ(a.records.size(), 1U);

    forward_and_complete(h, {.qname = "other.example.com"}, one_a());
    a = h.answer();
    EXPECT_FALSE(a.has_opt);
}

TEST(EngineComplete, CnameChainFromUpstreamIsKept) {
    Harness h;
    ReplySpec r;
    r.records.push_back({wire::Section::answer, "www.example.com", RrType::cname, 300,
                         wire::encode::name(test::name("cdn.example.net"))});
    r.records.push_back(test::a_rr("cdn.example.net", {198, 51, 100, 7}, 60));
    forward_and_complete(h, {.qname = "www.example.com"}, r);
    const Answer a = h.answer();
    ASSERT_EQ(a.records.size(), 2U);
    EXPECT_EQ(a.records[0].owner, "www.example.com.");
    EXPECT_EQ(a.records[0].target, "cdn.example.net.");
    EXPECT_EQ(a.records[1].owner, "cdn.example.net.");
    EXPECT_EQ(a.records[1].ttl, 60U);
    EXPECT_EQ(a.records[1].rdata, test::bytes4(198, 51, 100, 7));
}

TEST(EngineComplete, UpstreamNxdomainPassesThrough) {
    Harness h;
    ReplySpec r;
    r.rcode = wire::Rcode::nxdomain;
    r.records.push_back(
        {wire::Section::authority, "example.com", RrType::soa, 900,
         wire::encode::soa(test::name("ns.example.com"), test::name("hostmaster.example.com"), 1,
                           7200, 900, 1209600, 300)});
    const Decision d = forward_and_complete(h, {.qname = "nope.example.com"}, r);
    EXPECT_EQ(d.outcome, Outcome::forwarded);
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, kNxDomain);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].section, wire::Section::authority);
    EXPECT_EQ(a.records[0].type, RrType::soa);
}

// The query log names the allow rule behind a name even when its answer comes from the cache.
TEST(EngineComplete, ACacheHitKeepsTheAllowRuleThatLetItThrough) {
    Harness h;
    h.block("||example.com^\n", "# allowed\nwww.example.com\n");
    const Decision first = forward_and_complete(h, {.id = 1, .qname = "www.example.com"}, one_a());
    ASSERT_EQ(first.outcome, Outcome::forwarded);

    const Decision d = h.decide({.id = 2, .qname = "www.example.com"});
    ASSERT_EQ(d.outcome, Outcome::cached);
    EXPECT_EQ(d.verdict.action, filter::Action::allowed);
    EXPECT_EQ(d.verdict.rule, filter::RuleType::exact);
    EXPECT_EQ(d.verdict.line, 2U);
    EXPECT_EQ(h.decide({.id = 3, .qname = "ads.example.com"}).outcome, Outcome::blocked);
}

TEST(EngineComplete, SecondQueryIsACacheHitThatAges) {
    Harness h;
    forward_and_complete(h, {.id = 1, .qname = "www.example.com"}, one_a(300));

    Decision d = h.decide({.id = 2, .qname = "WWW.EXAMPLE.com"});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::cached);
    Answer a = h.answer();
    EXPECT_EQ(a.header.id, 2);
    EXPECT_EQ(a.qname, "WWW.EXAMPLE.com.");
    EXPECT_TRUE(a.header.rd());
    EXPECT_TRUE(a.header.ra());
    EXPECT_FALSE(a.has_opt);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 300U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 34));

    h.clock().advance(seconds(2));
    d = h.decide({.id = 3, .qname = "www.example.com", .edns = true});
    ASSERT_EQ(d.outcome, Outcome::cached);
    a = h.answer();
    EXPECT_EQ(a.header.id, 3);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 298U);
    EXPECT_TRUE(a.has_opt) << "a hit gets an OPT when its query had one";
    EXPECT_FALSE(a.dnssec_ok);
}

TEST(EngineComplete, CacheHitEchoesRdAndCd) {
    Harness h;
    forward_and_complete(h, {.qname = "www.example.com"}, one_a());
    h.decide({.qname = "www.example.com", .flags = Header::kCd});
    const Answer a = h.answer();
    EXPECT_FALSE(a.header.rd());
    EXPECT_TRUE(a.header.cd());
    EXPECT_TRUE(a.header.ra());
}

TEST(EngineComplete, ExpiredEntryIsForwardedAgain) {
    Harness h;
    forward_and_complete(h, {.qname = "www.example.com"}, one_a(10));
    h.clock().advance(seconds(10));
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

TEST(EngineComplete, DnssecOkIsPartOfTheCacheKey) {
    Harness h;
    forward_and_complete(h, {.qname = "www.example.com", .edns = true, .dnssec_ok = false},
                         one_a(300));
    // DO=1 is another entry: a miss, forwarded with DO set.
    Decision d = h.decide({.qname = "www.example.com", .edns = true, .dnssec_ok = true});
    ASSERT_EQ(d.action, Action::forward);
    EXPECT_TRUE(h.pending.key.dnssec_ok());
    ReplySpec r;
    r.dnssec_ok = true;
    r.records.push_back(test::a_rr("www.example.com", {93, 184, 216, 35}, 300));
    d = h.complete(r);
    EXPECT_EQ(d.outcome, Outcome::forwarded);

    d = h.decide({.qname = "www.example.com", .edns = true, .dnssec_ok = false});
    ASSERT_EQ(d.outcome, Outcome::cached);
    Answer a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 34));
    EXPECT_FALSE(a.dnssec_ok);

    d = h.decide({.qname = "www.example.com", .edns = true, .dnssec_ok = true});
    ASSERT_EQ(d.outcome, Outcome::cached);
    a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 35));
    EXPECT_TRUE(a.dnssec_ok);

    // No OPT at all is DO=0.
    d = h.decide({.qname = "www.example.com"});
    ASSERT_EQ(d.outcome, Outcome::cached);
    a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 34));
}

TEST(EngineComplete, WithoutACacheEveryQueryIsForwarded) {
    Harness h;
    h.with_cache = false;
    h.build();
    EXPECT_EQ(h.engine().cache(), nullptr);
    forward_and_complete(h, {.qname = "www.example.com"}, one_a());
    EXPECT_EQ(h.answer().records.size(), 1U);
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

// ---- truncation --------------------------------------------------------------------------------

void expect_truncated_whole_records(const Answer& a, std::size_t limit) {
    EXPECT_TRUE(a.parsed);
    EXPECT_TRUE(a.header.tc());
    EXPECT_LE(a.size, limit);
    EXPECT_GT(a.header.ancount, 0);
    EXPECT_LT(a.header.ancount, 40);
    EXPECT_EQ(a.records.size(), a.header.ancount) << "every record counted is whole";
    for (std::size_t i = 0; i < a.records.size(); ++i) {
        EXPECT_EQ(a.records[i].type, RrType::a);
        EXPECT_EQ(a.records[i].rdata, test::bytes4(10, 0, 0, static_cast<std::uint8_t>(i + 1)));
    }
}

TEST(EngineTruncation, UdpAnswerOver512WithoutEdnsIsTruncatedToWholeRecords) {
    Harness h;
    const Decision d =
        forward_and_complete(h, {.id = 0x0A0A, .qname = "Big.Example.com"}, many_a(40));
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::forwarded);
    EXPECT_LE(d.size, 512U);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x0A0A);
    EXPECT_EQ(a.qname, "Big.Example.com.");
    EXPECT_TRUE(a.header.ra());
    EXPECT_EQ(a.rcode, 0U);
    expect_truncated_whole_records(a, 512);
    // 12 + 21 (question) + 16 per record: 29 records fit in 512.
    EXPECT_EQ(a.header.ancount, 29);
}

TEST(EngineTruncation, CacheHitOverUdpIsTruncatedToo) {
    Harness h;
    forward_and_complete(h, {.qname = "big.example.com"}, many_a(40));
    const Decision d = h.decide({.qname = "big.example.com"});
    ASSERT_EQ(d.outcome, Outcome::cached);
    expect_truncated_whole_records(h.answer(), 512);
}

TEST(EngineTruncation, TcpGetsTheWholeAnswer) {
    Harness h;
    const Client tcp = test::client_at(test::v4(192, 168, 1, 50), Transport::tcp);
    ASSERT_EQ(h.decide({.qname = "big.example.com"}, tcp).action, Action::forward);
    Decision d = h.complete(many_a(40));
    ASSERT_EQ(d.action, Action::respond);
    Answer a = h.answer();
    EXPECT_FALSE(a.header.tc());
    EXPECT_EQ(a.records.size(), 40U);
    EXPECT_GT(a.size, 512U);

    // And from the cache.
    d = h.decide({.qname = "big.example.com"}, tcp);
    ASSERT_EQ(d.outcome, Outcome::cached);
    a = h.answer();
    EXPECT_FALSE(a.header.tc());
    EXPECT_EQ(a.records.size(), 40U);
}

TEST(EngineTruncation, EdnsClientGetsUpToItsBufferSize) {
    Harness h;
    forward_and_complete(h, {.qname = "big.example.com", .edns = true, .udp_payload_size = 4096},
                         many_a(40));
    Answer a = h.answer();
    EXPECT_FALSE(a.header.tc());
    EXPECT_EQ(a.records.size(), 40U);
    EXPECT_TRUE(a.has_opt);

    // Our own 1232 caps a bigger answer; the OPT survives the rebuild.
    forward_and_complete(
        h,
        {.qname = "big.example.com", .qtype = RrType::aaaa, .edns = true, .udp_payload_size = 4096},
        [] {
            ReplySpec r;
            for (std::uint8_t i = 0; i < 60; ++i) {
                std::array<std::uint8_t, 16> ip{};
                ip[15] = static_cast<std::uint8_t>(i + 1);
                r.records.push_back({wire::Section::answer, "big.example.com", RrType::aaaa, 300,
                                     wire::encode::aaaa(ip)});
            }
            return r;
        }());
    a = h.answer();
    EXPECT_TRUE(a.header.tc());
    EXPECT_LE(a.size, 1232U);
    EXPECT_GT(a.size, 512U);
    EXPECT_TRUE(a.has_opt);
    EXPECT_EQ(a.records.size(), a.header.ancount);
}

TEST(EngineTruncation, DroppedAdditionalRecordsDoNotSetTc) {
    Harness h;
    ReplySpec r = one_a();
    for (std::uint8_t i = 0; i < 40; ++i) {
        r.records.push_back({wire::Section::additional, "ns" + std::to_string(i) + ".example.com",
                             RrType::a, 300, test::bytes4(10, 1, 0, i)});
    }
    const Decision d = forward_and_complete(h, {.qname = "www.example.com"}, r);
    ASSERT_EQ(d.action, Action::respond);
    const Answer a = h.answer();
    EXPECT_LE(a.size, 512U);
    EXPECT_FALSE(a.header.tc()) << "additional data is optional (RFC 2181 §9)";
    ASSERT_EQ(a.answers().size(), 1U);
    EXPECT_EQ(a.answers()[0]->rdata, test::bytes4(93, 184, 216, 34));
    EXPECT_LT(a.header.arcount, 40);
    EXPECT_EQ(a.records.size(), 1U + a.header.arcount);
}

// ---- unusable replies and fail() ---------------------------------------------------------------

TEST(EngineComplete, UnparsableReplyIsServfail) {
    Harness h;
    ASSERT_EQ(h.decide({.id = 0x2222, .qname = "www.example.com", .edns = true}).action,
              Action::forward);
    const std::vector<std::uint8_t> garbage{0x51, 0x51, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 3};
    const Decision d = h.complete(garbage);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::servfail);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x2222);
    EXPECT_EQ(a.rcode, kServFail);
    EXPECT_EQ(a.qname, "www.example.com.");
    EXPECT_TRUE(a.records.empty());
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{kEdeNoReachableAuthority});
    // Nothing was cached.
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

TEST(EngineComplete, AReplyThatIsNotAResponseIsServfail) {
    Harness h;
    ASSERT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
    ReplySpec r = one_a();
    r.flags = Header::kRd;  // QR clear
    const Decision d = h.complete(r);
    EXPECT_EQ(d.outcome, Outcome::servfail);
    EXPECT_EQ(h.answer().rcode, kServFail);
}

TEST(EngineFail, ServfailWithEde22) {
    Harness h;
    ASSERT_EQ(h.decide({.id = 0x3333, .qname = "WWW.example.com", .edns = true}).action,
              Action::forward);
    const Decision d = h.fail();
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::servfail);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x3333);
    EXPECT_TRUE(a.header.qr());
    EXPECT_TRUE(a.header.ra());
    EXPECT_TRUE(a.header.rd());
    EXPECT_EQ(a.rcode, kServFail);
    EXPECT_EQ(a.qname, "WWW.example.com.");
    ASSERT_TRUE(a.has_opt);
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{kEdeNoReachableAuthority});
}

TEST(EngineFail, ServfailWithoutEdnsHasNoOpt) {
    Harness h;
    ASSERT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
    h.fail();
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, kServFail);
    EXPECT_FALSE(a.has_opt);
}

TEST(EngineFail, ExpiredEntryIsServedStaleWhenAllowed) {
    Harness h;
    h.cache_options.serve_stale = true;
    h.cache_options.stale_ttl = 30;
    forward_and_complete(h, {.qname = "www.example.com", .edns = true}, one_a(60));
    h.clock().advance(seconds(120));
    ASSERT_EQ(h.decide({.id = 0x4444, .qname = "Www.Example.Com", .edns = true}).action,
              Action::forward);
    const Decision d = h.fail();
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::stale);
    const Answer a = h.answer();
    EXPECT_EQ(a.header.id, 0x4444);
    EXPECT_EQ(a.qname, "Www.Example.Com.");
    EXPECT_EQ(a.rcode, 0U);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 30U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 34));
    ASSERT_TRUE(a.has_opt);
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{kEdeStale});
}

TEST(EngineFail, StaleAnswerWithoutEdnsHasNoOpt) {
    Harness h;
    h.cache_options.serve_stale = true;
    forward_and_complete(h, {.qname = "www.example.com"}, one_a(60));
    h.clock().advance(seconds(120));
    ASSERT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
    EXPECT_EQ(h.fail().outcome, Outcome::stale);
    EXPECT_FALSE(h.answer().has_opt);
    EXPECT_EQ(h.answer().records.size(), 1U);
}

TEST(EngineFail, ExpiredEntryIsNotServedWhenServeStaleIsOff) {
    Harness h;
    ASSERT_FALSE(h.cache_options.serve_stale);
    forward_and_complete(h, {.qname = "www.example.com", .edns = true}, one_a(60));
    h.clock().advance(seconds(120));
    ASSERT_EQ(h.decide({.qname = "www.example.com", .edns = true}).action, Action::forward);
    const Decision d = h.fail();
    EXPECT_EQ(d.outcome, Outcome::servfail);
    EXPECT_EQ(h.answer().rcode, kServFail);
}

// ---- Stats -------------------------------------------------------------------------------------

TEST(EngineStats, CountsEveryOutcome) {
    Harness h;
    h.block("ads.example.com\n");
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    h.cache_options.serve_stale = true;
    const Client outsider = test::client_at(test::v4(10, 9, 9, 9));

    const std::vector<std::uint8_t> short_packet(5, 0);
    h.decide_raw(short_packet);                                             // dropped
    h.decide({.qname = "x.example", .flags = Header::kQr});                 // dropped
    h.decide({.qname = "x.example", .opcode = wire::Opcode::notify});       // notimp
    h.decide({.qname = "x.example", .edns = true, .edns_version = 2});      // formerr (BADVERS)
    h.decide({.qname = "x.example"}, outsider);                             // refused
    h.decide({.qname = "localhost"});                                       // local
    h.decide({.qname = "5.1.168.192.in-addr.arpa", .qtype = RrType::ptr});  // local
    h.decide({.qname = "ads.example.com"});                                 // blocked
    forward_and_complete(h, {.qname = "www.example.com"}, one_a(60));       // pending, forwarded
    h.decide({.qname = "www.example.com"});                                 // cached
    ASSERT_EQ(h.decide({.qname = "down.example.com"}).action, Action::forward);  // pending
    h.fail();                                                                    // servfail
    h.clock().advance(seconds(61));
    ASSERT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);  // pending
    h.fail();                                                                   // stale

    const Stats& s = h.engine().stats();
    EXPECT_EQ(s.get(Outcome::dropped), 2U);
    EXPECT_EQ(s.get(Outcome::notimp), 1U);
    EXPECT_EQ(s.get(Outcome::formerr), 1U);
    EXPECT_EQ(s.get(Outcome::refused), 1U);
    EXPECT_EQ(s.get(Outcome::local), 2U);
    EXPECT_EQ(s.get(Outcome::blocked), 1U);
    EXPECT_EQ(s.get(Outcome::pending), 3U);
    EXPECT_EQ(s.get(Outcome::forwarded), 1U);
    EXPECT_EQ(s.get(Outcome::cached), 1U);
    EXPECT_EQ(s.get(Outcome::servfail), 1U);
    EXPECT_EQ(s.get(Outcome::stale), 1U);
}

TEST(EngineStats, OutcomeNames) {
    EXPECT_STREQ(to_text(Outcome::forwarded), "forwarded");
    EXPECT_STREQ(to_text(Outcome::stale), "stale");
    EXPECT_STREQ(to_text(Outcome::pending), "pending");
    for (std::size_t i = 0; i < kOutcomeCount; ++i) {
        EXPECT_STRNE(to_text(static_cast<Outcome>(i)), "unknown");
    }
}

}  // namespace
}  // namespace moat::engine
