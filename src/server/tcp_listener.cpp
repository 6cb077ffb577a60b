#include "tcp_listener.hpp"

#include <spdlog/spdlog.h>

#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include "moat/core/bytes.hpp"
#include "moat/upstream/address.hpp"

namespace moat::server {

using upstream::from_asio;
using upstream::to_asio;

TcpConnection::TcpConnection(asio::ip::tcp::socket socket, QueryPath& path,
                             const ServerOptions& options, std::shared_ptr<TcpShared> shared)
    : socket_(std::move(socket)),
      idle_timer_(socket_.get_executor()),
      path_(path),
      options_(options),
      shared_(std::move(shared)) {
    ++shared_->connections;
    shared_->totals->gauge.set(++shared_->totals->open);
    std::error_code ec;
    const auto peer = socket_.remote_endpoint(ec);
    client_ = {ec ? IpAddress{} : from_asio(peer.address()), ec ? std::uint16_t{0} : peer.port(),
               engine::Transport::tcp};
}

TcpConnection::~TcpConnection() {
    set_busy(false);
    --shared_->connections;
    shared_->totals->gauge.set(--shared_->totals->open);
}

void TcpConnection::start() {
    arm_idle_timer();
    read_length();
}

void TcpConnection::drain() {
    read_stopped_ = true;
    std::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_receive, ignored);
    close_if_done();
}

void TcpConnection::set_busy(bool busy) {
    if (busy != busy_) {
        busy_ = busy;
        busy ? ++shared_->busy : --shared_->busy;
    }
}

void TcpConnection::arm_idle_timer() {
    idle_timer_.expires_after(options_.tcp_idle_timeout);
    idle_timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
        if (ec || self->closed_) {
            return;
        }
        if (self->unanswered_ == 0 && !self->writing_) {
            spdlog::debug("tcp: closing idle connection from {}", self->client_.address.to_text());
            self->close();
        } else {
            self->arm_idle_timer();  // still working for the client: not idle
        }
    });
}

void TcpConnection::read_length() {
    if (read_stopped_ || closed_ || reading_) {
        return;
    }
    if (unanswered_ >= options_.tcp_max_pipelined) {
        return;  // resumed by answer(): a client cannot queue unbounded work
    }
    reading_ = true;
    asio::async_read(socket_, asio::buffer(length_),
                     [self = shared_from_this()](const std::error_code& ec, std::size_t /*n*/) {
                         self->reading_ = false;
                         if (ec) {
                             self->read_stopped_ = true;  // EOF or error: finish the answers
                             self->close_if_done();
                             return;
                         }
                         const std::size_t length = load_u16(self->length_.data());
                         if (length < 12) {  // not even a header: the stream cannot be trusted
                             self->read_stopped_ = true;
                             self->close_if_done();
                             return;
                         }
                         self->read_body(length);
                     });
}

void TcpConnection::read_body(std::size_t length) {
    body_.resize(length);
    reading_ = true;
    asio::async_read(socket_, asio::buffer(body_),
                     [self = shared_from_this()](const std::error_code& ec, std::size_t /*n*/) {
                         self->reading_ = false;
                         if (ec) {
                             self->read_stopped_ = true;
                             self->close_if_done();
                             return;
                         }
                         self->arm_idle_timer();
                         ++self->unanswered_;
                         self->set_busy(true);
                         const auto handled =
                             self->path_.handle(self->body_, self->client_, [self] {
                                 return ReplyFn([self](std::span<const std::uint8_t> reply) {
                                     self->answer(reply);
                                 });
                             });
                         if (!handled.deferred) {
                             self->answer(handled.answer);
                         }
                         self->read_length();
                     });
}

void TcpConnection::answer(std::span<const std::uint8_t> reply) {
    --unanswered_;
    if (!closed_ && !reply.empty()) {
        std::vector<std::uint8_t> framed(reply.size() + 2);
        store_u16(framed.data(), static_cast<std::uint16_t>(reply.size()));
        std::copy(reply.begin(), reply.end(), framed.begin() + 2);
        writes_.push_back(std::move(framed));
        write_next();
    }
    read_length();
    close_if_done();
}

void TcpConnection::write_next() {
    if (writing_ || writes_.empty() || closed_) {
        return;
    }
    writing_ = true;
    asio::async_write(socket_, asio::buffer(writes_.front()),
                      [self = shared_from_this()](const std::error_code& ec, std::size_t /*n*/) {
                          self->writing_ = false;
                          self->writes_.pop_front();
                          if (ec) {
                              self->close();
                              return;
                          }
                          self->write_next();
                          self->close_if_done();
                      });
}

void TcpConnection::close_if_done() {
    if (unanswered_ == 0 && !writing_ && writes_.empty()) {
        set_busy(false);
        if (read_stopped_) {
            close();
        }
    }
}

void TcpConnection::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    set_busy(false);
    idle_timer_.cancel();
    std::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
}

TcpListener::TcpListener(asio::io_context& io, asio::ip::tcp::endpoint endpoint, QueryPath& path,
                         const ServerOptions& options, std::shared_ptr<TcpTotals> totals)
    : acceptor_(io),
      endpoint_(std::move(endpoint)),
      path_(path),
      options_(options),
      shared_(std::make_shared<TcpShared>()) {
    shared_->totals = std::move(totals);
}

tl::expected<void, std::string> TcpListener::start() {
    std::error_code ec;
    acceptor_.open(endpoint_.protocol(), ec);
    if (!ec && endpoint_.address().is_v6()) {
        acceptor_.set_option(asio::ip::v6_only(true), ec);
    }
    if (!ec) {
        acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        acceptor_.bind(endpoint_, ec);
    }
    if (!ec) {
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return tl::unexpected("tcp " + endpoint_.address().to_string() + ":" +
                              std::to_string(endpoint_.port()) + ": " + ec.message());
    }
    accept();
    return {};
}

void TcpListener::stop_accepting() {
    shared_->draining = true;
    std::error_code ignored;
    acceptor_.close(ignored);
    for (auto& weak : connections_) {
        if (auto c = weak.lock()) {
            c->drain();
        }
    }
}

void TcpListener::accept() {
    acceptor_.async_accept([this](const std::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted || shared_->draining) {
            return;
        }
        if (!ec) {
            if (shared_->connections >= options_.tcp_max_connections) {
                spdlog::debug("tcp: connection cap ({}) reached; refusing a connection",
                              options_.tcp_max_connections);
                std::error_code ignored;
                socket.close(ignored);
            } else {
                auto c =
                    std::make_shared<TcpConnection>(std::move(socket), path_, options_, shared_);
                std::erase_if(connections_, [](const auto& w) { return w.expired(); });
                connections_.push_back(c);
                c->start();
            }
        } else {
            spdlog::debug("tcp: accept error: {}", ec.message());
        }
        accept();
    });
}

}  // namespace moat::server
