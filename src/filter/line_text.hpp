// The small text tests of list lines that both the full line parser and its shortcuts for the
// common shapes use (line_parser.cpp, line_shortcuts.cpp): blanks, addresses, local host names.
#pragma once

#include <cstddef>
#include <string_view>

namespace moat::filter {

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

/// Index of the first space or tab, or npos. (A plain loop: find_first_of() with a set calls
/// memchr once per character.)
inline std::size_t find_blank(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == ' ' || s[i] == '\t') {
            return i;
        }
    }
    return std::string_view::npos;
}

constexpr bool is_hex(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// Digits and exactly three dots: an IPv4 literal as hosts files write one (checked loosely).
inline bool is_ipv4(std::string_view t) noexcept {
    int dots = 0;
    for (const char c : t) {
        if (c == '.') {
            ++dots;
        } else if (c < '0' || c > '9') {
            return false;
        }
    }
    return dots == 3;
}

/// An IPv4 or IPv6 literal as hosts files start their lines with (checked loosely).
inline bool is_ip(std::string_view t) noexcept {
    if (t.find(':') == std::string_view::npos) {
        return is_ipv4(t);
    }
    for (const char c : t) {
        if (!is_hex(c) && c != ':' && c != '.' && c != '%') {
            return false;
        }
    }
    return true;
}

/// The names hosts files map for the machine itself, which are not blocked but skipped.
inline bool is_local_host_name(std::string_view n) noexcept {
    return n == "localhost" || n == "localhost.localdomain" || n == "broadcasthost" ||
           n == "local" || n.starts_with("ip6-") || n == "0.0.0.0";
}

}  // namespace moat::filter
