// ReadableWatch against real UDP sockets on 127.0.0.1 and a real io_context: every datagram is
// reported to a watcher that reads until empty, including one that arrives while nobody waits;
// rearm() reports what a partial read left, and wait_after() picks rearm() after such a read; a
// cancel reports operation_aborted; a watch or an io_context destroyed with a wait pending frees
// it without calling the handler (ASan checks the freeing). The same file is built a second time
// with MOAT_READABLE_WATCH_ASYNC_WAIT: the fallback for other asio versions passes the same tests.
#include "moat/upstream/readable_watch.hpp"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "moat/upstream/datagram_batch.hpp"

namespace moat::upstream {
namespace {

using asio::ip::udp;
using namespace std::chrono_literals;

class ReadableWatchTest : public ::testing::Test {
protected:
    ReadableWatchTest() { receiver_.non_blocking(true); }

    void send(std::uint8_t tag) {
        const std::vector<std::uint8_t> datagram{tag};
        sender_.send_to(asio::buffer(datagram), receiver_.local_endpoint());
    }

    /// Waits (bounded) until the kernel has queued what was sent to the receiver.
    void until_queued() {
        for (int i = 0; i < 200 && receiver_.available() == 0; ++i) {
            std::this_thread::sleep_for(5ms);
        }
    }

    /// Reads until a read comes back short, as the listeners do; the tags read, in order.
    std::vector<std::uint8_t> read_until_empty() {
        std::vector<std::uint8_t> tags;
        std::size_t n = 0;
        do {
            n = batch_.receive(receiver_.native_handle(), "test");
            for (std::size_t i = 0; i < n; ++i) {
                tags.push_back(batch_.payload(i)[0]);
            }
        } while (n == batch_.slots());
        EXPECT_TRUE(batch_.emptied());
        return tags;
    }

    /// Starts a wait that stays pending on the empty receiver. The first wait after a socket was
    /// registered may report at once (the reactor has seen no edge yet, so it lets the owner
    /// look): that report is taken, and the wait started again.
    void start_pending_wait(ReadableWatch& watch, const int& calls) {
        const int before = calls;
        watch.wait();
        io_.restart();
        io_.poll();
        if (calls > before) {
            watch.wait();
        }
    }

    /// Three datagrams read one per report through a batch of one slot, which never finds the
    /// socket empty: `start_wait(watch, batch, i)` starts the wait for the i-th (from 1). The
    /// tags read, in order.
    std::vector<std::uint8_t> read_one_per_wait(
        const std::function<void(ReadableWatch&, const DatagramBatch&, std::size_t)>& start_wait) {
        DatagramBatch one(1, 16);
        std::vector<std::uint8_t> read;
        ReadableWatch watch(receiver_, [&](const std::error_code&) {
            if (one.receive(receiver_.native_handle(), "test") == 1) {
                read.push_back(one.payload(0)[0]);
            }
        });
        for (std::uint8_t tag = 1; tag <= 3; ++tag) {
            send(tag);
        }
        until_queued();
        for (std::size_t i = 1; i <= 3 && read.size() == i - 1; ++i) {
            start_wait(watch, one, i);
            run_until([&] { return read.size() == i; });
            EXPECT_EQ(read.size(), i) << "the wait after " << i - 1 << " reads reported nothing";
        }
        EXPECT_FALSE(one.emptied());
        return read;
    }

    /// Runs the loop until `done` or a second passes.
    template <typename Done>
    void run_until(Done done) {
        io_.restart();
        for (int i = 0; i < 100 && !done(); ++i) {
            io_.run_one_for(10ms);
        }
    }

    asio::io_context io_;
    udp::socket receiver_{io_, udp::endpoint(asio::ip::address_v4::loopback(), 0)};
    udp::socket sender_{io_, udp::endpoint(asio::ip::address_v4::loopback(), 0)};
    DatagramBatch batch_{4, 16};
};

TEST_F(ReadableWatchTest, ADatagramWaitingBeforeTheFirstWaitIsReported) {
    send(1);
    until_queued();
    int calls = 0;
    std::error_code seen = asio::error::would_block;
    ReadableWatch watch(receiver_, [&](const std::error_code& ec) {
        ++calls;
        seen = ec;
    });
    watch.wait();
    run_until([&] { return calls > 0; });
    EXPECT_EQ(calls, 1);
    EXPECT_FALSE(seen);
    EXPECT_EQ(read_until_empty(), std::vector<std::uint8_t>{1});
}

TEST_F(ReadableWatchTest, EveryDatagramAfterTheSocketWasEmptiedIsReported) {
    std::vector<std::uint8_t> read;
    int calls = 0;
    ReadableWatch watch(receiver_, [&](const std::error_code& ec) {
        ASSERT_FALSE(ec);
        ++calls;
        for (const std::uint8_t tag : read_until_empty()) {
            read.push_back(tag);
        }
    });
    watch.wait();  // never read yet
    for (std::uint8_t tag = 0; tag < 40; ++tag) {
        const int before = calls;
        send(tag);
        run_until([&] { return calls > before; });
        ASSERT_EQ(calls, before + 1) << "datagram " << int{tag} << " was not reported";
        watch.wait();
    }
    std::vector<std::uint8_t> expected;
    for (std::uint8_t tag = 0; tag < 40; ++tag) {
        expected.push_back(tag);
    }
    EXPECT_EQ(read, expected);
}

TEST_F(ReadableWatchTest, ABurstLargerThanTheBatchIsReadToTheEnd) {
    std::vector<std::uint8_t> read;
    ReadableWatch watch(receiver_, [&](const std::error_code&) {
        for (const std::uint8_t tag : read_until_empty()) {
            read.push_back(tag);
        }
    });
    for (std::uint8_t tag = 0; tag < 10; ++tag) {
        send(tag);
    }
    until_queued();
    watch.wait();
    run_until([&] { return read.size() == 10; });
    EXPECT_EQ(read.size(), 10U);
    // The next one after the socket was emptied by the burst's reads.
    watch.wait();
    send(99);
    run_until([&] { return read.size() == 11; });
    ASSERT_EQ(read.size(), 11U);
    EXPECT_EQ(read.back(), 99);
}

// The race the speculative start exists for: the datagram comes after the handler emptied the
// socket but before the next wait, and the loop polls (and sees its edge) in between.
TEST_F(ReadableWatchTest, ADatagramThatCameWhileNobodyWaitedIsReportedByTheNextWait) {
    int calls = 0;
    ReadableWatch watch(receiver_, [&](const std::error_code&) {
        ++calls;
        read_until_empty();
    });
    watch.wait();
    send(1);
    run_until([&] { return calls == 1; });
    ASSERT_EQ(calls, 1);

    // Nobody waits now. The datagram's edge reaches the reactor while the loop polls: a timer
    // keeps the io_context busy, so poll() runs the reactor's epoll_wait.
    send(2);
    until_queued();
    asio::steady_timer busy(io_, 1h);
    busy.async_wait([](const std::error_code&) {});
    io_.restart();
    io_.poll();
    ASSERT_EQ(calls, 1) << "no wait was pending";

    watch.wait();
    run_until([&] { return calls == 2; });
    EXPECT_EQ(calls, 2) << "the datagram that came between two waits was missed";
    busy.cancel();
    io_.restart();
    io_.poll();
}

TEST_F(ReadableWatchTest, RearmReportsWhatAPartialReadLeft) {
    EXPECT_EQ(read_one_per_wait([](ReadableWatch& watch, const DatagramBatch&, std::size_t i) {
                  i == 1 ? watch.wait() : watch.rearm();
              }),
              (std::vector<std::uint8_t>{1, 2, 3}));
}

// wait_after() chooses by the read: after one that filled the batch, something may wait, and a
// wait() would not report it (it needs a new edge).
TEST_F(ReadableWatchTest, AWaitAfterAReadThatFilledTheBatchReportsWhatItLeft) {
    EXPECT_EQ(read_one_per_wait([](ReadableWatch& watch, const DatagramBatch& one, std::size_t) {
                  watch.wait_after(one);  // never read, then full reads: none emptied the socket
              }),
              (std::vector<std::uint8_t>{1, 2, 3}));
}

TEST_F(ReadableWatchTest, AWaitAfterAReadThatEmptiedTheSocketReportsTheNextDatagram) {
    std::vector<std::uint8_t> read;
    ReadableWatch watch(receiver_, [&](const std::error_code&) {
        for (const std::uint8_t tag : read_until_empty()) {
            read.push_back(tag);
        }
    });
    watch.wait_after(batch_);
    for (std::uint8_t tag = 0; tag < 10; ++tag) {
        send(tag);
        run_until([&] { return read.size() == tag + 1U; });
        ASSERT_EQ(read.size(), tag + 1U) << "datagram " << int{tag} << " was not reported";
        ASSERT_TRUE(batch_.emptied());
        watch.wait_after(batch_);
    }
}

TEST_F(ReadableWatchTest, ACancelReportsOperationAborted) {
    std::error_code seen;
    int calls = 0;
    ReadableWatch watch(receiver_, [&](const std::error_code& ec) {
        ++calls;
        seen = ec;
    });
    start_pending_wait(watch, calls);
    const int before = calls;
    run_until([] { return false; });  // nothing to read: the wait stays pending
    ASSERT_EQ(calls, before);
    receiver_.cancel();
    run_until([&] { return calls > before; });
    EXPECT_EQ(calls, before + 1);
    EXPECT_EQ(seen, asio::error::operation_aborted);
}

TEST_F(ReadableWatchTest, AWatchDestroyedWhileWaitingNeverCallsItsHandler) {
    int calls = 0;
    auto watch =
        std::make_unique<ReadableWatch>(receiver_, [&](const std::error_code&) { ++calls; });
    start_pending_wait(*watch, calls);
    const int before = calls;
    watch.reset();
    send(1);
    until_queued();
    run_until([] { return false; });
    receiver_.close();  // the reactor lets the operation go, and it frees itself
    run_until([] { return false; });
    EXPECT_EQ(calls, before);
}

TEST(ReadableWatchLifetime, AnIoContextDestroyedWhileWaitingFreesTheOperation) {
    // Socket and watch go first as in the daemon; the pending operation dies with the io_context.
    for (const bool watch_outlives_socket : {false, true}) {
        int calls = 0;
        auto io = std::make_unique<asio::io_context>();
        auto socket =
            std::make_unique<udp::socket>(*io, udp::endpoint(asio::ip::address_v4::loopback(), 0));
        auto watch =
            std::make_unique<ReadableWatch>(*socket, [&](const std::error_code&) { ++calls; });
        watch->wait();
        io->poll();
        if (calls > 0) {  // the first wait's report (see start_pending_wait)
            watch->wait();
            io->restart();
            io->poll();
        }
        const int before = calls;
        if (watch_outlives_socket) {
            socket.reset();  // the operation is posted as aborted, not run yet
            watch.reset();
        } else {
            watch.reset();
            socket.reset();
        }
        io.reset();
        EXPECT_EQ(calls, before);
    }
}

TEST(ReadableWatchBuild, SaysWhetherItSkipsTheRearm) {
#if defined(MOAT_READABLE_WATCH_ASYNC_WAIT)
    EXPECT_FALSE(ReadableWatch::skips_rearm());
#else
    // Debian 12's asio (1.22) is one the speculative start was written for.
    EXPECT_TRUE(ReadableWatch::skips_rearm());
#endif
}

}  // namespace
}  // namespace moat::upstream
