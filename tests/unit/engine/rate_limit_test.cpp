// The per-client rate limit: the token bucket on its own (burst, refill, prefixes, exemptions,
// a table that never grows), then what the engine answers an over-limit query with each action,
// and the RFC 8482 answer to ANY.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "engine_fixtures.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/rate_limiter.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {
namespace {

using namespace std::chrono_literals;
using test::Answer;
using test::Harness;

constexpr unsigned kRefused = 5;

Clock::time_point at(std::chrono::nanoseconds since_start) {
    return Clock::time_point(since_start);
}

RateLimitOptions limit(std::uint32_t per_second, std::uint32_t burst) {
    RateLimitOptions o;
    o.queries_per_second = per_second;
    o.burst = burst;
    return o;
}

/// How many of `n` queries sent at the same instant are admitted.
int admitted_of(RateLimiter& limiter, const IpAddress& client, int n, Clock::time_point now) {
    int admitted = 0;
    for (int i = 0; i < n; ++i) {
        admitted += limiter.admit(client, now) ? 1 : 0;
    }
    return admitted;
}

TEST(RateLimiter, AdmitsTheBurstAtOnceThenRefillsAtTheRate) {
    RateLimiter limiter;
    limiter.configure(limit(10, 5));  // one query per 100 ms, five at once
    const IpAddress client = test::v4(192, 168, 1, 20);
    EXPECT_EQ(admitted_of(limiter, client, 8, at(1s)), 5);
    EXPECT_FALSE(limiter.admit(client, at(1s + 99ms))) << "one token comes back after 100 ms";
    EXPECT_TRUE(limiter.admit(client, at(1s + 100ms)));
    EXPECT_FALSE(limiter.admit(client, at(1s + 100ms)));
    EXPECT_EQ(admitted_of(limiter, client, 10, at(3s)), 5) << "a quiet client gets its burst back";
}

TEST(RateLimiter, ClientsHaveBucketsOfTheirOwn) {
    RateLimiter limiter;
    limiter.configure(limit(1, 2));
    EXPECT_EQ(admitted_of(limiter, test::v4(192, 168, 1, 20), 5, at(1s)), 2);
    EXPECT_EQ(admitted_of(limiter, test::v4(192, 168, 1, 21), 5, at(1s)), 2);
}

TEST(RateLimiter, ClientsInOnePrefixShareABucket) {
    RateLimiter limiter;
    RateLimitOptions o = limit(1, 4);
    o.ipv4_prefix = 24;
    o.ipv6_prefix = 56;
    limiter.configure(o);
    EXPECT_EQ(admitted_of(limiter, test::v4(10, 1, 2, 3), 3, at(1s)), 3);
    EXPECT_EQ(admitted_of(limiter, test::v4(10, 1, 2, 200), 3, at(1s)), 1);
    EXPECT_EQ(admitted_of(limiter, test::v4(10, 1, 3, 3), 3, at(1s)), 3) << "another /24";
    const IpAddress a = test::v6({0x2001, 0xdb8, 0, 0x100, 0, 0, 0, 1});
    const IpAddress same_56 = test::v6({0x2001, 0xdb8, 0, 0x1ff, 0xabcd, 0, 0, 9});
    EXPECT_EQ(admitted_of(limiter, a, 2, at(1s)), 2);
    EXPECT_EQ(admitted_of(limiter, same_56, 5, at(1s)), 2);
}

TEST(RateLimiter, AnIpv4MappedClientCountsAsItsIpv4Address) {
    RateLimiter limiter;
    limiter.configure(limit(1, 3));
    EXPECT_EQ(admitted_of(limiter, test::v4(192, 168, 1, 9), 2, at(1s)), 2);
    EXPECT_EQ(admitted_of(limiter, test::v4_mapped(192, 168, 1, 9), 2, at(1s)), 1);
}

TEST(RateLimiter, ExemptClientsAndAZeroRateAreNotCounted) {
    RateLimiter limiter;
    RateLimitOptions o = limit(1, 1);
    o.exempt = {test::cidr(test::v4(127, 0, 0, 0), 8)};
    limiter.configure(o);
    EXPECT_FALSE(limiter.applies_to(test::v4(127, 0, 0, 1)));
    EXPECT_FALSE(limiter.applies_to(test::v4_mapped(127, 0, 0, 1)));
    EXPECT_TRUE(limiter.applies_to(test::v4(192, 168, 1, 1)));
    limiter.configure(limit(0, 1));
    EXPECT_FALSE(limiter.applies_to(test::v4(192, 168, 1, 1)));
}

TEST(RateLimiter, AReloadWithTheSamePrefixesKeepsTheBuckets) {
    RateLimiter limiter;
    limiter.configure(limit(1, 2));
    const IpAddress client = test::v4(192, 168, 1, 20);
    EXPECT_EQ(admitted_of(limiter, client, 2, at(1s)), 2);
    limiter.configure(limit(1, 3));
    EXPECT_EQ(admitted_of(limiter, client, 5, at(1s)), 1) << "only the larger burst is new";
    RateLimitOptions other = limit(1, 3);
    other.ipv4_prefix = 24;
    limiter.configure(other);
    EXPECT_EQ(admitted_of(limiter, client, 5, at(1s)), 3) << "other prefixes: every bucket anew";
}

TEST(RateLimiter, AFloodOfNewSourcesNeitherGrowsTheTableNorEvictsABusyClient) {
    RateLimiter limiter;
    limiter.configure(limit(1, 10));
    const IpAddress busy = test::v4(192, 168, 1, 20);
    EXPECT_EQ(admitted_of(limiter, busy, 10, at(1s)), 10);  // its bucket is empty now
    // Ten times more sources than the table has buckets, each sending once: every set fills
    // with clients whose buckets are fuller than the busy one's, which therefore stays.
    for (std::uint32_t i = 0; i < 10 * RateLimiter::kClients; ++i) {
        const IpAddress source =
            test::v4(10, static_cast<std::uint8_t>(i >> 16U), static_cast<std::uint8_t>(i >> 8U),
                     static_cast<std::uint8_t>(i));
        EXPECT_TRUE(limiter.admit(source, at(1s))) << "a new source starts with a full bucket";
    }
    EXPECT_FALSE(limiter.admit(busy, at(1s))) << "the busy client kept its empty bucket";
}

TEST(RateLimiter, ReportNamesEachClientOnceWhenItGoesOver) {
    RateLimiter limiter;
    limiter.configure(limit(1, 1));
    const IpAddress client = test::v4(192, 168, 1, 20);
    EXPECT_EQ(admitted_of(limiter, client, 4, at(1s)), 1);
    RateLimiter::Report r = limiter.take_report();
    ASSERT_EQ(r.newly_limited.size(), 1U);
    EXPECT_EQ(r.newly_limited[0].to_text(), "192.168.1.20/32");
    EXPECT_EQ(r.limited_queries, 3U);
    EXPECT_FALSE(limiter.admit(client, at(1s)));
    r = limiter.take_report();
    EXPECT_TRUE(r.newly_limited.empty()) << "still over: not named again";
    EXPECT_EQ(r.limited_queries, 1U);
    EXPECT_TRUE(limiter.admit(client, at(3s)));
    EXPECT_FALSE(limiter.admit(client, at(3s)));
    EXPECT_EQ(limiter.take_report().newly_limited.size(), 1U) << "over again after a pause";
}

TEST(RateLimiter, ReportNamesAtMostAFewClientsAndCountsTheRest) {
    RateLimiter limiter;
    limiter.configure(limit(1, 1));
    for (std::uint8_t i = 0; i < 40; ++i) {
        (void)limiter.admit(test::v4(192, 168, 2, i), at(1s));
        (void)limiter.admit(test::v4(192, 168, 2, i), at(1s));
    }
    const RateLimiter::Report r = limiter.take_report();
    EXPECT_EQ(r.newly_limited.size(), RateLimiter::kReportedClients);
    EXPECT_EQ(r.more_clients, 40 - RateLimiter::kReportedClients);
    EXPECT_EQ(r.limited_queries, 40U);
}

// ---- the engine
// ----------------------------------------------------------------------------------

/// A harness whose engine limits 192.168.1.50 to two queries at once.
struct Limited {
    explicit Limited(RateLimitAction action) {
        RateLimitOptions o = limit(1, 2);
        o.action = action;
        limiter.configure(o);
        h.options.rate_limiter = &limiter;
        h.options.clock = &h.clock();
        h.clock().advance(10s);
    }
    /// Two admitted queries, then the one under test.
    Decision third(Client from) {
        for (int i = 0; i < 2; ++i) {
            EXPECT_EQ(h.decide({.qname = "localhost"}, from).outcome, Outcome::local);
        }
        return h.decide({.id = 0x4242, .qname = "Www.Example.com"}, from);
    }
    RateLimiter limiter;
    Harness h;
};

TEST(EngineRateLimit, DropSendsNothingAndCounts) {
    Limited l(RateLimitAction::drop);
    const Decision d = l.third(l.h.client);
    EXPECT_EQ(d.action, Action::drop);
    EXPECT_EQ(d.outcome, Outcome::rate_limited);
    EXPECT_EQ(l.h.engine().stats().get(Outcome::rate_limited), 1U);
}

TEST(EngineRateLimit, RefusedEchoesTheQuestion) {
    Limited l(RateLimitAction::refused);
    const Decision d = l.third(l.h.client);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::rate_limited);
    const Answer a = l.h.answer();
    EXPECT_EQ(a.header.id, 0x4242);
    EXPECT_EQ(a.rcode, kRefused);
    EXPECT_EQ(a.qname, "Www.Example.com.");
    EXPECT_FALSE(a.header.tc());
    EXPECT_TRUE(a.records.empty());
}

TEST(EngineRateLimit, TruncateSendsAnEmptyAnswerWithTcOverUdp) {
    Limited l(RateLimitAction::truncate);
    const Decision d = l.third(l.h.client);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::rate_limited);
    const Answer a = l.h.answer();
    EXPECT_EQ(a.rcode, 0U);
    EXPECT_TRUE(a.header.tc()) << "a real client retries over TCP";
    EXPECT_TRUE(a.records.empty());
}

TEST(EngineRateLimit, TruncateLeavesStreamsUnlimited) {
    Limited l(RateLimitAction::truncate);
    const Client udp = l.h.client;
    EXPECT_EQ(l.third(udp).outcome, Outcome::rate_limited);
    // The retry over TCP that the TC asks for is answered: a stream's source is real.
    const Client tcp = test::client_at(udp.address, Transport::tcp);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(l.h.decide({.qname = "localhost"}, tcp).outcome, Outcome::local);
    }
    EXPECT_EQ(l.h.decide({.qname = "localhost"}, udp).outcome, Outcome::rate_limited)
        << "and used no tokens";
}

TEST(EngineRateLimit, DropAndRefusedLimitStreamsToo) {
    Limited l(RateLimitAction::refused);
    const Decision d = l.third(test::client_at(test::v4(192, 168, 1, 50), Transport::tcp));
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::rate_limited);
    EXPECT_EQ(l.h.answer().rcode, kRefused);
}

TEST(EngineRateLimit, ComesBeforeAccessControlAndSparesOtherClients) {
    Limited l(RateLimitAction::drop);
    l.h.options.allowed_clients = {test::cidr(test::v4(192, 168, 1, 0), 24)};
    const Client outsider = test::client_at(test::v4(203, 0, 113, 9));
    EXPECT_EQ(l.h.decide({.qname = "localhost"}, outsider).outcome, Outcome::refused);
    EXPECT_EQ(l.h.decide({.qname = "localhost"}, outsider).outcome, Outcome::refused);
    EXPECT_EQ(l.h.decide({.qname = "localhost"}, outsider).outcome, Outcome::rate_limited)
        << "a flood from outside costs only its drop";
    EXPECT_EQ(l.h.decide({.qname = "localhost"}).outcome, Outcome::local);
}

TEST(EngineRateLimit, WithoutALimiterNothingIsLimited) {
    Harness h;
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(h.decide({.qname = "localhost"}).outcome, Outcome::local);
    }
}

// ---- ANY (RFC 8482)
// ------------------------------------------------------------------------------

TEST(EngineMinimalAny, AnyOverUdpGetsOneHinfoRecord) {
    Harness h;
    const Decision d = h.decide({.qname = "example.com", .qtype = wire::RrType::any});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::local);
    const Answer a = h.answer();
    ASSERT_EQ(a.answers().size(), 1U);
    const test::ReadRecord& hinfo = *a.answers()[0];
    EXPECT_EQ(hinfo.type, wire::RrType::hinfo);
    EXPECT_EQ(hinfo.owner, "example.com.");
    EXPECT_EQ(hinfo.ttl, 3600U);
    const std::vector<std::uint8_t> expected{7, 'R', 'F', 'C', '8', '4', '8', '2', 0};
    EXPECT_EQ(hinfo.rdata, expected);
}

TEST(EngineMinimalAny, AnyOverTcpIsForwarded) {
    Harness h;
    const Decision d = h.decide({.qname = "example.com", .qtype = wire::RrType::any},
                                test::client_at(test::v4(192, 168, 1, 50), Transport::tcp));
    EXPECT_EQ(d.action, Action::forward);
}

TEST(EngineMinimalAny, TurnedOffAnyIsForwarded) {
    Harness h;
    h.options.minimal_any = false;
    const Decision d = h.decide({.qname = "example.com", .qtype = wire::RrType::any});
    EXPECT_EQ(d.action, Action::forward);
}

TEST(EngineMinimalAny, ABlockedNameIsStillBlocked) {
    Harness h;
    h.block("ads.example\n");
    const Decision d = h.decide({.qname = "ads.example", .qtype = wire::RrType::any});
    EXPECT_EQ(d.outcome, Outcome::blocked);
}

}  // namespace
}  // namespace moat::engine
