// Prefetch: a cached answer asked for in the last tenth of its lifetime is served at once and
// also asks for its refresh (Decision::refresh with the miss's upstream query in Pending);
// Engine::refresh() stores the upstream's new answer, unless complete() would have blocked it.
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

TEST(EnginePrefetch, ARefreshThatCnameInspectionWouldBlockIsNotStored) {
    Harness h;
    cache_one(h, "metrics.shop.example", 100);
    h.block("||tracker.test^\n");  // the list gains the tracker after the first answer
    h.clock().advance(seconds(95));
    ASSERT_TRUE(h.decide({.qname = "metrics.shop.example"}).refresh);
    ReplySpec cloaked;
    cloaked.records.push_back({wire::Section::answer, "metrics.shop.example", RrType::cname, 300,
                               wire::encode::name(test::name("shop.tracker.test"))});
    cloaked.records.push_back(test::a_rr("shop.tracker.test", {198, 51, 100, 9}, 300));
    refresh_with(h, cloaked);
    h.clock().advance(seconds(5));
    // The old entry expired and no cloaked one took its place: the query goes upstream again,
    // where complete() blocks it.
    ASSERT_EQ(h.decide({.qname = "metrics.shop.example"}).action, Action::forward);
    EXPECT_EQ(h.complete(cloaked).outcome, Outcome::blocked);
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
    h.clock().advance(seconds(5));
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

TEST(EnginePrefetch, TheDecisionStaysFourWords) {
    // The refresh flag sits in padding: a decision is returned by value on every query.
    EXPECT_EQ(sizeof(Decision), 32U);
}

}  // namespace
}  // namespace moat::engine
