// The UDP sockets that queries to upstream servers go out on: a small pool per address family,
// shared by every query, instead of one new socket per query.
//
// Why: a socket per query costs socket(), an ioctl, an epoll_ctl and close() on top of the send
// and the receive, four of the seven system calls a forwarded query took (strace, see
// docs/benchmarks.md). How it stays hard to spoof: each socket is bound by the kernel to a
// random ephemeral port and replaced by a fresh one (a new random port) after
// UdpPoolSizes::uses_per_socket queries; the queries of one turn of the event loop go out on a
// socket drawn at random for that turn, each with a random ID not in use on that socket; a datagram
// is handed on only when its ID is waited for on that socket, and the waiter then checks the source
// address and port and the question (reply_match.hpp). A blind spoofer must guess the ID and which
// of the pool's ports (dnsmasq, Pi-hole's resolver, keeps a pool of random ports the same way).
//
// Answers are read in batches (recvmmsg into one set of slots the whole pool shares): the answers
// to a turn's queries come back on one socket close together, and one system call takes them all
// instead of a recvfrom per answer and another that finds the socket empty.
//
// One event loop thread only, like the Forwarder that owns it.
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "flight_memory.hpp"
#include "moat/upstream/datagram_batch.hpp"
#include "moat/upstream/stats.hpp"
#include "moat/upstream/turn_end.hpp"
#include "random_source.hpp"

namespace moat::upstream {

/// Receives the datagrams that carry the ID it waits for.
class ReplySink {
public:
    ReplySink() = default;
    ReplySink(const ReplySink&) = delete;
    ReplySink& operator=(const ReplySink&) = delete;
    virtual ~ReplySink() = default;
    /// `reply` is valid during the call only.
    virtual void on_datagram(std::span<const std::uint8_t> reply,
                             const asio::ip::udp::endpoint& from) = 0;
    /// The query could not be sent (reported when the batch it was queued in goes out).
    virtual void on_send_failed(const std::error_code& error) = 0;
};

struct UdpPoolSizes {
    /// Sockets per address family, opened as queries need them.
    std::size_t sockets = 16;
    /// Queries a socket carries before it is replaced by one on a new random port.
    std::uint32_t uses_per_socket = 256;
};

class UdpPool {
public:
    using Sizes = UdpPoolSizes;
    /// Room for any answer to a query that advertises our EDNS size (1232) with margin; a longer
    /// datagram arrives cut and is ignored like other junk.
    static constexpr std::size_t kBufferBytes = 4096;
    /// Answers read by one system call at most.
    static constexpr std::size_t kReceiveBatch = 16;
    /// Batches read from one socket before other work gets a turn of the event loop.
    static constexpr std::size_t kBatchesPerTurn = 8;

    /// Where a query went: cancel() it when the answer is in or no longer wanted.
    struct Ticket {
        std::shared_ptr<void> socket;  ///< keeps the socket's record alive while waited on
        std::uint16_t id = 0;
    };

    UdpPool(asio::io_context& io, RandomSource& random, std::shared_ptr<Stats> stats,
            Sizes sizes = {});
    ~UdpPool();
    UdpPool(const UdpPool&) = delete;
    UdpPool& operator=(const UdpPool&) = delete;

    /// Queues `query` for `server` with a fresh ID written into its first two octets; datagrams
    /// with that ID on that socket go to `sink` until cancel(). The queries of one turn of the
    /// event loop go out together, on one socket, in one sendmmsg (a send to a local upstream
    /// also pays for waking it: one wake-up per batch instead of per query). An error here means
    /// no socket could be opened; a failed send is reported to the sink later.
    std::error_code send(const asio::ip::udp::endpoint& server, std::span<std::uint8_t> query,
                         ReplySink& sink, Ticket& ticket);
    /// Stops delivering to the ticket's sink. Idempotent.
    void cancel(Ticket& ticket) noexcept;

private:
    struct Socket;
    std::shared_ptr<Socket> open_socket(bool v6, std::error_code& ec);
    std::shared_ptr<Socket>& pick(bool v6, std::error_code& ec);
    void drain(const std::shared_ptr<Socket>& s);
    void drain_batches(const std::shared_ptr<Socket>& s);
    void dispatch(Socket& s, std::size_t slot);
    void retire(const std::shared_ptr<Socket>& s) noexcept;
    void close_if_idle_and_retired(Socket& s) noexcept;
    /// Sends every queued query (the end of a turn, turn_end.hpp).
    void flush();
    void flush(Socket& s);

    asio::io_context& io_;
    TurnEnd& turn_end_;
    /// The nodes of the sockets' ID maps (one per query sent): pooled
    /// rather than taken from the heap each time, as the Forwarder's flights are
    /// (flight_memory.hpp). Each socket holds a reference: a socket can outlive the pool while a
    /// ticket still names it.
    std::shared_ptr<FlightMemory> memory_ = make_flight_memory();
    RandomSource& random_;
    std::shared_ptr<Stats> stats_;
    Sizes sizes_;
    std::vector<std::shared_ptr<Socket>> v4_;
    std::vector<std::shared_ptr<Socket>> v6_;
    /// The socket of this turn, per family (cleared by flush()).
    std::array<std::shared_ptr<Socket>, 2> turn_;
    /// Sockets with queued queries; the flush is deferred when the first one is queued.
    std::vector<std::shared_ptr<Socket>> queued_;
    /// The sockets a flush is sending, swapped with queued_ (so a send it triggers queues anew).
    std::vector<std::shared_ptr<Socket>> flushing_;
    /// The receive slots, shared by every socket: a batch is dispatched before the next is read.
    DatagramBatch in_{kReceiveBatch, kBufferBytes};
    /// Handlers (the sockets' waits, drains posted after a full turn) hold a weak reference: a
    /// pool destroyed first makes them do nothing.
    std::shared_ptr<UdpPool*> self_ = std::make_shared<UdpPool*>(this);
    /// flush() at the end of the turn. Last: destroyed first, so it never runs on a dying pool.
    TurnEnd::Task flush_at_turn_end_;
};

}  // namespace moat::upstream
