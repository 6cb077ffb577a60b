#include "moat/api/http_server.hpp"

#include <array>
#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <deque>
#include <list>

#include "moat/core/ascii.hpp"

namespace moat::api {

class Connection;

struct HttpServer::Shared {
    Handler handler;
    http::Limits limits;
    std::chrono::milliseconds idle_timeout;
    std::size_t connections = 0;
    std::list<std::weak_ptr<Connection>> open;  ///< for stop()
};

namespace {

bool has_header(const http::Response& r, std::string_view name) {
    for (const auto& [n, v] : r.headers) {
        if (ascii_iequal(n, name)) {
            return true;
        }
    }
    return false;
}

}  // namespace

void add_security_headers(http::Response& r) {
    static constexpr std::array<std::pair<const char*, const char*>, 6> kHeaders{{
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-store"},
        {"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
        {"Cross-Origin-Resource-Policy", "same-origin"},
    }};
    for (const auto& [name, value] : kHeaders) {
        if (!has_header(r, name)) {
            r.header(name, value);
        }
    }
}

class Connection : public std::enable_shared_from_this<Connection> {
public:
    static constexpr std::size_t kMaxQueuedResponses = 8;

    Connection(asio::ip::tcp::socket socket, std::shared_ptr<HttpServer::Shared> shared)
        : socket_(std::move(socket)), timer_(socket_.get_executor()), shared_(std::move(shared)) {
        ++shared_->connections;
    }
    ~Connection() { --shared_->connections; }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&&) = delete;
    Connection& operator=(Connection&&) = delete;

    void start() {
        arm_timer();
        read();
    }
    void close() {
        if (closed_) {
            return;
        }
        closed_ = true;
        std::error_code ignored;
        timer_.cancel();
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
    }

private:
    void arm_timer() {
        timer_.expires_after(shared_->idle_timeout);
        timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
            if (!ec) {
                self->close();  // idle (or a request that never finished: slow clients end here)
            }
        });
    }

    void read() {
        if (closed_) {
            return;
        }
        socket_.async_read_some(
            asio::buffer(chunk_),
            [self = shared_from_this()](const std::error_code& ec, std::size_t n) {
                if (ec) {
                    self->close();
                    return;
                }
                self->buffer_.append(self->chunk_.data(), n);
                self->serve();
            });
    }

    /// Answers every complete request in the buffer, then reads on (or closes). With
    /// kMaxQueuedResponses answers not yet written (a client that pipelines and does not read),
    /// it stops until they drain, so a connection holds a bounded amount of memory.
    void serve() {
        while (!closed_) {
            if (writes_.size() >= kMaxQueuedResponses) {
                paused_ = true;
                return;
            }
            http::Request request;
            const http::Parsed parsed = http::parse_request(buffer_, request, shared_->limits);
            if (parsed.state == http::Parsed::State::incomplete) {
                read();
                return;
            }
            if (parsed.state == http::Parsed::State::error) {
                http::Response r;
                r.status = http::status_of(parsed.error);
                r.header("Content-Type", "text/plain; charset=utf-8");
                r.body = std::string(http::reason_of(r.status)) + "\n";
                r.close = true;
                send(std::move(r), false);
                return;
            }
            arm_timer();
            http::Response r = handle(request);
            r.close = r.close || !request.keep_alive;
            const bool head = request.method == "HEAD";
            buffer_.erase(0, parsed.consumed);
            const bool closing = r.close;
            send(std::move(r), head);
            if (closing) {
                return;
            }
        }
    }

    /// The handler's response; a handler that throws gets 500 and the connection goes on.
    http::Response handle(const http::Request& request) {
        try {
            return shared_->handler(request);
        } catch (const std::exception&) {
            http::Response r;
            r.status = 500;
            r.header("Content-Type", "text/plain; charset=utf-8");
            r.body = "Internal Server Error\n";
            return r;
        }
    }

    void send(http::Response r, bool head_only) {
        add_security_headers(r);
        const bool closing = r.close;
        writes_.push_back(http::serialize(r, head_only));
        if (closing) {
            closing_ = true;
        }
        if (writes_.size() == 1) {
            write_next();
        }
    }

    void write_next() {
        asio::async_write(socket_, asio::buffer(writes_.front()),
                          [self = shared_from_this()](const std::error_code& ec, std::size_t) {
                              self->writes_.pop_front();
                              if (ec || (self->writes_.empty() && self->closing_)) {
                                  self->close();
                                  return;
                              }
                              if (!self->writes_.empty()) {
                                  self->write_next();
                              }
                              if (self->paused_ && self->writes_.size() < kMaxQueuedResponses) {
                                  self->paused_ = false;
                                  self->serve();
                              }
                          });
    }

    asio::ip::tcp::socket socket_;
    asio::steady_timer timer_;
    std::shared_ptr<HttpServer::Shared> shared_;
    std::array<char, 4096> chunk_{};
    std::string buffer_;
    std::deque<std::string> writes_;
    bool closing_ = false;
    bool closed_ = false;
    bool paused_ = false;  ///< serve() waits for queued answers to be written
};

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, Handler handler)
    : io_(io), options_(std::move(options)), shared_(std::make_shared<Shared>()) {
    shared_->handler = std::move(handler);
    shared_->limits = options_.limits;
    shared_->idle_timeout = options_.idle_timeout;
}

HttpServer::~HttpServer() {
    try {
        stop();
    } catch (const std::exception&) {  // closing sockets: nothing left to do about a failure
    }
}

tl::expected<void, std::string> HttpServer::start() {
    for (const auto& endpoint : options_.listen) {
        auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_);
        std::error_code ec;
        acceptor->open(endpoint.protocol(), ec);
        if (!ec) {
            acceptor->set_option(asio::socket_base::reuse_address(true), ec);
        }
        if (!ec && endpoint.address().is_v6()) {
            acceptor->set_option(asio::ip::v6_only(true), ec);
        }
        if (!ec) {
            acceptor->bind(endpoint, ec);
        }
        if (!ec) {
            acceptor->listen(asio::socket_base::max_listen_connections, ec);
        }
        if (ec) {
            const std::string where = endpoint.address().is_v6()
                                          ? "[" + endpoint.address().to_string() + "]"
                                          : endpoint.address().to_string();
            return tl::unexpected(where + ":" + std::to_string(endpoint.port()) + ": " +
                                  ec.message());
        }
        acceptors_.push_back(std::move(acceptor));
    }
    for (std::size_t i = 0; i < acceptors_.size(); ++i) {
        accept(i);
    }
    return {};
}

void HttpServer::accept(std::size_t index) {
    acceptors_[index]->async_accept(
        [this, index, shared = shared_](const std::error_code& ec, asio::ip::tcp::socket socket) {
            if (ec == asio::error::operation_aborted) {
                return;
            }
            if (!ec) {
                if (shared->connections >= options_.max_connections) {
                    std::error_code ignored;
                    socket.close(ignored);  // over the cap: closed at once, others unaffected
                } else {
                    auto c = std::make_shared<Connection>(std::move(socket), shared);
                    shared->open.remove_if([](const auto& w) { return w.expired(); });
                    shared->open.push_back(c);
                    c->start();
                }
            }
            accept(index);
        });
}

void HttpServer::stop() {
    for (auto& a : acceptors_) {
        std::error_code ignored;
        a->close(ignored);
    }
    for (auto& weak : shared_->open) {
        if (auto c = weak.lock()) {
            c->close();
        }
    }
    shared_->open.clear();
}

std::size_t HttpServer::connections() const noexcept { return shared_->connections; }

std::vector<asio::ip::tcp::endpoint> HttpServer::local_endpoints() const {
    std::vector<asio::ip::tcp::endpoint> out;
    for (const auto& a : acceptors_) {
        std::error_code ec;
        out.push_back(a->local_endpoint(ec));
    }
    return out;
}

}  // namespace moat::api
