#include "udp_pool.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <asio/post.hpp>
#include <cerrno>
#include <optional>

#include "moat/core/bytes.hpp"
#include "moat/core/log.hpp"
#include "moat/upstream/readable_watch.hpp"

namespace moat::upstream {

struct UdpPool::Socket : std::enable_shared_from_this<Socket> {
    /// A retired socket outlives the pool when it still waits for answers: its handler checks
    /// that the pool is alive before it touches it.
    Socket(asio::io_context& io, std::shared_ptr<FlightMemory> pool, std::weak_ptr<UdpPool*> owner)
        : memory(std::move(pool)),
          socket(io),
          readable(socket,
                   [this, owner = std::move(owner)](const std::error_code& ec) {
                       const auto alive = owner.lock();
                       if (!alive || closed || ec == asio::error::operation_aborted) {
                           return;
                       }
                       // Held while its answers are handed on: the last ticket may let it go.
                       (*alive)->drain(shared_from_this());
                   }),
          waiting(memory.get()) {}
    /// First, so it is destroyed after the map whose nodes it holds.
    std::shared_ptr<FlightMemory> memory;
    asio::ip::udp::socket socket;
    ReadableWatch readable;  ///< after the socket it watches, so destroyed before it
    std::pmr::unordered_map<std::uint16_t, ReplySink*> waiting;
    /// Queries queued this turn: their bytes back to back, and where each goes.
    struct Queued {
        std::size_t offset = 0;
        std::size_t length = 0;
        asio::ip::udp::endpoint to;
        std::uint16_t id = 0;
    };
    std::vector<std::uint8_t> out_bytes;
    std::vector<Queued> out;
    std::uint32_t uses = 0;
    bool retired = false;  ///< out of the pool: closes once nobody waits on it
    bool closed = false;
};

UdpPool::UdpPool(asio::io_context& io, RandomSource& random, std::shared_ptr<Stats> stats,
                 Sizes sizes)
    : io_(io),
      turn_end_(TurnEnd::of(io)),
      random_(random),
      stats_(std::move(stats)),
      sizes_{std::max<std::size_t>(sizes.sockets, 1),
             std::max<std::uint32_t>(sizes.uses_per_socket, 1)},
      v4_(sizes_.sockets),
      v6_(sizes_.sockets),
      flush_at_turn_end_(turn_end_, [this] { flush(); }) {}

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
    auto s = std::make_shared<Socket>(io_, memory_, self_);
    s->socket.open(v6 ? asio::ip::udp::v6() : asio::ip::udp::v4(), ec);
    if (!ec) {
        // Port 0: the kernel picks a random ephemeral port.
        s->socket.bind({v6 ? asio::ip::udp::v6() : asio::ip::udp::v4(), 0}, ec);
    }
    if (!ec) {
        s->socket.non_blocking(true, ec);  // recvmmsg below must never block the loop
    }
    if (ec) {
        return nullptr;
    }
    s->readable.wait();  // never read: reported at once if something waits already
    return s;
}

std::shared_ptr<UdpPool::Socket>& UdpPool::pick(bool v6, std::error_code& ec) {
    std::shared_ptr<Socket>& turn = turn_[v6 ? 1 : 0];
    if (turn && !turn->closed && turn->uses < sizes_.uses_per_socket) {
        return turn;
    }
    auto& family = v6 ? v6_ : v4_;
    std::shared_ptr<Socket>& slot = family[random_.below(sizes_.sockets)];
    if (slot && slot->uses >= sizes_.uses_per_socket) {
        retire(slot);
        slot.reset();
    }
    if (!slot) {
        slot = open_socket(v6, ec);
    }
    turn = slot;
    return slot;
}

std::error_code UdpPool::send(const asio::ip::udp::endpoint& server, std::span<std::uint8_t> query,
                              ReplySink& sink, Ticket& ticket) {
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
    if (s->out.empty()) {
        queued_.push_back(s);
        flush_at_turn_end_.defer();
    }
    s->out.push_back({s->out_bytes.size(), query.size(), server, id});
    s->out_bytes.insert(s->out_bytes.end(), query.begin(), query.end());
    ++s->uses;
    s->waiting.emplace(id, &sink);
    ticket = {s, id};
    return {};
}

void UdpPool::flush() {
    turn_ = {};
    // A swap, not a move: both vectors keep their capacity for the next turns.
    flushing_.clear();
    std::swap(flushing_, queued_);
    for (const auto& s : flushing_) {
        flush(*s);
    }
    flushing_.clear();
}

void UdpPool::flush(Socket& s) {
    constexpr std::size_t kBatch = 64;
    // Not zeroed (5 KiB per flush): every message sent is written in full below.
    std::array<mmsghdr, kBatch> msgs;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    std::array<iovec, kBatch> iov;     // NOLINT(cppcoreguidelines-pro-type-member-init)
    std::size_t next = 0;
    while (next < s.out.size()) {
        const std::size_t n = std::min(kBatch, s.out.size() - next);
        for (std::size_t i = 0; i < n; ++i) {
            Socket::Queued& q = s.out[next + i];
            iov[i] = {s.out_bytes.data() + q.offset, q.length};
            msgs[i] = {};
            msgs[i].msg_hdr.msg_name = q.to.data();
            msgs[i].msg_hdr.msg_namelen = static_cast<socklen_t>(q.to.size());
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        const int sent = s.closed ? -1
                                  : ::sendmmsg(s.socket.native_handle(), msgs.data(),
                                               static_cast<unsigned>(n), MSG_DONTWAIT);
        if (sent > 0) {
            next += static_cast<std::size_t>(sent);
            continue;
        }
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        // The first of the rest failed: tell its waiter (which moves on to another server or
        // gives up) and go on with the others.
        const std::error_code ec(sent < 0 && !s.closed ? errno : EBADF, std::system_category());
        if (const auto it = s.waiting.find(s.out[next].id); it != s.waiting.end()) {
            ReplySink* sink = it->second;
            sink->on_send_failed(ec);  // may cancel (and so erase) itself
        }
        ++next;
    }
    s.out.clear();
    s.out_bytes.clear();
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
    // The tickets still out keep it alive until it is closed.
}

void UdpPool::close_if_idle_and_retired(Socket& s) noexcept {
    if (s.retired && s.waiting.empty() && !s.closed) {
        s.closed = true;
        std::error_code ignored;
        s.socket.close(ignored);
    }
}

void UdpPool::drain(const std::shared_ptr<Socket>& s) {
    // The answers' completions queue answers to clients and retries upstream: they leave when
    // this handler's batches are done, before the event loop polls again.
    turn_end_.in_batch([this, &s] { drain_batches(s); });
}

void UdpPool::drain_batches(const std::shared_ptr<Socket>& s) {
    for (std::size_t turn = 0; turn < kBatchesPerTurn; ++turn) {
        const std::size_t n = in_.receive(s->socket.native_handle(), "upstream");
        for (std::size_t i = 0; i < n && !s->closed; ++i) {
            dispatch(*s, i);  // a sink may retire and so close the socket
        }
        if (s->closed) {
            return;
        }
        if (n < kReceiveBatch) {
            s->readable.wait_after(in_);  // emptied, or a failed read
            return;
        }
    }
    // Still answers waiting after a full turn: let the listeners and timers run, then go on.
    // (Waiting for readiness instead could stall: the poller reports edges.)
    asio::post(io_, [alive = std::weak_ptr<UdpPool*>(self_), s] {
        if (const auto self = alive.lock(); self && !s->closed) {
            (*self)->drain(s);
        }
    });
}

void UdpPool::dispatch(Socket& s, std::size_t slot) {
    const std::span<const std::uint8_t> reply = in_.payload(slot);
    const std::optional<asio::ip::udp::endpoint> from = in_.sender(slot);
    if (reply.size() < 2 || in_.truncated(slot) || !from) {
        // Too short to carry an ID, or longer than any answer to our EDNS size: junk.
        Stats::bump(stats_->ignored);
        return;
    }
    const auto it = s.waiting.find(load_u16(reply.data()));
    if (it == s.waiting.end()) {
        Stats::bump(stats_->ignored);
        // Guarded: the address is formatted before log::debug looks at the level, and a flood of
        // stray datagrams would pay for that text with debug logging off.
        if (log::enabled(log::Level::debug)) {
            log::debug("upstream: ignored a datagram from {}:{} with an ID nobody waits for",
                       from->address().to_string(), from->port());
        }
        return;
    }
    // The sink may cancel (and so erase) itself during the call.
    it->second->on_datagram(reply, *from);
}

}  // namespace moat::upstream
