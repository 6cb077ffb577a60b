// The client a datagram came from, read straight from the address recvmmsg filled in.
//
// Why not through an Asio endpoint: copying the kernel's address into one (a copy of its
// variable length) and then reading the endpoint back stalled on store forwarding, about 3% of
// the daemon's time under a load of local names. Fixed-size copies read the address in place.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "moat/engine/client.hpp"

namespace moat::server {

/// Sets `client` to the UDP client at `from` (`length` octets as the kernel gave them); an
/// IPv4-mapped IPv6 address (a dual-stack socket's IPv4 client) becomes the IPv4 address it is,
/// so access rules and groups match it. False for another family or a short address. (Written
/// in place: a Client returned by value was built on the stack and copied with wide loads over
/// narrow stores, the same stall again.)
inline bool read_datagram_client(const sockaddr_storage& from, socklen_t length,
                                 engine::Client& client) noexcept {
    client.transport = engine::Transport::udp;
    client.address = {};
    if (from.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
        sockaddr_in in{};
        std::memcpy(&in, &from, sizeof(in));
        std::memcpy(client.address.bytes.data(), &in.sin_addr, sizeof(in.sin_addr));
        client.port = ntohs(in.sin_port);
        return true;
    }
    if (from.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        sockaddr_in6 in6{};
        std::memcpy(&in6, &from, sizeof(in6));
        std::memcpy(client.address.bytes.data(), &in6.sin6_addr, sizeof(in6.sin6_addr));
        client.address.v6 = true;
        client.address = client.address.unmapped();
        client.port = ntohs(in6.sin6_port);
        return true;
    }
    return false;
}

}  // namespace moat::server
