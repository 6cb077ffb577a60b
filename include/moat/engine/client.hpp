// Who asked, and over what: the engine's view of a query's origin. Filled by the server from the
// socket; the engine uses it for access control and for the size an answer may have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "moat/core/ip.hpp"

namespace moat::engine {

enum class Transport : std::uint8_t {
    udp,  ///< answers are limited to the client's EDNS buffer (512 without EDNS), then TC
    tcp,  ///< answers up to 65535 octets
    dot,  ///< DNS over TLS (RFC 7858): a stream, like tcp
    doh,  ///< DNS over HTTPS (RFC 8484): one message per HTTP exchange, like tcp
};
inline constexpr std::size_t kTransportCount = 4;

/// True for the transports that carry whole messages (no UDP size limit, no TC).
[[nodiscard]] constexpr bool is_stream(Transport t) noexcept { return t != Transport::udp; }

/// The name in the query log, /metrics and the API: "udp", "tcp", "dot", "doh".
[[nodiscard]] constexpr std::string_view to_text(Transport t) noexcept {
    switch (t) {
        case Transport::udp: return "udp";
        case Transport::tcp: return "tcp";
        case Transport::dot: return "dot";
        case Transport::doh: return "doh";
    }
    return "udp";
}

struct Client {
    IpAddress address;
    std::uint16_t port = 0;
    Transport transport = Transport::udp;
};

}  // namespace moat::engine
