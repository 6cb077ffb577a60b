// Whether a wire name is in a zone (name_match.hpp): the zone itself and names below it are, a
// name whose last label merely ends in the zone's octets is not. KnownZone, which decides by the
// query's suffix hashes, answers as is_under() does, and a hash that matches the zone's alone
// does not put a name in it.
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

filter::SuffixHashes hashes_of(const wire::Name& name) {
    filter::SuffixHashes hashes;
    hashes.compute(name.wire().data());
    return hashes;
}

bool held(const KnownZone& zone, const wire::Name& name) {
    return zone.holds(name.wire(), hashes_of(name));
}

TEST(KnownZone, AnswersAsIsUnderDoes) {
    const std::vector<const char*> zones = {"localhost.", "resolver.arpa.", "local.",
                                            "in-addr.arpa.", "."};
    const std::vector<const char*> names = {
        ".",           "localhost.", "a.localhost.",        "x.y.z.localhost.", "localhost.com.",
        "xlocalhost.", "host.",      "_dns.resolver.arpa.", "resolver.arpa.",   "arpa.",
        "local.",      "mylocal.",   "local.example.com.",  "10.in-addr.arpa.", "in-addr.arpa."};
    for (const char* z : zones) {
        const KnownZone zone(z);
        for (const char* n : names) {
            const wire::Name name = name_of(n);
            const bool below = is_under(name.wire(), zone.wire());
            EXPECT_EQ(held(zone, name), below) << n << " in " << z;
            EXPECT_EQ(zone.is(name.wire(), hashes_of(name)),
                      below && name.wire().size() == zone.wire().size())
                << n << " is " << z;
        }
    }
}

TEST(KnownZone, IsWrittenInAnyCaseAndHoldsLowerCasedNames) {
    const KnownZone zone("Resolver.ARPA");
    EXPECT_TRUE(held(zone, name_of("_dns.resolver.arpa")));
    EXPECT_FALSE(held(zone, name_of("resolver.arpa.example")));
}

TEST(KnownZone, AnEqualHashAloneDoesNotPutANameInTheZone) {
    const KnownZone localhost("localhost");
    const wire::Name other = name_of("a.example");
    filter::SuffixHashes forged = hashes_of(other);
    // As if the last label's hash collided with localhost's: its octets still differ.
    forged.hash[forged.count - 1] = hashes_of(name_of("localhost")).whole();
    EXPECT_FALSE(localhost.holds(other.wire(), forged));
    const wire::Name inside = name_of("a.localhost");
    EXPECT_TRUE(localhost.holds(inside.wire(), hashes_of(inside)));
}

}  // namespace
}  // namespace moat::engine
