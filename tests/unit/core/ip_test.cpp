// Addresses and prefixes (moat/core/ip.hpp): whether a prefix holds an address, for every
// prefix length of both families, against a bit-by-bit reading of the definition; and the
// IPv4 address inside an IPv4-mapped IPv6 one.
#include "moat/core/ip.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>

namespace moat {
namespace {

bool bit(const IpAddress& a, unsigned i) {
    return ((static_cast<unsigned>(a.bytes[i / 8U]) >> (7U - i % 8U)) & 1U) != 0;
}

/// The definition: the first prefix_length bits are equal.
bool holds_bit_by_bit(const Cidr& c, const IpAddress& ip) {
    if (c.address.v6 != ip.v6) {
        return false;
    }
    for (unsigned i = 0; i < c.prefix_length; ++i) {
        if (bit(c.address, i) != bit(ip, i)) {
            return false;
        }
    }
    return true;
}

/// `a` with the bits from `length` on cleared, as config stores a prefix.
IpAddress masked(IpAddress a, unsigned length) {
    for (unsigned i = length; i < 128; ++i) {
        a.bytes[i / 8U] = static_cast<std::uint8_t>(a.bytes[i / 8U] & ~(0x80U >> (i % 8U)));
    }
    return a;
}

IpAddress random_address(std::mt19937_64& rng, bool v6) {
    IpAddress a;
    a.v6 = v6;
    for (std::size_t i = 0; i < (v6 ? 16U : 4U); ++i) {
        a.bytes[i] = static_cast<std::uint8_t>(rng());
    }
    return a;
}

TEST(Cidr, HoldsExactlyTheAddressesWhoseLeadingBitsMatch) {
    std::mt19937_64 rng(7);
    for (const bool v6 : {false, true}) {
        const unsigned max = v6 ? 128 : 32;
        for (unsigned length = 0; length <= max; ++length) {
            const IpAddress base = random_address(rng, v6);
            const Cidr cidr{masked(base, length), static_cast<std::uint8_t>(length)};
            EXPECT_TRUE(cidr.contains(base)) << length;
            // One bit flipped at every position: inside the prefix it leaves, beyond it stays.
            for (unsigned flip = 0; flip < max; ++flip) {
                IpAddress other = base;
                other.bytes[flip / 8U] ^= static_cast<std::uint8_t>(0x80U >> (flip % 8U));
                EXPECT_EQ(cidr.contains(other), flip >= length) << length << " flip " << flip;
            }
            for (int i = 0; i < 64; ++i) {
                const IpAddress any = random_address(rng, v6);
                EXPECT_EQ(cidr.contains(any), holds_bit_by_bit(cidr, any)) << length;
            }
        }
    }
}

TEST(Cidr, NeverHoldsTheOtherFamily) {
    const Cidr everything_v4{{}, 0};
    IpAddress v6{};
    v6.v6 = true;
    EXPECT_FALSE(everything_v4.contains(v6));
    const Cidr everything_v6{v6, 0};
    EXPECT_FALSE(everything_v6.contains(IpAddress::v4_of(10, 0, 0, 1)));
    EXPECT_TRUE(everything_v6.contains(v6));
}

TEST(IpAddress, UnmappedTakesTheIpv4AddressOutOfAMappedOne) {
    IpAddress mapped{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 9}, true};
    EXPECT_EQ(mapped.unmapped(), IpAddress::v4_of(192, 168, 1, 9));
    IpAddress not_mapped = mapped;
    not_mapped.bytes[10] = 0xFE;  // ::fffe:c0a8:109 is an IPv6 address of its own
    EXPECT_EQ(not_mapped.unmapped(), not_mapped);
    IpAddress compatible = mapped;  // ::c0a8:109, the deprecated IPv4-compatible form
    compatible.bytes[10] = 0;
    compatible.bytes[11] = 0;
    EXPECT_EQ(compatible.unmapped(), compatible);
    IpAddress v4_fields = mapped;  // the same octets, but an IPv4 address: left as it is
    v4_fields.v6 = false;
    EXPECT_EQ(v4_fields.unmapped(), v4_fields);
    IpAddress leading = mapped;
    leading.bytes[0] = 0x20;
    EXPECT_EQ(leading.unmapped(), leading);
}

}  // namespace
}  // namespace moat
