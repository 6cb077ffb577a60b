// Big-endian loads and stores (network order, RFC 1035 §2.3.2) at every alignment, and the
// byte-range equality the name code uses: against values written out octet by octet here, so
// a helper that swapped the wrong way, or wrote past its field, fails.
#include "moat/core/bytes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace moat {
namespace {

constexpr std::uint8_t kFill = 0xA5;

TEST(Bytes, LoadsReadNetworkOrderAtEveryOffset) {
    for (std::size_t at = 0; at < 8; ++at) {
        std::array<std::uint8_t, 16> buf{};
        buf.fill(kFill);
        buf[at] = 0x12;
        buf[at + 1] = 0x34;
        buf[at + 2] = 0x56;
        buf[at + 3] = 0x78;
        EXPECT_EQ(load_u16(buf.data() + at), 0x1234U) << at;
        EXPECT_EQ(load_u32(buf.data() + at), 0x12345678U) << at;
    }
}

TEST(Bytes, StoresWriteNetworkOrderAndOnlyTheirField) {
    for (std::size_t at = 0; at < 8; ++at) {
        std::array<std::uint8_t, 16> buf{};
        buf.fill(kFill);
        store_u16(buf.data() + at, 0xBEEF);
        std::array<std::uint8_t, 16> want{};
        want.fill(kFill);
        want[at] = 0xBE;
        want[at + 1] = 0xEF;
        EXPECT_EQ(buf, want) << at;

        buf.fill(kFill);
        store_u32(buf.data() + at, 0xDEADBEEFU);
        want.fill(kFill);
        want[at] = 0xDE;
        want[at + 1] = 0xAD;
        want[at + 2] = 0xBE;
        want[at + 3] = 0xEF;
        EXPECT_EQ(buf, want) << at;
    }
}

TEST(Bytes, StoreThenLoadGivesTheValueBackForEdgeValues) {
    std::array<std::uint8_t, 4> buf{};
    for (const std::uint16_t v :
         std::array<std::uint16_t, 6>{0x0000, 0x0001, 0x00FF, 0x0100, 0x8000, 0xFFFF}) {
        store_u16(buf.data(), v);
        EXPECT_EQ(load_u16(buf.data()), v);
    }
    for (const std::uint32_t v :
         {0x00000000U, 0x00000001U, 0x000000FFU, 0x0000FF00U, 0x80000000U, 0xFFFFFFFFU}) {
        store_u32(buf.data(), v);
        EXPECT_EQ(load_u32(buf.data()), v);
    }
}

TEST(Bytes, EqualBytesFindsADifferenceAtEveryPositionOfEveryLength) {
    // Lengths across the short loop, the word loop with its overlapping tail, and memcmp.
    for (std::size_t n = 0; n <= 40; ++n) {
        std::vector<std::uint8_t> a(n + 1);
        for (std::size_t i = 0; i < a.size(); ++i) {
            a[i] = static_cast<std::uint8_t>(i * 7 + 1);
        }
        std::vector<std::uint8_t> b = a;
        b[n] ^= 0xFFU;  // past the compared range: must not count
        EXPECT_TRUE(equal_bytes(a.data(), b.data(), n)) << n;
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::uint8_t> c = a;
            c[i] ^= 0x01U;
            EXPECT_FALSE(equal_bytes(a.data(), c.data(), n)) << n << " at " << i;
        }
    }
}

}  // namespace
}  // namespace moat
