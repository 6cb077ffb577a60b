// Prefetch (Options::prefetch): which hit asks for an entry's refresh, and how often.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/clock.hpp"
#include "support/emulation.hpp"

namespace moat::cache {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::key;
using test::simple_answer;

class CachePrefetch : public ::testing::Test {
protected:
    /// Whether a hit on `k` now asks for a refresh; fails the test on a miss.
    bool hit_asks_refresh(Cache& cache, const CacheKey& k) {
        const auto result = cache.lookup(k, 7, buffer_);
        EXPECT_TRUE(result) << "expected a hit";
        return result && result->refresh;
    }

    /// Stores an answer for www.example.com whose one record has `ttl`; returns its key.
    static CacheKey store(Cache& cache, std::uint32_t ttl) {
        const auto k = key("www.example.com");
        EXPECT_TRUE(cache.insert(k, simple_answer("www.example.com", ttl)));
        return k;
    }

    ManualClock clock_;
    std::array<std::uint8_t, 4096> buffer_{};
};

TEST_F(CachePrefetch, TheFirstHitInTheLastTenthOfTheLifetimeAsksOnce) {
    Cache cache(clock_);
    const auto k = store(cache, 100);
    EXPECT_FALSE(hit_asks_refresh(cache, k));
    clock_.advance(milliseconds(89'999));  // 10.001 s left: more than a tenth
    EXPECT_FALSE(hit_asks_refresh(cache, k));
    clock_.advance(milliseconds(1));  // 10 s left
    EXPECT_TRUE(hit_asks_refresh(cache, k));
    EXPECT_FALSE(hit_asks_refresh(cache, k)) << "one refresh per stored answer";
    clock_.advance(seconds(9));
    EXPECT_FALSE(hit_asks_refresh(cache, k));
    const Stats stats = cache.stats();
    EXPECT_EQ(stats.prefetches, 1U);
    EXPECT_EQ(stats.hits, 5U);
}

TEST_F(CachePrefetch, TheRefreshedAnswerCanAskAgainAtTheEndOfItsOwnLifetime) {
    Cache cache(clock_);
    const auto k = store(cache, 100);
    clock_.advance(seconds(95));
    EXPECT_TRUE(hit_asks_refresh(cache, k));
    // The upstream's new answer replaces the entry before it expires.
    store(cache, 50);
    clock_.advance(seconds(10));  // past the first answer's expiry: a hit, not a miss
    EXPECT_FALSE(hit_asks_refresh(cache, k));
    clock_.advance(seconds(35));  // 5 s of 50 left
    EXPECT_TRUE(hit_asks_refresh(cache, k));
    EXPECT_EQ(cache.stats().prefetches, 2U);
    EXPECT_EQ(cache.stats().misses, 0U);
}

TEST_F(CachePrefetch, AnUnrefreshedEntryExpiresAsBefore) {
    Cache cache(clock_);
    const auto k = store(cache, 100);
    clock_.advance(seconds(91));
    EXPECT_TRUE(hit_asks_refresh(cache, k));
    clock_.advance(seconds(9));
    EXPECT_FALSE(cache.lookup(k, 7, buffer_)) << "the refresh never came: a miss at expiry";
}

TEST_F(CachePrefetch, OffNoHitAsks) {
    Options options;
    options.prefetch = false;
    Cache cache(clock_, options);
    const auto k = store(cache, 100);
    clock_.advance(seconds(99));
    EXPECT_FALSE(hit_asks_refresh(cache, k));
    EXPECT_EQ(cache.stats().prefetches, 0U);
}

TEST_F(CachePrefetch, ALookupInStaleModeNeverAsksNorTakesTheFreshModesClaim) {
    // The stale mode is the engine's after every upstream failed, which sends no refresh: a
    // claim there would be lost, and the entry would expire unrefreshed. An expired answer it
    // serves never asks either.
    Options options;
    options.serve_stale = true;
    Cache cache(clock_, options);
    const auto k = store(cache, 100);
    const auto expired = key("old.example.com");
    ASSERT_TRUE(cache.insert(expired, simple_answer("old.example.com", 90)));
    clock_.advance(seconds(95));
    const auto fresh_in_stale_mode = cache.lookup(k, 7, buffer_, LookupMode::stale);
    ASSERT_TRUE(fresh_in_stale_mode);
    EXPECT_FALSE(fresh_in_stale_mode->stale);
    EXPECT_FALSE(fresh_in_stale_mode->refresh);
    EXPECT_TRUE(hit_asks_refresh(cache, k)) << "the next fresh-mode hit still asks";

    const auto stale = cache.lookup(expired, 7, buffer_, LookupMode::stale);
    ASSERT_TRUE(stale);
    EXPECT_TRUE(stale->stale);
    EXPECT_FALSE(stale->refresh);
    EXPECT_EQ(cache.stats().prefetches, 1U);
}

TEST_F(CachePrefetch, OfManyThreadsHittingTheLastTenthOnlyOneAsks) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    Cache cache(clock_);
    const auto k = store(cache, 100);
    clock_.advance(seconds(95));
    constexpr std::size_t kThreads = 4;
    constexpr int kHitsEach = 2000;
    std::array<int, kThreads> asked{};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::array<std::uint8_t, 512> out{};
            for (int i = 0; i < kHitsEach; ++i) {
                const auto result = cache.lookup(k, 7, out);
                asked[t] += (result && result->refresh) ? 1 : 0;
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    int total = 0;
    for (const int n : asked) {
        total += n;
    }
    EXPECT_EQ(total, 1);
    EXPECT_EQ(cache.stats().prefetches, 1U);
    EXPECT_EQ(cache.stats().hits, std::uint64_t{kThreads} * kHitsEach);
}

}  // namespace
}  // namespace moat::cache
