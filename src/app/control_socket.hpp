// The daemon's control socket: a Unix stream socket on which `dnsmoat pause` and `dnsmoat resume`
// (or a script: `echo "pause 300 kids" | nc -U /run/dnsmoat/control.sock`) pause blocking.
//
// One request line per connection, at most 256 bytes, read within 2 s:
//   pause SECONDS [GROUP]   blocking off for SECONDS (1..86400) for everyone or GROUP
//   resume [GROUP]          blocking back now
// and one reply line, "ok: ..." or "error: ...". The socket file is made with mode 0660, so only
// its owner and group may steer the daemon. Runs on the event loop.
#pragma once

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <functional>
#include <memory>
#include <string>

namespace moat::app {

class ControlSocket {
public:
    /// Answers one request line; called on the event loop.
    using Handler = std::function<std::string(const std::string& line)>;

    ControlSocket(asio::io_context& io, Handler handler);
    ~ControlSocket();
    ControlSocket(const ControlSocket&) = delete;
    ControlSocket& operator=(const ControlSocket&) = delete;

    /// Binds `path` (replacing a stale socket file); an error text when it cannot.
    [[nodiscard]] std::string open(const std::string& path);
    void close();

private:
    void accept();

    asio::io_context& io_;
    Handler handler_;
    asio::local::stream_protocol::acceptor acceptor_;
    std::string path_;
};

/// Sends one request line to the daemon at `path` and returns its reply (or an error text).
[[nodiscard]] std::string control_request(const std::string& path, const std::string& line);

}  // namespace moat::app
