// CNAME inspection: a forwarded answer whose CNAME chain leads into a blocked name gets the
// blocked answer (and is not cached); an allowlisted query name, the option off, or a chain of
// unblocked names pass through.
#include <gtest/gtest.h>

#include "engine_fixtures.hpp"

namespace moat::engine {
namespace {

using test::Answer;
using test::Harness;
using test::ReplySpec;
using wire::RrType;

/// shop.example CNAME metrics.tracker.test CNAME edge.cdn.test A 198.51.100.9
ReplySpec cloaked_reply() {
    ReplySpec r;
    r.records.push_back({wire::Section::answer, "metrics.shop.example", RrType::cname, 300,
                         wire::encode::name(test::name("shop.tracker.test"))});
    r.records.push_back({wire::Section::answer, "shop.tracker.test", RrType::cname, 300,
                         wire::encode::name(test::name("edge.cdn.test"))});
    r.records.push_back(test::a_rr("edge.cdn.test", {198, 51, 100, 9}, 60));
    return r;
}

Decision ask_cloaked(Harness& h, bool edns = true) {
    const Decision d = h.decide({.qname = "Metrics.Shop.Example", .edns = edns});
    EXPECT_EQ(d.action, Action::forward);
    return h.complete(cloaked_reply());
}

TEST(EngineCnameInspection, ChainIntoABlockedNameIsBlocked) {
    Harness h;
    h.block("||tracker.test^\n");
    const Decision d = ask_cloaked(h);
    ASSERT_EQ(d.action, Action::respond);
    EXPECT_EQ(d.outcome, Outcome::blocked);
    EXPECT_EQ(d.verdict.action, filter::Action::blocked);
    EXPECT_EQ(d.verdict.line, 1U);
    const Answer a = h.answer();
    EXPECT_EQ(a.qname, "Metrics.Shop.Example.");
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].owner, "Metrics.Shop.Example.");
    EXPECT_EQ(a.records[0].rdata, test::bytes4(0, 0, 0, 0));
    EXPECT_EQ(a.ede, std::vector<std::uint16_t>{15});
    EXPECT_EQ(a.ede_text, std::vector<std::string>{"block"}) << "the list of the CNAME target";
    EXPECT_EQ(h.engine().stats().get(Outcome::blocked), 1U);
}

TEST(EngineCnameInspection, BlockedChainIsNotCached) {
    Harness h;
    h.block("||tracker.test^\n");
    ASSERT_EQ(ask_cloaked(h).outcome, Outcome::blocked);
    // Asked again: not a cache hit (a hit would skip the inspection), forwarded again.
    EXPECT_EQ(h.decide({.qname = "metrics.shop.example"}).action, Action::forward);
}

TEST(EngineCnameInspection, TheLastTargetCountsToo) {
    Harness h;
    h.block("||cdn.test^\n");
    EXPECT_EQ(ask_cloaked(h).outcome, Outcome::blocked);
}

TEST(EngineCnameInspection, UnblockedChainIsForwardedAndCached) {
    Harness h;
    h.block("||other.test^\n");
    const Decision d = ask_cloaked(h);
    EXPECT_EQ(d.outcome, Outcome::forwarded);
    EXPECT_EQ(h.answer().records.size(), 3U);
    EXPECT_EQ(h.decide({.qname = "metrics.shop.example"}).outcome, Outcome::cached);
}

TEST(EngineCnameInspection, AnAllowlistedQueryNameIsNotBlockedByItsTargets) {
    Harness h;
    h.block("||tracker.test^\n", "shop.example\n*.shop.example\n");
    const Decision d = ask_cloaked(h);
    EXPECT_EQ(d.outcome, Outcome::forwarded);
    EXPECT_EQ(h.answer().records.size(), 3U);
}

TEST(EngineCnameInspection, OffPassesTheChainThrough) {
    Harness h;
    h.options.blocking.cname_inspection = false;
    h.block("||tracker.test^\n");
    EXPECT_EQ(ask_cloaked(h).outcome, Outcome::forwarded);
}

TEST(EngineCnameInspection, FollowsTheBlockingMode) {
    Harness h;
    h.options.blocking.mode = BlockingMode::nxdomain;
    h.block("||tracker.test^\n");
    const Decision d = ask_cloaked(h, false);
    EXPECT_EQ(d.outcome, Outcome::blocked);
    const Answer a = h.answer();
    EXPECT_EQ(a.rcode, static_cast<unsigned>(wire::Rcode::nxdomain));
    EXPECT_TRUE(a.records.empty());
    EXPECT_FALSE(a.has_opt) << "no OPT for a query without one";
}

}  // namespace
}  // namespace moat::engine
