// The DNS listeners, all on one asio::io_context, handing each query to the QueryPath: UDP and
// TCP (RFC 7766) on every `listen` address, DNS over TLS (RFC 7858) and DNS over HTTPS
// (RFC 8484, HTTP/2 and HTTP/1.1) on their own addresses.
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

/// What a listening socket serves.
enum class ListenerKind : std::uint8_t {
    dns,        ///< plain DNS: UDP, or TCP (RFC 7766)
    dot,        ///< DNS over TLS (RFC 7858)
    doh,        ///< DNS over HTTPS (RFC 8484)
    doh_plain,  ///< DoH's HTTP without TLS, behind a terminator that does TLS
};

/// A socket bound (and, for a stream, listening) before the daemon started: systemd's socket
/// activation. The server takes ownership of the descriptor.
struct InheritedSocket {
    int fd = -1;
    ListenerKind kind = ListenerKind::dns;
    bool datagram = false;  ///< UDP (plain DNS only); otherwise a listening TCP socket
};

struct ServerOptions {
    std::vector<ListenAddress> listen;
    /// Also the time a new connection has for its PROXY header and TLS handshake.
    std::chrono::milliseconds tcp_idle_timeout{10000};
    std::size_t tcp_max_connections = 256;
    /// Stream connections one client address may have open at once (over TCP, DoT and DoH
    /// together); a connection from a PROXY protocol source is not counted.
    std::size_t tcp_max_connections_per_client = 32;
    /// Queries one TCP connection may have unanswered before we stop reading from it.
    std::size_t tcp_max_pipelined = 64;

    std::vector<ListenAddress> dot;        ///< DNS over TLS
    std::vector<ListenAddress> doh;        ///< DNS over HTTPS
    std::vector<ListenAddress> doh_plain;  ///< DoH without TLS, for a TLS terminator in front
    std::string doh_path = "/dns-query";
    /// PEM files for DoT and DoH; read at start() and again by reload_tls().
    std::string tls_certificate;
    std::string tls_private_key;
    /// Stream connections (TCP, DoT, DoH) from these sources start with a PROXY protocol v2
    /// header naming the real client; from any other source such a header is not accepted.
    std::vector<Cidr> proxy_protocol_from;
    /// Sockets from systemd: where there is one of a kind, the addresses configured for that
    /// kind are not bound (plain DNS: `listen`, for UDP and TCP both).
    std::vector<InheritedSocket> inherited;
};

class UdpListener;
class StreamListener;
class TlsContexts;
struct StreamTotals;

class Server {
public:
    Server(asio::io_context& io, ServerOptions options, QueryPath& path);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Reads the TLS certificate (when DoT or DoH is configured), binds every address (or
    /// takes the inherited sockets) and starts serving. The error names the file or the address.
    tl::expected<void, std::string> start();
    /// Reads the certificate and key again (a renewed certificate, on SIGHUP). New connections
    /// use them; open ones keep theirs. On error the running certificate stays.
    tl::expected<void, std::string> reload_tls();
    /// Stops taking new queries (UDP receive and TCP accept/read end); answers in flight are
    /// still sent. For a graceful shutdown: stop_receiving(), then wait for idle().
    void stop_receiving();
    /// No query in flight, no UDP answer queued to send, and no TCP connection with an answer
    /// to write.
    [[nodiscard]] bool idle() const noexcept;
    /// Open stream connections (TCP, DoT, DoH) now.
    [[nodiscard]] std::size_t tcp_connections() const noexcept;
    /// Open stream connections and the most there have been, for /metrics.
    [[nodiscard]] const metrics::PeakGauge& tcp_connections_gauge() const noexcept;

private:
    [[nodiscard]] bool inherits(ListenerKind kind) const noexcept;
    tl::expected<void, std::string> adopt(const InheritedSocket& s);

    asio::io_context& io_;
    ServerOptions options_;
    QueryPath& path_;
    std::vector<std::unique_ptr<UdpListener>> udp_;
    std::vector<std::unique_ptr<StreamListener>> streams_;
    std::shared_ptr<StreamTotals> stream_totals_;
    std::shared_ptr<TlsContexts> tls_;
};

}  // namespace moat::server
