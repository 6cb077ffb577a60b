#include "control_socket.hpp"

#include <sys/stat.h>

#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>
#include <filesystem>
#include <istream>

namespace moat::app {
namespace {

constexpr std::size_t kMaxRequest = 256;
constexpr auto kReadTimeout = std::chrono::seconds{2};

/// One connection: read a line (bounded in size and time), answer it, close.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(asio::local::stream_protocol::socket socket, ControlSocket::Handler handler)
        : socket_(std::move(socket)),
          timer_(socket_.get_executor()),
          buffer_(kMaxRequest),
          handler_(std::move(handler)) {}

    void start() {
        timer_.expires_after(kReadTimeout);
        timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
            if (!ec) {
                std::error_code ignored;
                self->socket_.close(ignored);  // a client that sends nothing is cut off
            }
        });
        asio::async_read_until(socket_, buffer_, '\n',
                               [self = shared_from_this()](const std::error_code& ec, std::size_t) {
                                   self->on_line(ec);
                               });
    }

private:
    void on_line(const std::error_code& ec) {
        timer_.cancel();
        if (ec && ec != asio::error::eof) {
            if (ec == asio::error::not_found) {  // the line did not fit
                reply("error: request longer than 256 bytes\n");
            }
            return;
        }
        std::istream in(&buffer_);
        std::string line;
        std::getline(in, line);
        reply(handler_(line) + "\n");
    }

    void reply(std::string text) {
        auto owned = std::make_shared<std::string>(std::move(text));
        asio::async_write(socket_, asio::buffer(*owned),
                          [self = shared_from_this(), owned](const std::error_code&, std::size_t) {
                              std::error_code ignored;
                              self->socket_.close(ignored);
                          });
    }

    asio::local::stream_protocol::socket socket_;
    asio::steady_timer timer_;
    asio::streambuf buffer_;
    ControlSocket::Handler handler_;
};

}  // namespace

ControlSocket::ControlSocket(asio::io_context& io, Handler handler)
    : io_(io), handler_(std::move(handler)), acceptor_(io) {}

ControlSocket::~ControlSocket() { close(); }

std::string ControlSocket::open(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const asio::local::stream_protocol::endpoint endpoint(path);
    {
        asio::local::stream_protocol::socket probe(io_);
        probe.connect(endpoint, ec);
        if (!ec) {
            return "cannot open the control socket " + path + ": another daemon answers on it";
        }
    }
    std::filesystem::remove(path, ec);  // a socket file left by a daemon that was killed
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor_.bind(endpoint, ec);
    }
    if (!ec) {
        ::chmod(path.c_str(), 0660);  // owner and group only
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        std::error_code ignored;
        acceptor_.close(ignored);
        return "cannot open the control socket " + path + ": " + ec.message();
    }
    path_ = path;
    accept();
    return {};
}

void ControlSocket::close() {
    std::error_code ec;
    acceptor_.close(ec);
    if (!path_.empty()) {
        std::filesystem::remove(path_, ec);
        path_.clear();
    }
}

void ControlSocket::accept() {
    acceptor_.async_accept(
        [this](const std::error_code& ec, asio::local::stream_protocol::socket socket) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
                return;
            }
            if (!ec) {
                std::make_shared<Session>(std::move(socket), handler_)->start();
            }
            accept();
        });
}

std::string control_request(const std::string& path, const std::string& line) {
    asio::io_context io;
    asio::local::stream_protocol::socket socket(io);
    std::error_code ec;
    socket.connect(asio::local::stream_protocol::endpoint(path), ec);
    if (ec) {
        return "error: cannot reach the daemon at " + path + ": " + ec.message() +
               " (is dnsmoat running, and may you use its control socket?)";
    }
    asio::write(socket, asio::buffer(line + "\n"), ec);
    asio::streambuf reply;
    asio::read_until(socket, reply, '\n', ec);
    std::istream in(&reply);
    std::string text;
    std::getline(in, text);
    return text.empty() ? "error: no reply from the daemon" : text;
}

}  // namespace moat::app
