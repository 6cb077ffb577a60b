// Readers and a writer on one cache at once: every hit must be one whole answer as inserted,
// never a mix of two versions or a torn copy. Meant to run under the asan and tsan presets too.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "support/emulation.hpp"

namespace moat::cache {
namespace {

using test::key;

/// Version v of the answer: v + 1 A records, each with last octet v, TTL 1000 + v.
std::vector<std::uint8_t> version(std::uint8_t v) {
    test::AnswerSpec spec;
    for (int i = 0; i <= v; ++i) {
        spec.records.push_back(test::a_record("www.example.com", 1000U + v, v));
    }
    return test::build(spec);
}

TEST(CacheConcurrency, ReadersSeeWholeAnswersWhileAWriterReplacesAndEvicts) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    ManualClock clock;
    Options options;
    options.shards = 2;
    options.max_bytes =
        std::size_t{16} * 1024;  // small: the writer's filler entries force evictions
    Cache cache(clock, options);
    const auto hot = key("www.example.com");
    ASSERT_TRUE(cache.insert(hot, version(0)));

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> bad{0};
    std::vector<std::thread> readers;
    readers.reserve(3);
    for (int r = 0; r < 3; ++r) {
        readers.emplace_back([&, r] {
            std::array<std::uint8_t, 2048> buffer{};
            const auto id = static_cast<std::uint16_t>(100 + r);
            while (!stop.load(std::memory_order_relaxed)) {
                cache.prefetch(hot);  // the engine's order: slot, entry, then the lookup
                (void)cache.prefetch_entry(hot);
                const auto result = cache.lookup(hot, id, buffer);
                if (!result) {
                    continue;  // evicted for a moment
                }
                hits.fetch_add(1, std::memory_order_relaxed);
                const auto served =
                    test::read_served(std::span<const std::uint8_t>(buffer).first(result->size));
                const bool whole = served.id == id && !served.addresses.empty() &&
                                   served.addresses.size() == served.addresses[0] + 1U &&
                                   served.ttls.size() == served.addresses.size();
                bool same = whole;
                for (std::size_t i = 0; same && i < served.ttls.size(); ++i) {
                    same = served.addresses[i] == served.addresses[0] &&
                           served.ttls[i] <= 1000U + served.addresses[0] &&
                           served.ttls[i] + 100 >= 1000U + served.addresses[0];
                }
                if (!same) {
                    bad.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    }

    // At least 2000 rounds, and on until the readers have had their share of the cores (this
    // machine may be busy), within a bound.
    for (int round = 0; round < 2000 || (hits.load() < 1000 && round < 1000000); ++round) {
        const auto v = static_cast<std::uint8_t>(round % 8);
        ASSERT_TRUE(cache.insert(hot, version(v)));
        const std::string filler = "f" + std::to_string(round) + ".example";
        ASSERT_TRUE(cache.insert(key(filler), test::simple_answer(filler)));
        if (round % 100 == 0) {
            clock.advance(std::chrono::seconds(1));
        }
    }
    stop.store(true);
    for (auto& t : readers) {
        t.join();
    }
    EXPECT_EQ(bad.load(), 0U);
    EXPECT_GT(hits.load(), 0U);
    const Stats stats = cache.stats();
    EXPECT_GT(stats.evictions, 0U);
    EXPECT_LE(stats.bytes, options.max_bytes);
}

}  // namespace
}  // namespace moat::cache
