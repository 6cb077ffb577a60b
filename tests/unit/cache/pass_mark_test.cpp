// An entry's blocklist pass mark (Cache::lookup_if_passed, Cache::lookup_noting_pass): an answer
// is served ahead of the blocklist only for the snapshot that passed its name, and asking
// without the mark leaves the answer, the caller's buffer and every counter alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"

namespace moat::cache {
namespace {

using std::chrono::seconds;
using test::key;
using test::simple_answer;

constexpr std::uint32_t kSnapshotA = 7;
constexpr std::uint32_t kSnapshotB = 8;
constexpr std::uint8_t kUntouched = 0xEE;

class PassMarkTest : public ::testing::Test {
protected:
    PassMarkTest() { buffer_.fill(kUntouched); }

    [[nodiscard]] bool untouched() const {
        return std::all_of(buffer_.begin(), buffer_.end(),
                           [](std::uint8_t b) { return b == kUntouched; });
    }
    tl::expected<Hit, Errc> if_passed(const char* name, std::uint32_t mark) {
        return cache_.lookup_if_passed(key(name), 9, buffer_, LookupMode::fresh, mark);
    }
    tl::expected<Hit, Errc> noting(const char* name, std::uint32_t mark) {
        return cache_.lookup_noting_pass(key(name), 9, buffer_, LookupMode::fresh, mark);
    }

    ManualClock clock_;
    Cache cache_{clock_};
    std::array<std::uint8_t, 4096> buffer_{};
};

TEST_F(PassMarkTest, AnEntryNoOneMarkedIsUncheckedAndNothingIsWrittenOrCounted) {
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com")));
    const auto result = if_passed("www.example.com", kSnapshotA);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::unchecked);
    EXPECT_TRUE(untouched());
    const Stats stats = cache_.stats();
    EXPECT_EQ(stats.hits, 0U);
    EXPECT_EQ(stats.misses, 0U);
}

TEST_F(PassMarkTest, ServedAheadOnlyForTheSnapshotThatNotedItsPass) {
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com", 300)));
    ASSERT_TRUE(noting("www.example.com", kSnapshotA));
    const auto again = if_passed("WWW.example.com", kSnapshotA);
    ASSERT_TRUE(again);
    const test::Served served =
        test::read_served(std::span<const std::uint8_t>(buffer_).first(again->size));
    EXPECT_EQ(served.id, 9);
    EXPECT_EQ(served.ttls, std::vector<std::uint32_t>{300});

    const auto other = if_passed("www.example.com", kSnapshotB);
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error(), Errc::unchecked) << "another snapshot has not passed it";
    ASSERT_TRUE(noting("www.example.com", kSnapshotB));
    EXPECT_TRUE(if_passed("www.example.com", kSnapshotB));
    const auto first = if_passed("www.example.com", kSnapshotA);
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error(), Errc::unchecked) << "one mark an entry: the newest";
    EXPECT_EQ(cache_.stats().hits, 4U) << "two noting lookups and two served ahead";
}

TEST_F(PassMarkTest, MarkZeroVouchesForNothingAndNotesNothing) {
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com")));
    ASSERT_TRUE(noting("www.example.com", kSnapshotA));
    ASSERT_TRUE(noting("www.example.com", 0)) << "an ordinary hit";
    EXPECT_TRUE(if_passed("www.example.com", kSnapshotA)) << "the mark stays";
    const auto zero = if_passed("www.example.com", 0);
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error(), Errc::unchecked);
}

TEST_F(PassMarkTest, ANewAnswerForTheKeyStartsUnmarked) {
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com", 300, 1)));
    ASSERT_TRUE(noting("www.example.com", kSnapshotA));
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com", 300, 2)));
    const auto result = if_passed("www.example.com", kSnapshotA);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::unchecked);
}

TEST_F(PassMarkTest, AnAbsentOrExpiredEntryIsAMissEitherWay) {
    const auto absent = if_passed("absent.example", kSnapshotA);
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error(), Errc::miss);
    ASSERT_TRUE(cache_.insert(key("www.example.com"), simple_answer("www.example.com", 10)));
    ASSERT_TRUE(noting("www.example.com", kSnapshotA));
    clock_.advance(seconds(10));
    const auto expired = if_passed("www.example.com", kSnapshotA);
    ASSERT_FALSE(expired);
    EXPECT_EQ(expired.error(), Errc::miss);
    EXPECT_EQ(cache_.stats().misses, 2U) << "counted as lookup() counts them";
}

}  // namespace
}  // namespace moat::cache
