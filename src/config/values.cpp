// Text parsers of the config value types. inet_pton/inet_ntop do the address syntax (strict
// dotted quad for IPv4, RFC 4291 text for IPv6); everything else is parsed here by hand.
#include "moat/config/values.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <cstddef>
#include <string>

#include "in_quotes.hpp"

namespace moat::config {
namespace {

bool parse_port(std::string_view text, std::uint16_t& port) {
    unsigned value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end || value == 0 || value > 65535) {
        return false;
    }
    port = static_cast<std::uint16_t>(value);
    return true;
}

}  // namespace

std::string Endpoint::to_text() const { return endpoint_text(address, port); }

tl::expected<IpAddress, std::string> parse_ip(std::string_view text) {
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) {
        return tl::unexpected(detail::in_quotes(text) + " is not a valid IP address");
    }
    const std::string s(text);
    IpAddress ip;
    if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) {
        return ip;
    }
    if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) == 1) {
        ip.v6 = true;
        return ip;
    }
    return tl::unexpected(detail::in_quotes(text) + " is not a valid IP address");
}

tl::expected<Endpoint, std::string> parse_endpoint(std::string_view text,
                                                   std::uint16_t default_port) {
    if (text.empty()) {
        return tl::unexpected(std::string("\"\" is not a valid address:port"));
    }
    const std::string bad =
        detail::in_quotes(text) + " is not a valid address:port" +
        (text.find(':') != text.rfind(':') && text.front() != '[' ? " (write IPv6 as [ADDR]:PORT)"
                                                                  : "");
    std::string_view host = text;
    std::string_view port_text;
    bool have_port = false;
    if (!text.empty() && text.front() == '[') {
        const std::size_t close = text.find(']');
        if (close == std::string_view::npos) {
            return tl::unexpected(bad);
        }
        host = text.substr(1, close - 1);
        const std::string_view after = text.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                return tl::unexpected(bad);
            }
            port_text = after.substr(1);
            have_port = true;
        }
    } else if (const std::size_t colon = text.find(':');
               colon != std::string_view::npos && colon == text.rfind(':')) {
        host = text.substr(0, colon);
        port_text = text.substr(colon + 1);
        have_port = true;
    }
    Endpoint ep;
    const auto ip = parse_ip(host);
    if (!ip || (text.front() == '[' && !ip->v6) || (!have_port && ip->v6 && default_port == 0)) {
        return tl::unexpected(bad);
    }
    ep.address = *ip;
    if (have_port) {
        if (!parse_port(port_text, ep.port)) {
            return tl::unexpected(bad);
        }
    } else if (default_port != 0) {
        ep.port = default_port;
    } else {
        return tl::unexpected(detail::in_quotes(text) +
                              " is not a valid address:port (the port is missing)");
    }
    return ep;
}

tl::expected<Cidr, std::string> parse_cidr(std::string_view text) {
    const std::string bad = detail::in_quotes(text) + " is not a valid CIDR prefix";
    const std::size_t slash = text.find('/');
    const auto ip = parse_ip(text.substr(0, slash));
    if (!ip) {
        return tl::unexpected(bad);
    }
    const unsigned max = ip->v6 ? 128U : 32U;
    unsigned length = max;
    if (slash != std::string_view::npos) {
        const std::string_view len = text.substr(slash + 1);
        const auto* end = len.data() + len.size();
        const auto [ptr, ec] = std::from_chars(len.data(), end, length);
        if (len.empty() || ec != std::errc{} || ptr != end || length > max) {
            return tl::unexpected(bad);
        }
    }
    Cidr cidr{*ip, static_cast<std::uint8_t>(length)};
    for (std::size_t bit = length; bit < max; ++bit) {
        const auto mask = static_cast<std::uint8_t>(0x80U >> (bit % 8U));
        cidr.address.bytes[bit / 8U] &= static_cast<std::uint8_t>(~mask);
    }
    if (cidr.address != *ip) {
        return tl::unexpected(bad + ": host bits are set (the network is " + cidr.to_text() + ")");
    }
    return cidr;
}

tl::expected<Duration, std::string> parse_duration(std::string_view text) {
    const std::string bad = detail::in_quotes(text) +
                            " is not a valid duration (a number and a unit: ms, s, m, h or d, "
                            "e.g. \"30s\", \"5m\", \"24h\")";
    if (text.empty()) {
        return tl::unexpected(bad);
    }
    constexpr std::int64_t kMaxMs = 3650LL * 24 * 3600 * 1000;  // ten years
    std::int64_t total = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        std::uint64_t value = 0;
        const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        if (ec != std::errc{} || value > static_cast<std::uint64_t>(kMaxMs)) {
            return tl::unexpected(bad);
        }
        rest.remove_prefix(static_cast<std::size_t>(ptr - rest.data()));
        std::size_t unit_len = 0;
        while (unit_len < rest.size() && rest[unit_len] >= 'a' && rest[unit_len] <= 'z') {
            ++unit_len;
        }
        const std::string_view unit = rest.substr(0, unit_len);
        rest.remove_prefix(unit_len);
        std::int64_t scale = 0;
        if (unit == "ms") {
            scale = 1;
        } else if (unit == "s") {
            scale = 1000;
        } else if (unit == "m") {
            scale = 60'000;
        } else if (unit == "h") {
            scale = 3'600'000;
        } else if (unit == "d") {
            scale = 86'400'000;
        } else {
            return tl::unexpected(bad);
        }
        total += static_cast<std::int64_t>(value) * scale;
        if (total > kMaxMs) {
            return tl::unexpected(detail::in_quotes(text) + " is too long a duration");
        }
    }
    return Duration{total};
}

tl::expected<std::uint64_t, std::string> parse_size(std::string_view text) {
    const std::string bad = detail::in_quotes(text) +
                            " is not a valid size (a number and an optional unit: B, KiB, MiB, "
                            "GiB, KB, MB, GB, e.g. \"32MiB\")";
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{}) {
        return tl::unexpected(bad);
    }
    const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    struct Unit {
        std::string_view name;
        std::uint64_t scale;
    };
    static constexpr std::array<Unit, 8> kUnits{{{"", 1},
                                                 {"B", 1},
                                                 {"KiB", 1ULL << 10U},
                                                 {"MiB", 1ULL << 20U},
                                                 {"GiB", 1ULL << 30U},
                                                 {"KB", 1000},
                                                 {"MB", 1000'000},
                                                 {"GB", 1000'000'000}}};
    for (const Unit& u : kUnits) {
        if (unit == u.name) {
            if (value > (1ULL << 50U) / u.scale) {
                return tl::unexpected(detail::in_quotes(text) + " is too large a size");
            }
            return value * u.scale;
        }
    }
    return tl::unexpected(bad);
}

std::string format_duration(Duration d) {
    std::int64_t ms = d.count();
    if (ms == 0) {
        return "0s";
    }
    std::string out;
    static constexpr std::array<std::pair<std::int64_t, const char*>, 5> kUnits{
        {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}}};
    for (const auto& [scale, name] : kUnits) {
        if (ms >= scale) {
            out += std::to_string(ms / scale) + name;
            ms %= scale;
        }
    }
    return out;
}

}  // namespace moat::config
