// DNS over HTTPS (RFC 8484) without the HTTP: which DNS query an HTTP request carries (GET with
// ?dns= base64url, POST with an application/dns-message body) or which status refuses it, and
// the freshness an answer may be cached for (§5.1). Shared by the HTTP/2 and HTTP/1.1 sides.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace moat::server {

inline constexpr std::string_view kDnsMessageType = "application/dns-message";

struct DohRequest {
    std::string_view method;
    std::string_view path;   ///< the target up to '?'
    std::string_view query;  ///< after '?'
    std::string_view content_type;
    std::span<const std::uint8_t> body;
};

struct DohQuery {
    int status = 200;  ///< anything else: answer with this status and no DNS message
    std::span<const std::uint8_t> message;  ///< the DNS query (into the body or `scratch`)
};

/// The DNS query in `request`, or the status refusing it: 404 (another path), 405 (neither GET
/// nor POST), 415 (a POST body of another type), 400 (no dns parameter, bad base64url, or a
/// message shorter than a DNS header). A GET's message is decoded into `scratch`.
[[nodiscard]] DohQuery doh_query_of(const DohRequest& request, std::string_view doh_path,
                                    std::vector<std::uint8_t>& scratch);

/// The Cache-Control value for `answer`: "max-age=N" with N the smallest TTL of its answer and
/// authority records (RFC 8484 §5.1), or "max-age=0" when it has none or does not parse.
[[nodiscard]] std::string doh_cache_control(std::span<const std::uint8_t> answer);

}  // namespace moat::server
