// ASCII case folding: letters fold, nothing else does (RFC 4343), whatever the lengths, the
// positions of the differences and whether the spellings are the same.
#include "moat/core/ascii.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace moat {
namespace {

bool iequal(const std::string& a, const std::string& b) { return ascii_iequal(a, b); }

TEST(Ascii, LowerFoldsLettersOnly) {
    for (unsigned c = 0; c < 256; ++c) {
        const auto folded = ascii_lower(static_cast<std::uint8_t>(c));
        if (c >= 'A' && c <= 'Z') {
            EXPECT_EQ(folded, c + 32) << c;
        } else {
            EXPECT_EQ(folded, c) << c;
        }
    }
}

TEST(Ascii, EqualIgnoringCaseAtEveryLengthAndPosition) {
    // Lengths around the word sizes, a difference at every position: the same spelling, a
    // letter in the other case (equal), a different letter and a non-letter pair that differs
    // by 0x20 (not equal).
    for (std::size_t n = 0; n <= 40; ++n) {
        std::string base(n, 'a');
        for (std::size_t i = 0; i < n; ++i) {
            base[i] = static_cast<char>('a' + i % 26);
        }
        EXPECT_TRUE(iequal(base, base)) << n;
        for (std::size_t i = 0; i < n; ++i) {
            std::string upper = base;
            upper[i] = static_cast<char>(upper[i] - 32);
            EXPECT_TRUE(iequal(base, upper)) << n << " at " << i;
            std::string other = base;
            other[i] = other[i] == 'z' ? 'y' : static_cast<char>(other[i] + 1);
            EXPECT_FALSE(iequal(base, other)) << n << " at " << i;
            std::string at = base;
            at[i] = '@';  // 0x40: '`' (0x60) is not its lower case
            std::string backtick = base;
            backtick[i] = '`';
            EXPECT_FALSE(iequal(at, backtick)) << n << " at " << i;
        }
    }
}

TEST(Ascii, OctetsAbove127CompareExactly) {
    const std::vector<std::uint8_t> a{0xC4, 0x41};  // 'Ä' in Latin-1, then 'A'
    const std::vector<std::uint8_t> b{0xE4, 0x61};  // 'ä', then 'a'
    const std::vector<std::uint8_t> c{0xC4, 0x61};
    EXPECT_FALSE(ascii_iequal(a.data(), b.data(), 2));
    EXPECT_TRUE(ascii_iequal(a.data(), c.data(), 2));
}

TEST(Ascii, TextsOfOtherLengthsDiffer) {
    EXPECT_FALSE(iequal("Content-Length", "content-length2"));
    EXPECT_TRUE(iequal("Content-Length", "content-length"));
    EXPECT_TRUE(iequal("", ""));
}

}  // namespace
}  // namespace moat
