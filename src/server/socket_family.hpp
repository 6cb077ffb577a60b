// The address family of a socket the daemon did not open itself (socket activation), which Asio
// needs to adopt it.
#pragma once

#include <sys/socket.h>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <optional>

namespace moat::server {

/// AF_INET or AF_INET6 of a bound socket; nullopt for anything else (a Unix socket, a bad fd).
inline std::optional<int> inet_family(int fd) noexcept {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        return std::nullopt;
    }
    if (address.ss_family != AF_INET && address.ss_family != AF_INET6) {
        return std::nullopt;
    }
    return address.ss_family;
}

template <typename Protocol>
Protocol protocol_of(int family) {
    return family == AF_INET6 ? Protocol::v6() : Protocol::v4();
}

}  // namespace moat::server
