// One UDP socket: receive datagrams in batches, hand each to the QueryPath, send the answers
// known at once in one batch back to their senders.
//
// Batching (recvmmsg/sendmmsg): under load a wake-up reads up to kBatch datagrams with one system
// call and answers every cached, blocked or local one with one more, instead of two calls per
// query. A system call costs 1-2 us on a VM with the usual mitigations, several times the whole
// engine path, so this is where a sinkhole's CPU time per query goes (docs/benchmarks.md).
// Forwarded queries are answered later, when their upstream answer comes: those that come in
// one turn of the event loop leave together too (a flush at the end of the turn, turn_end.hpp).
#pragma once

#include <sys/socket.h>

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/core/raw_buffer.hpp"
#include "moat/engine/client.hpp"
#include "moat/server/query_path.hpp"
#include "moat/upstream/datagram_batch.hpp"
#include "moat/upstream/readable_watch.hpp"
#include "moat/upstream/turn_end.hpp"

namespace moat::server {

class UdpListener {
public:
    /// Datagrams read (and answers sent) per system call.
    static constexpr std::size_t kBatch = 32;
    /// Room per received datagram: any UDP payload, so an oversized message is still read whole
    /// and gets its FORMERR. Only the pages a datagram touches become resident.
    static constexpr std::size_t kInSlotBytes = 65536;
    /// Largest answer sent in a batch (larger ones, possible only with a raised EDNS limit, are
    /// sent alone).
    static constexpr std::size_t kOutSlotBytes = 4096;
    /// Batches read per wake-up before other work on the loop gets its turn.
    static constexpr std::size_t kBatchesPerTurn = 8;

    UdpListener(asio::io_context& io, asio::ip::udp::endpoint endpoint, QueryPath& path);
    tl::expected<void, std::string> start();
    /// Serves `fd`, a UDP socket bound before the daemon started (socket activation), instead of
    /// binding the endpoint; the listener owns it from here.
    tl::expected<void, std::string> adopt(int fd);
    /// Stops receiving; the socket stays open so answers in flight can still be sent.
    void stop_receiving();
    /// No answer waits in the send batch (a shutdown must not stop the loop before it leaves).
    [[nodiscard]] bool idle() const noexcept { return out_count_ == 0; }

private:
    /// Reads and answers batches until the socket is empty or the turn is used up, then runs
    /// what they deferred to the end of the turn (the queries they forward).
    void drain();
    void drain_batches();
    void handle(std::size_t slot, const QueryPath::Arrival& arrival);
    /// Queues `answer` for the next sendmmsg (or sends it alone when it does not fit a slot).
    void queue_answer(std::span<const std::uint8_t> answer, const sockaddr_storage& to,
                      socklen_t to_length);
    void flush_answers();
    /// The answer to a forwarded query: queued, and sent with the others of this turn.
    void send_later(std::span<const std::uint8_t> answer, const asio::ip::udp::endpoint& to);
    void send(std::span<const std::uint8_t> answer, const asio::ip::udp::endpoint& to);

    asio::io_context& io_;
    upstream::TurnEnd& turn_end_;
    asio::ip::udp::socket socket_;
    /// Calls drain() when the socket has datagrams again (after the socket: destroyed first).
    upstream::ReadableWatch readable_;
    asio::ip::udp::endpoint endpoint_;
    QueryPath& path_;
    bool receiving_ = true;
    engine::Client client_;  ///< the sender of the datagram being handled (read in place)

    upstream::DatagramBatch in_;  ///< kBatch slots of kInSlotBytes
    RawBuffer out_;               ///< kBatch slots of kOutSlotBytes
    std::array<mmsghdr, kBatch> out_msgs_{};
    std::array<iovec, kBatch> out_iov_{};
    std::array<sockaddr_storage, kBatch> out_to_{};
    std::size_t out_count_ = 0;
    /// flush_answers() at the end of the turn, for answers to forwarded queries. Last: destroyed
    /// first, so it never runs on a dying listener.
    upstream::TurnEnd::Task flush_at_turn_end_;
};

}  // namespace moat::server
