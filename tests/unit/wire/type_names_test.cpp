// RR type mnemonics both ways: known names in any case, RFC 3597 TYPEnnn and bare numbers, and
// text that is neither.
#include "moat/wire/type_names.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

namespace moat::wire {
namespace {

TEST(TypeNames, KnownTypesRoundTrip) {
    for (const std::uint16_t t :
         std::initializer_list<std::uint16_t>{1, 2, 5, 6, 12, 15, 16, 28, 33, 64, 65, 255, 257}) {
        EXPECT_EQ(type_from_name(type_name(t)), t) << type_name(t);
    }
    EXPECT_EQ(type_name(28), "AAAA");
    EXPECT_EQ(type_name(65), "HTTPS");
}

TEST(TypeNames, OthersUseRfc3597Text) {
    EXPECT_EQ(type_name(4242), "TYPE4242");
    EXPECT_EQ(type_from_name("TYPE4242"), 4242);
    EXPECT_EQ(type_from_name("type65"), 65);
    EXPECT_EQ(type_from_name("aaaa"), 28);
    EXPECT_EQ(type_from_name("16"), 16);
}

TEST(TypeNames, RejectsWhatIsNotAType) {
    for (const char* bad : {"", "AAAAA", "TYPE", "TYPE-1", "TYPE65536", "12x", "A A"}) {
        EXPECT_FALSE(type_from_name(bad).has_value()) << bad;
    }
}

}  // namespace
}  // namespace moat::wire
