// The queue between the event loop and the log writer: order kept, a full queue drops and counts
// instead of waiting, and under two real threads every entry arrives once, in order, or is
// counted as dropped.
#include "moat/querylog/entry_queue.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "support/emulation.hpp"
#include "test_entries.hpp"

namespace moat::querylog {
namespace {

Entry numbered(std::uint32_t n) {
    Entry e = test::entry(n, "n.test");
    e.latency_us = n;
    return e;
}

TEST(EntryQueue, KeepsOrderAndDropsWhenFull) {
    EntryQueue q(3);  // rounded up to 4
    EXPECT_EQ(q.capacity(), 4U);
    for (std::uint32_t i = 0; i < 6; ++i) {
        EXPECT_EQ(q.push(numbered(i)), i < 4);
    }
    EXPECT_EQ(q.dropped(), 2U);
    EXPECT_EQ(q.depth(), 4U);
    EXPECT_EQ(q.peak_depth(), 4U);
    std::vector<Entry> out;
    EXPECT_EQ(q.pop(out, 3), 3U);
    EXPECT_EQ(q.pop(out, 10), 1U);
    EXPECT_EQ(q.pop(out, 10), 0U);
    ASSERT_EQ(out.size(), 4U);
    for (std::uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(out[i].latency_us, i);
    }
    EXPECT_EQ(out[0].qname.view(), "n.test");
    EXPECT_TRUE(q.push(numbered(9)));  // room again after the pops
}

TEST(EntryQueue, TwoThreadsLoseNothingUncounted) {
    // The consumer spins on the producer's counter: contended cache lines under emulation.
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    EntryQueue q(256);
    constexpr std::uint32_t kCount = 200'000;
    std::vector<std::uint32_t> received;
    received.reserve(kCount);
    std::thread consumer([&] {
        std::vector<Entry> batch;
        std::uint64_t seen = 0;
        while (seen + q.dropped() < kCount || q.depth() > 0) {
            batch.clear();
            seen += q.pop(batch, 64);
            for (const Entry& e : batch) {
                received.push_back(e.latency_us);
            }
        }
    });
    for (std::uint32_t i = 0; i < kCount; ++i) {
        q.push(numbered(i));
    }
    consumer.join();
    EXPECT_EQ(received.size() + q.dropped(), kCount);
    EXPECT_TRUE(std::is_sorted(received.begin(), received.end()));
    EXPECT_EQ(std::adjacent_find(received.begin(), received.end()), received.end());
    EXPECT_LE(q.peak_depth(), q.capacity());
}

}  // namespace
}  // namespace moat::querylog
