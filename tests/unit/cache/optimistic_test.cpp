// Optimistic answers (Options::optimistic): an expired entry served at once in
// LookupMode::optimistic, with stale_ttl, asking for its refresh once per stale_ttl.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/clock.hpp"

namespace moat::cache {
namespace {

using std::chrono::seconds;
using test::key;
using test::read_served;
using test::simple_answer;

class CacheOptimistic : public ::testing::Test {
protected:
    CacheOptimistic() {
        options_.optimistic = true;
        options_.stale_ttl = 30;
        options_.max_stale_age = 3600;
    }

    /// An optimistic lookup of `k` that must hit; what it wrote is in buffer_.
    Hit hit(Cache& cache, const CacheKey& k) {
        const auto result = cache.lookup(k, 7, buffer_, LookupMode::optimistic);
        EXPECT_TRUE(result) << "expected a hit";
        return result.value_or(Hit{});
    }

    /// Stores an answer for www.example.com whose one record has `ttl` and address .`octet`.
    static CacheKey store(Cache& cache, std::uint32_t ttl, std::uint8_t octet = 1) {
        const auto k = key("www.example.com");
        EXPECT_TRUE(cache.insert(k, simple_answer("www.example.com", ttl, octet)));
        return k;
    }

    ManualClock clock_;
    Options options_;
    std::array<std::uint8_t, 4096> buffer_{};
};

TEST_F(CacheOptimistic, AnExpiredEntryIsServedStaleAndAsksOncePerStaleTtl) {
    options_.prefetch = false;  // only the expired entry's asks
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    clock_.advance(seconds(61));
    Hit h = hit(cache, k);
    EXPECT_TRUE(h.stale);
    EXPECT_TRUE(h.refresh) << "the first hit on the expired entry asks";
    EXPECT_EQ(read_served(std::span(buffer_).first(h.size)).ttls, std::vector<std::uint32_t>{30});

    clock_.advance(seconds(29));  // 29 s since the ask: its answer may still come
    h = hit(cache, k);
    EXPECT_TRUE(h.stale);
    EXPECT_FALSE(h.refresh);
    clock_.advance(seconds(1));  // 30 s: the refresh failed, ask again
    EXPECT_TRUE(hit(cache, k).refresh);
    EXPECT_FALSE(hit(cache, k).refresh);

    const Stats stats = cache.stats();
    EXPECT_EQ(stats.stale_hits, 4U);
    EXPECT_EQ(stats.hits, 0U);
    EXPECT_EQ(stats.prefetches, 2U);
}

TEST_F(CacheOptimistic, TheRefreshedAnswerIsFreshAgain) {
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    clock_.advance(seconds(100));
    ASSERT_TRUE(hit(cache, k).refresh);
    store(cache, 60, 2);  // the upstream's new answer
    const Hit h = hit(cache, k);
    EXPECT_FALSE(h.stale);
    EXPECT_FALSE(h.refresh);
    const test::Served served = read_served(std::span(buffer_).first(h.size));
    EXPECT_EQ(served.ttls, std::vector<std::uint32_t>{60});
    EXPECT_EQ(served.addresses, std::vector<std::uint8_t>{2});
}

TEST_F(CacheOptimistic, APrefetchAskCountsAsTheLastAskAfterExpiry) {
    // The prefetch's refresh was sent 5 s before expiry and has not replaced the entry: it
    // failed or is still on its way, and the first expired hit waits out stale_ttl from it.
    Cache cache(clock_, options_);
    const auto k = store(cache, 100);
    clock_.advance(seconds(95));
    const Hit prefetch = hit(cache, k);
    EXPECT_FALSE(prefetch.stale);
    EXPECT_TRUE(prefetch.refresh);
    clock_.advance(seconds(10));  // expired 5 s ago, asked 10 s ago
    const Hit h = hit(cache, k);
    EXPECT_TRUE(h.stale);
    EXPECT_FALSE(h.refresh);
    clock_.advance(seconds(20));
    EXPECT_TRUE(hit(cache, k).refresh);
}

TEST_F(CacheOptimistic, PastMaxStaleAgeTheEntryIsAMiss) {
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    clock_.advance(seconds(60 + 3599));
    EXPECT_TRUE(hit(cache, k).stale);
    clock_.advance(seconds(1));
    EXPECT_EQ(cache.lookup(k, 7, buffer_, LookupMode::optimistic).error(), Errc::miss);
}

TEST_F(CacheOptimistic, OffTheOptimisticModeIsTheFreshOne) {
    options_.optimistic = false;
    options_.serve_stale = true;  // expired entries are kept, but only for the stale mode
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    clock_.advance(seconds(61));
    EXPECT_EQ(cache.lookup(k, 7, buffer_, LookupMode::optimistic).error(), Errc::miss);
    EXPECT_TRUE(cache.lookup(k, 7, buffer_, LookupMode::stale));
}

TEST_F(CacheOptimistic, ImpliesServeStaleAndTheFreshModeStillMisses) {
    ASSERT_FALSE(options_.serve_stale);
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    clock_.advance(seconds(61));
    EXPECT_EQ(cache.lookup(k, 7, buffer_, LookupMode::fresh).error(), Errc::miss);
    const auto stale = cache.lookup(k, 7, buffer_, LookupMode::stale);
    ASSERT_TRUE(stale);
    EXPECT_TRUE(stale->stale);
    EXPECT_FALSE(stale->refresh) << "the stale mode never asks";
    EXPECT_TRUE(hit(cache, k).refresh) << "nor takes the optimistic mode's ask";
}

TEST_F(CacheOptimistic, EraseDropsTheEntryAndItsBytes) {
    Cache cache(clock_, options_);
    const auto k = store(cache, 60);
    ASSERT_TRUE(cache.insert(key("other.example.com"), simple_answer("other.example.com")));
    const Stats before = cache.stats();
    cache.erase(k);
    EXPECT_EQ(cache.lookup(k, 7, buffer_, LookupMode::optimistic).error(), Errc::miss);
    EXPECT_TRUE(cache.lookup(key("other.example.com"), 7, buffer_));
    const Stats after = cache.stats();
    EXPECT_EQ(after.entries, before.entries - 1);
    EXPECT_LT(after.bytes, before.bytes);
    cache.erase(k);  // nothing left to erase
    EXPECT_EQ(cache.stats().entries, after.entries);
    EXPECT_TRUE(cache.insert(k, simple_answer("www.example.com", 60)));
    EXPECT_TRUE(cache.lookup(k, 7, buffer_));
}

}  // namespace
}  // namespace moat::cache
