// A forwarded query makes no heap allocation once the forwarder is warm: the flight, its key, its
// server order, its attempts and the Asio operations of its timers come from the forwarder's
// pool (src/upstream/flight_memory.hpp), the ID map's nodes from the UDP pool's. This binary
// replaces every form of the global operator new/delete with counting versions
// (tests/support/alloc_counter.hpp); the upstream is a loopback responder that uses the socket
// calls directly, so it allocates nothing itself.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flight_memory.hpp"
#include "moat/upstream/forwarder.hpp"
#include "moat/upstream/options.hpp"
#include "moat/wire/header.hpp"
#include "support/alloc_counter.hpp"
#include "upstream_fixtures.hpp"

namespace moat::upstream {
namespace {

/// Answers every datagram on 127.0.0.1 with itself, QR set: the question and ID match, so the
/// forwarder takes it as an (empty) answer. Served from the test's own thread between turns of
/// the event loop, not from a thread of its own: two threads polling side by side livelock
/// under qemu-user (tests/support/emulation.hpp), and this test runs there too.
class EchoResponder {
public:
    EchoResponder() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) {
        EXPECT_GE(fd_, 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof at;
        EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&at), length), 0);
        EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &length), 0);
        port_ = ntohs(at.sin_port);
    }
    ~EchoResponder() { ::close(fd_); }
    EchoResponder(const EchoResponder&) = delete;
    EchoResponder& operator=(const EchoResponder&) = delete;

    [[nodiscard]] std::uint16_t port() const { return port_; }

    /// Answers the datagrams waiting now, if any.
    void answer_waiting() {
        while (true) {
            sockaddr_in from{};
            socklen_t length = sizeof from;
            const ssize_t n = ::recvfrom(fd_, buffer_.data(), buffer_.size(), 0,
                                         reinterpret_cast<sockaddr*>(&from), &length);
            if (n < 0) {
                return;  // EAGAIN: nothing more waiting
            }
            if (n < 4) {
                continue;  // junk
            }
            buffer_[2] |= 0x80U;  // QR
            ::sendto(fd_, buffer_.data(), static_cast<std::size_t>(n), 0,
                     reinterpret_cast<const sockaddr*>(&from), length);
        }
    }

private:
    int fd_;
    std::uint16_t port_ = 0;
    std::array<std::uint8_t, 4096> buffer_{};
};

TEST(ForwarderAlloc, CounterIsLive) { EXPECT_GE(allocations_in_a_control(), 1U); }

TEST(ForwarderAlloc, AForwardedQueryAllocatesNothingOnceWarm) {
    EchoResponder upstream;
    asio::io_context io;
    Options options;
    options.timeout = std::chrono::milliseconds{2000};
    options.total_timeout = std::chrono::milliseconds{5000};
    options.routes = {Route{{test::loopback(upstream.port())}}};
    Forwarder forwarder(io, options);
    const std::vector<std::uint8_t> query = test::make_query();

    std::size_t answered = 0;
    std::size_t failed = 0;
    // One query at a time, each run to its answer; the callback's capture fits std::function's
    // own storage.
    const auto forward_one = [&] {
        const std::size_t before = answered + failed;
        forwarder.forward(query, 0,
                          [&answered, &failed](const Result& r) { ++(r.ok ? answered : failed); });
        while (answered + failed == before) {
            upstream.answer_waiting();
            io.run_one_for(std::chrono::milliseconds{1});
        }
    };
    // Warm: the UDP pool opens its sockets (one per turn drawn at random from 16) and the pools
    // grow their blocks. 300 queries leave each socket far below the 256 uses that replace it.
    for (int i = 0; i < 300; ++i) {
        forward_one();
    }
    ASSERT_EQ(failed, 0U);

    std::size_t allocations = 0;
    {
        const Counting counting;
        for (int i = 0; i < 50; ++i) {
            forward_one();
        }
        allocations = Counting::stop();
    }
    EXPECT_EQ(answered, 350U);
    EXPECT_EQ(failed, 0U);
    if constexpr (kFlightMemoryPooled) {
        EXPECT_EQ(allocations, 0U) << "heap allocations in 50 forwarded queries";
    } else {
        // Under AddressSanitizer flights take their blocks from the heap (flight_memory.hpp),
        // and this counter sees them: the count then says that they do, nothing about the pool.
        EXPECT_GT(allocations, 0U);
    }
}

}  // namespace
}  // namespace moat::upstream
