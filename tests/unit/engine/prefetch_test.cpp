// Refreshes. Prefetch: a cached answer asked for in the last tenth of its lifetime is served at
// once and also asks for its refresh (Decision::refresh with the miss's upstream query in
// Pending). Optimistic answers (cache.optimistic): an expired one is served at once, stale, and
// asks too. Engine::refresh() stores the upstream's new answer, unless complete() would have
// blocked it or the cache cannot keep it; then the entry goes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/stats.hpp"

namespace moat::engine {
namespace {

using std::chrono::seconds;
using test::Harness;
using test::ReplySpec;
using wire::RrType;

ReplySpec one_a(std::string owner, std::uint32_t ttl, std::uint8_t last_octet) {
    ReplySpec r;
    r.records.push_back(test::a_rr(std::move(owner), {93, 184, 216, last_octet}, ttl));
    return r;
}

/// Forwards a query for `qname` and completes it with one A record of `ttl`; returns the
/// upstream query the miss sent.
std::vector<std::uint8_t> cache_one(Harness& h, const std::string& qname, std::uint32_t ttl) {
    EXPECT_EQ(h.decide({.qname = qname}).action, Action::forward);
    std::vector<std::uint8_t> upstream_query = h.pending.upstream_query;
    EXPECT_EQ(h.complete(one_a(qname, ttl, 1)).outcome, Outcome::forwarded);
    return upstream_query;
}

/// The upstream's `reply` to the refresh the last decision asked for.
void refresh_with(Harness& h, const ReplySpec& reply) {
    h.engine().refresh(h.pending, test::make_reply(h.pending.upstream_query, reply));
}

TEST(EnginePrefetch, AHitInTheLastTenthIsServedAndAsksTheMissesUpstreamQuery) {
    Harness h;
    const std::vector<std::uint8_t> miss_query = cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(50));
    Decision d = h.decide({.id = 7, .qname = "www.example.com"});
    EXPECT_EQ(d.outcome, Outcome::cached);
    EXPECT_FALSE(d.refresh);

    h.clock().advance(seconds(41));  // 9 s of 100 left
    d = h.decide({.id = 8, .qname = "WWW.Example.com"});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::cached);
    EXPECT_TRUE(d.refresh);
    const test::Answer a = h.answer();
    EXPECT_EQ(a.header.id, 8);
    EXPECT_EQ(a.qname, "WWW.Example.com.");
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 9U) << "the client gets the cached answer at once";
    EXPECT_EQ(h.pending.upstream_query, miss_query);
    EXPECT_TRUE(h.pending.key.echo_name().empty()) << "no view into the reused query buffer";

    d = h.decide({.id = 9, .qname = "www.example.com"});
    EXPECT_EQ(d.outcome, Outcome::cached);
    EXPECT_FALSE(d.refresh) << "one refresh per stored answer";
    EXPECT_EQ(h.engine().stats().get(Outcome::cached), 3U);
    EXPECT_EQ(h.engine().stats().get(Outcome::forwarded), 1U);
}

TEST(EnginePrefetch, TheRefreshedAnswerReplacesTheEntryBeforeItExpires) {
    Harness h;
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(95));
    ASSERT_TRUE(h.decide({.qname = "www.example.com"}).refresh);
    refresh_with(h, one_a("www.example.com", 300, 2));
    EXPECT_EQ(h.engine().stats().get(Outcome::forwarded), 1U) << "a refresh is no client's query";

    h.clock().advance(seconds(10));  // past the first answer's expiry
    const Decision d = h.decide({.qname = "www.example.com"});
    ASSERT_EQ(d.outcome, Outcome::cached);
    const test::Answer a = h.answer();
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 290U);
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 2)) << "the refreshed address";
}

TEST(EnginePrefetch, WithoutItsRefreshTheEntryExpiresAndTheNextQueryGoesUpstream) {
    Harness h;
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(95));
    ASSERT_TRUE(h.decide({.qname = "www.example.com"}).refresh);
    h.clock().advance(seconds(5));
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

/// Caches metrics.shop.example, blocks the tracker its next answer CNAMEs into, and asks for
/// the name `age` later, which must ask for a refresh: the cloaked refresh is not stored, and
/// the old entry goes too, so the next query goes upstream, where complete() blocks it.
void expect_a_cloaked_refresh_leaves_no_entry(Harness& h, seconds age) {
    cache_one(h, "metrics.shop.example", 100);
    h.block("||tracker.test^\n");  // the list gains the tracker after the first answer
    h.clock().advance(age);
    ASSERT_TRUE(h.decide({.qname = "metrics.shop.example"}).refresh);
    ReplySpec cloaked;
    cloaked.records.push_back({wire::Section::answer, "metrics.shop.example", RrType::cname, 300,
                               wire::encode::name(test::name("shop.tracker.test"))});
    cloaked.records.push_back(test::a_rr("shop.tracker.test", {198, 51, 100, 9}, 300));
    refresh_with(h, cloaked);
    ASSERT_EQ(h.decide({.qname = "metrics.shop.example"}).action, Action::forward);
    EXPECT_EQ(h.complete(cloaked).outcome, Outcome::blocked);
}

TEST(EnginePrefetch, ARefreshThatCnameInspectionWouldBlockIsNotStored) {
    Harness h;
    expect_a_cloaked_refresh_leaves_no_entry(h, seconds(95));
}

TEST(EnginePrefetch, ARefreshThatRebindingProtectionWouldEmptyIsNotStored) {
    Harness h;
    h.options.rebind_protection = true;
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(95));
    ASSERT_TRUE(h.decide({.qname = "www.example.com"}).refresh);
    ReplySpec internal;
    internal.records.push_back(test::a_rr("www.example.com", {192, 168, 1, 1}, 300));
    refresh_with(h, internal);
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

TEST(EnginePrefetch, OffAHitNeverAsks) {
    Harness h;
    h.cache_options.prefetch = false;
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(99));
    const Decision d = h.decide({.qname = "www.example.com"});
    EXPECT_EQ(d.outcome, Outcome::cached);
    EXPECT_FALSE(d.refresh);
}

TEST(EnginePrefetch, ARefreshTheCacheCannotKeepDropsTheEntryButASERVFAILLeavesIt) {
    Harness h;
    cache_one(h, "www.example.com", 100);
    cache_one(h, "mail.example.com", 100);
    h.clock().advance(seconds(95));
    ASSERT_TRUE(h.decide({.qname = "www.example.com"}).refresh);
    refresh_with(h, one_a("www.example.com", 0, 2));  // the authority now says: do not cache
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);

    ASSERT_TRUE(h.decide({.qname = "mail.example.com"}).refresh);
    ReplySpec servfail;
    servfail.rcode = wire::Rcode::servfail;
    refresh_with(h, servfail);
    EXPECT_EQ(h.decide({.qname = "mail.example.com"}).outcome, Outcome::cached);
}

constexpr std::uint16_t kEdeStale = 3;

/// Makes `h`'s cache answer expired entries optimistically, with stale answers of 30 s.
void make_optimistic(Harness& h) {
    h.cache_options.optimistic = true;
    h.cache_options.stale_ttl = 30;
}

TEST(EngineOptimistic, AnExpiredAnswerIsServedStaleAtOnceAndAsksTheMissesUpstreamQuery) {
    Harness h;
    make_optimistic(h);
    const std::vector<std::uint8_t> miss_query = cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(300));
    const Decision d = h.decide({.id = 8, .qname = "Www.Example.com", .edns = true});
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::stale);
    EXPECT_EQ(d.ede, kEdeStale);
    EXPECT_TRUE(d.refresh);
    const test::Answer a = h.answer();
    EXPECT_EQ(a.header.id, 8);
    EXPECT_EQ(a.qname, "Www.Example.com.");
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].ttl, 30U) << "stale_ttl";
    EXPECT_EQ(a.records[0].rdata, test::bytes4(93, 184, 216, 1));
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{kEdeStale});
    EXPECT_EQ(h.pending.upstream_query, miss_query);

    refresh_with(h, one_a("www.example.com", 300, 2));
    const Decision again = h.decide({.qname = "www.example.com"});
    EXPECT_EQ(again.outcome, Outcome::cached);
    EXPECT_FALSE(again.refresh);
    EXPECT_EQ(h.answer().records.at(0).rdata, test::bytes4(93, 184, 216, 2));
    EXPECT_EQ(h.engine().stats().get(Outcome::stale), 1U);
    EXPECT_EQ(h.engine().stats().get(Outcome::forwarded), 1U) << "a refresh is no client's query";
}

TEST(EngineOptimistic, AfterAFailedRefreshTheStaleAnswerStaysAndIsAskedForAgainLater) {
    Harness h;
    make_optimistic(h);
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(300));
    ASSERT_TRUE(h.decide({.qname = "www.example.com"}).refresh);
    ReplySpec servfail;
    servfail.rcode = wire::Rcode::servfail;
    refresh_with(h, servfail);
    h.clock().advance(seconds(10));
    Decision d = h.decide({.qname = "www.example.com"});
    EXPECT_EQ(d.outcome, Outcome::stale);
    EXPECT_FALSE(d.refresh) << "not before stale_ttl has passed since the last ask";
    h.clock().advance(seconds(20));
    d = h.decide({.qname = "www.example.com"});
    EXPECT_EQ(d.outcome, Outcome::stale);
    EXPECT_TRUE(d.refresh);
}

TEST(EngineOptimistic, ARefreshThatCnameInspectionBlocksLeavesNoStaleAnswer) {
    Harness h;
    make_optimistic(h);
    expect_a_cloaked_refresh_leaves_no_entry(h, seconds(300));
}

TEST(EngineOptimistic, OffAnExpiredAnswerIsAMiss) {
    Harness h;
    ASSERT_FALSE(h.cache_options.optimistic);
    h.cache_options.serve_stale = true;  // kept for failures, not served before them
    cache_one(h, "www.example.com", 100);
    h.clock().advance(seconds(101));
    EXPECT_EQ(h.decide({.qname = "www.example.com"}).action, Action::forward);
}

TEST(EnginePrefetch, TheDecisionStaysFourWords) {
    // The refresh flag sits in padding: a decision is returned by value on every query.
    EXPECT_EQ(sizeof(Decision), 32U);
}

}  // namespace
}  // namespace moat::engine
