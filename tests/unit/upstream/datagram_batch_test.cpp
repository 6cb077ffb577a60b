// One recvmmsg fills a DatagramBatch: every datagram waiting (up to its slots) with its bytes and
// sender, a datagram longer than a slot marked truncated, and nothing read from an empty socket.
#include "moat/upstream/datagram_batch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace moat::upstream {
namespace {

using asio::ip::udp;
using Bytes = std::vector<std::uint8_t>;

class DatagramBatchTest : public ::testing::Test {
protected:
    DatagramBatchTest() { receiver_.non_blocking(true); }

    /// Sends `datagrams` to the receiver and waits (bounded) until the last has arrived.
    void send_all(const std::vector<Bytes>& datagrams) {
        for (const Bytes& d : datagrams) {
            sender_.send_to(asio::buffer(d), receiver_.local_endpoint());
        }
        for (int i = 0; i < 200 && receiver_.available() == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds{5});
        }
    }

    asio::io_context io_;
    udp::socket receiver_{io_, udp::endpoint(asio::ip::address_v4::loopback(), 0)};
    udp::socket sender_{io_, udp::endpoint(asio::ip::address_v4::loopback(), 0)};
};

TEST_F(DatagramBatchTest, ReadsWhatIsWaitingUpToItsSlotsWithSendersAndCutMarks) {
    DatagramBatch batch(2, 8);
    ASSERT_EQ(batch.slots(), 2U);
    EXPECT_EQ(batch.receive(receiver_.native_handle(), "test"), 0U) << "nothing waits yet";

    const Bytes first{1, 2, 3};
    const Bytes oversized{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    const Bytes third{42};
    send_all({first, oversized, third});

    ASSERT_EQ(batch.receive(receiver_.native_handle(), "test"), 2U) << "two slots";
    EXPECT_EQ(Bytes(batch.payload(0).begin(), batch.payload(0).end()), first);
    EXPECT_FALSE(batch.truncated(0));
    EXPECT_EQ(Bytes(batch.payload(1).begin(), batch.payload(1).end()),
              Bytes(oversized.begin(), oversized.begin() + 8))
        << "cut to the slot";
    EXPECT_TRUE(batch.truncated(1));
    for (std::size_t i = 0; i < 2; ++i) {
        const auto from = batch.sender(i);
        ASSERT_TRUE(from.has_value());
        EXPECT_EQ(*from, sender_.local_endpoint());
        EXPECT_EQ(batch.source_length(i), from->size());
    }

    ASSERT_EQ(batch.receive(receiver_.native_handle(), "test"), 1U) << "the rest, next time";
    EXPECT_EQ(Bytes(batch.payload(0).begin(), batch.payload(0).end()), third);
    EXPECT_FALSE(batch.truncated(0)) << "the flags of the last receive do not linger";
    EXPECT_EQ(batch.receive(receiver_.native_handle(), "test"), 0U);
}

TEST_F(DatagramBatchTest, EveryReceiveReadsRightWhateverTheReceivesBeforeItFilled) {
    // The kernel writes back each filled message's header (its sender's length, its flags):
    // slots filled long ago, once, or never must all read as their own datagram when a later
    // receive fills them, and no cut mark may stay behind.
    DatagramBatch batch(3, 4);
    const std::vector<std::vector<Bytes>> rounds{
        {{1, 2, 3, 4, 5, 6}},                     // one slot, cut
        {{7}, {8, 9, 10, 11, 12}, {13, 14}},      // every slot, the second cut
        {{15, 16}},                               // one slot again
        {{17, 18, 19}, {20}},                     // two
        {{21, 22, 23, 24}, {25}, {26, 27, 28}}};  // every slot, none cut
    for (std::size_t round = 0; round < rounds.size(); ++round) {
        const std::vector<Bytes>& sent = rounds[round];
        send_all(sent);
        ASSERT_EQ(batch.receive(receiver_.native_handle(), "test"), sent.size())
            << "round " << round;
        for (std::size_t i = 0; i < sent.size(); ++i) {
            const Bytes& d = sent[i];
            const Bytes expected(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(
                                                            std::min<std::size_t>(d.size(), 4)));
            EXPECT_EQ(Bytes(batch.payload(i).begin(), batch.payload(i).end()), expected)
                << "round " << round << ", slot " << i;
            EXPECT_EQ(batch.truncated(i), d.size() > 4) << "round " << round << ", slot " << i;
            EXPECT_EQ(batch.sender(i), sender_.local_endpoint())
                << "round " << round << ", slot " << i;
        }
        EXPECT_EQ(batch.receive(receiver_.native_handle(), "test"), 0U) << "round " << round;
    }
}

TEST_F(DatagramBatchTest, SaysWhetherTheLastReceiveFoundTheSocketEmpty) {
    DatagramBatch batch(2, 8);
    EXPECT_EQ(batch.receive(receiver_.native_handle(), "test"), 0U);
    EXPECT_TRUE(batch.emptied()) << "nothing waited";

    send_all({{1}, {2}, {3}});
    ASSERT_EQ(batch.receive(receiver_.native_handle(), "test"), 2U);
    EXPECT_FALSE(batch.emptied()) << "every slot filled: more may wait";
    ASSERT_EQ(batch.receive(receiver_.native_handle(), "test"), 1U);
    EXPECT_TRUE(batch.emptied()) << "fewer than the slots: the socket was read to the end";

    EXPECT_EQ(batch.receive(-1, "test"), 0U);
    EXPECT_FALSE(batch.emptied()) << "a failed read says nothing about what waits";
}

}  // namespace
}  // namespace moat::upstream
