// A stream listener (plain TCP, DoT, DoH over TLS or plain HTTP): accepts under the connection
// cap, reads a PROXY protocol v2 header from the configured sources, runs the TLS handshake,
// all under one deadline, and hands the connection to the DNS or DoH protocol handler.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/engine/client.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/turn_end.hpp"
#include "stream_shared.hpp"
#include "tls_context.hpp"

namespace moat::server {

enum class StreamKind : std::uint8_t {
    tcp,        ///< DNS over TCP (RFC 7766)
    dot,        ///< DNS over TLS (RFC 7858)
    doh,        ///< DNS over HTTPS (RFC 8484)
    doh_plain,  ///< DoH's HTTP without TLS, behind a terminator that does TLS
};

class StreamListener {
public:
    /// `tls` must outlive the listener; it is read at each accept, so a reload reaches new
    /// connections.
    StreamListener(asio::io_context& io, asio::ip::tcp::endpoint endpoint, StreamKind kind,
                   QueryPath& path, const ServerOptions& options,
                   std::shared_ptr<StreamTotals> totals, const TlsContexts& tls);
    tl::expected<void, std::string> start();
    /// Accepts on `fd`, a TCP socket bound and listening before the daemon started (socket
    /// activation), instead of binding the endpoint; the listener owns it from here.
    tl::expected<void, std::string> adopt(int fd);
    void stop_accepting();
    [[nodiscard]] const StreamShared& shared() const noexcept { return *shared_; }

private:
    struct Admission;

    void accept();
    void admit(asio::ip::tcp::socket socket);
    void read_proxy_header(std::shared_ptr<Admission> a);
    void handshake(std::shared_ptr<Admission> a);
    void launch(Admission& a);
    template <typename Connection, typename Stream>
    void run(Stream stream, Admission& a);
    [[nodiscard]] bool proxied(const IpAddress& peer) const noexcept;

    asio::ip::tcp::acceptor acceptor_;
    upstream::TurnEnd& turn_end_;  ///< the batch a connection's read runs in
    asio::ip::tcp::endpoint endpoint_;
    StreamKind kind_;
    QueryPath& path_;
    const ServerOptions& options_;
    const TlsContexts& tls_;
    std::shared_ptr<StreamShared> shared_;
    std::vector<std::weak_ptr<StreamConnection>> connections_;
};

[[nodiscard]] engine::Transport transport_of(StreamKind kind) noexcept;

}  // namespace moat::server
