#include "moat/core/mix.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace {

// Each length reads its octets from a heap block of exactly that size, so a read past them is
// an out-of-bounds access the sanitizer stage reports.
std::vector<std::uint8_t> octets(std::size_t n, std::uint8_t first) {
    std::vector<std::uint8_t> block;
    block.reserve(n);  // exactly n: libstdc++ allocates what reserve() asks
    for (std::size_t i = 0; i < n; ++i) {
        block.push_back(static_cast<std::uint8_t>(first + i));
    }
    return block;
}

TEST(LoadUpTo8, EightOctetsAreTheLittleEndianWord) {
    const auto p = octets(8, 1);
    EXPECT_EQ(moat::load_up_to_8(p.data(), 8), 0x0807060504030201ULL);
}

TEST(LoadUpTo8, EveryOctetOfEveryLengthChangesTheWord) {
    for (std::size_t n = 1; n <= 8; ++n) {
        auto p = octets(n, 'a');
        const std::uint64_t base = moat::load_up_to_8(p.data(), n);
        std::set<std::uint64_t> seen{base};
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint8_t kept = p[i];
            p[i] = static_cast<std::uint8_t>(kept ^ 0x20U);
            seen.insert(moat::load_up_to_8(p.data(), n));
            p[i] = kept;
        }
        EXPECT_EQ(seen.size(), n + 1) << "length " << n;
        EXPECT_EQ(moat::load_up_to_8(p.data(), n), base) << "length " << n;
    }
}

}  // namespace
