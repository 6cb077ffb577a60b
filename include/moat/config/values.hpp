// Value types of the configuration and their text parsers: IP addresses, ADDR:PORT endpoints,
// CIDR prefixes, durations ("30s", "5m", "24h") and byte sizes ("32MiB").
//
// Every type is a small value with no heap storage. The parsers are pure functions of their
// text: on failure they return a sentence fit to follow the offending value in an error message
// ("is not a valid address:port"), without the value or its location (the caller adds those).
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/core/ip.hpp"

namespace moat::config {

using ::moat::IpAddress;  // moat/core/ip.hpp

/// An address and a UDP/TCP port (1..65535).
struct Endpoint {
    IpAddress address;
    std::uint16_t port = 0;

    /// "127.0.0.1:5353" or "[::1]:5353".
    [[nodiscard]] std::string to_text() const;

    friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

using ::moat::Cidr;  // moat/core/ip.hpp

/// Durations are kept in milliseconds; a key's valid range is stated by the schema.
using Duration = std::chrono::milliseconds;

/// "192.168.1.1" or "fd00::1" (no brackets, no zone index).
tl::expected<IpAddress, std::string> parse_ip(std::string_view text);
/// "ADDR:PORT" for IPv4, "[ADDR]:PORT" for IPv6. With `default_port` non-zero the port may be
/// left out ("192.168.1.1", "[fd00::1]" or a bare "fd00::1").
tl::expected<Endpoint, std::string> parse_endpoint(std::string_view text,
                                                   std::uint16_t default_port = 0);
/// "10.0.0.0/8", "fe80::/10"; a bare address is a host prefix (/32 or /128). Host bits set
/// beyond the prefix length are an error, which names the intended network.
tl::expected<Cidr, std::string> parse_cidr(std::string_view text);
/// A number followed by a unit: ms, s, m, h, d ("500ms", "30s", "5m", "24h", "7d"), or
/// several of them ("1h30m"). "0s" is zero; a bare number is an error (the unit is required).
tl::expected<Duration, std::string> parse_duration(std::string_view text);
/// A number of bytes with an optional unit: B, KiB, MiB, GiB (powers of 1024) or KB, MB, GB
/// (powers of 1000), e.g. "32MiB".
tl::expected<std::uint64_t, std::string> parse_size(std::string_view text);
/// "30s", "5m", "24h", "1h30m", "500ms": the shortest text parse_duration reads back.
[[nodiscard]] std::string format_duration(Duration d);

}  // namespace moat::config
