// The in-memory statistics: exact counts per 10-minute bucket that leave after a day, rankings
// whose heavy names survive a flood of distinct ones, a rebuild from the log that gives what
// feeding the same queries live gave, and the privacy levels as the writer applies them.
#include "moat/querylog/rolling_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "moat/querylog/database.hpp"
#include "moat/querylog/log_writer.hpp"
#include "support/temp_dir.hpp"
#include "test_entries.hpp"

namespace moat::querylog {
namespace {

using test::entry;

constexpr std::int64_t kBucket = RollingStats::kBucketUs;
// A bucket boundary, so the arithmetic below reads plainly.
constexpr std::int64_t kT0 = (1'790'000'000'000'000 / kBucket) * kBucket;
constexpr std::int64_t kDay = kBucket * static_cast<std::int64_t>(RollingStats::kBuckets);

TEST(RollingStatsTest, CountsPerBucketAndForgetsAfterADay) {
    RollingStats s;
    s.add(entry(kT0, "a.test", "forwarded"));
    s.add(entry(kT0 + 1, "ads.test", "blocked"));
    s.add(entry(kT0 + kBucket, "a.test", "cached"));
    s.add(entry(kT0 + kBucket + 5, "a.test", "stale"));
    s.add(entry(kT0 + kBucket + 6, "x.test", "servfail"));

    const std::int64_t now = kT0 + kBucket + 10;
    const Counts t = s.totals(now);
    EXPECT_EQ(t.queries, 5U);
    EXPECT_EQ(t.blocked, 1U);
    EXPECT_EQ(t.cached, 2U);
    EXPECT_EQ(t.forwarded, 1U);
    EXPECT_EQ(t.errors, 1U);

    const auto h = s.history(now);
    ASSERT_EQ(h.size(), RollingStats::kBuckets);
    EXPECT_EQ(h.back().start_us, kT0 + kBucket);
    EXPECT_EQ(h.back().counts.queries, 3U);
    EXPECT_EQ(h[h.size() - 2].start_us, kT0);
    EXPECT_EQ(h[h.size() - 2].counts.queries, 2U);
    EXPECT_EQ(h.front().counts.queries, 0U);

    // A day later the first bucket has left the window, the second is the oldest one kept.
    const std::int64_t later = kT0 + kDay + 1;
    EXPECT_EQ(s.totals(later).queries, 3U);
    EXPECT_EQ(s.history(later).front().start_us, kT0 + kBucket);
    EXPECT_EQ(s.history(later).front().counts.queries, 3U);
    // A new query in the bucket that reuses the first one's slot starts it afresh.
    s.add(entry(kT0 + kDay + 2, "b.test", "forwarded"));
    EXPECT_EQ(s.totals(later).queries, 4U);
    EXPECT_EQ(s.top(later, 10).domains.front().name, "a.test");
    // A row rebuilt from the log older than the ring's day is ignored, not counted into a newer
    // bucket.
    s.add(kT0 - 5, "forwarded", "old.test", "", 1);
    EXPECT_EQ(s.totals(later).queries, 4U);
}

TEST(RollingStatsTest, FollowsTheWallClockBackAfterItRanAhead) {
    RollingStats s;
    s.add(entry(kT0, "a.test", "forwarded"));
    // The clock runs three days ahead for a while, then is set right again.
    s.add(entry(kT0 + 3 * kDay + 5 * kBucket, "ahead.test", "forwarded"));
    s.add(entry(kT0 + kBucket, "b.test", "blocked"));
    s.add(entry(kT0 + kBucket + 1, "c.test", "cached"));
    const Counts t = s.totals(kT0 + kBucket + 2);
    EXPECT_EQ(t.queries, 3U) << "queries after the clock came back are counted";
    EXPECT_EQ(t.blocked, 1U);
    EXPECT_EQ(s.top(kT0 + kBucket + 2, 10).domains.size(), 3U);
}

TEST(RollingStatsTest, RanksByCountThenName) {
    RollingStats s;
    for (int i = 0; i < 5; ++i) {
        s.add(entry(kT0 + i, "often.test", "forwarded", IpAddress::v4_of(10, 0, 0, 1)));
    }
    for (int i = 0; i < 3; ++i) {
        s.add(entry(kT0 + kBucket + i, "ads.test", "blocked", IpAddress::v4_of(10, 0, 0, 2)));
        s.add(entry(kT0 + kBucket + i, "b.test", "forwarded", IpAddress::v4_of(10, 0, 0, 2)));
    }
    const auto top = s.top(kT0 + kBucket + 100, 2);
    ASSERT_EQ(top.domains.size(), 2U);
    EXPECT_EQ(top.domains[0], (Ranked{"often.test", 5}));
    EXPECT_EQ(top.domains[1], (Ranked{"ads.test", 3}));  // ties broken by name
    ASSERT_EQ(top.blocked.size(), 1U);
    EXPECT_EQ(top.blocked[0], (Ranked{"ads.test", 3}));
    ASSERT_EQ(top.clients.size(), 2U);
    EXPECT_EQ(top.clients[0], (Ranked{"10.0.0.2", 6}));
    EXPECT_EQ(top.distinct_clients, 2U);
}

TEST(RollingStatsTest, HeavyNamesSurviveAFloodOfDistinctOnes) {
    RollingStats s;
    std::mt19937 rng(7);
    // 20,000 random names (80 times the slots a bucket keeps) interleaved with one name asked
    // 2,000 times and another 500 times: both stay ranked, in order.
    int heavy = 0;
    int medium = 0;
    for (int i = 0; i < 22'500; ++i) {
        const std::int64_t t = kT0 + i;
        if (i % 11 == 0 && heavy < 2000) {
            s.add(entry(t, "heavy.test"));
            ++heavy;
        } else if (i % 41 == 0 && medium < 500) {
            s.add(entry(t, "medium.test"));
            ++medium;
        } else {
            s.add(entry(t, "r" + std::to_string(rng()) + ".flood.test"));
        }
    }
    const auto top = s.top(kT0 + 30'000, 3);
    ASSERT_GE(top.domains.size(), 2U);
    EXPECT_EQ(top.domains[0].name, "heavy.test");
    EXPECT_GE(top.domains[0].count, 2000U);  // space-saving over-counts, never under-counts
    EXPECT_EQ(top.domains[1].name, "medium.test");
    EXPECT_GE(top.domains[1].count, 500U);
    EXPECT_EQ(s.totals(kT0 + 30'000).queries, 22'500U);  // counts stay exact
}

TEST(RollingStatsTest, HeavyNamesSurviveWhileTheLogIsReadBackBesideLiveQueries) {
    // At start the log's last day is read back into older buckets while queries keep coming
    // into the newest: two floods, one per feed, interleaved row by row.
    RollingStats s;
    std::mt19937 rng(3);
    const std::int64_t now = kT0 + 5 * kBucket;
    for (int i = 0; i < 6'000; ++i) {
        const bool heavy = i % 7 == 0;
        s.add(
            entry(now + i, heavy ? "live-heavy.test" : "r" + std::to_string(rng()) + ".live.test"));
        s.add(kT0 + i, "forwarded",
              heavy ? "old-heavy.test" : "r" + std::to_string(rng()) + ".old.test", "192.0.2.1", 1);
    }
    const auto top = s.top(now + 10'000, 2);
    ASSERT_EQ(top.domains.size(), 2U);
    const std::uint64_t heavy_rows = (6'000 + 6) / 7;
    for (const Ranked& r : top.domains) {
        EXPECT_TRUE(r.name == "live-heavy.test" || r.name == "old-heavy.test") << r.name;
        EXPECT_GE(r.count, heavy_rows);
    }
    EXPECT_EQ(s.totals(now + 10'000).queries, 12'000U);
}

std::map<std::string, std::uint64_t> kept_by(const TopCounter& c) {
    std::map<std::string, std::uint64_t> out;
    c.for_each([&](const std::string& key, std::uint64_t n) { out.emplace(key, n); });
    return out;
}

TEST(TopCounterTest, ANewcomerReplacesTheSmallestCount) {
    TopCounter c(4);
    c.add("a", 5);
    c.add("b", 3);
    c.add("c", 1);
    c.add("d", 2);
    c.add("e", 1);  // replaces c (1) and inherits its count
    EXPECT_EQ(kept_by(c),
              (std::map<std::string, std::uint64_t>{{"a", 5}, {"b", 3}, {"d", 2}, {"e", 2}}));
    c.add("d", 10);    // d is no longer the smallest: the next newcomer replaces e
    c.release_heap();  // as when the bucket stops being fed: the heap is built again from counts
    c.add("f", 1);
    EXPECT_EQ(kept_by(c),
              (std::map<std::string, std::uint64_t>{{"a", 5}, {"b", 3}, {"d", 12}, {"f", 3}}));
    c.add("a", 1);
    c.add("a-much-longer-name-than-any-replaced-so-far.example", 4);  // replaces b or f (3)
    const auto kept = kept_by(c);
    EXPECT_EQ(kept.size(), 4U);
    EXPECT_EQ(kept.at("a"), 6U);
    EXPECT_EQ(kept.at("d"), 12U);
    EXPECT_EQ(kept.at("a-much-longer-name-than-any-replaced-so-far.example"), 7U);
    EXPECT_EQ(kept.count("b") + kept.count("f"), 1U);
}

TEST(TopCounterTest, EveryNewcomerInheritsTheSmallestCountKept) {
    // A skewed random stream over 200 keys into 16 slots, the heap dropped and built again now
    // and then as when another bucket is fed in between: before each add, the smallest count
    // kept; after it, a kept key grew by its weight, and a newcomer holds that smallest count
    // plus its weight. Counts never fall below the key's true count, and add up to the stream.
    TopCounter c(16);
    std::mt19937 rng(11);
    std::map<std::string, std::uint64_t> truth;
    std::uint64_t total = 0;
    for (int i = 0; i < 5'000; ++i) {
        const auto draw = static_cast<std::uint32_t>(rng() % 1000);
        const std::string key = "k" + std::to_string(draw * draw / 5'000);  // 0..199, skewed
        const std::uint64_t weight = 1 + rng() % 3;
        const auto before = kept_by(c);
        if (i % 97 == 0) {
            c.release_heap();  // now and then built again from the counts, full or not
        }
        c.add(key, weight);
        const auto after = kept_by(c);
        truth[key] += weight;
        total += weight;
        ASSERT_LE(after.size(), 16U);
        ASSERT_EQ(after.count(key), 1U);
        if (auto was = before.find(key); was != before.end()) {
            ASSERT_EQ(after.at(key), was->second + weight) << "step " << i;
        } else if (before.size() < 16) {
            ASSERT_EQ(after.at(key), weight) << "step " << i;
        } else {
            std::uint64_t smallest = UINT64_MAX;
            for (const auto& [k, n] : before) {
                smallest = std::min(smallest, n);
            }
            ASSERT_EQ(after.at(key), smallest + weight) << "step " << i;
        }
        std::uint64_t sum = 0;
        for (const auto& [k, n] : after) {
            ASSERT_GE(n, truth[k]) << k << " at step " << i;
            sum += n;
        }
        ASSERT_EQ(sum, total) << "step " << i;
    }
}

TEST(TopCounterTest, ACountStopsAtFourBillion) {
    TopCounter c(2);
    c.add("a", UINT64_MAX);
    c.add("a", 5);
    c.add("b", 1);
    c.add("c", 1);  // replaces b, not the saturated a
    EXPECT_EQ(kept_by(c), (std::map<std::string, std::uint64_t>{{"a", UINT32_MAX}, {"c", 2}}));
}

TEST(TopCounterTest, AMovedCounterKeepsCounting) {
    TopCounter moved(2);
    moved.add("a", 2);
    moved.add("b", 1);
    TopCounter c = std::move(moved);
    c.add("c", 1);  // replaces b through the heap the move carried over
    c.add("a", 1);
    EXPECT_EQ(kept_by(c), (std::map<std::string, std::uint64_t>{{"a", 3}, {"c", 2}}));
}

TEST(RollingStatsTest, RebuiltFromTheLogMatchesWhatWasFedLive) {
    moat::test::TempDir dir{"moat-rolling"};
    const auto path = dir.path() / "querylog.db";
    std::vector<Entry> entries;
    std::mt19937 rng(11);
    const std::array<const char*, 5> outcomes = {"forwarded", "cached", "blocked", "local",
                                                 "refused"};
    for (int i = 0; i < 3000; ++i) {
        const std::int64_t t = kT0 + static_cast<std::int64_t>(rng() % 5) * kBucket + i;
        entries.push_back(entry(t, "n" + std::to_string(rng() % 40) + ".test", outcomes[rng() % 5],
                                IpAddress::v4_of(10, 0, 0, static_cast<std::uint8_t>(rng() % 6))));
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.time_us < b.time_us; });
    {
        auto db = Database::open(path, Database::Mode::write);
        ASSERT_TRUE(db) << db.error();
        ASSERT_TRUE(db->append(std::span<const Entry>(entries)));
    }
    RollingStats live;
    for (const Entry& e : entries) {
        live.add(e);
    }
    RollingStats rebuilt;
    auto reader = Database::open(path, Database::Mode::read);
    ASSERT_TRUE(reader);
    const std::int64_t now = kT0 + 6 * kBucket;
    auto groups = reader->replay(
        now - kDay, now + 1, RollingStats::kBucketUs, [&](const Database::Aggregate& a) {
            rebuilt.add(a.interval_start_us, a.outcome, a.domain, a.client, a.count);
        });
    ASSERT_TRUE(groups) << groups.error();
    EXPECT_GT(*groups, 0U);
    EXPECT_LT(*groups, 3000U);  // grouped, not row by row
    const auto a = live.history(now);
    const auto b = rebuilt.history(now);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].counts.queries, b[i].counts.queries) << i;
        EXPECT_EQ(a[i].counts.blocked, b[i].counts.blocked) << i;
        EXPECT_EQ(a[i].counts.cached, b[i].counts.cached) << i;
    }
    EXPECT_EQ(live.totals(now).queries, 3000U);
    EXPECT_EQ(live.top(now, 5).domains, rebuilt.top(now, 5).domains);
    EXPECT_EQ(live.top(now, 5).clients, rebuilt.top(now, 5).clients);
    EXPECT_EQ(live.top(now, 5).blocked, rebuilt.top(now, 5).blocked);
}

class StatsPrivacyTest : public ::testing::TestWithParam<Privacy> {};

TEST_P(StatsPrivacyTest, TheWriterFeedsWhatThePrivacyLevelAllows) {
    moat::test::TempDir dir{"moat-rolling"};
    EntryQueue queue(64);
    RollingStats stats;
    LogOptions o;
    o.path = dir.path() / "q.db";
    o.privacy = GetParam();
    auto db = Database::open(o.path, Database::Mode::write);
    ASSERT_TRUE(db);
    LogWriter w(o, queue, std::move(*db), &stats);
    queue.push(entry(kT0, "ads.test", "blocked", IpAddress::v4_of(10, 0, 0, 9)));
    queue.push(entry(kT0 + 1, "www.test", "forwarded", IpAddress::v4_of(10, 0, 0, 9)));
    w.collect();
    const auto top = stats.top(kT0 + 10, 10);
    EXPECT_EQ(stats.totals(kT0 + 10).queries, 2U);  // every level counts
    EXPECT_EQ(stats.totals(kT0 + 10).blocked, 1U);
    const bool names = GetParam() == Privacy::full || GetParam() == Privacy::hide_clients;
    const bool clients = GetParam() == Privacy::full || GetParam() == Privacy::hide_domains;
    EXPECT_EQ(top.domains.size(), names ? 2U : 0U);
    EXPECT_EQ(top.blocked.size(), names ? 1U : 0U);
    EXPECT_EQ(top.clients.size(), clients ? 1U : 0U);
}

INSTANTIATE_TEST_SUITE_P(Levels, StatsPrivacyTest,
                         ::testing::Values(Privacy::full, Privacy::hide_domains,
                                           Privacy::hide_clients, Privacy::anonymous));

}  // namespace
}  // namespace moat::querylog
