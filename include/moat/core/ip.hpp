// IP addresses and prefixes as plain values, shared by the modules that meet client and server
// addresses (config parses them, engine checks clients against prefixes, upstream and server
// convert them to socket addresses).
//
// No heap, no sockets: 16 bytes in network order plus a family flag. Text parsing lives in
// config (moat/config/values.hpp), where its error messages belong.
#pragma once

#include <arpa/inet.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace moat {

/// An IPv4 or IPv6 address in network byte order. IPv4 uses the first 4 bytes, the rest are 0.
struct IpAddress {
    std::array<std::uint8_t, 16> bytes{};
    bool v6 = false;

    [[nodiscard]] static IpAddress v4_of(std::uint8_t a, std::uint8_t b, std::uint8_t c,
                                         std::uint8_t d) noexcept {
        return {{a, b, c, d}, false};
    }
    /// The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d), else itself: a
    /// dual-stack socket reports IPv4 clients that way, and prefixes are written as IPv4.
    [[nodiscard]] IpAddress unmapped() const noexcept {
        static constexpr std::array<std::uint8_t, 12> kMapped{0, 0, 0, 0, 0,    0,
                                                              0, 0, 0, 0, 0xFF, 0xFF};
        for (std::size_t i = 0; i < kMapped.size(); ++i) {
            if (!v6 || bytes[i] != kMapped[i]) {
                return *this;
            }
        }
        return v4_of(bytes[12], bytes[13], bytes[14], bytes[15]);
    }
    /// 127.0.0.0/8 or ::1 (or 127/8 mapped into IPv6): only this machine can reach it.
    [[nodiscard]] bool is_loopback() const noexcept {
        const IpAddress a = unmapped();
        if (!a.v6) {
            return a.bytes[0] == 127;
        }
        for (std::size_t i = 0; i < 15; ++i) {
            if (a.bytes[i] != 0) {
                return false;
            }
        }
        return a.bytes[15] == 1;
    }
    /// Canonical text ("192.168.1.1", "fd00::1").
    [[nodiscard]] std::string to_text() const {
        std::array<char, INET6_ADDRSTRLEN> buf{};
        inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf.data(), buf.size());
        return buf.data();
    }

    friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

/// "192.168.1.1:53" or "[fd00::1]:53": an address and port as configs and logs write them.
[[nodiscard]] inline std::string endpoint_text(const IpAddress& address, std::uint16_t port) {
    return address.v6 ? "[" + address.to_text() + "]:" + std::to_string(port)
                      : address.to_text() + ":" + std::to_string(port);
}

/// An address prefix; bits of `address` beyond `prefix_length` are zero.
struct Cidr {
    IpAddress address;
    std::uint8_t prefix_length = 0;  ///< 0..32 (IPv4) or 0..128 (IPv6)

    /// True when `ip` (of the same family) lies inside the prefix.
    [[nodiscard]] bool contains(const IpAddress& ip) const noexcept {
        if (ip.v6 != address.v6) {
            return false;
        }
        const std::size_t full = prefix_length / 8U;
        for (std::size_t i = 0; i < full; ++i) {
            if (ip.bytes[i] != address.bytes[i]) {
                return false;
            }
        }
        const unsigned rest = prefix_length % 8U;
        if (rest == 0) {
            return true;
        }
        const auto mask = static_cast<std::uint8_t>(0xFFU << (8U - rest));
        return (ip.bytes[full] & mask) == address.bytes[full];
    }
    [[nodiscard]] std::string to_text() const {
        return address.to_text() + "/" + std::to_string(prefix_length);
    }

    friend bool operator==(const Cidr&, const Cidr&) = default;
};

}  // namespace moat
