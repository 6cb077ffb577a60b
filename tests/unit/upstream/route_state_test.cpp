// RouteState: the order of servers for a query (failover: config order; fastest: smoothed RTT,
// unmeasured first, a probe of another server now and then), servers resting after repeated
// failures, and the history kept across a reconfiguration. Also RandomSource's ranges.
#include "route_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <set>
#include <vector>

#include "random_source.hpp"
#include "upstream_fixtures.hpp"

namespace moat::upstream {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using Order = std::pmr::vector<std::size_t>;
using test::server_v4;

/// Calls of order() in the statistical tests: about 100 probes expected at 1 in 20.
constexpr int kCalls = 2000;

Route three_servers() {
    return Route{{server_v4(192, 0, 2, 1), server_v4(192, 0, 2, 2), server_v4(192, 0, 2, 3)}};
}

void fail_times(RouteState& r, std::size_t server, unsigned times, Clock::time_point now,
                microseconds penalty = {}) {
    for (unsigned i = 0; i < times; ++i) {
        r.failed(server, now, penalty);
    }
}

class RouteStateTest : public ::testing::Test {
protected:
    RandomSource random_;
    Clock::time_point now_ = Clock::now();

    Order failover(const RouteState& r, Clock::time_point at) {
        return r.order(Strategy::failover, random_, at);
    }
    Order failover(const RouteState& r) { return failover(r, now_); }

    /// How often each order came out of `kCalls` calls under `fastest`.
    std::map<Order, int> fastest_orders(const RouteState& r) {
        std::map<Order, int> seen;
        for (int i = 0; i < kCalls; ++i) {
            ++seen[r.order(Strategy::fastest, random_, now_)];
        }
        return seen;
    }
    /// How often each server came first out of `kCalls` calls under `fastest`.
    std::map<std::size_t, int> fastest_first(const RouteState& r) {
        std::map<std::size_t, int> first;
        for (int i = 0; i < kCalls; ++i) {
            const Order o = r.order(Strategy::fastest, random_, now_);
            EXPECT_EQ(o.size(), r.servers().size());
            if (!o.empty()) {
                ++first[o[0]];
            }
        }
        return first;
    }
};

// ---- servers ---------------------------------------------------------------------------------

TEST_F(RouteStateTest, ServersKeepConfigOrderAndStartUnmeasured) {
    const RouteState r(three_servers(), nullptr);
    ASSERT_EQ(r.servers().size(), 3U);
    EXPECT_EQ(r.servers()[0].address, server_v4(192, 0, 2, 1));
    EXPECT_EQ(r.servers()[2].address, server_v4(192, 0, 2, 3));
    for (const ServerState& s : r.servers()) {
        EXPECT_EQ(s.srtt, microseconds{0});
        EXPECT_EQ(s.consecutive_failures, 0U);
    }
}

TEST_F(RouteStateTest, ServerTextIsAddressAndPort) {
    IpAddress v6{{}, true};
    v6.bytes[0] = 0x20;
    v6.bytes[1] = 0x01;
    v6.bytes[2] = 0x0d;
    v6.bytes[3] = 0xb8;
    v6.bytes[15] = 0x01;
    const RouteState r(Route{{server_v4(192, 0, 2, 1), server_v4(10, 0, 0, 1, 5353), {v6, 53}}},
                       nullptr);
    EXPECT_EQ(r.servers()[0].text, "192.0.2.1:53");
    EXPECT_EQ(r.servers()[1].text, "10.0.0.1:5353");
    EXPECT_EQ(r.servers()[2].text, "[2001:db8::1]:53");
}

TEST_F(RouteStateTest, EmptyRouteHasAnEmptyOrder) {
    const RouteState r(Route{}, nullptr);
    EXPECT_TRUE(r.servers().empty());
    EXPECT_TRUE(failover(r).empty());
    EXPECT_TRUE(r.order(Strategy::fastest, random_, now_).empty());
}

// ---- failover ----------------------------------------------------------------------------------

TEST_F(RouteStateTest, FailoverIsConfigOrder) {
    RouteState r(three_servers(), nullptr);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(failover(r), (Order{0, 1, 2}));
    }
    // RTTs do not matter under failover.
    r.succeeded(0, microseconds{90'000});
    r.succeeded(2, microseconds{1'000});
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(failover(r), (Order{0, 1, 2}));
    }
}

TEST_F(RouteStateTest, ServerWithThreeFailuresInARowGoesLast) {
    RouteState r(three_servers(), nullptr);
    fail_times(r, 0, RouteState::kFailuresToRest - 1, now_);
    EXPECT_EQ(failover(r), (Order{0, 1, 2})) << "two failures are not enough";
    r.failed(0, now_, {});
    EXPECT_EQ(r.servers()[0].consecutive_failures, RouteState::kFailuresToRest);
    EXPECT_EQ(failover(r), (Order{1, 2, 0}));
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime / 2), (Order{1, 2, 0}));
}

TEST_F(RouteStateTest, RestingServerComesBackAfterRestTime) {
    RouteState r(three_servers(), nullptr);
    fail_times(r, 0, RouteState::kFailuresToRest, now_);
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime - milliseconds{1}), (Order{1, 2, 0}));
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime), (Order{0, 1, 2}));
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime * 3), (Order{0, 1, 2}));
}

TEST_F(RouteStateTest, RestTimeCountsFromTheLastFailure) {
    RouteState r(three_servers(), nullptr);
    fail_times(r, 1, RouteState::kFailuresToRest, now_);
    const auto later = now_ + RouteState::kRestTime - milliseconds{100};
    r.failed(1, later, {});  // failed again just before its rest ended
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime), (Order{0, 2, 1}));
    EXPECT_EQ(failover(r, later + RouteState::kRestTime), (Order{0, 1, 2}));
}

TEST_F(RouteStateTest, RestingServersGoLastInConfigOrder) {
    RouteState r(three_servers(), nullptr);
    fail_times(r, 1, RouteState::kFailuresToRest, now_);
    fail_times(r, 0, RouteState::kFailuresToRest, now_);
    EXPECT_EQ(failover(r), (Order{2, 0, 1}));
    fail_times(r, 2, RouteState::kFailuresToRest, now_);
    EXPECT_EQ(failover(r), (Order{0, 1, 2})) << "all resting: still every server, config order";
}

TEST_F(RouteStateTest, SuccessResetsFailures) {
    RouteState r(three_servers(), nullptr);
    fail_times(r, 0, RouteState::kFailuresToRest, now_);
    ASSERT_EQ(failover(r), (Order{1, 2, 0}));
    r.succeeded(0, microseconds{2'000});
    EXPECT_EQ(r.servers()[0].consecutive_failures, 0U);
    EXPECT_EQ(failover(r), (Order{0, 1, 2}));

    // Failures must be in a row: two, a success, two more do not rest the server.
    fail_times(r, 1, 2, now_);
    r.succeeded(1, microseconds{2'000});
    fail_times(r, 1, 2, now_);
    EXPECT_EQ(r.servers()[1].consecutive_failures, 2U);
    EXPECT_EQ(failover(r), (Order{0, 1, 2}));
}

// ---- RTT ----------------------------------------------------------------------------------------

TEST_F(RouteStateTest, FirstRttIsTakenThenSmoothed) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{8'000});
    EXPECT_EQ(r.servers()[0].srtt, microseconds{8'000});
    r.succeeded(0, microseconds{16'000});
    EXPECT_EQ(r.servers()[0].srtt, microseconds{9'000}) << "7/8 old + 1/8 new";
}

TEST_F(RouteStateTest, P90IsTheNearestRankOfTheLast32RoundTrips) {
    RouteState r(three_servers(), nullptr);
    EXPECT_EQ(r.p90_rtt(0, microseconds{7}), microseconds{7}) << "the fallback before any answer";
    for (int i = 1; i <= 10; ++i) {
        r.succeeded(0, microseconds{i * 1'000});
    }
    EXPECT_EQ(r.p90_rtt(0, {}), microseconds{9'000}) << "ceil(0.9 * 10) = 9th of 10";
    for (int i = 0; i < 32; ++i) {
        r.succeeded(0, microseconds{500});  // the old, slow ones leave the window
    }
    EXPECT_EQ(r.p90_rtt(0, {}), microseconds{500});
    r.hedged(0);
    EXPECT_EQ(r.servers()[0].counts.hedged, 1U);
    EXPECT_EQ(r.p90_rtt(1, microseconds{3}), microseconds{3}) << "per server";
}

TEST_F(RouteStateTest, TimeoutPenaltyRaisesSrtt) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{1'000});
    r.failed(0, now_, microseconds{2'000'000});
    EXPECT_EQ(r.servers()[0].srtt, microseconds{2'000'000});
    r.failed(0, now_, microseconds{500});
    EXPECT_EQ(r.servers()[0].srtt, microseconds{2'000'000}) << "a smaller penalty never lowers it";
}

// ---- fastest -----------------------------------------------------------------------------------

TEST_F(RouteStateTest, FastestOrdersBySmoothedRtt) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{30'000});
    r.succeeded(1, microseconds{5'000});
    r.succeeded(2, microseconds{12'000});
    const auto seen = fastest_orders(r);
    ASSERT_FALSE(seen.empty());
    const auto most = std::max_element(
        seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    EXPECT_EQ(most->first, (Order{1, 2, 0}));
    EXPECT_GT(most->second, kCalls * 8 / 10);
}

TEST_F(RouteStateTest, FastestTriesUnmeasuredServersFirst) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{30'000});
    r.succeeded(2, microseconds{5'000});
    const auto first = fastest_first(r);
    EXPECT_GT(first.at(1), kCalls * 8 / 10) << "server 1 was never measured";
    const auto seen = fastest_orders(r);
    EXPECT_GT(seen.at(Order{1, 2, 0}), kCalls * 8 / 10);
}

TEST_F(RouteStateTest, FastestProbesAnotherServerAboutOneInTwenty) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{30'000});
    r.succeeded(1, microseconds{5'000});
    r.succeeded(2, microseconds{12'000});
    auto first = fastest_first(r);
    // 1 in 20 of 2000: 100 probes expected (sd about 10), split between the two others.
    const int probes = kCalls - first.at(1);
    EXPECT_GE(probes, 40) << "the others are hardly ever probed";
    EXPECT_LE(probes, 200) << "the fastest server is not first often enough";
    EXPECT_GE(first[0], 10) << "the slowest server is never probed";
    EXPECT_GE(first[2], 10) << "the middle server is never probed";
}

TEST_F(RouteStateTest, FastestNeverPutsARestingServerFirst) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{30'000});
    r.succeeded(1, microseconds{1'000});
    r.succeeded(2, microseconds{12'000});
    fail_times(r, 1, RouteState::kFailuresToRest, now_);  // the fastest, now resting
    const auto seen = fastest_orders(r);
    for (const auto& [order, count] : seen) {
        ASSERT_EQ(order.size(), 3U);
        EXPECT_EQ(order.back(), 1U) << "a resting server goes last, probe or not";
    }
    EXPECT_GT(seen.at(Order{2, 0, 1}), kCalls * 8 / 10);
}

TEST_F(RouteStateTest, FastestWithOneHealthyServerNeverProbes) {
    RouteState r(three_servers(), nullptr);
    r.succeeded(0, microseconds{30'000});
    fail_times(r, 1, RouteState::kFailuresToRest, now_);
    fail_times(r, 2, RouteState::kFailuresToRest, now_);
    const auto seen = fastest_orders(r);
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen.begin()->first, (Order{0, 1, 2}));
}

TEST_F(RouteStateTest, FastestWithOneServer) {
    const RouteState r(Route{{server_v4(192, 0, 2, 9)}}, nullptr);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(r.order(Strategy::fastest, random_, now_), (Order{0}));
    }
}

// ---- history -----------------------------------------------------------------------------------

TEST_F(RouteStateTest, NewRouteStateKeepsHistoryOfServersThatStay) {
    RouteState old(three_servers(), nullptr);
    old.succeeded(1, microseconds{7'000});
    fail_times(old, 2, RouteState::kFailuresToRest, now_);

    // .2 and .3 stay (in another order), .1 goes, .4 is new, .2 on another port is another server.
    const Route next{{server_v4(192, 0, 2, 3), server_v4(192, 0, 2, 4), server_v4(192, 0, 2, 2),
                      server_v4(192, 0, 2, 2, 5353)}};
    const RouteState r(next, &old);
    ASSERT_EQ(r.servers().size(), 4U);
    EXPECT_EQ(r.servers()[0].address, server_v4(192, 0, 2, 3));
    EXPECT_EQ(r.servers()[0].consecutive_failures, RouteState::kFailuresToRest);
    EXPECT_EQ(r.servers()[1].srtt, microseconds{0});
    EXPECT_EQ(r.servers()[1].consecutive_failures, 0U);
    EXPECT_EQ(r.servers()[2].address, server_v4(192, 0, 2, 2));
    EXPECT_EQ(r.servers()[2].srtt, microseconds{7'000});
    EXPECT_EQ(r.servers()[3].srtt, microseconds{0});
    EXPECT_EQ(r.servers()[3].text, "192.0.2.2:5353");

    EXPECT_EQ(failover(r), (Order{1, 2, 3, 0})) << "the resting server stays resting";
    EXPECT_EQ(failover(r, now_ + RouteState::kRestTime), (Order{0, 1, 2, 3}));
}

TEST_F(RouteStateTest, WithoutPreviousHistoryStartsFresh) {
    RouteState old(three_servers(), nullptr);
    old.succeeded(0, microseconds{7'000});
    const RouteState r(three_servers(), nullptr);
    EXPECT_EQ(r.servers()[0].srtt, microseconds{0});
}

// ---- RandomSource ------------------------------------------------------------------------------

TEST(RandomSource, BelowStaysInRange) {
    RandomSource random;
    std::set<std::size_t> seen;
    for (int i = 0; i < 2000; ++i) {
        const std::size_t v = random.below(7);
        EXPECT_LT(v, 7U);
        seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 7U);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(random.below(1), 0U);
    }
}

TEST(RandomSource, U16VariesAcrossRefills) {
    RandomSource random;
    std::set<std::uint16_t> seen;
    for (int i = 0; i < 1000; ++i) {  // several 512-octet blocks
        seen.insert(random.next_u16());
    }
    EXPECT_GT(seen.size(), 900U);
}

}  // namespace
}  // namespace moat::upstream
