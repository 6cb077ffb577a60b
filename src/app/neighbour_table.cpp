#include "neighbour_table.hpp"

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace moat::app {
namespace {

bool address_less(const IpAddress& a, const IpAddress& b) noexcept {
    return a.v6 != b.v6 ? !a.v6 : a.bytes < b.bytes;
}

constexpr std::size_t align4(std::size_t n) noexcept { return (n + 3U) & ~std::size_t{3}; }

/// The (address, MAC) of one RTM_NEWNEIGH message (`msg`: its bytes after the netlink header),
/// when it has both and the entry is usable. Read with memcpy: netlink's own macros cast in
/// ways the warnings of this build reject.
std::optional<std::pair<IpAddress, MacAddress>> parse_neighbour(const std::uint8_t* msg,
                                                                std::size_t size) {
    ndmsg nd{};
    if (size < sizeof(nd)) {
        return std::nullopt;
    }
    std::memcpy(&nd, msg, sizeof(nd));
    if ((nd.ndm_family != AF_INET && nd.ndm_family != AF_INET6) ||
        (nd.ndm_state & (NUD_INCOMPLETE | NUD_FAILED | NUD_NOARP)) != 0) {
        return std::nullopt;
    }
    std::optional<IpAddress> ip;
    std::optional<MacAddress> mac;
    for (std::size_t at = align4(sizeof(nd)); at + sizeof(rtattr) <= size;) {
        rtattr attr{};
        std::memcpy(&attr, msg + at, sizeof(attr));
        if (attr.rta_len < sizeof(attr) || at + attr.rta_len > size) {
            break;
        }
        const std::uint8_t* data = msg + at + align4(sizeof(attr));
        const std::size_t length = attr.rta_len - align4(sizeof(attr));
        if (attr.rta_type == NDA_DST && (length == 4 || length == 16)) {
            IpAddress addr;
            addr.v6 = length == 16;
            std::memcpy(addr.bytes.data(), data, length);
            ip = addr;
        } else if (attr.rta_type == NDA_LLADDR && length == 6) {
            MacAddress m;
            std::memcpy(m.bytes.data(), data, 6);
            mac = m;
        }
        at += align4(attr.rta_len);
    }
    if (!ip || !mac) {
        return std::nullopt;
    }
    return std::make_pair(*ip, *mac);
}

}  // namespace

std::vector<std::pair<IpAddress, MacAddress>> read_neighbours() {
    std::vector<std::pair<IpAddress, MacAddress>> out;
    const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        return out;
    }
    struct Request {
        nlmsghdr header;
        ndmsg body;
    } request{};
    request.header.nlmsg_len = sizeof(request);
    request.header.nlmsg_type = RTM_GETNEIGH;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.nlmsg_seq = 1;
    request.body.ndm_family = AF_UNSPEC;
    if (::send(fd, &request, sizeof(request), 0) < 0) {
        ::close(fd);
        return out;
    }
    std::array<std::uint8_t, 32768> buf{};
    bool done = false;
    while (!done) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            break;
        }
        const auto got = static_cast<std::size_t>(n);
        for (std::size_t at = 0; at + sizeof(nlmsghdr) <= got;) {
            nlmsghdr h{};
            std::memcpy(&h, buf.data() + at, sizeof(h));
            if (h.nlmsg_len < sizeof(h) || at + h.nlmsg_len > got) {
                break;
            }
            if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
                done = true;
                break;
            }
            if (h.nlmsg_type == RTM_NEWNEIGH) {
                const std::size_t header = align4(sizeof(h));
                if (auto entry = parse_neighbour(buf.data() + at + header, h.nlmsg_len - header)) {
                    out.push_back(*entry);
                }
            }
            at += align4(h.nlmsg_len);
        }
    }
    ::close(fd);
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return address_less(a.first, b.first); });
    return out;
}

void NeighbourTable::start() { refresh(); }

void NeighbourTable::refresh() {
    entries_ = read_neighbours();
    timer_.expires_after(kRefresh);
    timer_.async_wait([this](const std::error_code& ec) {
        if (!ec) {
            refresh();
        }
    });
}

std::optional<MacAddress> NeighbourTable::mac_of(const IpAddress& ip) const noexcept {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), ip,
        [](const auto& entry, const IpAddress& key) { return address_less(entry.first, key); });
    if (it == entries_.end() || !(it->first == ip)) {
        return std::nullopt;
    }
    return it->second;
}

}  // namespace moat::app
