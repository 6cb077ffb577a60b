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
        std::error_code ec;
        peer_.address = socket_.remote_endpoint(ec).address();
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
                fill(reserve(), std::move(r), false, false);
                return;
            }
            arm_timer();
            const bool head = request.method == "HEAD";
            const bool keep_alive = request.keep_alive;
            const std::uint64_t slot = reserve();
            std::optional<http::Response> r = handle(request, slot, head, keep_alive);
            buffer_.erase(0, parsed.consumed);
            if (r) {
                const bool closing = r->close || !keep_alive;
                fill(slot, std::move(*r), head, keep_alive);
                if (closing) {
                    return;
                }
            } else if (!keep_alive) {
                return;  // the deferred answer is the last one
            }
        }
    }

    /// The handler's response, or none when it deferred it; a handler that throws gets 500 and
    /// the connection goes on.
    std::optional<http::Response> handle(const http::Request& request, std::uint64_t slot,
                                         bool head, bool keep_alive) {
        try {
            Responder later = [weak = weak_from_this(), slot, head, keep_alive](http::Response r) {
                if (auto self = weak.lock()) {
                    self->fill(slot, std::move(r), head, keep_alive);
                }
            };
            return shared_->handler(request, peer_, later);
        } catch (const std::exception&) {
            http::Response r;
            r.status = 500;
            r.header("Content-Type", "text/plain; charset=utf-8");
            r.body = "Internal Server Error\n";
            return r;
        }
    }

    /// A place in the answer order for the next request.
    std::uint64_t reserve() {
        writes_.push_back(Pending{next_slot_, {}, false});
        return next_slot_++;
    }

    /// The answer for `slot`: written when every earlier answer has been.
    void fill(std::uint64_t slot, http::Response r, bool head_only, bool keep_alive) {
        if (closed_) {
            return;
        }
        r.close = r.close || !keep_alive;
        add_security_headers(r);
        for (Pending& p : writes_) {
            if (p.slot == slot && !p.ready) {
                p.bytes = http::serialize(r, head_only);
                p.ready = true;
                p.closes = r.close;
                break;
            }
        }
        if (!writing_) {
            write_next();
        }
    }

    void write_next() {
        if (writes_.empty() || !writes_.front().ready) {
            return;
        }
        writing_ = true;
        asio::async_write(socket_, asio::buffer(writes_.front().bytes),
                          [self = shared_from_this()](const std::error_code& ec, std::size_t) {
                              self->writing_ = false;
                              const bool closes = self->writes_.front().closes;
                              self->writes_.pop_front();
                              if (ec || closes) {
                                  self->close();
                                  return;
                              }
                              self->write_next();
                              if (self->paused_ && self->writes_.size() < kMaxQueuedResponses) {
                                  self->paused_ = false;
                                  self->serve();
                              }
                          });
    }

    /// An answer in request order; not ready while its handler's work goes on.
    struct Pending {
        std::uint64_t slot = 0;
        std::string bytes;
        bool ready = false;
        bool closes = false;  ///< the connection ends after this answer
    };

    asio::ip::tcp::socket socket_;
    asio::steady_timer timer_;
    std::shared_ptr<HttpServer::Shared> shared_;
    std::array<char, 4096> chunk_{};
    std::string buffer_;
    std::deque<Pending> writes_;
    std::uint64_t next_slot_ = 0;
    Peer peer_;
    bool writing_ = false;
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
