// DNS over TCP (RFC 7766): an acceptor with a connection cap, and connections that read
// length-framed queries, answer each as soon as it is ready (pipelining, out of order), and
// close after an idle timeout.
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <deque>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/metrics/instruments.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"

namespace moat::server {

/// Open connections over every listener, and the most there have been (for /metrics).
struct TcpTotals {
    std::size_t open = 0;
    metrics::PeakGauge gauge;
};

/// Counters shared by a listener and its connections (which may outlive one another).
struct TcpShared {
    std::shared_ptr<TcpTotals> totals;
    std::size_t connections = 0;
    std::size_t busy = 0;  ///< connections with a query unanswered or an answer unwritten
    bool draining = false;
};

class TcpConnection : public std::enable_shared_from_this<TcpConnection> {
public:
    TcpConnection(asio::ip::tcp::socket socket, QueryPath& path, const ServerOptions& options,
                  std::shared_ptr<TcpShared> shared);
    ~TcpConnection();
    TcpConnection(const TcpConnection&) = delete;
    TcpConnection& operator=(const TcpConnection&) = delete;

    void start();
    /// Stops reading; closes once every answer is written.
    void drain();

private:
    void read_length();
    void read_body(std::size_t length);
    void answer(std::span<const std::uint8_t> reply);
    void write_next();
    void arm_idle_timer();
    void set_busy(bool busy);
    void close_if_done();
    void close();

    asio::ip::tcp::socket socket_;
    asio::steady_timer idle_timer_;
    QueryPath& path_;
    const ServerOptions& options_;
    std::shared_ptr<TcpShared> shared_;
    engine::Client client_;
    std::array<std::uint8_t, 2> length_{};
    std::vector<std::uint8_t> body_;
    std::deque<std::vector<std::uint8_t>> writes_;
    std::size_t unanswered_ = 0;
    bool writing_ = false;
    bool reading_ = false;
    bool read_stopped_ = false;
    bool busy_ = false;
    bool closed_ = false;
};

class TcpListener {
public:
    TcpListener(asio::io_context& io, asio::ip::tcp::endpoint endpoint, QueryPath& path,
                const ServerOptions& options, std::shared_ptr<TcpTotals> totals);
    tl::expected<void, std::string> start();
    void stop_accepting();
    [[nodiscard]] const TcpShared& shared() const noexcept { return *shared_; }

private:
    void accept();

    asio::ip::tcp::acceptor acceptor_;
    asio::ip::tcp::endpoint endpoint_;
    QueryPath& path_;
    const ServerOptions& options_;
    std::shared_ptr<TcpShared> shared_;
    std::vector<std::weak_ptr<TcpConnection>> connections_;
};

}  // namespace moat::server
