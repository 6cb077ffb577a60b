// Conversions between moat::IpAddress and Asio's addresses, for the modules that own sockets.
#pragma once

#include <algorithm>
#include <asio/ip/address.hpp>

#include "moat/core/ip.hpp"

namespace moat::upstream {

inline asio::ip::address to_asio(const IpAddress& ip) {
    if (ip.v6) {
        asio::ip::address_v6::bytes_type b{};
        std::copy(ip.bytes.begin(), ip.bytes.end(), b.begin());
        return asio::ip::address_v6(b);
    }
    return asio::ip::address_v4({ip.bytes[0], ip.bytes[1], ip.bytes[2], ip.bytes[3]});
}

/// An IPv4-mapped IPv6 address (::ffff:a.b.c.d, a client on a dual-stack socket such as one
/// systemd made) becomes the IPv4 address it is, so access rules and groups match it.
inline IpAddress from_asio(const asio::ip::address& a) {
    IpAddress ip;
    if (a.is_v6() && a.to_v6().is_v4_mapped()) {
        const auto b = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_bytes();
        std::copy(b.begin(), b.end(), ip.bytes.begin());
    } else if (a.is_v6()) {
        const auto b = a.to_v6().to_bytes();
        std::copy(b.begin(), b.end(), ip.bytes.begin());
        ip.v6 = true;
    } else {
        const auto b = a.to_v4().to_bytes();
        std::copy(b.begin(), b.end(), ip.bytes.begin());
    }
    return ip;
}

}  // namespace moat::upstream
