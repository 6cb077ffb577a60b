// A cache hit allocates nothing. This binary replaces every form of the global operator
// new/delete with counting versions (tests/support/alloc_counter.hpp); counting is
// switched on only around the lookups, and a deliberately allocating control proves the counter
// is live.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/message_view.hpp"
#include "support/alloc_counter.hpp"

namespace moat::cache {
namespace {

TEST(CacheAlloc, CounterIsLive) { EXPECT_GE(allocations_in_a_control(), 1U); }

TEST(CacheAlloc, HitsAndMissesAllocateNothing) {
    ManualClock clock;
    Options options;
    options.serve_stale = true;
    Cache cache(clock, options);
    test::AnswerSpec spec;
    spec.records.push_back(test::a_record("www.example.com", 60));
    spec.records.push_back(test::a_record("www.example.com", 60, 2));
    ASSERT_TRUE(cache.insert(test::key("www.example.com"), test::build(spec)));
    ASSERT_TRUE(cache.insert(test::key("old.example"), test::simple_answer("old.example", 1)));

    test::AnswerSpec query;
    query.qname = "WWW.example.com";
    query.response = false;
    const auto query_bytes = test::build(query);
    std::array<std::uint8_t, 1232> out{};
    const CacheKey old_key = test::key("old.example");
    const CacheKey missing_key = test::key("missing.example");
    clock.advance(std::chrono::seconds(2));

    std::size_t served = 0;
    {
        const Counting counting;
        for (int i = 0; i < 1000; ++i) {
            // The whole hot path: parse the query, make the key, look up.
            const auto view = wire::MessageView::parse(query_bytes);
            const auto key = CacheKey::from_query(*view);
            const auto hit = cache.lookup(*key, static_cast<std::uint16_t>(i), out);
            served += hit ? hit->size : 0;
            const auto stale = cache.lookup(old_key, 1, out, LookupMode::stale);
            served += stale ? stale->size : 0;
            const auto miss = cache.lookup(missing_key, 1, out);
            served += miss ? 1U : 0U;
        }
        EXPECT_EQ(Counting::stop(), 0U);
    }
    EXPECT_GT(served, 0U);
    EXPECT_EQ(cache.stats().hits, 1000U);
    EXPECT_EQ(cache.stats().stale_hits, 1000U);
    EXPECT_EQ(cache.stats().misses, 1000U);
}

TEST(CacheAlloc, AReplacedEntrysBlockStoresTheNextInsert) {
    ManualClock clock;
    Cache cache(clock, Options{});
    test::AnswerSpec spec;
    spec.records.push_back(test::a_record("www.example.com", 60));
    spec.records.push_back(test::a_record("www.example.com", 60, 2));
    const auto answer = test::build(spec);
    const CacheKey key = test::key("www.example.com");
    // The first insert grows the index and the ring, and this thread's reused scratch.
    ASSERT_TRUE(cache.insert(key, answer));

    std::size_t allocations = 0;
    {
        const Counting counting;
        // The same key again: the old entry is replaced, so the table does not grow. The first
        // replacement takes a new block (the old entry still holds its own until it is
        // replaced); every later one reuses the block the one before it let go.
        for (int i = 0; i < 100; ++i) {
            ASSERT_TRUE(cache.insert(key, answer));
        }
        allocations = Counting::stop();
    }
    EXPECT_EQ(allocations, 1U);
    EXPECT_EQ(cache.stats().inserts, 101U);
}

TEST(CacheAlloc, AFullCacheStoresNewAnswersWithoutAllocating) {
    // A stream of misses into a full cache: every insert evicts an entry of the same size class,
    // whose block then holds the next one. Names of one length give answers of one size.
    ManualClock clock;
    Options options;
    options.shards = 1;
    options.max_bytes = 16U << 10U;
    Cache cache(clock, options);
    int next_name = 0;
    const auto next = [&] {
        const std::string name = "n" + std::to_string(100000 + next_name++) + ".example";
        return std::pair{test::key(name), test::simple_answer(name)};
    };
    // Fill it, let it evict for a while (the ring and free list reach their size), then count.
    while (cache.stats().evictions < 200) {
        const auto [key, answer] = next();
        ASSERT_TRUE(cache.insert(key, answer));
    }
    std::vector<std::pair<CacheKey, std::vector<std::uint8_t>>> misses;
    misses.reserve(1000);
    for (int i = 0; i < 1000; ++i) {
        misses.push_back(next());  // made before counting: they are the test's, not the cache's
    }
    const std::uint64_t evictions_before = cache.stats().evictions;

    std::size_t allocations = 0;
    {
        const Counting counting;
        for (const auto& [key, answer] : misses) {
            ASSERT_TRUE(cache.insert(key, answer));
        }
        allocations = Counting::stop();
    }
    EXPECT_EQ(allocations, 0U);
    EXPECT_GE(cache.stats().evictions - evictions_before, 1000U) << "the cache was full";
    EXPECT_LE(cache.stats().bytes, options.max_bytes);
}

}  // namespace
}  // namespace moat::cache
