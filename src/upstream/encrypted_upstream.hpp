// One encrypted upstream server (DoT or DoH) and the one TLS connection dnsmoat keeps to it.
// Queries wait while it connects (the name resolved through the bootstrap servers when it was
// given by name), then go out pipelined on the same connection; answers come back matched to
// their query. The connection is kept for the next queries and closed after a quiet minute;
// TLS sessions are resumed on reconnect, so a new connection costs one round trip.
//
// A connection that cannot be made (refused, TLS or certificate failure, pin mismatch) is
// logged and makes the server back off: for a while (250 ms doubling to 30 s) queries to it
// fail at once, so they go to the next server instead of waiting. A connection that drops with
// queries on it retries each of them once on a fresh connection (a server closing an idle
// connection just as we write is normal, RFC 7766 §6.2.3).
//
// The protocol (framing and matching) is the subclass's: DotUpstream and DohUpstream.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap.hpp"
#include "encrypted_exchange.hpp"
#include "moat/upstream/options.hpp"
#include "moat/upstream/turn_end.hpp"
#include "tls_client.hpp"

namespace moat::upstream {

class EncryptedUpstream : public std::enable_shared_from_this<EncryptedUpstream> {
public:
    EncryptedUpstream(asio::io_context& io, ServerAddress server,
                      std::shared_ptr<TlsClientContext> tls, BootstrapResolver& bootstrap,
                      std::chrono::milliseconds timeout);
    virtual ~EncryptedUpstream();
    EncryptedUpstream(const EncryptedUpstream&) = delete;
    EncryptedUpstream& operator=(const EncryptedUpstream&) = delete;
    EncryptedUpstream(EncryptedUpstream&&) = delete;
    EncryptedUpstream& operator=(EncryptedUpstream&&) = delete;

    /// Sends `query` (a complete DNS query; its ID is kept in the answer). `done` runs exactly
    /// once, later.
    void exchange(std::span<const std::uint8_t> query, ExchangeDone done);
    /// Closes the connection and fails every query (shutdown, or the server left the config).
    void shutdown();

    [[nodiscard]] const ServerAddress& server() const noexcept { return server_; }
    [[nodiscard]] const std::string& text() const noexcept { return server_.text; }
    /// Connections made, and how many of them resumed a TLS session.
    [[nodiscard]] std::uint64_t connections() const noexcept { return connections_; }
    [[nodiscard]] std::uint64_t resumed() const noexcept { return resumed_; }

protected:
    using TlsStream = asio::ssl::stream<asio::ip::tcp::socket>;

    using Exchange = EncryptedExchange;

    /// "dot" or "h2".
    [[nodiscard]] virtual std::string_view alpn() const noexcept = 0;
    /// The TLS connection is up (ALPN settled); false (with why) when it cannot be used.
    virtual bool on_connected(TlsStream& stream, std::string& why) = 0;
    /// Sends `x` on the ready connection; false when it cannot take another now (it waits).
    virtual bool send(Exchange& x) = 0;
    virtual void on_bytes(std::span<const std::uint8_t> bytes) = 0;
    /// The connection is gone: every exchange sent on it, for a retry or a failure.
    virtual std::vector<Exchange> take_in_flight() = 0;
    [[nodiscard]] virtual bool in_flight() const noexcept = 0;

    /// Queues bytes for the connection (ready only).
    void write(std::span<const std::uint8_t> bytes);
    /// Sends what waited for the connection, as far as send() takes it.
    void send_waiting();
    /// The connection cannot go on: closes it, retries or fails what was on it.
    void drop(const std::string& why);
    /// Fails `x` (its `done` runs later, with `why`): a query the protocol cannot send.
    void fail_one(Exchange&& x, std::string why);
    /// An answer arrived: the connection is alive.
    void heard_from() { stalled_since_ = std::chrono::steady_clock::now(); }

private:
    enum class State : std::uint8_t { closed, connecting, ready, backoff };

    void connect();
    void connect_to(const IpAddress& address);
    void handshake();
    void connected();
    void could_not_connect(const std::string& why);
    void read_more();
    void write_next();
    void arm_watchdog();
    void fail(std::deque<Exchange>& exchanges, const std::string& why);

    asio::io_context& io_;
    TurnEnd& turn_end_;  ///< the batch a read's answers are delivered in
    ServerAddress server_;
    std::shared_ptr<TlsClientContext> tls_;
    BootstrapResolver& bootstrap_;
    std::chrono::milliseconds timeout_;
    State state_ = State::closed;
    /// To resume the next connection with; declared before stream_, which writes it.
    std::shared_ptr<SSL_SESSION> session_;
    std::unique_ptr<TlsStream> stream_;
    std::uint64_t generation_ = 0;  ///< callbacks of an older connection are ignored
    asio::steady_timer watchdog_;
    std::deque<Exchange> waiting_;  ///< until the connection is ready and takes them
    std::vector<std::uint8_t> chunk_;
    std::vector<std::uint8_t> queued_;
    std::vector<std::uint8_t> writing_;
    std::chrono::milliseconds backoff_{0};
    std::chrono::steady_clock::time_point backoff_until_{};
    std::string last_error_;
    std::optional<std::chrono::steady_clock::time_point> stalled_since_;
    std::chrono::steady_clock::time_point last_used_{};
    std::uint64_t connections_ = 0;
    std::uint64_t resumed_ = 0;
};

}  // namespace moat::upstream
