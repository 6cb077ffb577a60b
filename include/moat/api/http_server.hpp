// The HTTP/1.1 server of the API, on the daemon's event loop: an acceptor per address with a
// connection cap, connections that read requests (moat/http/request.hpp, with its size limits),
// answer each through the handler in order (keep-alive and pipelining), and close after an idle
// timeout or a request that cannot be parsed (answered 400, 413, 431, 501 or 505 first).
//
// Every response gets the security headers a browser-facing endpoint needs (no sniffing, no
// framing, no referrer, no caching, a default Content-Security-Policy) unless the handler set
// its own.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/http/request.hpp"
#include "moat/http/response.hpp"

namespace moat::api {

struct HttpServerOptions {
    std::vector<asio::ip::tcp::endpoint> listen;
    std::size_t max_connections = 64;
    std::chrono::milliseconds idle_timeout{10000};
    http::Limits limits;
};

/// Sends the answer to a request the handler deferred; call once, on the event loop. Answers go
/// out in request order: pipelined requests after a deferred one wait for it.
using Responder = std::function<void(http::Response)>;

/// What the handler knows of a request besides its bytes.
struct Peer {
    asio::ip::address address;
};

/// Answers a request at once (a Response), or defers it (std::nullopt) for slow work such as a
/// password check and answers later through `later`. The Request's views are valid only during
/// the call: copy what the deferred work needs.
using Handler = std::function<std::optional<http::Response>(
    const http::Request& request, const Peer& peer, const Responder& later)>;

class HttpServer {
public:
    HttpServer(asio::io_context& io, HttpServerOptions options, Handler handler);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;
    HttpServer(HttpServer&&) = delete;
    HttpServer& operator=(HttpServer&&) = delete;

    /// Binds every address; the error names the one that failed.
    tl::expected<void, std::string> start();
    /// Stops accepting and closes every connection.
    void stop();
    [[nodiscard]] std::size_t connections() const noexcept;
    /// The bound addresses (port 0 in the options becomes the port given).
    [[nodiscard]] std::vector<asio::ip::tcp::endpoint> local_endpoints() const;

    struct Shared;  // with the connections, which may outlive a stop()

private:
    void accept(std::size_t index);

    asio::io_context& io_;
    HttpServerOptions options_;
    std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> acceptors_;
    std::shared_ptr<Shared> shared_;
};

/// Adds the security headers `response` does not set itself.
void add_security_headers(http::Response& response);

}  // namespace moat::api
