// The shared upstream sockets: queries spread over the pool with IDs unique per socket, a socket
// is replaced (new source port) after its quota of queries, datagrams go only to the sink that
// waits for their ID on that socket, a cancelled ticket gets nothing more, and answers are read
// in batches without losing any.
#include "udp_pool.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "moat/core/bytes.hpp"
#include "random_source.hpp"

namespace moat::upstream {
namespace {

using asio::ip::udp;
using Bytes = std::vector<std::uint8_t>;

struct RecordingSink final : ReplySink {
    void on_datagram(std::span<const std::uint8_t> reply, const udp::endpoint& from) override {
        replies.emplace_back(reply.begin(), reply.end());
        senders.push_back(from);
    }
    void on_send_failed(const std::error_code& error) override { failures.push_back(error); }
    std::vector<Bytes> replies;
    std::vector<udp::endpoint> senders;
    std::vector<std::error_code> failures;
};

class UdpPoolTest : public ::testing::Test {
protected:
    UdpPoolTest() {
        // A lost datagram fails the test in 2 s instead of hanging it.
        const timeval limit{2, 0};
        (void)::setsockopt(server_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    }

    /// Reads one datagram the pool sent to the server socket (blocking, bounded by a timeout).
    std::pair<Bytes, udp::endpoint> server_receive() {
        Bytes buf(512);
        udp::endpoint from;
        const std::size_t n = server_.receive_from(asio::buffer(buf), from);
        buf.resize(n);
        return {buf, from};
    }
    /// Runs the loop until idle: the queued queries of the turn go out.
    void flush() {
        io_.restart();
        io_.poll();
    }
    void run() {
        for (int i = 0; i < 20; ++i) {
            io_.restart();
            io_.run_for(std::chrono::milliseconds{2});
        }
    }
    static Bytes query() { return Bytes{0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}; }

    asio::io_context io_;
    RandomSource random_;
    std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
    udp::socket server_{io_, udp::endpoint(asio::ip::address_v4::loopback(), 0)};
};

TEST_F(UdpPoolTest, SocketsAreReplacedAfterTheirQuotaAndIdsNeverRepeatOnASocket) {
    UdpPool pool(io_, random_, stats_, {.sockets = 2, .uses_per_socket = 5});
    RecordingSink sink;
    std::vector<UdpPool::Ticket> tickets(40);
    std::map<std::uint16_t, std::set<std::uint16_t>> ids_per_port;
    std::map<std::uint16_t, int> queries_per_port;
    for (auto& t : tickets) {
        Bytes q = query();
        ASSERT_FALSE(pool.send(server_.local_endpoint(), q, sink, t));
        flush();  // one query per turn: each turn picks its socket afresh
        const auto [got, from] = server_receive();
        EXPECT_EQ(load_u16(got.data()), load_u16(q.data())) << "the ID written is the ID sent";
        EXPECT_TRUE(ids_per_port[from.port()].insert(load_u16(got.data())).second)
            << "an ID in use repeated on port " << from.port();
        ++queries_per_port[from.port()];
    }
    // 40 queries, 5 per socket: at least 8 distinct source ports, none over its quota.
    EXPECT_GE(queries_per_port.size(), 8U);
    for (const auto& [port, n] : queries_per_port) {
        EXPECT_LE(n, 5) << "port " << port;
    }
    for (auto& t : tickets) {
        pool.cancel(t);
    }
}

TEST_F(UdpPoolTest, DatagramsReachOnlyTheSinkWaitingForTheirId) {
    UdpPool pool(io_, random_, stats_, {.sockets = 1, .uses_per_socket = 100});
    RecordingSink first;
    RecordingSink second;
    UdpPool::Ticket t1;
    UdpPool::Ticket t2;
    Bytes q1 = query();
    Bytes q2 = query();
    ASSERT_FALSE(pool.send(server_.local_endpoint(), q1, first, t1));
    ASSERT_FALSE(pool.send(server_.local_endpoint(), q2, second, t2));
    flush();
    const auto [a, from] = server_receive();
    const auto [b, from_b] = server_receive();
    EXPECT_EQ(from_b, from) << "the queries of one turn leave from one socket";
    ASSERT_NE(load_u16(q1.data()), load_u16(q2.data())) << "one socket, two IDs";

    Bytes reply2 = q2;
    reply2[2] |= 0x80;
    server_.send_to(asio::buffer(reply2), from);
    Bytes stray = q2;
    store_u16(stray.data(),
              static_cast<std::uint16_t>(load_u16(q1.data()) ^ load_u16(q2.data()) ^ 0x5A5A));
    if (load_u16(stray.data()) != load_u16(q1.data())) {
        server_.send_to(asio::buffer(stray), from);  // an ID nobody waits for
    }
    run();
    EXPECT_TRUE(first.replies.empty());
    ASSERT_EQ(second.replies.size(), 1U);
    EXPECT_EQ(second.replies[0], reply2);
    EXPECT_EQ(second.senders[0], server_.local_endpoint());
    EXPECT_GE(stats_->ignored.load(), 1U);

    // Cancelled: the same ID again reaches nobody.
    pool.cancel(t2);
    server_.send_to(asio::buffer(reply2), from);
    run();
    EXPECT_EQ(second.replies.size(), 1U);
    pool.cancel(t1);
    pool.cancel(t1);  // idempotent
}

TEST_F(UdpPoolTest, AnswersQueuedBeyondSeveralBatchesAllReachTheirSinks) {
    // More answers waiting at once than one turn reads (kReceiveBatch * kBatchesPerTurn): the
    // rest must be read on a later turn, as no new datagram arrives to signal them.
    constexpr std::size_t kQueries = UdpPool::kReceiveBatch * UdpPool::kBatchesPerTurn + 20;
    UdpPool pool(io_, random_, stats_, {.sockets = 1, .uses_per_socket = kQueries});
    std::vector<RecordingSink> sinks(kQueries);
    std::vector<UdpPool::Ticket> tickets(kQueries);
    for (std::size_t i = 0; i < kQueries; ++i) {
        Bytes q = query();
        ASSERT_FALSE(pool.send(server_.local_endpoint(), q, sinks[i], tickets[i]));
    }
    flush();
    for (std::size_t i = 0; i < kQueries; ++i) {
        auto [reply, from] = server_receive();
        reply[2] |= 0x80;
        server_.send_to(asio::buffer(reply), from);
    }
    run();
    for (std::size_t i = 0; i < kQueries; ++i) {
        ASSERT_EQ(sinks[i].replies.size(), 1U) << "query " << i;
        EXPECT_EQ(load_u16(sinks[i].replies[0].data()), tickets[i].id);
    }
    EXPECT_EQ(stats_->ignored.load(), 0U);
    for (auto& t : tickets) {
        pool.cancel(t);
    }
}

TEST_F(UdpPoolTest, ADatagramLongerThanAnyAnswerIsIgnoredAndTheNextIsDelivered) {
    UdpPool pool(io_, random_, stats_, {.sockets = 1, .uses_per_socket = 10});
    RecordingSink sink;
    UdpPool::Ticket t;
    Bytes q = query();
    ASSERT_FALSE(pool.send(server_.local_endpoint(), q, sink, t));
    flush();
    const auto [sent, from] = server_receive();
    Bytes oversized(UdpPool::kBufferBytes + 1, 0);
    std::copy(sent.begin(), sent.end(), oversized.begin());  // the waited-for ID, cut short
    server_.send_to(asio::buffer(oversized), from);
    Bytes reply = sent;
    reply[2] |= 0x80;
    server_.send_to(asio::buffer(reply), from);
    run();
    ASSERT_EQ(sink.replies.size(), 1U);
    EXPECT_EQ(sink.replies[0], reply);
    EXPECT_EQ(stats_->ignored.load(), 1U);
    pool.cancel(t);
}

TEST_F(UdpPoolTest, AnAnswerForARetiredSocketAfterThePoolIsGoneIsIgnored) {
    RecordingSink sink;
    UdpPool::Ticket t1;
    UdpPool::Ticket t2;
    udp::endpoint first_source;
    {
        UdpPool pool(io_, random_, stats_, {.sockets = 1, .uses_per_socket = 1});
        Bytes q1 = query();
        ASSERT_FALSE(pool.send(server_.local_endpoint(), q1, sink, t1));
        flush();
        first_source = server_receive().second;
        Bytes q2 = query();  // the first socket is used up: retired, but still waited on
        ASSERT_FALSE(pool.send(server_.local_endpoint(), q2, sink, t2));
        flush();
        (void)server_receive();
    }  // the pool goes while the retired socket still listens
    Bytes reply = query();
    store_u16(reply.data(), t1.id);
    server_.send_to(asio::buffer(reply), first_source);
    run();  // under ASan, touching the destroyed pool here would fail the test
    EXPECT_TRUE(sink.replies.empty());
}

TEST_F(UdpPoolTest, AFailedSendIsReportedToItsSink) {
    UdpPool pool(io_, random_, stats_);
    RecordingSink sink;
    UdpPool::Ticket t;
    Bytes q = query();
    // Port 0 is not a destination: the kernel refuses the datagram when the batch goes out.
    ASSERT_FALSE(pool.send(udp::endpoint(asio::ip::address_v4::loopback(), 0), q, sink, t));
    EXPECT_TRUE(sink.failures.empty()) << "nothing is sent before the turn ends";
    flush();
    ASSERT_EQ(sink.failures.size(), 1U);
    EXPECT_TRUE(sink.failures[0]);
    pool.cancel(t);
}

}  // namespace
}  // namespace moat::upstream
