// The client read from the address recvmmsg fills in: IPv4, IPv6, an IPv4-mapped IPv6 address
// as its IPv4 address, and anything else refused; each checked against what Asio's endpoint
// made of the same address before (moat::upstream::from_asio).
#include "datagram_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <asio/ip/udp.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "moat/upstream/address.hpp"

namespace moat::server {
namespace {

/// The kernel's form of `text`:`port`, and its length.
std::pair<sockaddr_storage, socklen_t> address_of(const std::string& text, std::uint16_t port) {
    const asio::ip::udp::endpoint endpoint(asio::ip::make_address(text), port);
    sockaddr_storage storage{};
    std::memcpy(&storage, endpoint.data(), endpoint.size());
    return {storage, static_cast<socklen_t>(endpoint.size())};
}

void expect_client(const std::string& text, std::uint16_t port, const std::string& shown) {
    const auto [storage, length] = address_of(text, port);
    engine::Client client;
    client.transport = engine::Transport::tcp;  // overwritten
    ASSERT_TRUE(read_datagram_client(storage, length, client)) << text;
    EXPECT_EQ(client.address.to_text(), shown);
    EXPECT_EQ(client.address, upstream::from_asio(asio::ip::make_address(text)));
    EXPECT_EQ(client.port, port);
    EXPECT_EQ(client.transport, engine::Transport::udp);
}

TEST(DatagramClient, IPv4) { expect_client("192.168.1.20", 53000, "192.168.1.20"); }

TEST(DatagramClient, IPv6) {
    expect_client("fd00::5", 1, "fd00::5");
    expect_client("::1", 65535, "::1");
}

TEST(DatagramClient, AnIPv4MappedAddressIsItsIPv4Address) {
    expect_client("::ffff:10.0.0.7", 4242, "10.0.0.7");
    const auto [storage, length] = address_of("::ffff:10.0.0.7", 4242);
    engine::Client client;
    ASSERT_TRUE(read_datagram_client(storage, length, client));
    EXPECT_FALSE(client.address.v6);
    // An IPv6 client before leaves nothing behind.
    const auto [v6, v6_length] = address_of("fd00::1:2:3:4", 53);
    ASSERT_TRUE(read_datagram_client(v6, v6_length, client));
    ASSERT_TRUE(read_datagram_client(storage, length, client));
    EXPECT_EQ(client.address, IpAddress::v4_of(10, 0, 0, 7));
}

TEST(DatagramClient, AnotherFamilyOrAShortAddressIsRefused) {
    engine::Client client;
    sockaddr_storage unix_address{};
    unix_address.ss_family = AF_UNIX;
    EXPECT_FALSE(read_datagram_client(unix_address, sizeof(unix_address), client));
    const auto [v4, v4_length] = address_of("192.168.1.20", 53);
    EXPECT_FALSE(read_datagram_client(v4, v4_length - 1, client));
    const auto [v6, v6_length] = address_of("fd00::5", 53);
    EXPECT_FALSE(read_datagram_client(v6, v6_length - 1, client));
}

}  // namespace
}  // namespace moat::server
