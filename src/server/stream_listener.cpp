#include "stream_listener.hpp"

#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <optional>

#include "dns_stream_connection.hpp"
#include "doh_connection.hpp"
#include "moat/core/log.hpp"
#include "moat/server/proxy_header.hpp"
#include "moat/upstream/address.hpp"
#include "socket_family.hpp"

namespace moat::server {

using upstream::from_asio;

engine::Transport transport_of(StreamKind kind) noexcept {
    switch (kind) {
        case StreamKind::tcp: return engine::Transport::tcp;
        case StreamKind::dot: return engine::Transport::dot;
        case StreamKind::doh:
        case StreamKind::doh_plain: return engine::Transport::doh;
    }
    return engine::Transport::tcp;
}

namespace {

const char* kind_text(StreamKind kind) noexcept {
    switch (kind) {
        case StreamKind::tcp: return "tcp";
        case StreamKind::dot: return "dot";
        case StreamKind::doh: return "doh";
        case StreamKind::doh_plain: return "doh (plain http)";
    }
    return "tcp";
}

}  // namespace

/// A connection between accept and its protocol handler: the PROXY header and TLS handshake
/// run under one deadline, so a client that stalls in either holds its slot for a bounded time.
struct StreamListener::Admission {
    Admission(asio::ip::tcp::socket s, ConnectionSlot counted)
        : socket(std::move(s)), deadline(socket.get_executor()), slot(std::move(counted)) {}

    void close() {
        std::error_code ignored;
        auto& lowest = tls ? tls->lowest_layer() : socket;
        lowest.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        lowest.close(ignored);
    }

    asio::ip::tcp::socket socket;
    std::optional<TlsStream> tls;  ///< the socket, moved in, once the TLS handshake starts
    asio::steady_timer deadline;
    ConnectionSlot slot;
    engine::Client client;
    std::vector<std::uint8_t> header;  ///< the PROXY header as read so far
};

StreamListener::StreamListener(asio::io_context& io, asio::ip::tcp::endpoint endpoint,
                               StreamKind kind, QueryPath& path, const ServerOptions& options,
                               std::shared_ptr<StreamTotals> totals, const TlsContexts& tls)
    : acceptor_(io),
      turn_end_(upstream::TurnEnd::of(io)),
      endpoint_(std::move(endpoint)),
      kind_(kind),
      path_(path),
      options_(options),
      tls_(tls),
      shared_(std::make_shared<StreamShared>()) {
    shared_->totals = std::move(totals);
}

tl::expected<void, std::string> StreamListener::start() {
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
        return tl::unexpected(std::string(kind_text(kind_)) + " " +
                              endpoint_text(from_asio(endpoint_.address()), endpoint_.port()) +
                              ": " + ec.message());
    }
    accept();
    return {};
}

tl::expected<void, std::string> StreamListener::adopt(int fd) {
    const auto family = inet_family(fd);
    if (!family) {
        return tl::unexpected("inherited socket " + std::to_string(fd) +
                              " is not a bound IPv4 or IPv6 socket");
    }
    std::error_code ec;
    acceptor_.assign(protocol_of<asio::ip::tcp>(*family), fd, ec);
    if (!ec) {
        endpoint_ = acceptor_.local_endpoint(ec);
    }
    if (!ec) {
        // Already listening when systemd made it; listening again only sets the backlog.
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return tl::unexpected(std::string("inherited ") + kind_text(kind_) + " socket " +
                              std::to_string(fd) + ": " + ec.message());
    }
    accept();
    return {};
}

void StreamListener::stop_accepting() {
    shared_->draining = true;
    std::error_code ignored;
    acceptor_.close(ignored);
    for (auto& weak : connections_) {
        if (auto c = weak.lock()) {
            c->drain();
        }
    }
}

bool StreamListener::proxied(const IpAddress& peer) const noexcept {
    for (const Cidr& c : options_.proxy_protocol_from) {
        if (c.contains(peer)) {
            return true;
        }
    }
    return false;
}

void StreamListener::accept() {
    acceptor_.async_accept([this](const std::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted || shared_->draining) {
            return;
        }
        if (!ec) {
            admit(std::move(socket));
        } else {
            log::debug("{}: accept error: {}", kind_text(kind_), ec.message());
        }
        accept();
    });
}

void StreamListener::admit(asio::ip::tcp::socket socket) {
    std::error_code ec;
    const auto peer = socket.remote_endpoint(ec);
    if (ec) {
        return;  // the client is gone already
    }
    const engine::Client client{from_asio(peer.address()), peer.port(), transport_of(kind_)};
    if (shared_->connections >= options_.tcp_max_connections) {
        log::debug("{}: connection cap ({}) reached; refusing a connection", kind_text(kind_),
                   options_.tcp_max_connections);
        std::error_code ignored;
        socket.close(ignored);
        return;
    }
    // A proxy carries many clients: only direct clients are held to the per-client cap, which
    // keeps one host (a slow-loris script) from taking every slot.
    std::optional<IpAddress> counted;
    if (!proxied(client.address)) {
        counted = client.address;
        if (shared_->totals->open_from(client.address) >= options_.tcp_max_connections_per_client) {
            log::debug(
                "{}: {} has {} connections open already (the per-client cap); refusing "
                "another",
                kind_text(kind_), client.address.to_text(),
                options_.tcp_max_connections_per_client);
            std::error_code ignored;
            socket.close(ignored);
            return;
        }
    }
    std::error_code ignored;
    socket.set_option(asio::ip::tcp::no_delay(true), ignored);  // answers are small: send at once
    auto a = std::make_shared<Admission>(std::move(socket), ConnectionSlot(shared_, counted));
    a->client = client;
    if (kind_ == StreamKind::tcp && !proxied(a->client.address)) {
        launch(*a);  // the common case: no deadline timer, nothing to wait for
        return;
    }
    a->deadline.expires_after(options_.tcp_idle_timeout);
    a->deadline.async_wait([weak = std::weak_ptr<Admission>(a), kind = kind_](std::error_code e) {
        if (auto held = weak.lock(); held && !e) {
            log::debug("{}: {} did not finish the handshake in time; closing", kind_text(kind),
                       held->client.address.to_text());
            held->close();
        }
    });
    if (proxied(a->client.address)) {
        read_proxy_header(std::move(a));
    } else {
        handshake(std::move(a));
    }
}

void StreamListener::read_proxy_header(std::shared_ptr<Admission> a) {
    const ProxyParse parsed = parse_proxy_v2(a->header);
    if (parsed.state == ProxyParse::State::incomplete) {
        const std::size_t have = a->header.size();
        a->header.resize(parsed.needed);
        auto buffer = asio::buffer(a->header.data() + have, parsed.needed - have);
        asio::ip::tcp::socket& socket = a->socket;
        asio::async_read(socket, buffer,
                         [this, a = std::move(a)](const std::error_code& ec, std::size_t) {
                             if (ec || shared_->draining) {
                                 a->close();
                                 return;
                             }
                             read_proxy_header(a);
                         });
        return;
    }
    if (parsed.state == ProxyParse::State::invalid) {
        log::warn("{}: a bad PROXY protocol header from {} ({}); closing", kind_text(kind_),
                  a->client.address.to_text(), parsed.reason);
        a->close();
        return;
    }
    if (parsed.header.addresses) {  // LOCAL (the proxy's own health check) keeps the peer
        a->client.address = parsed.header.addresses->source.address;
        a->client.port = parsed.header.addresses->source.port;
    }
    handshake(std::move(a));
}

void StreamListener::handshake(std::shared_ptr<Admission> a) {
    if (kind_ == StreamKind::tcp || kind_ == StreamKind::doh_plain) {
        a->deadline.cancel();
        launch(*a);
        return;
    }
    auto context = tls_.current(kind_ == StreamKind::dot ? TlsService::dot : TlsService::doh);
    TlsStream& tls = a->tls.emplace(std::move(a->socket), *context);
    tls.async_handshake(asio::ssl::stream_base::server,
                        [this, a = std::move(a), context](const std::error_code& ec) {
                            a->deadline.cancel();
                            if (ec || shared_->draining) {
                                log::debug("{}: TLS handshake with {} failed: {}", kind_text(kind_),
                                           a->client.address.to_text(), ec.message());
                                a->close();
                                return;
                            }
                            launch(*a);
                        });
}

template <typename Connection, typename Stream>
void StreamListener::run(Stream stream, Admission& a) {
    auto c = std::make_shared<Connection>(std::move(stream), a.client, path_, options_,
                                          std::move(a.slot), turn_end_);
    std::erase_if(connections_, [](const auto& w) { return w.expired(); });
    connections_.push_back(c);
    c->start();
}

void StreamListener::launch(Admission& a) {
    switch (kind_) {
        case StreamKind::tcp:
            run<DnsStreamConnection<asio::ip::tcp::socket>>(std::move(a.socket), a);
            break;
        case StreamKind::dot: run<DnsStreamConnection<TlsStream>>(std::move(*a.tls), a); break;
        case StreamKind::doh: run<DohConnection<TlsStream>>(std::move(*a.tls), a); break;
        case StreamKind::doh_plain:
            run<DohConnection<asio::ip::tcp::socket>>(std::move(a.socket), a);
            break;
    }
}

}  // namespace moat::server
