// The PROXY protocol v2 header (haproxy's proxy-protocol.txt, §2.2) that a load balancer sends
// before a client's bytes, so a listener behind it learns the real client address.
//
// Pure bytes: no socket, no Asio, no allocation. A listener feeds the bytes received so far and
// gets one of three answers:
//   * incomplete: a valid prefix; read until `needed` octets are in (16 until the length field
//     has arrived, then the whole header).
//   * invalid: drop the connection. Decided as soon as a wrong byte arrives, so a plain DNS
//     client on a PROXY-enabled port is refused at its first octet instead of waiting for more.
//     The spec says so: a receiver must not guess whether a header is present, and refuses
//     unknown versions, commands and family/transport pairs.
//   * complete: the header occupies the first `header.length` octets; the client's bytes
//     follow. `header.addresses` is set only for PROXY over TCP/UDP on IPv4/IPv6. For LOCAL
//     (health checks of the proxy itself), for UNSPEC and for AF_UNIX it is empty and the
//     caller keeps the socket's own peer (§2.2 requires that for LOCAL and allows it for the
//     families we cannot represent as an IpAddress).
//
// Version 1 (the text form, "PROXY TCP4 ...") is refused: it starts with 'P', not the v2
// signature. TLVs after the addresses are checked for framing (each lies inside the header) and
// skipped. A header longer than `max_length` is refused when its length field arrives; the
// default, 2048 octets, holds the largest address block (AF_UNIX, 216) with the TLVs haproxy and
// the cloud load balancers send (ALPN, authority, unique ID, SSL details, VPC endpoint IDs),
// while a peer cannot make a connection buffer up to 64 KiB before its first query. A proxy
// that forwards whole client certificates (PP2_SUBTYPE_SSL_CLIENT_CERT) needs a larger cap.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "moat/core/ip.hpp"

namespace moat::server {

/// The 12 octets every v2 header starts with.
inline constexpr std::array<std::uint8_t, 12> kProxyV2Signature{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                                0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
/// Signature, version/command, family/transport and the 16-bit length.
inline constexpr std::size_t kProxyV2FixedSize = 16;
/// Default cap on a whole header, fixed part included (see above).
inline constexpr std::size_t kProxyV2DefaultMaxLength = 2048;

enum class ProxyCommand : std::uint8_t {
    local = 0,  ///< the proxy's own connection (e.g. a health check): use the socket's peer
    proxy = 1,  ///< a relayed client connection
};

enum class ProxyTransport : std::uint8_t {
    stream = 1,  ///< TCP
    dgram = 2,   ///< UDP
};

struct ProxyEndpoint {
    IpAddress address;
    std::uint16_t port = 0;  ///< host byte order

    friend bool operator==(const ProxyEndpoint&, const ProxyEndpoint&) = default;
};

/// The client connection as the proxy saw it.
struct ProxyAddresses {
    ProxyTransport transport = ProxyTransport::stream;
    ProxyEndpoint source;       ///< the client
    ProxyEndpoint destination;  ///< the address the client connected to on the proxy

    friend bool operator==(const ProxyAddresses&, const ProxyAddresses&) = default;
};

struct ProxyHeader {
    std::size_t length = 0;  ///< octets of the header: 16 + its length field
    ProxyCommand command = ProxyCommand::local;
    /// Set only for PROXY with AF_INET or AF_INET6; otherwise keep the socket's peer.
    std::optional<ProxyAddresses> addresses;
};

struct ProxyParse {
    enum class State : std::uint8_t { incomplete, invalid, complete };

    State state = State::incomplete;
    /// incomplete: the total octets (from the first) needed before the answer can change.
    std::size_t needed = 0;
    /// invalid: a short fixed phrase for logs ("bad signature", ...).
    std::string_view reason;
    /// complete: the parsed header.
    ProxyHeader header;
};

/// Parses the PROXY v2 header at the start of `bytes` (which may hold client data after it).
[[nodiscard]] ProxyParse parse_proxy_v2(std::span<const std::uint8_t> bytes,
                                        std::size_t max_length = kProxyV2DefaultMaxLength) noexcept;

}  // namespace moat::server
