// The growable mapped column behind the blocklist's tables: values survive every remap, the
// tail is given back to whole pages, and a released mapping is the caller's.
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

TEST(MappedArray, ShrinkKeepsTheValuesAndGivesBackWholePages) {
    MappedArray<std::uint32_t> a = counting(kMany);
    const std::size_t before = a.mapped_bytes();
    a.truncate(1000);
    a.shrink_to_fit(8);
    EXPECT_EQ(a.size(), 1000U);
    EXPECT_EQ(a.mapped_bytes(), mapping::whole_pages(1000 * sizeof(std::uint32_t) + 8));
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
