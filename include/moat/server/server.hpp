// The plain-DNS listeners: UDP and TCP (RFC 7766) on every configured address, all on one
// asio::io_context, handing each query to the QueryPath.
#pragma once

#include <asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/metrics/instruments.hpp"
#include "moat/server/query_path.hpp"

namespace moat::server {

struct ListenAddress {
    IpAddress address;
    std::uint16_t port = 53;
};

struct ServerOptions {
    std::vector<ListenAddress> listen;
    std::chrono::milliseconds tcp_idle_timeout{10000};
    std::size_t tcp_max_connections = 256;
    /// Queries one TCP connection may have unanswered before we stop reading from it.
    std::size_t tcp_max_pipelined = 64;
};

class UdpListener;
class TcpListener;
struct TcpTotals;

class Server {
public:
    Server(asio::io_context& io, ServerOptions options, QueryPath& path);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Binds every address (UDP and TCP) and starts serving. The error names the address.
    tl::expected<void, std::string> start();
    /// Stops taking new queries (UDP receive and TCP accept/read end); answers in flight are
    /// still sent. For a graceful shutdown: stop_receiving(), then wait for idle().
    void stop_receiving();
    /// No query in flight, no UDP answer queued to send, and no TCP connection with an answer
    /// to write.
    [[nodiscard]] bool idle() const noexcept;
    /// Open TCP connections now.
    [[nodiscard]] std::size_t tcp_connections() const noexcept;
    /// Open TCP connections and the most there have been, for /metrics.
    [[nodiscard]] const metrics::PeakGauge& tcp_connections_gauge() const noexcept;

private:
    asio::io_context& io_;
    ServerOptions options_;
    QueryPath& path_;
    std::vector<std::unique_ptr<UdpListener>> udp_;
    std::vector<std::unique_ptr<TcpListener>> tcp_;
    std::shared_ptr<TcpTotals> tcp_totals_;
};

}  // namespace moat::server
