// DNS-rebinding protection: a public name must not resolve to an address inside the home
// (a web page's script could otherwise reach the router or the NAS through the browser). An
// upstream answer with such an address is refused unless the name is on the allow list or
// belongs to a conditional forward (the router's own local domain legitimately has them).
#pragma once

#include <cstdint>
#include <span>

#include "moat/core/ip.hpp"

namespace moat::engine {

/// RFC 1918, CGNAT (100.64/10), loopback, link-local, "this network" (0/8), and their IPv6
/// counterparts (::, ::1, fc00::/7, fe80::/10), IPv4-mapped addresses by their IPv4 part.
[[nodiscard]] bool is_internal_address(const IpAddress& address) noexcept;

/// True when the answer section of `answer` has an A or AAAA record with an internal address.
[[nodiscard]] bool has_internal_address(std::span<const std::uint8_t> answer) noexcept;

}  // namespace moat::engine
