#include "socket_activation.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "environment.hpp"
#include "moat/core/ip.hpp"

namespace moat::app {
namespace {

constexpr int kFirstFd = 3;  // SD_LISTEN_FDS_START

std::vector<std::string> split_names(const char* text, std::size_t count) {
    std::vector<std::string> names;
    std::string_view rest = text != nullptr ? text : "";
    while (!rest.empty() || names.size() < count) {
        const std::size_t colon = rest.find(':');
        names.emplace_back(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        if (names.size() >= count) {
            break;
        }
    }
    return names;
}

server::ListenerKind kind_of_name(std::string_view name) {
    if (name == "dot") {
        return server::ListenerKind::dot;
    }
    if (name == "doh") {
        return server::ListenerKind::doh;
    }
    if (name == "doh_plain" || name == "doh-plain") {
        return server::ListenerKind::doh_plain;
    }
    return server::ListenerKind::dns;
}

const char* kind_text(server::ListenerKind kind, bool datagram) {
    switch (kind) {
        case server::ListenerKind::dns: return datagram ? "udp" : "tcp";
        case server::ListenerKind::dot: return "dns over tls";
        case server::ListenerKind::doh: return "dns over https";
        case server::ListenerKind::doh_plain: return "dns over plain http";
    }
    return "tcp";
}

/// "ADDR:PORT" or "[ADDR]:PORT" of a bound socket; empty when it is not an IP socket.
std::string local_address(int fd) {
    sockaddr_storage storage{};
    socklen_t length = sizeof(storage);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
        return {};
    }
    IpAddress ip;
    std::uint16_t port = 0;
    if (storage.ss_family == AF_INET) {
        sockaddr_in v4{};
        std::memcpy(&v4, &storage, sizeof(v4));
        std::memcpy(ip.bytes.data(), &v4.sin_addr, 4);
        port = ntohs(v4.sin_port);
    } else if (storage.ss_family == AF_INET6) {
        sockaddr_in6 v6{};
        std::memcpy(&v6, &storage, sizeof(v6));
        std::memcpy(ip.bytes.data(), &v6.sin6_addr, 16);
        ip.v6 = true;
        port = ntohs(v6.sin6_port);
    } else {
        return {};
    }
    return endpoint_text(ip, port);
}

}  // namespace

tl::expected<std::vector<ActivatedSocket>, std::string> sockets_from_systemd() {
    const auto pid = env_number("LISTEN_PID");
    const auto count = env_number("LISTEN_FDS");
    const char* names_text = env_text("LISTEN_FDNAMES");
    const std::vector<std::string> names =
        split_names(names_text, count ? static_cast<std::size_t>(std::max(0LL, *count)) : 0);
    env_clear("LISTEN_PID");
    env_clear("LISTEN_FDS");
    env_clear("LISTEN_FDNAMES");
    std::vector<ActivatedSocket> out;
    if (!pid || *pid != static_cast<long long>(::getpid()) || !count || *count <= 0) {
        return out;
    }
    for (int i = 0; i < *count; ++i) {
        const int fd = kFirstFd + i;
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // not for the list downloader's child process
        int type = 0;
        socklen_t length = sizeof(type);
        const std::string address = local_address(fd);
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || address.empty() ||
            (type != SOCK_DGRAM && type != SOCK_STREAM)) {
            return tl::unexpected("systemd passed descriptor " + std::to_string(fd) +
                                  ", which is not a UDP or TCP socket on an IP address");
        }
        const std::string& name = names[static_cast<std::size_t>(i)];
        const server::ListenerKind kind = kind_of_name(name);
        const bool datagram = type == SOCK_DGRAM;
        if (datagram && kind != server::ListenerKind::dns) {
            std::string error = "systemd passed a datagram socket (" + address;
            error += ") named \"" + name + "\"; DNS over TLS and HTTPS need a stream socket";
            return tl::unexpected(error);
        }
        out.push_back(
            {{fd, kind, datagram}, std::string(kind_text(kind, datagram)) + " " + address});
    }
    return out;
}

}  // namespace moat::app
