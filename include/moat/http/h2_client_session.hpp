// The client side of one HTTP/2 connection (RFC 9113), for DNS-over-HTTPS upstreams (RFC 8484).
// No sockets: the caller owns the TLS connection (ALPN "h2"), writes what pending_output() gives,
// feeds what it reads to receive(), and calls fail_all() once the connection is gone. libnghttp2
// does the framing, HPACK, flow control and the checks of RFC 9113 §8 on responses; it stays out
// of this header.
//
// Every stream request() opened gets exactly one call of the response handler: the response, or
// status 0 with the reason (reset or refused by the server, not processed before a GOAWAY,
// malformed, over a limit, connection lost). That call comes from inside receive() or from
// fail_all(), never from request(), pending_output() or the destructor. A stream whose status is
// 0 and whose error says "not processed" or "refused" never reached the server's application
// (RFC 9113 §8.7), so it may be retried elsewhere; DNS queries may be retried anyway.
//
// Single-threaded: one session per connection, driven from one strand. Memory: the session
// copies what request() is given; views handed to the handler are valid during the call only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/http/h2_session.hpp"  // H2Header, shared with the server side

namespace moat::http {

struct H2ClientLimits {
    /// Streams open at once, at most; the server's SETTINGS_MAX_CONCURRENT_STREAMS lowers it
    /// (nghttp2 assumes 100 until the server's SETTINGS arrive). 1 .. 2^31-1.
    std::uint32_t max_concurrent_streams = 100;
    /// Response body cap in bytes (a DNS message is at most 65535). A larger body, or a larger
    /// declared content-length, resets the stream (CANCEL) and fails it with status 0.
    std::size_t max_response_body_bytes = 65535;
    /// SETTINGS_MAX_HEADER_LIST_SIZE announced to the server, in bytes counted as RFC 9113
    /// §6.5.2 does (name + value + 32 per field); a larger response header list fails the stream
    /// as the body cap does.
    std::uint32_t max_header_list_bytes = 16384;
};

/// What became of one request. Every view is valid only during the handler call.
struct H2Response {
    int status = 0;                                 ///< 200..599; 0 when the stream failed
    std::string_view content_type;                  ///< empty when absent
    std::optional<std::string_view> cache_control;  ///< all Cache-Control fields, ", "-joined
    std::span<const std::uint8_t> body;
    std::string_view error;  ///< why the stream failed, when status is 0; empty otherwise
};

class H2ClientSession {
public:
    /// Called once per stream request() opened (see the file comment). It may call request();
    /// never receive(), fail_all(), pending_output() or the destructor. An exception it throws
    /// from inside receive() fails the connection: receive() returns its message, and the
    /// streams not yet reported are left for fail_all(), which lets the first such exception
    /// through once every stream was reported.
    using ResponseHandler =
        std::function<void(std::uint32_t stream_id, const H2Response& response)>;

    /// Throws std::bad_alloc when nghttp2 cannot allocate its session.
    H2ClientSession(const H2ClientLimits& limits, ResponseHandler on_response);
    ~H2ClientSession();
    H2ClientSession(const H2ClientSession&) = delete;
    H2ClientSession& operator=(const H2ClientSession&) = delete;
    /// A moved-from session may only be destroyed or assigned to.
    H2ClientSession(H2ClientSession&&) noexcept;
    H2ClientSession& operator=(H2ClientSession&&) noexcept;

    /// Queues the client connection preface and our SETTINGS (push disabled, the header list
    /// cap). Idempotent; request(), receive() and pending_output() call it first.
    void start();

    /// Submits a request: `method`, :scheme https, `authority`, `path` (query included), the
    /// headers (names lowercased; pseudo-headers, content-length, host, te and the
    /// connection-specific fields are dropped) and a copy of `body`, with its content-length when
    /// not empty. The fields must be valid HTTP/2 (the server resets the stream otherwise).
    /// Returns the stream id, or nullopt when the session takes no new stream now: at the
    /// concurrency limit, going away, out of stream ids, or failed.
    [[nodiscard]] std::optional<std::uint32_t> request(std::string_view method,
                                                       std::string_view authority,
                                                       std::string_view path,
                                                       std::span<const H2Header> headers,
                                                       std::span<const std::uint8_t> body);

    /// Feeds bytes read from the server; the handler runs from here for the streams that end.
    /// An error means the connection is dead: flush what pending_output() still gives (a
    /// GOAWAY), close it and call fail_all().
    [[nodiscard]] tl::expected<void, std::string> receive(std::span<const std::uint8_t> bytes);

    /// The connection is gone (closed, reset, timed out, or receive() failed): calls the handler
    /// for every stream not reported yet, with status 0 and `reason` (or a more precise reason
    /// the session already had). The session is dead afterwards: no output, no new streams, and
    /// receive() fails. Calling it again does nothing.
    void fail_all(std::string_view reason);

    /// The bytes to write next, pulled from nghttp2 up to about 64 KiB. Valid until the next
    /// pending_output() or consume_output(); receive() and request() leave it alone, so a write
    /// may be in flight while the read side runs.
    [[nodiscard]] std::span<const std::uint8_t> pending_output();
    /// Marks the first `bytes` of the pending output as written.
    void consume_output(std::size_t bytes) noexcept;

    /// The session expects more bytes from the server.
    [[nodiscard]] bool wants_read() const noexcept;
    /// There are bytes to write (pending_output() would give some).
    [[nodiscard]] bool wants_write() const noexcept;
    /// Neither reading nor writing is wanted: close the connection (and call fail_all()).
    [[nodiscard]] bool finished() const noexcept;
    /// request() would open a stream now: not failed, not going away, stream ids left, and
    /// below min(max_concurrent_streams, the server's SETTINGS_MAX_CONCURRENT_STREAMS).
    [[nodiscard]] bool can_request() const noexcept;
    /// Streams request() opened whose handler has not run yet.
    [[nodiscard]] std::size_t open_streams() const noexcept;
    /// The server sent a GOAWAY: no new streams here; the ones it did not process have failed
    /// already, the others are still answered. Open a new connection for new requests.
    [[nodiscard]] bool going_away() const noexcept;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace moat::http
