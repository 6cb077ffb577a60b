// The queue between the event loop and the log writer: order kept, a full queue drops and counts
// instead of waiting, every field arrives as it was pushed (also when a record wraps around the
// ring's end), long entries fill the ring's bytes before its count, and under two real threads
// every entry arrives once, in order, or is counted as dropped. The consumer's sleep: until a
// deadline, the push that fills a quarter of the queue, or (when it asks) the next push, which
// wakes it every time (no wake-up is lost to a race).
#include "moat/querylog/entry_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
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

// An entry with every field set, its texts `size` characters long (cut to each field's size).
Entry full(std::uint32_t n, std::size_t size) {
    Entry e = numbered(n);
    const std::string text(size, static_cast<char>('a' + n % 26));
    e.time_us = 1'700'000'000'000'000 + n;
    e.client = IpAddress{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, true};
    e.qtype = 28;
    e.ede = 15;
    e.rcode = 3;
    e.outcome = "blocked";
    e.transport = "tcp";
    e.qname.assign(text);
    e.upstream.assign(text);
    e.list.assign(text);
    e.line = n * 7;
    e.pattern.assign(text);
    return e;
}

void expect_same(const Entry& got, const Entry& want) {
    EXPECT_EQ(got.time_us, want.time_us);
    EXPECT_EQ(got.client, want.client);
    EXPECT_EQ(got.latency_us, want.latency_us);
    EXPECT_EQ(got.qtype, want.qtype);
    EXPECT_EQ(got.ede, want.ede);
    EXPECT_EQ(got.rcode, want.rcode);
    EXPECT_STREQ(got.outcome, want.outcome);
    EXPECT_STREQ(got.transport, want.transport);
    EXPECT_EQ(got.qname.view(), want.qname.view());
    EXPECT_EQ(got.upstream.view(), want.upstream.view());
    EXPECT_EQ(got.list.view(), want.list.view());
    EXPECT_EQ(got.line, want.line);
    EXPECT_EQ(got.pattern.view(), want.pattern.view());
}

TEST(EntryQueue, EveryFieldSurvivesTheRingsEnd) {
    EntryQueue q(16);
    ASSERT_EQ(q.ring_bytes(), 2048U);
    // Records of 64 to 554 bytes, two in the ring at a time: most laps cross its end somewhere,
    // in a header or in a text.
    std::vector<Entry> out;
    for (std::uint32_t i = 0; i < 500; ++i) {
        const Entry first = full(i, (i * 37) % 254);
        const Entry second = full(i + 1, (i * 11) % 200);
        ASSERT_TRUE(q.push(first));
        ASSERT_TRUE(q.push(second));
        out.clear();
        ASSERT_EQ(q.pop(out, 10), 2U);
        expect_same(out[0], first);
        expect_same(out[1], second);
    }
    EXPECT_EQ(q.dropped(), 0U);
    EXPECT_EQ(q.depth(), 0U);
}

TEST(EntryQueue, LongEntriesFillTheBytesBeforeTheCount) {
    EntryQueue q(4);
    EXPECT_EQ(q.capacity(), 4U);
    EXPECT_EQ(q.ring_bytes(), 2048U);  // two of the largest records, rounded up
    // The largest record is about 560 bytes: three fit in 2,048, the fourth does not.
    for (std::uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(q.push(full(i, 253)), i < 3) << i;
    }
    EXPECT_EQ(q.dropped(), 1U);
    EXPECT_EQ(q.depth(), 3U);
    std::vector<Entry> out;
    EXPECT_EQ(q.pop(out, 1), 1U);
    EXPECT_TRUE(q.push(full(9, 253)));  // one record's room again
    EXPECT_EQ(q.pop(out, 10), 3U);
    ASSERT_EQ(out.size(), 4U);
    expect_same(out[0], full(0, 253));
    expect_same(out[3], full(9, 253));
    EXPECT_EQ(out[3].qname.view().size(), 253U);
    EXPECT_EQ(out[3].pattern.view().size(), 127U);  // cut at the field's size when assigned
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

using std::chrono::steady_clock;
// Far enough that a sleep which should have ended early cannot pass for one that did.
constexpr auto kLongSleep = std::chrono::seconds(30);
constexpr auto kPromptly = std::chrono::seconds(10);

TEST(EntryQueue, ASleepUntilThePushIsNoneWhileAnEntryWaits) {
    EntryQueue q(64);  // one entry is far from the quarter that would wake it anyway
    ASSERT_TRUE(q.push(numbered(1)));
    const auto start = steady_clock::now();
    q.sleep_until(start + kLongSleep, true);
    EXPECT_LT(steady_clock::now() - start, kPromptly);
}

TEST(EntryQueue, ASleepWithoutThePushLastsUntilItsDeadline) {
    EntryQueue q(64);
    ASSERT_TRUE(q.push(numbered(1)));  // an entry waiting does not end a polling sleep
    const auto start = steady_clock::now();
    q.sleep_until(start + std::chrono::milliseconds(200), false);
    EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(200));
}

TEST(EntryQueue, WakeConsumerEndsTheNextSleepOnce) {
    EntryQueue q(4);
    q.wake_consumer();  // before the sleep: it returns at once
    auto start = steady_clock::now();
    q.sleep_until(start + kLongSleep, false);
    EXPECT_LT(steady_clock::now() - start, kPromptly);
    start = steady_clock::now();  // the wake-up was used: this one lasts
    q.sleep_until(start + std::chrono::milliseconds(100), true);
    EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(EntryQueue, ThePushThatFillsAQuarterEndsAPollingSleep) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    EntryQueue q(64);
    std::atomic<bool> returned{false};
    steady_clock::duration slept{};
    std::thread consumer([&] {
        const auto start = steady_clock::now();
        q.sleep_until(start + kLongSleep, false);
        slept = steady_clock::now() - start;
        returned.store(true);
    });
    for (std::uint32_t i = 0; i < 15; ++i) {
        ASSERT_TRUE(q.push(numbered(i)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(returned.load()) << "woken before the queue was a quarter full";
    ASSERT_TRUE(q.push(numbered(15)));  // 16 of 64
    consumer.join();
    EXPECT_LT(slept, kPromptly);
}

TEST(EntryQueue, EveryPushIntoASleepingConsumersQueueWakesIt) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    // Hand-offs with no pause between parking and pushing, so the two race every time. A lost
    // wake-up leaves the consumer asleep until its deadline: that round fails, and ends the test.
    EntryQueue q(64);  // one entry at a time: never the quarter that wakes the consumer anyway
    constexpr std::uint32_t kRounds = 2'000;
    constexpr auto kDeadline = std::chrono::seconds(5);
    std::atomic<bool> slept_through{false};
    std::uint32_t received = 0;
    std::thread consumer([&] {
        std::vector<Entry> out;
        while (received < kRounds && !slept_through.load()) {
            const auto start = steady_clock::now();
            q.sleep_until(start + kDeadline, true);
            slept_through.store(steady_clock::now() - start >= kDeadline / 2);
            out.clear();
            received += static_cast<std::uint32_t>(q.pop(out, 10));
        }
    });
    for (std::uint32_t i = 0; i < kRounds && !slept_through.load(); ++i) {
        while (q.depth() > 0 && !slept_through.load()) {  // taken: the consumer goes to sleep
            std::this_thread::yield();
        }
        EXPECT_TRUE(q.push(numbered(i)));
    }
    consumer.join();
    EXPECT_FALSE(slept_through.load()) << "a push left the consumer asleep, after " << received;
    EXPECT_EQ(received, kRounds);
}

}  // namespace
}  // namespace moat::querylog
