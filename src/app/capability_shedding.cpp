#include "capability_shedding.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "environment.hpp"
#include "moat/core/log.hpp"
#include "privileges.hpp"

namespace moat::app {
namespace {

constexpr int kFirstFd = 3;  // SD_LISTEN_FDS_START
/// Set for the new image, so its log says where its sockets came from.
constexpr const char* kMarker = "MOAT_SOCKETS_FROM_SELF";

bool holds_bind_capability() {
    const auto held = capabilities();
    return held && ((*held)[0].effective & (1U << CAP_NET_BIND_SERVICE)) != 0;
}

struct BoundSocket {
    int fd = -1;
    const char* name = "dns";
};

/// A socket bound like the server's own listeners (IPv6 sockets IPv6-only, TCP listening with
/// SO_REUSEADDR, UDP with a large receive buffer); -1 after logging the error.
int bind_socket(const config::Endpoint& e, bool datagram) {
    const int family = e.address.v6 ? AF_INET6 : AF_INET;
    const int fd = ::socket(family, (datagram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    const int on = 1;
    if (e.address.v6) {
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
    }
    if (datagram) {
        const int buffer = 4 << 20;
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    } else {
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    }
    sockaddr_storage address{};
    socklen_t length = 0;
    if (e.address.v6) {
        sockaddr_in6 v6{};
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(e.port);
        std::memcpy(&v6.sin6_addr, e.address.bytes.data(), 16);
        std::memcpy(&address, &v6, sizeof(v6));
        length = sizeof(v6);
    } else {
        sockaddr_in v4{};
        v4.sin_family = AF_INET;
        v4.sin_port = htons(e.port);
        std::memcpy(&v4.sin_addr, e.address.bytes.data(), 4);
        std::memcpy(&address, &v4, sizeof(v4));
        length = sizeof(v4);
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
        (!datagram && ::listen(fd, SOMAXCONN) != 0)) {
        const int error = errno;
        ::close(fd);
        log::debug("{} {}: {}", datagram ? "udp" : "tcp", e.to_text(),
                   std::system_category().message(error));
        return -1;
    }
    return fd;
}

/// Every DNS listener of the config, bound; empty when one could not be.
std::vector<BoundSocket> bind_listeners(const config::ServerConfig& s) {
    std::vector<BoundSocket> out;
    const auto add = [&](const std::vector<config::Endpoint>& endpoints, bool datagram,
                         const char* name) {
        for (const config::Endpoint& e : endpoints) {
            const int fd = bind_socket(e, datagram);
            if (fd < 0) {
                return false;
            }
            out.push_back({fd, name});
        }
        return true;
    };
    const bool bound = add(s.listen, true, "dns") && add(s.listen, false, "dns") &&
                       add(s.dot, false, "dot") && add(s.doh, false, "doh") &&
                       add(s.doh_plain, false, "doh_plain");
    if (!bound) {
        for (const BoundSocket& b : out) {
            ::close(b.fd);
        }
        out.clear();
    }
    return out;
}

/// Moves the sockets to descriptors 3, 4, ... in order, without the close-on-exec flag.
bool arrange(std::vector<BoundSocket>& sockets) {
    // First above every target, so no dup2 below overwrites a socket still to be moved.
    const int above = kFirstFd + static_cast<int>(sockets.size());
    for (BoundSocket& b : sockets) {
        const int high = ::fcntl(b.fd, F_DUPFD_CLOEXEC, above);
        if (high < 0) {
            return false;
        }
        ::close(b.fd);
        b.fd = high;
    }
    int target = kFirstFd;
    for (BoundSocket& b : sockets) {
        if (::dup2(b.fd, target) < 0) {  // dup2 leaves the new descriptor without FD_CLOEXEC
            return false;
        }
        ::close(b.fd);
        b.fd = target++;
    }
    return true;
}

}  // namespace

void shed_capabilities_by_reexec(const config::Config& config, char** argv) {
    if (::geteuid() == 0 || env_text("LISTEN_FDS") != nullptr || !holds_bind_capability()) {
        return;
    }
    std::vector<BoundSocket> sockets = bind_listeners(config.server);
    if (sockets.empty()) {
        return;  // the normal start binds again and reports the address that failed
    }
    std::string names;
    for (const BoundSocket& b : sockets) {
        names += names.empty() ? b.name : std::string(":") + b.name;
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 || !arrange(sockets)) {
        log::warn("cannot hand the sockets over to drop CAP_NET_BIND_SERVICE: {}",
                  std::system_category().message(errno));
        return;
    }
    log::info("{} DNS sockets bound; running again without CAP_NET_BIND_SERVICE", sockets.size());
    env_set("LISTEN_FDS", std::to_string(sockets.size()).c_str());
    env_set("LISTEN_PID", std::to_string(::getpid()).c_str());  // exec keeps the pid
    env_set("LISTEN_FDNAMES", names.c_str());
    env_set(kMarker, "1");
    ::execv("/proc/self/exe", argv);
    log::error("cannot run /proc/self/exe again: {}", std::system_category().message(errno));
    for (const BoundSocket& b : sockets) {
        ::close(b.fd);
    }
    env_clear("LISTEN_FDS");
    env_clear("LISTEN_PID");
    env_clear("LISTEN_FDNAMES");
    env_clear(kMarker);
}

const char* handed_over_by() {
    return env_text(kMarker) != nullptr ? "(bound before the capability was dropped)"
                                        : "(socket from systemd)";
}

}  // namespace moat::app
