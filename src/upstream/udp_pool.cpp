#include "udp_pool.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "moat/core/bytes.hpp"
#include "moat/core/raw_buffer.hpp"

namespace moat::upstream {

struct UdpPool::Socket {
    explicit Socket(asio::io_context& io) : socket(io), buffer(kBufferBytes) {}
    asio::ip::udp::socket socket;
    RawBuffer buffer;
    asio::ip::udp::endpoint from;
    std::unordered_map<std::uint16_t, ReplySink*> waiting;
    std::uint32_t uses = 0;
    bool retired = false;  ///< out of the pool: closes once nobody waits on it
    bool closed = false;
};

UdpPool::UdpPool(asio::io_context& io, RandomSource& random, std::shared_ptr<Stats> stats,
                 Sizes sizes)
    : io_(io),
      random_(random),
      stats_(std::move(stats)),
      sizes_{std::max<std::size_t>(sizes.sockets, 1),
             std::max<std::uint32_t>(sizes.uses_per_socket, 1)},
      v4_(sizes_.sockets),
      v6_(sizes_.sockets) {}

UdpPool::~UdpPool() {
    for (auto* family : {&v4_, &v6_}) {
        for (auto& s : *family) {
            if (s) {
                s->closed = true;
                s->waiting.clear();
                std::error_code ignored;
                s->socket.close(ignored);
            }
        }
    }
}

std::shared_ptr<UdpPool::Socket> UdpPool::open_socket(bool v6, std::error_code& ec) {
    auto s = std::make_shared<Socket>(io_);
    s->socket.open(v6 ? asio::ip::udp::v6() : asio::ip::udp::v4(), ec);
    if (!ec) {
        // Port 0: the kernel picks a random ephemeral port.
        s->socket.bind({v6 ? asio::ip::udp::v6() : asio::ip::udp::v4(), 0}, ec);
    }
    if (ec) {
        return nullptr;
    }
    receive(s);
    return s;
}

std::shared_ptr<UdpPool::Socket>& UdpPool::pick(bool v6, std::error_code& ec) {
    auto& family = v6 ? v6_ : v4_;
    std::shared_ptr<Socket>& slot = family[random_.below(sizes_.sockets)];
    if (slot && slot->uses >= sizes_.uses_per_socket) {
        retire(slot);
        slot.reset();
    }
    if (!slot) {
        slot = open_socket(v6, ec);
    }
    return slot;
}

std::error_code UdpPool::send(const asio::ip::udp::endpoint& server,
                              std::vector<std::uint8_t>& query, ReplySink& sink, Ticket& ticket) {
    std::error_code ec;
    const std::shared_ptr<Socket>& s = pick(server.address().is_v6(), ec);
    if (!s) {
        return ec;
    }
    std::uint16_t id = random_.next_u16();
    while (s->waiting.contains(id)) {  // at most max_in_flight are taken: this ends quickly
        id = random_.next_u16();
    }
    store_u16(query.data(), id);
    s->socket.send_to(asio::buffer(query), server, 0, ec);
    if (ec) {
        return ec;
    }
    ++s->uses;
    s->waiting.emplace(id, &sink);
    ticket = {s, id};
    return {};
}

void UdpPool::cancel(Ticket& ticket) noexcept {
    auto* s = static_cast<Socket*>(ticket.socket.get());
    if (s == nullptr) {
        return;
    }
    s->waiting.erase(ticket.id);
    close_if_idle_and_retired(*s);
    ticket.socket.reset();
}

void UdpPool::retire(const std::shared_ptr<Socket>& s) noexcept {
    s->retired = true;
    close_if_idle_and_retired(*s);
    // Its receive handler (and the tickets still out) keep it alive until it is closed.
}

void UdpPool::close_if_idle_and_retired(Socket& s) noexcept {
    if (s.retired && s.waiting.empty() && !s.closed) {
        s.closed = true;
        std::error_code ignored;
        s.socket.close(ignored);
    }
}

void UdpPool::receive(const std::shared_ptr<Socket>& s) {
    s->socket.async_receive_from(asio::buffer(s->buffer.data(), kBufferBytes), s->from,
                                 [this, s](const std::error_code& ec, std::size_t n) {
                                     if (s->closed || ec == asio::error::operation_aborted) {
                                         return;  // the pool may be gone: touch nothing
                                     }
                                     if (!ec) {
                                         dispatch(*s, n);
                                     }
                                     if (!s->closed) {
                                         receive(s);
                                     }
                                 });
}

void UdpPool::dispatch(Socket& s, std::size_t n) {
    if (n < 2) {
        Stats::bump(stats_->ignored);
        return;
    }
    const auto it = s.waiting.find(load_u16(s.buffer.data()));
    if (it == s.waiting.end()) {
        Stats::bump(stats_->ignored);
        spdlog::debug("upstream: ignored a datagram from {}:{} with an ID nobody waits for",
                      s.from.address().to_string(), s.from.port());
        return;
    }
    // The sink may cancel (and so erase) itself during the call.
    it->second->on_datagram(std::span<const std::uint8_t>(s.buffer.data(), n), s.from);
}

}  // namespace moat::upstream
