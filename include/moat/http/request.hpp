// HTTP/1.1 requests (RFC 9112) parsed from bytes, for the API and /metrics. No sockets: the
// caller reads into a buffer and calls parse_request() until it says complete.
//
// Strict where leniency has let requests be read two ways (request smuggling): CRLF line ends
// only, no whitespace before a header's colon, no folded header lines, one Content-Length (or
// several that agree), and Transfer-Encoding refused (the API takes small bodies with a length).
// Sizes are capped by Limits, so a client cannot make the server hold more than it allows. The
// Request's views point into the caller's buffer, valid while it is unchanged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace moat::http {

enum class Errc : std::uint8_t {
    bad_request,           ///< 400: a request line or header that does not parse
    headers_too_large,     ///< 431: the head (request line and headers) exceeds its limit
    body_too_large,        ///< 413: Content-Length above the limit
    unsupported_encoding,  ///< 501: Transfer-Encoding (chunked bodies are not accepted)
    bad_version,           ///< 505: not HTTP/1.0 or HTTP/1.1
};

/// The status code that answers a parse error.
[[nodiscard]] int status_of(Errc e) noexcept;

struct Limits {
    std::size_t max_head_bytes = 8192;  ///< request line and headers, with their CRLFs
    std::size_t max_body_bytes = 1U << 20U;
};

struct Header {
    std::string_view name;
    std::string_view value;  ///< without surrounding whitespace
};

struct Request {
    static constexpr std::size_t kMaxHeaders = 64;

    std::string_view method;
    std::string_view target;  ///< as sent: path and query
    std::string_view path;    ///< the target up to '?'
    std::string_view query;   ///< after '?', or empty
    int minor_version = 1;    ///< HTTP/1.x
    std::array<Header, kMaxHeaders> headers{};
    std::size_t header_count = 0;
    std::string_view body;
    bool keep_alive = true;

    /// The first header named `name` (case-insensitive), if any.
    [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const noexcept;
};

struct Parsed {
    enum class State : std::uint8_t { complete, incomplete, error };
    State state = State::incomplete;
    std::size_t consumed = 0;  ///< bytes of the buffer the request took (complete)
    Errc error = Errc::bad_request;
};

/// Parses the request at the start of `buffer`: complete (with the bytes it took; what follows
/// is the next pipelined request), incomplete (read more and call again with the whole buffer),
/// or an error to answer with status_of() before closing the connection.
[[nodiscard]] Parsed parse_request(std::string_view buffer, Request& out,
                                   const Limits& limits = {}) noexcept;

}  // namespace moat::http
