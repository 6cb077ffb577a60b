// A cached answer served ahead of the blocklist (Cache::lookup_if_passed): only for the snapshot
// that passed the name, only where that pass is the client's whole verdict. A new list that
// blocks a cached name blocks it at once; a group with lists of its own, a pause, an allow rule,
// AAAA filtering and a minimal ANY each keep their own answer however the cache got its entry.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/pauses.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {
namespace {

using test::group;
using test::Harness;
using test::QuerySpec;
using test::ReplySpec;
using wire::RrType;

constexpr std::uint32_t kAllowList = 2;  // engine_fixtures: snapshot_of() list ids

ReplySpec one_a(const char* owner) { return {.records = {test::a_rr(owner, {198, 51, 100, 7})}}; }

/// Forwards `q` and completes it with `reply`: the answer is cached.
void cache_answer(Harness& h, const QuerySpec& q, const ReplySpec& reply,
                  std::optional<Client> from = {}) {
    ASSERT_EQ(h.decide(q, from).outcome, Outcome::pending);
    ASSERT_EQ(h.complete(reply).outcome, Outcome::forwarded);
}

TEST(CachePass, ANameANewListBlocksIsBlockedThoughItsAnswerIsCached) {
    Harness h;
    h.block("other.example\n");
    cache_answer(h, {.qname = "www.example"}, one_a("www.example"));
    for (int i = 0; i < 3; ++i) {  // the first hit notes the pass, the next are served ahead
        const Decision d = h.decide({.qname = "www.example"});
        EXPECT_EQ(d.outcome, Outcome::cached) << i;
        EXPECT_EQ(d.verdict.action, filter::Action::none) << i;
    }
    h.block("www.example\n");
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::blocked);
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::blocked) << "and stays so";
    h.block("other.example\n");
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::cached)
        << "unblocked again: the entry was kept all along";
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::cached);
}

// The cache's counters, whichever way a lookup went: a name it holds counts a hit, one it does
// not (told by the prefetch, or by the lookup) a miss; a name answered before the cache, none.
TEST(CachePass, EveryQueryThatReachesTheCacheCountsOneHitOrOneMiss) {
    Harness h;
    h.block("ads.example\n");
    cache_answer(h, {.qname = "www.example"}, one_a("www.example"));
    ASSERT_NE(h.cache(), nullptr);
    EXPECT_EQ(h.cache()->stats().misses, 1U);
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::blocked);
    EXPECT_EQ(h.decide({.qname = "new.example"}).outcome, Outcome::pending);
    h.clock().advance(std::chrono::seconds{300});  // the entry expires: found, and a miss
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::pending);
    const cache::Stats stats = h.cache()->stats();
    EXPECT_EQ(stats.hits, 2U);
    EXPECT_EQ(stats.misses, 3U) << "the first query, new.example and the expired entry";
}

TEST(CachePass, AGroupsOwnListsDoNotVouchForTheDefaultGroup) {
    Harness h;
    h.block("ads.example\n");
    GroupOptions kids = group("kids", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    kids.every_list = false;
    kids.lists = {kAllowList};  // the (absent) allowlist only: nothing blocks for kids
    h.options.groups = {kids};
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    cache_answer(h, {.qname = "ads.example"}, one_a("ads.example"), kid);
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::blocked)
        << "the same cache entry, but every list counts for the default group";
}

TEST(CachePass, APausedGroupsAnswersNoteNoPass) {
    Harness h;
    h.block("ads.example\n");
    Pauses pauses;
    h.options.pauses = &pauses;
    h.options.clock = &h.clock();
    h.clock().advance(std::chrono::seconds{10});
    pauses.pause("", h.clock().now() + std::chrono::minutes{5});
    cache_answer(h, {.qname = "ads.example"}, one_a("ads.example"));
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::cached);
    pauses.resume("");
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::blocked);
}

TEST(CachePass, AnAllowedNameKeepsItsAllowRuleOnEveryHit) {
    Harness h;
    h.block("||example.com^\n", "www.example.com\n");
    cache_answer(h, {.qname = "www.example.com"}, one_a("www.example.com"));
    for (int i = 0; i < 3; ++i) {
        const Decision d = h.decide({.qname = "www.example.com"});
        ASSERT_EQ(d.outcome, Outcome::cached) << i;
        EXPECT_EQ(d.verdict.action, filter::Action::allowed) << i;
        EXPECT_EQ(d.verdict.line, 1U) << i;
    }
}

TEST(CachePass, AaaaFilteringAndMinimalAnyAnswerBeforeAPassedEntry) {
    Harness h;
    h.options.minimal_any = true;
    GroupOptions v4_only = group("v4-only", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    v4_only.filter_aaaa = true;  // every list counts, and the same cache partition
    h.options.groups = {v4_only};
    const Client v4_client = test::client_at(test::v4(192, 168, 1, 70));
    ReplySpec aaaa;
    aaaa.records.push_back({wire::Section::answer, "www.example", RrType::aaaa, 300,
                            std::vector<std::uint8_t>(16, 0x20)});
    cache_answer(h, {.qname = "www.example", .qtype = RrType::aaaa}, aaaa);
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::aaaa}).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::aaaa}).outcome, Outcome::cached);
    const Decision filtered = h.decide({.qname = "www.example", .qtype = RrType::aaaa}, v4_client);
    EXPECT_EQ(filtered.outcome, Outcome::local);
    EXPECT_TRUE(h.answer().answers().empty());

    ReplySpec any;
    any.records.push_back(test::a_rr("www.example", {198, 51, 100, 7}));
    const Client tcp_client = test::client_at(test::v4(127, 0, 0, 1), Transport::tcp);
    cache_answer(h, {.qname = "www.example", .qtype = RrType::any}, any, tcp_client);
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::any}, tcp_client).outcome,
              Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::any}, tcp_client).outcome,
              Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::any}).outcome, Outcome::local)
        << "over UDP an ANY query gets the minimal answer (RFC 8482), cached entry or not";
}

}  // namespace
}  // namespace moat::engine
