// Value parsers of the config: addresses, endpoints, CIDRs, durations, sizes.
#include "moat/config/values.hpp"

#include <gtest/gtest.h>

namespace moat::config {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(Values, ParsesEndpoints) {
    const auto v4 = parse_endpoint("192.0.2.1:5353");
    ASSERT_TRUE(v4);
    EXPECT_EQ(v4->address, IpAddress::v4_of(192, 0, 2, 1));
    EXPECT_EQ(v4->port, 5353);
    EXPECT_EQ(v4->to_text(), "192.0.2.1:5353");

    const auto v6 = parse_endpoint("[2001:db8::1]:53");
    ASSERT_TRUE(v6);
    EXPECT_TRUE(v6->address.v6);
    EXPECT_EQ(v6->port, 53);
    EXPECT_EQ(v6->to_text(), "[2001:db8::1]:53");

    EXPECT_EQ(parse_endpoint("192.0.2.1", 53)->port, 53);
    EXPECT_EQ(parse_endpoint("2001:db8::1", 53)->to_text(), "[2001:db8::1]:53");
    EXPECT_EQ(parse_endpoint("[2001:db8::1]", 53)->port, 53);
}

TEST(Values, RejectsBadEndpoints) {
    for (const char* bad :
         {"", "192.0.2.1", "192.0.2.1:", "192.0.2.1:0", "192.0.2.1:65536", "192.0.2.1:99999",
          "192.0.2.256:53", "2001:db8::1:53", "[192.0.2.1]:53", "[2001:db8::1]53", "[2001:db8::1",
          "host.example:53", "1.2.3:53", "192.0.2.1:53x"}) {
        EXPECT_FALSE(parse_endpoint(bad)) << bad;
    }
    EXPECT_EQ(parse_endpoint("127.0.0.1:99999").error(),
              "\"127.0.0.1:99999\" is not a valid address:port");
    EXPECT_NE(parse_endpoint("2001:db8::1:53").error().find("[ADDR]:PORT"), std::string::npos);
}

TEST(Values, ParsesCidrs) {
    const auto net = parse_cidr("10.0.0.0/8");
    ASSERT_TRUE(net);
    EXPECT_EQ(net->prefix_length, 8);
    EXPECT_TRUE(net->contains(IpAddress::v4_of(10, 1, 2, 3)));
    EXPECT_FALSE(net->contains(IpAddress::v4_of(11, 0, 0, 1)));

    const auto ula = parse_cidr("fc00::/7");
    ASSERT_TRUE(ula);
    EXPECT_TRUE(ula->address.v6);
    EXPECT_TRUE(ula->contains(*parse_ip("fd12:3456::1")));
    EXPECT_FALSE(ula->contains(*parse_ip("fe80::1")));
    EXPECT_FALSE(ula->contains(IpAddress::v4_of(10, 0, 0, 1)));

    const auto link = parse_cidr("fe80::/10");
    ASSERT_TRUE(link);
    EXPECT_TRUE(link->contains(*parse_ip("febf::1")));
    EXPECT_FALSE(link->contains(*parse_ip("fec0::1")));

    EXPECT_EQ(parse_cidr("192.0.2.7")->prefix_length, 32);
    EXPECT_EQ(parse_cidr("::1")->prefix_length, 128);
    EXPECT_EQ(parse_cidr("0.0.0.0/0")->to_text(), "0.0.0.0/0");
    EXPECT_EQ(parse_cidr("100.64.0.0/10")->to_text(), "100.64.0.0/10");
}

TEST(Values, RejectsBadCidrs) {
    for (const char* bad :
         {"", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0/8", "/8", "fe80::/-1"}) {
        EXPECT_FALSE(parse_cidr(bad)) << bad;
    }
    EXPECT_EQ(parse_cidr("10.1.0.0/8").error(),
              "\"10.1.0.0/8\" is not a valid CIDR prefix: host bits are set (the network is "
              "10.0.0.0/8)");
    EXPECT_FALSE(parse_cidr("fe80::1/10"));
}

TEST(Values, ParsesDurations) {
    EXPECT_EQ(*parse_duration("30s"), seconds{30});
    EXPECT_EQ(*parse_duration("5m"), minutes{5});
    EXPECT_EQ(*parse_duration("24h"), hours{24});
    EXPECT_EQ(*parse_duration("7d"), hours{24 * 7});
    EXPECT_EQ(*parse_duration("500ms"), milliseconds{500});
    EXPECT_EQ(*parse_duration("1h30m"), minutes{90});
    EXPECT_EQ(*parse_duration("0s"), milliseconds{0});
    for (const char* bad : {"", "30", "s", "30x", "-5s", "1.5h", "30 s", "30S", "99999999d"}) {
        EXPECT_FALSE(parse_duration(bad)) << bad;
    }
    EXPECT_EQ(format_duration(minutes{90}), "1h30m");
    EXPECT_EQ(format_duration(milliseconds{0}), "0s");
    EXPECT_EQ(format_duration(milliseconds{1500}), "1s500ms");
}

TEST(Values, ParsesSizes) {
    EXPECT_EQ(*parse_size("32MiB"), 32ULL << 20U);
    EXPECT_EQ(*parse_size("64KiB"), 64ULL << 10U);
    EXPECT_EQ(*parse_size("2GiB"), 2ULL << 30U);
    EXPECT_EQ(*parse_size("10MB"), 10'000'000ULL);
    EXPECT_EQ(*parse_size("1000"), 1000ULL);
    EXPECT_EQ(*parse_size("512B"), 512ULL);
    for (const char* bad : {"", "MiB", "32mib", "32 MiB", "-1", "1.5MiB", "32TiB"}) {
        EXPECT_FALSE(parse_size(bad)) << bad;
    }
}

}  // namespace
}  // namespace moat::config
