// Whether a wire name is in a zone (name_match.hpp): the zone itself and names below it are, a
// name whose last label merely ends in the zone's octets is not.
#include "name_match.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moat::engine {
namespace {

bool under(const wire::Name& name, const wire::Name& zone) {
    return is_under(name.wire(), zone.wire());
}

TEST(IsUnder, TheZoneAndNamesBelowItAre) {
    const wire::Name localhost = name_of("localhost.");
    EXPECT_TRUE(under(name_of("localhost."), localhost));
    EXPECT_TRUE(under(name_of("a.localhost."), localhost));
    EXPECT_TRUE(under(name_of("x.y.z.localhost."), localhost));
    EXPECT_TRUE(under(name_of("www.example.com."), name_of(".")));
    EXPECT_TRUE(under(name_of("."), name_of(".")));
    EXPECT_TRUE(under(name_of("10.in-addr.arpa."), name_of("in-addr.arpa.")));
}

TEST(IsUnder, OtherNamesAreNot) {
    const wire::Name localhost = name_of("localhost.");
    EXPECT_FALSE(under(name_of("."), localhost));
    EXPECT_FALSE(under(name_of("localhost.com."), localhost));
    EXPECT_FALSE(under(name_of("xlocalhost."), localhost));
    EXPECT_FALSE(under(name_of("host."), localhost));
    EXPECT_FALSE(under(name_of("in-addr.arpa."), name_of("10.in-addr.arpa.")));
}

TEST(IsUnder, ALabelEndingInTheZonesOctetsIsNotTheZone) {
    // One label "a\009localhost": its last 11 octets are localhost.'s wire form, length octet
    // included, but they start inside the label.
    const std::vector<std::uint8_t> inside = {11,  'a', 9,   'l', 'o', 'c', 'a',
                                              'l', 'h', 'o', 's', 't', 0};
    const wire::Name localhost = name_of("localhost.");
    EXPECT_FALSE(is_under(inside, localhost.wire()));
    const std::vector<std::uint8_t> below = {1,   'a', 9,   'l', 'o', 'c', 'a',
                                             'l', 'h', 'o', 's', 't', 0};
    EXPECT_TRUE(is_under(below, localhost.wire()));
}

}  // namespace
}  // namespace moat::engine
