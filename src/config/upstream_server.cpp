// upstream.servers entries: plain "ADDR[:PORT]", "tls://ADDR[:PORT]#NAME" or "tls://NAME[:PORT]"
// (RFC 7858; the form of Unbound's forward-addr and AdGuard Home's upstreams), and
// "https://HOST[:PORT]/PATH[#NAME]" (RFC 8484).
#include <algorithm>
#include <cctype>
#include <charconv>

#include "in_quotes.hpp"
#include "moat/config/config.hpp"

namespace moat::config {
namespace {

constexpr std::uint16_t kDnsPort = 53;
constexpr std::uint16_t kTlsPort = 853;
constexpr std::uint16_t kHttpsPort = 443;

/// A DNS host name as certificates carry it: letters, digits, '-', dots; not an address.
bool is_host_name(std::string_view name) {
    if (name.empty() || name.size() > 253 || name.front() == '.' || name.front() == '-') {
        return false;
    }
    const bool charset = std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.';
    });
    const bool has_letter = std::any_of(name.begin(), name.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) != 0;
    });
    return charset && has_letter && name.find("..") == std::string_view::npos;
}

/// "HOST", "HOST:PORT", "ADDR", "ADDR:PORT" or "[V6]:PORT" into the server; false when it is
/// none of them.
bool read_authority(std::string_view authority, std::uint16_t default_port, UpstreamServer& out) {
    if (auto ep = parse_endpoint(authority, default_port)) {
        out.address = ep->address;
        out.port = ep->port;
        return true;
    }
    std::string_view host = authority;
    out.port = default_port;
    if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        const std::string_view port = authority.substr(colon + 1);
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            return false;
        }
        out.port = static_cast<std::uint16_t>(value);
    }
    if (!is_host_name(host)) {
        return false;
    }
    out.name = std::string(host);
    std::transform(out.name.begin(), out.name.end(), out.name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return true;
}

/// The "#NAME" suffix: the certificate's name for a server given by address.
tl::expected<void, std::string> read_name_suffix(std::string_view suffix, std::string_view text,
                                                 UpstreamServer& out) {
    if (suffix.empty()) {
        if (out.address && out.name.empty()) {
            out.name = out.address->to_text();  // verified against the certificate's IP entries
        }
        return {};
    }
    if (!out.address) {
        return tl::unexpected(detail::in_quotes(text) + ": #NAME is for servers given by address");
    }
    if (!is_host_name(suffix)) {
        return tl::unexpected(detail::in_quotes(text) + ": \"" + std::string(suffix) +
                              "\" is not a host name");
    }
    out.name = std::string(suffix);
    std::transform(out.name.begin(), out.name.end(), out.name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return {};
}

}  // namespace

tl::expected<UpstreamServer, std::string> parse_upstream_server(std::string_view text) {
    UpstreamServer s;
    s.text = std::string(text);
    constexpr std::string_view kTls = "tls://";
    constexpr std::string_view kHttps = "https://";
    if (text.starts_with(kTls)) {
        s.protocol = UpstreamProtocol::tls;
        std::string_view rest = text.substr(kTls.size());
        const std::size_t hash = rest.find('#');
        const std::string_view authority = rest.substr(0, hash);
        if (!read_authority(authority, kTlsPort, s)) {
            return tl::unexpected(detail::in_quotes(text) +
                                  " is not a valid DNS-over-TLS server (tls://ADDR[:PORT]#NAME or "
                                  "tls://NAME[:PORT])");
        }
        auto named = read_name_suffix(
            hash == std::string_view::npos ? std::string_view{} : rest.substr(hash + 1), text, s);
        if (!named) {
            return tl::unexpected(named.error());
        }
        return s;
    }
    if (text.starts_with(kHttps)) {
        s.protocol = UpstreamProtocol::https;
        std::string_view rest = text.substr(kHttps.size());
        const std::size_t hash = rest.find('#');
        const std::string_view url = rest.substr(0, hash);
        const std::size_t slash = url.find('/');
        s.path = slash == std::string_view::npos ? "/dns-query" : std::string(url.substr(slash));
        if (!read_authority(url.substr(0, slash), kHttpsPort, s) ||
            s.path.find_first_of(" ?#") != std::string::npos) {
            return tl::unexpected(
                detail::in_quotes(text) +
                " is not a valid DNS-over-HTTPS server "
                "(https://HOST[:PORT]/PATH, e.g. https://dns.quad9.net/dns-query)");
        }
        auto named = read_name_suffix(
            hash == std::string_view::npos ? std::string_view{} : rest.substr(hash + 1), text, s);
        if (!named) {
            return tl::unexpected(named.error());
        }
        return s;
    }
    if (text.find("://") != std::string_view::npos) {
        return tl::unexpected(detail::in_quotes(text) +
                              ": unknown scheme (plain ADDR[:PORT], tls:// or https://)");
    }
    auto ep = parse_endpoint(text, kDnsPort);
    if (!ep) {
        return tl::unexpected(ep.error());
    }
    s.address = ep->address;
    s.port = ep->port;
    return s;
}

}  // namespace moat::config
