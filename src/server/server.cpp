#include "moat/server/server.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "moat/upstream/address.hpp"
#include "stream_listener.hpp"
#include "tls_context.hpp"
#include "udp_listener.hpp"

namespace moat::server {

using upstream::to_asio;

Server::Server(asio::io_context& io, ServerOptions options, QueryPath& path)
    : io_(io),
      options_(std::move(options)),
      path_(path),
      stream_totals_(std::make_shared<StreamTotals>()),
      tls_(std::make_shared<TlsContexts>()) {}

Server::~Server() = default;

namespace {

StreamKind stream_kind_of(ListenerKind kind) noexcept {
    switch (kind) {
        case ListenerKind::dns: return StreamKind::tcp;
        case ListenerKind::dot: return StreamKind::dot;
        case ListenerKind::doh: return StreamKind::doh;
        case ListenerKind::doh_plain: return StreamKind::doh_plain;
    }
    return StreamKind::tcp;
}

}  // namespace

bool Server::inherits(ListenerKind kind) const noexcept {
    return std::any_of(options_.inherited.begin(), options_.inherited.end(),
                       [kind](const InheritedSocket& s) { return s.kind == kind; });
}

tl::expected<void, std::string> Server::start() {
    if (!options_.dot.empty() || !options_.doh.empty() || inherits(ListenerKind::dot) ||
        inherits(ListenerKind::doh)) {
        if (auto loaded = tls_->load(options_.tls_certificate, options_.tls_private_key); !loaded) {
            return loaded;
        }
    }
    for (const InheritedSocket& s : options_.inherited) {
        if (auto adopted = adopt(s); !adopted) {
            return adopted;
        }
    }
    if (!inherits(ListenerKind::dns)) {
        for (const ListenAddress& l : options_.listen) {
            const auto address = to_asio(l.address);
            auto udp =
                std::make_unique<UdpListener>(io_, asio::ip::udp::endpoint{address, l.port}, path_);
            if (auto started = udp->start(); !started) {
                return started;
            }
            udp_.push_back(std::move(udp));
        }
    }
    const std::array<std::pair<const std::vector<ListenAddress>*, ListenerKind>, 4> streams{{
        {&options_.listen, ListenerKind::dns},
        {&options_.dot, ListenerKind::dot},
        {&options_.doh, ListenerKind::doh},
        {&options_.doh_plain, ListenerKind::doh_plain},
    }};
    for (const auto& [addresses, kind] : streams) {
        if (inherits(kind)) {
            continue;  // systemd bound this kind's sockets
        }
        for (const ListenAddress& l : *addresses) {
            auto listener = std::make_unique<StreamListener>(
                io_, asio::ip::tcp::endpoint{to_asio(l.address), l.port}, stream_kind_of(kind),
                path_, options_, stream_totals_, *tls_);
            if (auto started = listener->start(); !started) {
                return started;
            }
            streams_.push_back(std::move(listener));
        }
    }
    return {};
}

tl::expected<void, std::string> Server::adopt(const InheritedSocket& s) {
    if (s.datagram) {
        if (s.kind != ListenerKind::dns) {
            return tl::unexpected("inherited socket " + std::to_string(s.fd) +
                                  ": a datagram socket serves plain DNS only");
        }
        auto udp = std::make_unique<UdpListener>(io_, asio::ip::udp::endpoint{}, path_);
        if (auto adopted = udp->adopt(s.fd); !adopted) {
            return adopted;
        }
        udp_.push_back(std::move(udp));
        return {};
    }
    auto listener =
        std::make_unique<StreamListener>(io_, asio::ip::tcp::endpoint{}, stream_kind_of(s.kind),
                                         path_, options_, stream_totals_, *tls_);
    if (auto adopted = listener->adopt(s.fd); !adopted) {
        return adopted;
    }
    streams_.push_back(std::move(listener));
    return {};
}

tl::expected<void, std::string> Server::reload_tls() {
    if (!tls_->loaded()) {
        return {};  // no TLS listener runs
    }
    return tls_->load(options_.tls_certificate, options_.tls_private_key);
}

void Server::stop_receiving() {
    for (auto& u : udp_) {
        u->stop_receiving();
    }
    for (auto& s : streams_) {
        s->stop_accepting();
    }
}

bool Server::idle() const noexcept {
    if (path_.in_flight() != 0) {
        return false;
    }
    for (const auto& u : udp_) {
        if (!u->idle()) {
            return false;  // answers queued for the end of this turn
        }
    }
    for (const auto& s : streams_) {
        if (s->shared().busy != 0) {
            return false;
        }
    }
    return true;
}

const metrics::PeakGauge& Server::tcp_connections_gauge() const noexcept {
    return stream_totals_->gauge;
}

std::size_t Server::tcp_connections() const noexcept {
    std::size_t n = 0;
    for (const auto& s : streams_) {
        n += s->shared().connections;
    }
    return n;
}

}  // namespace moat::server
