// Who asked, and over what: the engine's view of a query's origin. Filled by the server from the
// socket; the engine uses it for access control and for the size an answer may have.
#pragma once

#include <cstdint>

#include "moat/core/ip.hpp"

namespace moat::engine {

enum class Transport : std::uint8_t {
    udp,  ///< answers are limited to the client's EDNS buffer (512 without EDNS), then TC
    tcp,  ///< answers up to 65535 octets
};

struct Client {
    IpAddress address;
    std::uint16_t port = 0;
    Transport transport = Transport::udp;
};

}  // namespace moat::engine
