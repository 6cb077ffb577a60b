// The protocol half of a DNS-over-HTTPS connection (RFC 8484), without the connection: each
// query a POST of application/dns-message on its own stream of one HTTP/2 session, sent with ID 0
// as §4.1 recommends for HTTP caches; each stream's end handed back as the answer, with the
// query's own ID, or as the reason there is none (an HTTP status other than 200, a body shorter
// than a DNS header, a stream the server reset or never processed).
//
// Socket-free so a server's bytes can be fed to it from a test or a fuzz target
// (tests/fuzz/fuzz_doh_replies.cpp). The HTTP/2 session must not be destroyed from inside its own
// response handler, and an answer's completion may drop the connection: take_in_flight() called
// from a delivery retires the session, which receive() destroys once the session has returned.
// Whatever the retired session still reports reaches no query: its exchanges went with
// take_in_flight(), and no stream opens until receive() returns, so none of a new session can
// have the same number.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "encrypted_exchange.hpp"
#include "moat/http/h2_client_session.hpp"

namespace moat::upstream {

class DohSession {
public:
    /// Called for each stream that ends: the exchange it carried (taken out of the session) and
    /// either the answer (`error` empty; the query's own ID, valid during the call) or why there
    /// is none.
    using Deliver = std::function<void(EncryptedExchange&, std::string_view error,
                                       std::span<const std::uint8_t> reply)>;

    /// Streams open at once, at most; a server's SETTINGS may lower it.
    static constexpr std::uint32_t kMaxStreams = 100;

    DohSession() = default;
    ~DohSession() = default;
    DohSession(const DohSession&) = delete;
    DohSession& operator=(const DohSession&) = delete;
    DohSession(DohSession&&) = delete;
    DohSession& operator=(DohSession&&) = delete;

    /// A new connection is up: a fresh HTTP/2 session (its preface queued) that sends to
    /// `authority` (host, and ":port" unless 443) and `path`. What the old session held must
    /// have gone with take_in_flight() when its connection closed: std::logic_error otherwise.
    /// May be called from `deliver`.
    void start(std::string authority, std::string path);
    /// start() ran and take_in_flight() did not since.
    [[nodiscard]] bool started() const noexcept { return h2_ != nullptr; }

    /// Opens a stream for `x.query` and holds `x` until its stream ends or take_in_flight().
    /// False, with `x` left as it was, when no query can go out now: not started, inside
    /// receive() (what the completions send opens after it, so the output is written at once),
    /// at the server's stream limit or going away.
    [[nodiscard]] bool send(EncryptedExchange& x);

    /// Takes bytes read from the connection; `deliver` runs for each stream that ends, in the
    /// order the server ended them. `deliver` may call send() (refused until receive() returns)
    /// and take_in_flight(); then the rest of `bytes` reaches no query. An error means the
    /// connection is dead (a protocol error, or `deliver` threw): drop it. Not to be called from
    /// `deliver`.
    [[nodiscard]] tl::expected<void, std::string> receive(std::span<const std::uint8_t> bytes,
                                                          const Deliver& deliver);

    /// The server sent a GOAWAY and no stream is left on this session: new queries need a new
    /// connection.
    [[nodiscard]] bool spent() const noexcept;

    /// There are bytes to write.
    [[nodiscard]] bool wants_write() const noexcept;
    /// The bytes to write next (see H2ClientSession::pending_output()); empty when not started.
    [[nodiscard]] std::span<const std::uint8_t> pending_output();
    /// Marks the first `bytes` of the pending output as written.
    void consume_output(std::size_t bytes) noexcept;

    /// Every exchange still in flight, for a retry or a failure; the session ends with its
    /// connection (start() begins the next one).
    [[nodiscard]] std::vector<EncryptedExchange> take_in_flight();

    [[nodiscard]] bool in_flight() const noexcept { return !sent_.empty(); }
    [[nodiscard]] std::size_t in_flight_count() const noexcept { return sent_.size(); }

private:
    /// The HTTP/2 session's report on one stream.
    void on_response(std::uint32_t stream, const http::H2Response& response);
    /// The end of receive(): a session retired meanwhile is destroyed.
    void settle() noexcept;
    /// The current session, if any, ends: destroyed, or retired when receive() is reading it.
    void end_session() noexcept;

    std::unique_ptr<http::H2ClientSession> h2_;
    /// take_in_flight() ran inside receive(): the session receive() is still reading, destroyed
    /// once it returns.
    std::unique_ptr<http::H2ClientSession> retired_;
    const http::H2ClientSession* reading_ = nullptr;   ///< the session receive() is reading
    std::map<std::uint32_t, EncryptedExchange> sent_;  ///< by stream
    std::string authority_;
    std::string path_;
    const Deliver* deliver_ = nullptr;  ///< set during receive()
};

}  // namespace moat::upstream
