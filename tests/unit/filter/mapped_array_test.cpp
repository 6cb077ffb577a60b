// The growable mapped column behind the blocklist's tables: it grows in place within its
// reservation, values survive every growth and move, the tail is given back to whole pages, and a
// released mapping is the caller's.
#include "moat/filter/mapped_array.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace moat::filter {
namespace {

constexpr std::size_t kMany = 300'000;  // 1.2 MiB of 4-byte values: several doublings

MappedArray<std::uint32_t> counting(std::size_t n) {
    MappedArray<std::uint32_t> a;
    for (std::size_t i = 0; i < n; ++i) {
        a.push_back(static_cast<std::uint32_t>(i * 7));
    }
    return a;
}

bool holds_counting(const MappedArray<std::uint32_t>& a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] != static_cast<std::uint32_t>(i * 7)) {
            return false;
        }
    }
    return true;
}

TEST(MappedArray, ValuesSurviveEveryGrowth) {
    const MappedArray<std::uint32_t> a = counting(kMany);
    ASSERT_EQ(a.size(), kMany);
    EXPECT_TRUE(holds_counting(a, kMany));
    EXPECT_GE(a.mapped_bytes(), kMany * sizeof(std::uint32_t));
}

TEST(MappedArray, GrowsInPlaceWithinItsReservation) {
    // Moved pages cost a fault each on their next write on a virtual machine: growth within
    // the reservation moves none.
    MappedArray<std::uint32_t> a;
    a.push_back(0);
    const std::uint32_t* const first = a.data();
    for (std::size_t i = 1; i < kMany; ++i) {
        a.push_back(static_cast<std::uint32_t>(i * 7));
        ASSERT_EQ(a.data(), first) << i;
    }
    EXPECT_TRUE(holds_counting(a, kMany));
    EXPECT_GE(a.reserved_bytes(), a.mapped_bytes());
}

TEST(MappedArray, OutgrowingItsReservationMovesTheValues) {
    MappedArray<std::uint32_t> a = counting(kMany);
    const std::uint32_t* const first = a.data();
    a.reserve(a.reserved_bytes() / sizeof(std::uint32_t) + 1);
    EXPECT_NE(a.data(), first);
    EXPECT_GT(a.mapped_bytes(), kMany * sizeof(std::uint32_t));
    EXPECT_TRUE(holds_counting(a, kMany));
    a.push_back(1);
    EXPECT_EQ(a[kMany], 1U);
}

TEST(MappedArray, ShrinkKeepsTheValuesAndGivesBackWholePages) {
    MappedArray<std::uint32_t> a = counting(kMany);
    const std::size_t before = a.mapped_bytes();
    a.truncate(1000);
    a.shrink_to_fit(8);
    EXPECT_EQ(a.size(), 1000U);
    EXPECT_EQ(a.mapped_bytes(), mapping::whole_pages(1000 * sizeof(std::uint32_t) + 8));
    EXPECT_EQ(a.reserved_bytes(), a.mapped_bytes()) << "the reservation goes too";
    EXPECT_LT(a.mapped_bytes(), before);
    EXPECT_TRUE(holds_counting(a, 1000));
    a.push_back(1);  // room again after a shrink
    EXPECT_EQ(a[1000], 1U);
}

TEST(MappedArray, ShrinkingToNothingUnmaps) {
    MappedArray<std::uint32_t> a = counting(10);
    a.truncate(0);
    a.shrink_to_fit();
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.mapped_bytes(), 0U);
    EXPECT_EQ(a.data(), nullptr);
}

TEST(MappedArray, MovesAndReleasesTheMapping) {
    MappedArray<std::uint32_t> a = counting(5000);
    MappedArray<std::uint32_t> b(std::move(a));
    EXPECT_EQ(a.size(), 0U);  // NOLINT(bugprone-use-after-move): a moved-from array is empty
    EXPECT_EQ(a.mapped_bytes(), 0U);
    ASSERT_TRUE(holds_counting(b, 5000));
    const std::size_t mapped = b.mapped_bytes();
    const auto [values, bytes] = b.release();
    EXPECT_EQ(bytes, mapped);
    EXPECT_EQ(values[4999], 4999U * 7);
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(b.data(), nullptr);
    mapping::unmap(values, bytes);
}

}  // namespace
}  // namespace moat::filter

namespace moat::filter {
namespace {

/// Values i * 7 for i in [from, to): the second half of counting(to).
MappedArray<std::uint32_t> counting_from(std::size_t from, std::size_t to) {
    MappedArray<std::uint32_t> a;
    for (std::size_t i = from; i < to; ++i) {
        a.push_back(static_cast<std::uint32_t>(i * 7));
    }
    return a;
}

TEST(MappedArray, AbsorbMovesTheOthersPagesToTheEnd) {
    // The first array ends on a page boundary, as absorb() requires; the second may end
    // anywhere, and growth after the absorb goes on from its last value.
    const std::size_t page_values = mapping::page_size() / sizeof(std::uint32_t);
    for (const std::size_t split :
         {page_values, 37 * page_values, (kMany / 2) / page_values * page_values}) {
        MappedArray<std::uint32_t> a = counting(split);
        MappedArray<std::uint32_t> b = counting_from(split, kMany);
        a.absorb(std::move(b));
        ASSERT_EQ(a.size(), kMany) << split;
        EXPECT_TRUE(holds_counting(a, kMany)) << split;
        // The moved-from array is what is checked here.
        EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
        EXPECT_EQ(b.mapped_bytes(), 0U);
        for (std::size_t i = 0; i < 2 * page_values; ++i) {
            a.push_back(static_cast<std::uint32_t>((kMany + i) * 7));
        }
        EXPECT_TRUE(holds_counting(a, kMany + 2 * page_values)) << split;
    }
}

TEST(MappedArray, AbsorbIntoAnEmptyArrayTakesTheMappingWithoutACopy) {
    MappedArray<std::uint32_t> a;
    MappedArray<std::uint32_t> b = counting(kMany);
    const std::uint32_t* const mapping = b.data();
    a.absorb(std::move(b));
    EXPECT_EQ(a.data(), mapping);
    EXPECT_TRUE(holds_counting(a, kMany));
    EXPECT_EQ(b.mapped_bytes(), 0U);  // NOLINT(bugprone-use-after-move): the moved-from state
}

TEST(MappedArray, AbsorbOfAnEmptyArrayChangesNothing) {
    MappedArray<std::uint32_t> a = counting(100);
    const std::size_t mapped = a.mapped_bytes();
    a.absorb(MappedArray<std::uint32_t>());
    EXPECT_EQ(a.size(), 100U);
    EXPECT_EQ(a.mapped_bytes(), mapped);
    EXPECT_TRUE(holds_counting(a, 100));
}

}  // namespace
}  // namespace moat::filter

namespace moat::filter {
namespace {

TEST(MappedArray, GrowsPastItsReservationAfterAnAbsorb) {
    // After absorb() the array may span two of the kernel's mappings, which kernels before 6.x
    // cannot move at once (relocate() copies then): either way, growing past the reservation
    // keeps every value.
    const std::size_t page_values = mapping::page_size() / sizeof(std::uint32_t);
    MappedArray<std::uint32_t> a = counting(page_values);
    MappedArray<std::uint32_t> b;
    for (std::size_t i = page_values; i < 2 * page_values; ++i) {
        b.push_back(static_cast<std::uint32_t>(i * 7));
    }
    a.absorb(std::move(b));
    const std::size_t room = a.reserved_bytes() / sizeof(std::uint32_t);
    a.reserve(room + 1);
    EXPECT_GT(a.reserved_bytes(), room * sizeof(std::uint32_t));
    EXPECT_TRUE(holds_counting(a, 2 * page_values));
    for (std::size_t i = 2 * page_values; i < 4 * page_values; ++i) {
        a.push_back(static_cast<std::uint32_t>(i * 7));
    }
    EXPECT_TRUE(holds_counting(a, 4 * page_values));
}

}  // namespace
}  // namespace moat::filter
