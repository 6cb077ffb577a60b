// One DNS-over-HTTPS connection (RFC 8484): HTTP/2 when TLS negotiated "h2" through ALPN (or, on
// a plain-HTTP listener, the client sent the HTTP/2 preface), HTTP/1.1 otherwise. Each request
// becomes one DNS query on the same QueryPath as plain DNS; its answer goes back as
// application/dns-message with Cache-Control from the answer's TTLs.
//
// HTTP/2 answers streams as their queries finish, in any order; HTTP/1.1 answers pipelined
// requests in order (RFC 9112 §9.3.2), holding an early answer until those before it are sent.
// Either way at most tcp_max_pipelined queries run per connection, and the connection closes
// after tcp_idle_timeout without a request.
#pragma once

#include <asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dns_stream_connection.hpp"
#include "doh_exchange.hpp"
#include "idle_watch.hpp"
#include "moat/engine/client.hpp"
#include "moat/http/h2_session.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/turn_end.hpp"
#include "stream_shared.hpp"

namespace moat::server {

template <typename Stream>
class DohConnection final : public StreamConnection,
                            public std::enable_shared_from_this<DohConnection<Stream>> {
public:
    DohConnection(Stream stream, engine::Client client, QueryPath& path,
                  const ServerOptions& options, ConnectionSlot slot, upstream::TurnEnd& turn_end);
    ~DohConnection() override = default;
    DohConnection(const DohConnection&) = delete;
    DohConnection& operator=(const DohConnection&) = delete;
    DohConnection(DohConnection&&) = delete;
    DohConnection& operator=(DohConnection&&) = delete;

    void start();
    void drain() override;

private:
    enum class Protocol : std::uint8_t { unknown, http1, http2 };

    /// An HTTP/1.1 response in the order of its request, written once those before it are.
    struct Http1Slot {
        std::string bytes;
        bool ready = false;
        bool close = false;  ///< the connection ends after this response
    };

    void read_more();
    void on_read(const std::error_code& ec, std::size_t n);
    void take_input();
    void take_http1_requests();
    void start_http2();
    /// Runs the query a request carries and calls `respond(status, answer)` now or later.
    template <typename Respond>
    void serve(const DohRequest& request, Respond respond);
    void answer_http1(std::uint64_t id, int status, std::span<const std::uint8_t> answer,
                      bool close);
    void answer_http2(std::uint32_t stream, int status, std::span<const std::uint8_t> answer);
    void flush();
    void write_next();
    void watch_idle();
    void close_if_done();
    void close();
    [[nodiscard]] bool pipeline_full() const noexcept;
    /// Streams open at once, and queries one HTTP/2 connection may have unanswered.
    [[nodiscard]] std::size_t h2_stream_limit() const noexcept;

    Stream stream_;
    IdleWatch idle_;
    QueryPath& path_;
    const ServerOptions& options_;
    ConnectionSlot slot_;
    upstream::TurnEnd& turn_end_;
    engine::Client client_;
    Protocol protocol_ = Protocol::unknown;
    std::vector<std::uint8_t> chunk_;  ///< what the read in progress fills
    std::vector<std::uint8_t> input_;
    std::vector<std::uint8_t> scratch_;  ///< a GET's decoded query
    std::unique_ptr<http::H2ServerSession> h2_;
    std::deque<Http1Slot> http1_;    ///< responses not yet written, oldest first
    std::uint64_t http1_first_ = 0;  ///< the id of http1_.front()
    std::uint64_t http1_next_ = 0;   ///< the id the next request gets
    std::vector<std::uint8_t> queued_;
    std::vector<std::uint8_t> writing_;
    std::size_t unanswered_ = 0;
    std::uint64_t queries_started_ = 0;  ///< ever: what the idle timer counts as activity
    bool reading_ = false;
    /// Inside receive() or the HTTP/1.1 parse loop: answers wait to leave as one batch, and
    /// nghttp2 is not asked for output from inside its own callbacks.
    bool taking_ = false;
    bool read_stopped_ = false;
    bool closed_ = false;
};

extern template class DohConnection<asio::ip::tcp::socket>;
extern template class DohConnection<TlsStream>;

}  // namespace moat::server
