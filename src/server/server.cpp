#include "moat/server/server.hpp"

#include "moat/upstream/address.hpp"
#include "tcp_listener.hpp"
#include "udp_listener.hpp"

namespace moat::server {

using upstream::from_asio;
using upstream::to_asio;

Server::Server(asio::io_context& io, ServerOptions options, QueryPath& path)
    : io_(io),
      options_(std::move(options)),
      path_(path),
      tcp_totals_(std::make_shared<TcpTotals>()) {}

Server::~Server() = default;

tl::expected<void, std::string> Server::start() {
    for (const ListenAddress& l : options_.listen) {
        const auto address = to_asio(l.address);
        auto udp =
            std::make_unique<UdpListener>(io_, asio::ip::udp::endpoint{address, l.port}, path_);
        if (auto started = udp->start(); !started) {
            return started;
        }
        udp_.push_back(std::move(udp));
        auto tcp = std::make_unique<TcpListener>(io_, asio::ip::tcp::endpoint{address, l.port},
                                                 path_, options_, tcp_totals_);
        if (auto started = tcp->start(); !started) {
            return started;
        }
        tcp_.push_back(std::move(tcp));
    }
    return {};
}

void Server::stop_receiving() {
    for (auto& u : udp_) {
        u->stop_receiving();
    }
    for (auto& t : tcp_) {
        t->stop_accepting();
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
    for (const auto& t : tcp_) {
        if (t->shared().busy != 0) {
            return false;
        }
    }
    return true;
}

const metrics::PeakGauge& Server::tcp_connections_gauge() const noexcept {
    return tcp_totals_->gauge;
}

std::size_t Server::tcp_connections() const noexcept {
    std::size_t n = 0;
    for (const auto& t : tcp_) {
        n += t->shared().connections;
    }
    return n;
}

}  // namespace moat::server
