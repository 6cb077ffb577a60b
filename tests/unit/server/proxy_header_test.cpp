// parse_proxy_v2(): IPv4 and IPv6 headers with TLVs, LOCAL, UNSPEC and AF_UNIX (no address),
// every prefix of a good header is incomplete with the right count, and each wrong octet is
// refused as soon as it arrives.
#include "moat/server/proxy_header.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace moat::server {
namespace {

using Bytes = std::vector<std::uint8_t>;
using State = ProxyParse::State;

/// A v2 header: signature, the version/command and family/transport octets, the length of
/// `block`, then `block` (addresses and TLVs).
Bytes header(std::uint8_t version_command, std::uint8_t family_transport, const Bytes& block) {
    Bytes out(kProxyV2Signature.begin(), kProxyV2Signature.end());
    out.push_back(version_command);
    out.push_back(family_transport);
    out.push_back(static_cast<std::uint8_t>(block.size() >> 8U));
    out.push_back(static_cast<std::uint8_t>(block.size()));
    out.insert(out.end(), block.begin(), block.end());
    return out;
}

/// One TLV of `size` octets of `fill`.
Bytes tlv(std::uint8_t type, std::size_t size, std::uint8_t fill = 'x') {
    Bytes out(3 + size, fill);
    out[0] = type;
    out[1] = static_cast<std::uint8_t>(size >> 8U);
    out[2] = static_cast<std::uint8_t>(size);
    return out;
}

Bytes operator+(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// 192.0.2.10:51000 -> 198.51.100.1:853
const Bytes kIpv4Block{192, 0, 2, 10, 198, 51, 100, 1, 0xC7, 0x38, 0x03, 0x55};

// [2001:db8::1]:40000 -> [2001:db8::53]:53
Bytes ipv6_block() {
    Bytes out{0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
              0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53};
    return out + Bytes{0x9C, 0x40, 0x00, 0x35};
}

IpAddress ipv6(std::uint8_t last) {
    IpAddress a;
    a.v6 = true;
    a.bytes = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
    return a;
}

// ALPN "dot", AUTHORITY "dns.example", a NOOP of 5 octets: what haproxy may send.
Bytes some_tlvs() {
    return Bytes{0x01, 0x00, 0x03, 'd', 'o', 't'} +
           Bytes{0x02, 0x00, 0x0B, 'd', 'n', 's', '.', 'e', 'x', 'a', 'm', 'p', 'l', 'e'} +
           tlv(0x04, 5, 0);
}

TEST(ProxyV2, Ipv4StreamWithTlvs) {
    const Bytes h = header(0x21, 0x11, kIpv4Block + some_tlvs());
    const Bytes client{0x00, 0x1D, 0xAB, 0xCD};  // the start of a DNS-over-TCP query
    const ProxyParse r = parse_proxy_v2(h + client);
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, h.size());
    EXPECT_EQ(r.header.command, ProxyCommand::proxy);
    ASSERT_TRUE(r.header.addresses);
    EXPECT_EQ(r.header.addresses->transport, ProxyTransport::stream);
    EXPECT_EQ(r.header.addresses->source, (ProxyEndpoint{IpAddress::v4_of(192, 0, 2, 10), 51000}));
    EXPECT_EQ(r.header.addresses->destination,
              (ProxyEndpoint{IpAddress::v4_of(198, 51, 100, 1), 853}));
}

TEST(ProxyV2, Ipv6DgramWithTlv) {
    const Bytes h = header(0x21, 0x22, ipv6_block() + tlv(0x05, 16));  // UNIQUE_ID
    const ProxyParse r = parse_proxy_v2(h);
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, 16U + 36U + 19U);
    ASSERT_TRUE(r.header.addresses);
    EXPECT_EQ(r.header.addresses->transport, ProxyTransport::dgram);
    EXPECT_EQ(r.header.addresses->source, (ProxyEndpoint{ipv6(0x01), 40000}));
    EXPECT_EQ(r.header.addresses->destination, (ProxyEndpoint{ipv6(0x53), 53}));
}

TEST(ProxyV2, AddressesWithoutTlvs) {
    const ProxyParse r = parse_proxy_v2(header(0x21, 0x21, ipv6_block()));
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, 16U + 36U);
    EXPECT_TRUE(r.header.addresses);
}

TEST(ProxyV2, LocalCarriesNoAddress) {
    // The usual health check: LOCAL, UNSPEC, nothing after.
    ProxyParse r = parse_proxy_v2(header(0x20, 0x00, {}));
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, 16U);
    EXPECT_EQ(r.header.command, ProxyCommand::local);
    EXPECT_FALSE(r.header.addresses);

    // LOCAL ignores the family and the block, even when they hold addresses or odd values.
    r = parse_proxy_v2(header(0x20, 0x11, kIpv4Block));
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, 28U);
    EXPECT_FALSE(r.header.addresses);
    r = parse_proxy_v2(header(0x20, 0xFF, Bytes{1, 2, 3}));
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_FALSE(r.header.addresses);
}

TEST(ProxyV2, UnspecAndUnixCarryNoAddress) {
    ProxyParse r = parse_proxy_v2(header(0x21, 0x00, {}));
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.command, ProxyCommand::proxy);
    EXPECT_FALSE(r.header.addresses);

    r = parse_proxy_v2(header(0x21, 0x00, Bytes{9, 9, 9}));  // a block we cannot read: skipped
    ASSERT_EQ(r.state, State::complete) << r.reason;
    EXPECT_EQ(r.header.length, 19U);
    EXPECT_FALSE(r.header.addresses);

    for (const std::uint8_t unix_family : Bytes{0x31, 0x32}) {
        r = parse_proxy_v2(header(0x21, unix_family, Bytes(216, 0) + tlv(0x04, 2)));
        ASSERT_EQ(r.state, State::complete) << r.reason;
        EXPECT_EQ(r.header.length, 16U + 216U + 5U);
        EXPECT_FALSE(r.header.addresses);
    }
}

TEST(ProxyV2, EveryPrefixIsIncomplete) {
    for (const Bytes& h : {header(0x21, 0x11, kIpv4Block + some_tlvs()),
                           header(0x21, 0x21, ipv6_block()), header(0x20, 0x00, {})}) {
        for (std::size_t n = 0; n < h.size(); ++n) {
            const ProxyParse r = parse_proxy_v2(std::span(h).first(n));
            ASSERT_EQ(r.state, State::incomplete) << "prefix " << n << ": " << r.reason;
            EXPECT_EQ(r.needed, n < kProxyV2FixedSize ? kProxyV2FixedSize : h.size())
                << "prefix " << n;
        }
        EXPECT_EQ(parse_proxy_v2(h).state, State::complete);
    }
}

TEST(ProxyV2, WrongSignatureOctetIsRefusedAtOnce) {
    const Bytes good = header(0x21, 0x11, kIpv4Block);
    for (std::size_t i = 0; i < kProxyV2Signature.size(); ++i) {
        Bytes bad = good;
        bad[i] ^= 0x20U;
        // Refused as soon as the wrong octet is in, and with the whole header too.
        for (const std::size_t n : {i + 1, bad.size()}) {
            const ProxyParse r = parse_proxy_v2(std::span(bad).first(n));
            EXPECT_EQ(r.state, State::invalid) << "octet " << i << ", " << n << " octets";
            EXPECT_FALSE(r.reason.empty());
        }
    }
}

TEST(ProxyV2, PlainDnsClientIsRefusedAtItsFirstOctet) {
    // A DNS-over-TCP length prefix, and a TLS ClientHello.
    EXPECT_EQ(parse_proxy_v2(Bytes{0x00}).state, State::invalid);
    EXPECT_EQ(parse_proxy_v2(Bytes{0x16, 0x03, 0x01}).state, State::invalid);
}

TEST(ProxyV2, VersionOneTextHeaderIsRefused) {
    const std::string_view v1 = "PROXY TCP4 192.0.2.10 198.51.100.1 51000 853\r\n";
    const Bytes text(v1.begin(), v1.end());
    for (const std::size_t n : {std::size_t{1}, std::size_t{6}, text.size()}) {
        const ProxyParse r = parse_proxy_v2(std::span(text).first(n));
        EXPECT_EQ(r.state, State::invalid) << n;
        EXPECT_NE(r.reason.find("v1"), std::string_view::npos) << r.reason;
    }
}

TEST(ProxyV2, BadVersionOrCommandIsRefusedAtThirteenOctets) {
    for (const std::uint8_t version_command : Bytes{0x11, 0x01, 0x31, 0xF1, 0x22, 0x2F, 0x23}) {
        const Bytes h = header(version_command, 0x11, kIpv4Block);
        EXPECT_EQ(parse_proxy_v2(std::span(h).first(13)).state, State::invalid)
            << int{version_command};
        EXPECT_EQ(parse_proxy_v2(h).state, State::invalid) << int{version_command};
    }
}

TEST(ProxyV2, BadFamilyOrTransportIsRefusedAtFourteenOctets) {
    for (const std::uint8_t family : Bytes{0x01, 0x02, 0x10, 0x13, 0x20, 0x23, 0x30, 0x41, 0xFF}) {
        const Bytes h = header(0x21, family, kIpv4Block);
        EXPECT_EQ(parse_proxy_v2(std::span(h).first(14)).state, State::invalid) << int{family};
    }
}

TEST(ProxyV2, AddressBlockLongerThanTheHeaderIsRefused) {
    // IPv6 needs 36 octets and the length says 12; IPv4 needs 12 and it says 11. Refused as soon
    // as the length field is in.
    const Bytes v6_short = header(0x21, 0x21, kIpv4Block);
    const Bytes v4_short = header(0x21, 0x11, Bytes(kIpv4Block.begin(), kIpv4Block.end() - 1));
    const Bytes unix_short = header(0x21, 0x31, Bytes(215, 0));
    for (const Bytes& h : {v6_short, v4_short, unix_short}) {
        EXPECT_EQ(parse_proxy_v2(std::span(h).first(16)).state, State::invalid);
        EXPECT_EQ(parse_proxy_v2(h).state, State::invalid);
    }
}

TEST(ProxyV2, TlvOverrunningTheHeaderIsRefused) {
    Bytes block = kIpv4Block + tlv(0x04, 4);
    block[block.size() - 5] = 5;  // the TLV claims one octet more than the header holds
    EXPECT_EQ(parse_proxy_v2(header(0x21, 0x11, block)).state, State::invalid);
    for (const std::size_t stub : {1U, 2U}) {  // fewer octets left than a TLV header
        const ProxyParse r = parse_proxy_v2(header(0x21, 0x11, kIpv4Block + Bytes(stub, 0)));
        EXPECT_EQ(r.state, State::invalid) << stub;
    }
}

TEST(ProxyV2, LengthOverTheCapIsRefusedAtSixteenOctets) {
    // The default cap: 2048 octets in all.
    const Bytes at_cap = header(0x21, 0x11, kIpv4Block + tlv(0x04, kProxyV2DefaultMaxLength - 31));
    ASSERT_EQ(at_cap.size(), kProxyV2DefaultMaxLength);
    EXPECT_EQ(parse_proxy_v2(at_cap).state, State::complete);
    const Bytes over = header(0x21, 0x11, kIpv4Block + tlv(0x04, kProxyV2DefaultMaxLength - 30));
    EXPECT_EQ(parse_proxy_v2(std::span(over).first(16)).state, State::invalid);
    EXPECT_EQ(parse_proxy_v2(over).state, State::invalid);

    // The largest length field, and a caller's own cap.
    const Bytes huge{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51,
                     0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0xFF, 0xFF};
    EXPECT_EQ(parse_proxy_v2(huge).state, State::invalid);
    EXPECT_EQ(parse_proxy_v2(huge, 16 + 65535).state, State::incomplete);
    const Bytes small = header(0x21, 0x11, kIpv4Block + tlv(0x04, 10));
    EXPECT_EQ(parse_proxy_v2(small, small.size()).state, State::complete);
    EXPECT_EQ(parse_proxy_v2(small, small.size() - 1).state, State::invalid);
}

}  // namespace
}  // namespace moat::server
