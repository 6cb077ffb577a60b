// The server side of one HTTP/2 connection (RFC 9113), for the DNS-over-HTTPS listener
// (RFC 8484). No sockets: the caller reads bytes (after TLS) into receive(), writes what
// pending_output() gives, and closes the connection once finished() says so. libnghttp2 does the
// framing, HPACK, flow control and the checks of RFC 9113 §8 (pseudo-headers, lowercase names,
// Content-Length against the DATA received); it stays out of this header.
//
// A request reaches on_request once its END_STREAM arrives; the answer may follow at once (from
// the callback) or later (after an upstream replied). A stream the client reset in between is
// forgotten, and respond() on it does nothing. Requests over a limit never reach on_request: the
// session answers them itself (413 for a body over max_request_body_bytes, 431 for a header list
// over max_header_list_bytes) and, when the client is still sending, resets the stream with
// NO_ERROR after that answer, as RFC 9113 §8.1 allows, so the rest of the body is not read.
//
// Single-threaded: one session per connection, driven from one strand. Memory: the session owns
// copies of request fields and of response bodies; views given out are valid as stated below.
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

namespace moat::http {

struct H2Limits {
    /// SETTINGS_MAX_CONCURRENT_STREAMS; streams over it are refused (RST_STREAM REFUSED_STREAM)
    /// by nghttp2. 1 .. 2^31-1.
    std::uint32_t max_concurrent_streams = 100;
    /// Request body cap in bytes (a DNS message is at most 65535); larger requests get 413.
    std::size_t max_request_body_bytes = 65535;
    /// SETTINGS_MAX_HEADER_LIST_SIZE in bytes, counted as RFC 9113 §6.5.2 does (name + value +
    /// 32 per field); larger request header lists get 431.
    std::uint32_t max_header_list_bytes = 8192;
};

/// A response field. The name may be in any case: it is sent lowercased, as HTTP/2 requires.
struct H2Header {
    std::string_view name;
    std::string_view value;
};

/// A complete request. Every view is valid only during the on_request call.
struct H2Request {
    std::string_view method;
    std::string_view path;                   ///< :path, query included ("/dns-query?dns=...")
    std::string_view content_type;           ///< empty when absent
    std::optional<std::string_view> accept;  ///< the first Accept field, if any
    std::span<const std::uint8_t> body;
};

class H2ServerSession {
public:
    /// Called from inside receive() once a request is complete. It may call respond() (for this
    /// or any stream) and shutdown(); never receive(), pending_output() or the destructor. An
    /// exception it throws fails the connection: receive() returns its message.
    using RequestHandler = std::function<void(std::uint32_t stream_id, const H2Request& request)>;

    /// Throws std::bad_alloc when nghttp2 cannot allocate its session.
    H2ServerSession(const H2Limits& limits, RequestHandler on_request);
    ~H2ServerSession();
    H2ServerSession(const H2ServerSession&) = delete;
    H2ServerSession& operator=(const H2ServerSession&) = delete;
    /// A moved-from session may only be destroyed or assigned to.
    H2ServerSession(H2ServerSession&&) noexcept;
    H2ServerSession& operator=(H2ServerSession&&) noexcept;

    /// Queues the server connection preface (SETTINGS with the limits). Idempotent; receive(),
    /// respond() and shutdown() call it first, so the SETTINGS always lead the output.
    void start();

    /// Feeds bytes read from the client. An error means the connection is dead: flush what
    /// pending_output() still gives (a GOAWAY, except after a bad preface, which gets nothing
    /// more, RFC 9113 §3.4) and close. A protocol error nghttp2 finds inside a frame is answered
    /// with a GOAWAY it queues itself; once that was taken by pending_output(), receive() fails.
    [[nodiscard]] tl::expected<void, std::string> receive(std::span<const std::uint8_t> bytes);

    /// Submits the response to a request given to on_request: `status` (200..599), the headers
    /// (pseudo-headers, content-length and connection-specific fields are dropped; content-length
    /// is written from the body, except for 204 and 304) and a copy of `body` (not sent for
    /// HEAD). Returns false, and does nothing, when the stream is gone (reset by the client,
    /// refused, closed), was answered already, the status is out of range or the connection
    /// failed.
    bool respond(std::uint32_t stream_id, int status, std::span<const H2Header> headers,
                 std::span<const std::uint8_t> body);

    /// Starts a graceful close (RFC 9113 §6.8): a GOAWAY announcing the shutdown and a PING;
    /// when the PING's ACK proves the client saw it, a second GOAWAY with the last stream
    /// processed. Streams already open are still answered; finished() once they are done.
    void shutdown();

    /// The bytes to write next, pulled from nghttp2 up to about 64 KiB, so its flood limits keep
    /// working when the client does not read. Valid until the next pending_output() or
    /// consume_output(); receive() and respond() leave it alone, so a write may be in flight
    /// while the read side runs.
    [[nodiscard]] std::span<const std::uint8_t> pending_output();
    /// Marks the first `bytes` of the pending output as written.
    void consume_output(std::size_t bytes) noexcept;

    /// The session expects more bytes from the client.
    [[nodiscard]] bool wants_read() const noexcept;
    /// There are bytes to write (pending_output() would give some).
    [[nodiscard]] bool wants_write() const noexcept;
    /// Neither reading nor writing is wanted: close the connection.
    [[nodiscard]] bool finished() const noexcept;
    /// Requests in flight: streams opened by the client and not closed yet. 0 means idle.
    [[nodiscard]] std::size_t open_streams() const noexcept;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace moat::http
