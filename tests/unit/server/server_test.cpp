// The listeners on 127.0.0.1 (an ephemeral port), with a real engine and an upstream client that
// has no servers: UDP answers and truncation, TCP framing and pipelining, the connection cap,
// the idle timeout, and stop_receiving() for a drain. Clients are plain blocking sockets with
// timeouts on a thread of their own, while the test thread runs the event loop in short slices.
// Skipped under qemu-user (see SetUp); they run natively, under ASan and in the release build.
#include "moat/server/server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../engine/engine_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/bytes.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/engine.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/server/query_path.hpp"
#include "moat/upstream/forwarder.hpp"
#include "moat/upstream/turn_end.hpp"
#include "moat/wire/message_view.hpp"
#include "support/emulation.hpp"

namespace moat::server {
namespace {

using Bytes = std::vector<std::uint8_t>;
using std::chrono::milliseconds;
namespace test = engine::test;

/// A port free on 127.0.0.1 for UDP and TCP at the moment of asking.
std::uint16_t free_port() {
    asio::io_context io;
    for (int attempt = 0; attempt < 50; ++attempt) {
        asio::ip::udp::socket u(io, {asio::ip::make_address("127.0.0.1"), 0});
        const std::uint16_t port = u.local_endpoint().port();
        std::error_code ec;
        asio::ip::tcp::acceptor t(io);
        t.open(asio::ip::tcp::v4(), ec);
        t.bind({asio::ip::make_address("127.0.0.1"), port}, ec);
        if (!ec) {
            return port;
        }
    }
    return 0;
}

/// A blocking socket to 127.0.0.1:port with a receive timeout.
class ClientSocket {
public:
    ClientSocket(int type, std::uint16_t port) : fd_(::socket(AF_INET, type, 0)) {
        timeval tv{1, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    }
    ~ClientSocket() { ::close(fd_); }
    ClientSocket(const ClientSocket&) = delete;
    ClientSocket& operator=(const ClientSocket&) = delete;

    [[nodiscard]] bool connected() const { return connected_; }
    [[nodiscard]] bool send(const Bytes& b) const {
        return ::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
    }
    /// One datagram, or up to `n` octets of a stream; empty on timeout or EOF.
    [[nodiscard]] Bytes receive(std::size_t n = 65535) const {
        Bytes b(n);
        const ssize_t got = ::recv(fd_, b.data(), b.size(), 0);
        b.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
        return b;
    }
    /// Exactly `n` octets of a stream; empty on timeout or EOF first.
    [[nodiscard]] Bytes receive_exactly(std::size_t n) const {
        Bytes b;
        while (b.size() < n) {
            const Bytes part = receive(n - b.size());
            if (part.empty()) {
                return {};
            }
            b.insert(b.end(), part.begin(), part.end());
        }
        return b;
    }
    /// True when the peer closed the stream (recv returns 0) within the timeout.
    [[nodiscard]] bool closed_by_peer() const {
        std::uint8_t byte = 0;
        return ::recv(fd_, &byte, 1, 0) == 0;
    }

private:
    int fd_;
    bool connected_ = false;
};

Bytes framed(const Bytes& message) {
    Bytes out(2 + message.size());
    store_u16(out.data(), static_cast<std::uint16_t>(message.size()));
    std::copy(message.begin(), message.end(), out.begin() + 2);
    return out;
}

class ServerTest : public ::testing::Test {
protected:
    // Two threads (the client's and the event loop's) allocate at once; glibc's arena lock then
    // livelocks under qemu-user, as tests/support/emulation.hpp explains.
    void SetUp() override { MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR(); }
    // As the daemon does on shutdown: a query still in flight is answered (SERVFAIL) while the
    // path it answers through is alive; the forwarder's destructor would answer it afterwards.
    void TearDown() override {
        if (forwarder_) {
            forwarder_->cancel_all();
        }
    }

    void start(std::size_t max_connections = 8, milliseconds idle = milliseconds{2000},
               upstream::Options upstreams = {}) {
        port_ = free_port();
        ASSERT_NE(port_, 0);
        publisher_.publish(test::snapshot_of("ads.example\n"));
        engine::EngineOptions options;
        options.allowed_clients = {test::cidr(test::v4(127, 0, 0, 0), 8)};
        engine::LocalZone zone;
        zone.add_txt(test::name("big.lan"), std::string(1500, 'x'));  // > 512 octets
        auto engine = std::make_shared<engine::Engine>(options, zone, publisher_, nullptr);
        forwarder_ = std::make_unique<upstream::Forwarder>(io_, std::move(upstreams));
        path_ = std::make_unique<QueryPath>(engine, *forwarder_);
        ServerOptions server_options;
        server_options.listen = {{test::v4(127, 0, 0, 1), port_}};
        server_options.tcp_max_connections = max_connections;
        server_options.tcp_idle_timeout = idle;
        server_ = std::make_unique<Server>(io_, server_options, *path_);
        auto started = server_->start();
        ASSERT_TRUE(started) << started.error();
    }

    /// Runs `client` on a thread while the event loop runs here; bounded by 10 s. The threads
    /// meet through one atomic flag and a join, never a contended lock (qemu-user livelocks on
    /// those, tests/support/emulation.hpp).
    template <class Client>
    auto with_client(Client client) {
        decltype(client()) result{};
        std::atomic<bool> done{false};
        std::thread thread([&] {
            result = client();
            done.store(true, std::memory_order_release);
        });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() < deadline) {
            io_.restart();
            io_.run_for(milliseconds{5});
        }
        thread.join();  // the client's own socket timeouts end it
        return result;
    }

    asio::io_context io_;
    filter::SnapshotPublisher publisher_;
    std::unique_ptr<upstream::Forwarder> forwarder_;
    std::unique_ptr<QueryPath> path_;
    std::unique_ptr<Server> server_;
    std::uint16_t port_ = 0;
};

/// QueryPath alone, no sockets: an engine blocking ads.example, and a forwarder without servers
/// that fails every query it is given, on the event loop.
class QueryPathTest : public ::testing::Test {
protected:
    static std::shared_ptr<engine::Engine> make_engine(filter::SnapshotPublisher& publisher) {
        publisher.publish(test::snapshot_of("ads.example\n"));
        engine::EngineOptions options;
        options.allowed_clients = {test::cidr(test::v4(127, 0, 0, 0), 8)};
        return std::make_shared<engine::Engine>(options, engine::LocalZone{}, publisher, nullptr);
    }

    asio::io_context io_;
    filter::SnapshotPublisher publisher_;
    upstream::Forwarder forwarder_{io_, upstream::Options{}};
    QueryPath path_{make_engine(publisher_), forwarder_};
    const engine::Client client_{test::v4(127, 0, 0, 1), 5300, engine::Transport::udp};
};

// Many queries are in flight at once (more than the path keeps idle records for), then the loop
// answers them all; twice, so the second round reuses records. Each reply must carry its own
// query's ID and name: a record reused too early would mix them up.
TEST_F(QueryPathTest, EveryQueryInFlightGetsItsOwnAnswerWhenRecordsAreReused) {
    constexpr std::size_t kQueries = QueryPath::kIdleForwardedKept + 100;
    for (std::uint16_t round = 0; round < 2; ++round) {
        std::vector<std::pair<std::uint16_t, Bytes>> replies;
        for (std::uint16_t i = 0; i < kQueries; ++i) {
            const auto id = static_cast<std::uint16_t>(round * 1000 + i);
            const std::string qname = "host" + std::to_string(id) + ".example";
            const Bytes query = test::make_query({.id = id, .qname = qname});
            const auto handled = path_.handle(query, client_, [&replies, id] {
                return ReplyFn([&replies, id](std::span<const std::uint8_t> answer) {
                    replies.emplace_back(id, Bytes(answer.begin(), answer.end()));
                });
            });
            ASSERT_TRUE(handled.deferred);
        }
        EXPECT_EQ(path_.in_flight(), kQueries);
        io_.restart();
        io_.run();
        EXPECT_EQ(path_.in_flight(), 0U);
        ASSERT_EQ(replies.size(), kQueries);
        std::set<std::uint16_t> seen;
        for (const auto& [id, bytes] : replies) {
            const auto a = test::read_answer(bytes);
            ASSERT_TRUE(a.parsed);
            EXPECT_EQ(a.header.id, id);
            EXPECT_EQ(a.rcode, 2U) << "SERVFAIL: no upstream";
            EXPECT_EQ(a.qname, "host" + std::to_string(id) + ".example.");
            seen.insert(id);
        }
        EXPECT_EQ(seen.size(), kQueries);
    }
}

/// Forwards `count` queries at once, each asking for a name of its own, and runs the loop until
/// every one is answered (SERVFAIL: this forwarder has no servers).
void forward_burst(QueryPath& path, asio::io_context& io, const engine::Client& client,
                   std::size_t count) {
    std::size_t answered = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const Bytes query = test::make_query({.id = static_cast<std::uint16_t>(i),
                                              .qname = "burst" + std::to_string(i) + ".example"});
        const auto handled = path.handle(query, client, [&answered] {
            return ReplyFn([&answered](std::span<const std::uint8_t>) { ++answered; });
        });
        ASSERT_TRUE(handled.deferred);
    }
    io.restart();
    io.run();
    EXPECT_EQ(answered, count);
    EXPECT_EQ(path.in_flight(), 0U);
}

// Under a steady load the records of forwarded queries are reused, not made and freed again: a
// second burst as large as the first makes none. A burst beyond what the path keeps idle leaves
// only that many resident once it is answered.
TEST_F(QueryPathTest, RecordsOfForwardedQueriesAreReusedAndABurstLeavesAtMostTheIdleCap) {
    constexpr std::size_t kSteady = 200;  // what the benchmarks keep in flight
    forward_burst(path_, io_, client_, kSteady);
    EXPECT_EQ(path_.forwarded_records(), kSteady) << "every record kept idle";
    forward_burst(path_, io_, client_, kSteady);
    EXPECT_EQ(path_.forwarded_records(), kSteady) << "the second burst made no record";

    forward_burst(path_, io_, client_, QueryPath::kIdleForwardedKept + 300);
    EXPECT_EQ(path_.forwarded_records(), QueryPath::kIdleForwardedKept)
        << "the records beyond the cap are freed as their queries are answered";
}

// A listener that reads a batch of datagrams takes one arrival for all of them: a query's latency
// is measured from that arrival, not from when the path got to it.
TEST_F(QueryPathTest, ALatencyIsMeasuredFromTheArrivalGiven) {
    const auto no_reply = [] { return ReplyFn([](std::span<const std::uint8_t>) {}); };

    const QueryPath::Arrival arrival = path_.arrival_now();
    std::this_thread::sleep_for(milliseconds{30});
    const Bytes query = test::make_query({.qname = "ads.example"});
    const auto handled = path_.handle(query, client_, no_reply, arrival);
    ASSERT_FALSE(handled.deferred);
    ASSERT_FALSE(handled.answer.empty()) << "blocked, answered at once";
    std::uint64_t observed = 0;
    for (std::size_t i = 0; i <= metrics::LatencyHistogram::kBoundsUs.size(); ++i) {
        observed += path_.metrics().duration.bucket(i);
    }
    EXPECT_EQ(observed, 1U);
    EXPECT_GE(path_.metrics().duration.sum_us(), 30'000U) << "measured from the arrival given";
}

// A batch of datagrams is timed once as it arrives and once as its answers are ready: answers
// given at once are in the histogram only after end_batch(), all with the time up to then.
TEST_F(QueryPathTest, ABatchsAnswersAreTimedWhenItEnds) {
    const auto no_reply = [] { return ReplyFn([](std::span<const std::uint8_t>) {}); };
    const auto observed = [this] {
        std::uint64_t n = 0;
        for (std::size_t i = 0; i <= metrics::LatencyHistogram::kBoundsUs.size(); ++i) {
            n += path_.metrics().duration.bucket(i);
        }
        return n;
    };

    const QueryPath::Arrival arrival = path_.batch_arrival_now();
    const Bytes query = test::make_query({.qname = "ads.example"});
    for (int i = 0; i < 2; ++i) {
        const auto handled = path_.handle(query, client_, no_reply, arrival);
        ASSERT_FALSE(handled.answer.empty()) << "blocked, answered at once";
    }
    EXPECT_EQ(observed(), 0U) << "not timed before the batch ends";
    EXPECT_EQ(
        path_.metrics().by_outcome[static_cast<std::size_t>(engine::Outcome::blocked)].value(), 2U)
        << "but counted";
    std::this_thread::sleep_for(milliseconds{20});
    path_.end_batch(arrival);
    EXPECT_EQ(observed(), 2U);
    EXPECT_GE(path_.metrics().duration.sum_us(), 2U * 20'000U) << "each timed up to the end";
    path_.end_batch(arrival);
    EXPECT_EQ(observed(), 2U) << "a batch's answers are timed once";
}

// A cached answer near its expiry is answered at once and its refresh goes to the forwarder,
// which is no client's query: not in flight, not counted. This forwarder has no servers, so the
// refresh fails, and the entry serves on until it expires.
TEST(QueryPathRefresh, ACachedAnswerNearExpiryIsSentAndItsRefreshGoesUpstreamUncounted) {
    asio::io_context io;
    filter::SnapshotPublisher publisher(test::snapshot_of("ads.example\n"));
    ManualClock clock;
    auto cache = std::make_shared<cache::Cache>(clock);
    engine::EngineOptions options;
    options.allowed_clients = {test::cidr(test::v4(127, 0, 0, 0), 8)};
    upstream::Forwarder forwarder(io, upstream::Options{});
    QueryPath path(std::make_shared<engine::Engine>(options, engine::LocalZone{}, publisher, cache),
                   forwarder);
    const engine::Client client{test::v4(127, 0, 0, 1), 5300, engine::Transport::udp};
    const Bytes query = test::make_query({.id = 9, .qname = "www.example.com"});
    test::ReplySpec reply;
    reply.records.push_back(test::a_rr("www.example.com", {93, 184, 216, 34}, 100));
    const auto view = wire::MessageView::parse(query);
    ASSERT_TRUE(view);
    ASSERT_TRUE(
        cache->insert(cache::CacheKey::from_query(*view).value(), test::make_reply(query, reply)));
    const auto never = [] { return ReplyFn([](std::span<const std::uint8_t>) { FAIL(); }); };

    clock.advance(std::chrono::seconds(95));
    auto handled = path.handle(query, client, never);
    ASSERT_FALSE(handled.deferred);
    const auto answer = test::read_answer(handled.answer);
    ASSERT_EQ(answer.records.size(), 1U);
    EXPECT_EQ(answer.records[0].ttl, 5U) << "the cached answer, at once";
    EXPECT_EQ(forwarder.stats().queries.load(), 1U) << "the refresh went to the forwarder";
    EXPECT_EQ(path.in_flight(), 0U) << "no client waits for it";

    io.run();  // the refresh fails: no servers
    EXPECT_EQ(forwarder.stats().failed.load(), 1U);
    handled = path.handle(query, client, never);
    ASSERT_FALSE(handled.deferred) << "the entry serves on";
    EXPECT_EQ(forwarder.stats().queries.load(), 1U) << "one refresh per stored answer";
    EXPECT_EQ(path.metrics().by_outcome[static_cast<std::size_t>(engine::Outcome::cached)].value(),
              2U);
    EXPECT_EQ(
        path.metrics().by_outcome[static_cast<std::size_t>(engine::Outcome::servfail)].value(), 0U)
        << "the failed refresh answered no one";
}

TEST_F(ServerTest, UdpQueriesAreAnswered) {
    start();
    const Bytes answer = with_client([port = port_] {
        const ClientSocket s(SOCK_DGRAM, port);
        EXPECT_TRUE(s.send(test::make_query({.id = 0x1234, .qname = "ads.example"})));
        return s.receive();
    });
    const auto a = test::read_answer(answer);
    ASSERT_TRUE(a.parsed);
    EXPECT_EQ(a.header.id, 0x1234);
    ASSERT_EQ(a.records.size(), 1U);
    EXPECT_EQ(a.records[0].rdata, (Bytes{0, 0, 0, 0})) << "blocked in null mode";
}

TEST_F(ServerTest, UdpAnswerBeyond512OctetsIsTruncatedAndWholeOverTcp) {
    start();
    const Bytes over_udp = with_client([port = port_] {
        const ClientSocket s(SOCK_DGRAM, port);
        EXPECT_TRUE(s.send(test::make_query({.qname = "big.lan", .qtype = wire::RrType::txt})));
        return s.receive();
    });
    const auto u = test::read_answer(over_udp);
    ASSERT_TRUE(u.parsed);
    EXPECT_LE(over_udp.size(), 512U);
    EXPECT_TRUE(u.header.tc());
    EXPECT_TRUE(u.records.empty()) << "no partial record";

    const Bytes over_tcp = with_client([port = port_] {
        const ClientSocket s(SOCK_STREAM, port);
        EXPECT_TRUE(
            s.send(framed(test::make_query({.qname = "big.lan", .qtype = wire::RrType::txt}))));
        const Bytes length = s.receive_exactly(2);
        return length.empty() ? Bytes{} : s.receive_exactly(load_u16(length.data()));
    });
    const auto t = test::read_answer(over_tcp);
    ASSERT_TRUE(t.parsed);
    EXPECT_FALSE(t.header.tc());
    EXPECT_EQ(t.records.size(), 1U);
    EXPECT_GT(over_tcp.size(), 1500U);
}

TEST_F(ServerTest, TcpAnswersEveryPipelinedQuery) {
    start();
    const std::vector<std::uint16_t> ids = with_client([port = port_] {
        const ClientSocket s(SOCK_STREAM, port);
        Bytes burst;
        for (std::uint16_t id = 1; id <= 3; ++id) {  // one write, three queries
            const Bytes f = framed(test::make_query({.id = id, .qname = "localhost"}));
            burst.insert(burst.end(), f.begin(), f.end());
        }
        // A query for a name with no upstream: SERVFAIL, answered later than the others.
        const Bytes late = framed(test::make_query({.id = 4, .qname = "www.example.com"}));
        burst.insert(burst.end(), late.begin(), late.end());
        EXPECT_TRUE(s.send(burst));
        std::vector<std::uint16_t> got;
        for (int i = 0; i < 4; ++i) {
            const Bytes length = s.receive_exactly(2);
            const Bytes body =
                length.empty() ? Bytes{} : s.receive_exactly(load_u16(length.data()));
            if (body.size() < 12) {
                break;
            }
            got.push_back(load_u16(body.data()));
        }
        return got;
    });
    ASSERT_EQ(ids.size(), 4U);
    EXPECT_EQ(std::set<std::uint16_t>(ids.begin(), ids.end()),
              (std::set<std::uint16_t>{1, 2, 3, 4}));
}

TEST_F(ServerTest, ATcpQueryIsForwardedByTheHandlerThatReadIt) {
    // The upstream: a socket on 127.0.0.1 that receives the forwarded query (and never answers).
    asio::ip::udp::socket upstream_socket(io_, {asio::ip::make_address("127.0.0.1"), 0});
    upstream::Options upstreams;
    upstreams.routes = {upstream::Route{{upstream::ServerAddress(
        test::v4(127, 0, 0, 1), upstream_socket.local_endpoint().port())}}};
    start(8, milliseconds{2000}, std::move(upstreams));
    // A blocking client on this thread: the kernel completes the connection and takes the
    // query before the listener accepts, so the event loop can run one handler at a time.
    const ClientSocket client(SOCK_STREAM, port_);
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.send(framed(test::make_query({.id = 7, .qname = "www.example.com"}))));

    // Each handler finishes what it deferred before it returns (upstream/turn_end.hpp): the
    // read's flight starts, and its query leaves, without a handler posted for them, before
    // which Asio would poll the sockets once more.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (upstream_socket.available() == 0 && std::chrono::steady_clock::now() < deadline) {
        io_.run_one_for(milliseconds{100});
        ASSERT_EQ(upstream::TurnEnd::of(io_).queued(), 0U) << "work left for a posted handler";
    }
    ASSERT_GT(upstream_socket.available(), 0U) << "the query never reached the upstream";
    Bytes received(upstream_socket.available());
    asio::ip::udp::endpoint from;
    received.resize(upstream_socket.receive_from(asio::buffer(received), from));
    const auto q = test::read_answer(received);  // a query parses as a message too
    ASSERT_TRUE(q.parsed);
    EXPECT_FALSE(q.header.qr());
    EXPECT_EQ(q.qname, "www.example.com.");
}

TEST_F(ServerTest, AnswersBeyondWhatTheSocketTakesAtOnceArriveWhole) {
    // 4,000 answers of 1.5 KB (6 MB) to a client that reads only once it has asked everything:
    // the server's writes find its socket full, write part, and finish the rest later.
    start();
    constexpr std::uint16_t kQueries = 4000;
    const std::vector<std::uint16_t> ids = with_client([port = port_] {
        const ClientSocket s(SOCK_STREAM, port);
        Bytes burst;
        for (std::uint16_t id = 1; id <= kQueries; ++id) {
            const Bytes f = framed(
                test::make_query({.id = id, .qname = "big.lan", .qtype = wire::RrType::txt}));
            burst.insert(burst.end(), f.begin(), f.end());
        }
        EXPECT_TRUE(s.send(burst));
        std::this_thread::sleep_for(milliseconds{200});
        std::vector<std::uint16_t> got;
        for (std::uint16_t i = 0; i < kQueries; ++i) {
            const Bytes length = s.receive_exactly(2);
            const Bytes body =
                length.empty() ? Bytes{} : s.receive_exactly(load_u16(length.data()));
            const auto a = test::read_answer(body);
            if (!a.parsed || a.records.size() != 1 || a.records[0].texts.empty()) {
                break;
            }
            got.push_back(a.header.id);
        }
        return got;
    });
    ASSERT_EQ(ids.size(), kQueries);
    EXPECT_EQ(std::set<std::uint16_t>(ids.begin(), ids.end()).size(), kQueries);
}

TEST_F(ServerTest, ConnectionsBeyondTheCapAreClosed) {
    start(/*max_connections=*/1);
    const bool second_closed = with_client([port = port_] {
        const ClientSocket first(SOCK_STREAM, port);
        EXPECT_TRUE(first.send(framed(test::make_query({.qname = "localhost"}))));
        if (first.receive_exactly(2).empty()) {  // the first one is served
            return false;
        }
        const ClientSocket second(SOCK_STREAM, port);
        return second.closed_by_peer();
    });
    EXPECT_TRUE(second_closed);
}

TEST_F(ServerTest, IdleConnectionsAreClosed) {
    start(8, milliseconds{200});
    const bool closed = with_client([port = port_] {
        const ClientSocket s(SOCK_STREAM, port);
        return s.connected() && s.closed_by_peer();  // recv waits up to 1 s; idle is 0.2 s
    });
    EXPECT_TRUE(closed);
}

TEST_F(ServerTest, AConnectionThatKeepsAskingOutlivesTheIdleTimeoutAndClosesOnceQuiet) {
    start(8, milliseconds{300});
    struct Seen {
        int answered = 0;
        bool closed_after = false;
    };
    const Seen seen = with_client([port = port_] {
        Seen r;
        const ClientSocket s(SOCK_STREAM, port);
        // A query every 100 ms for 900 ms: three idle timeouts long, never 300 ms quiet.
        for (std::uint16_t id = 1; id <= 9; ++id) {
            if (!s.send(framed(test::make_query({.id = id, .qname = "localhost"})))) {
                return r;
            }
            const Bytes length = s.receive_exactly(2);
            if (length.empty() || s.receive_exactly(load_u16(length.data())).empty()) {
                return r;  // closed while in use
            }
            ++r.answered;
            std::this_thread::sleep_for(milliseconds{100});
        }
        r.closed_after = s.closed_by_peer();  // recv waits up to 1 s; idle is 0.3 s
        return r;
    });
    EXPECT_EQ(seen.answered, 9);
    EXPECT_TRUE(seen.closed_after);
}

TEST_F(ServerTest, StopReceivingEndsIntakeAndLeavesTheServerIdle) {
    start();
    server_->stop_receiving();
    const Bytes answer = with_client([port = port_] {
        const ClientSocket s(SOCK_DGRAM, port);
        EXPECT_TRUE(s.send(test::make_query({.qname = "localhost"})));
        return s.receive();
    });
    EXPECT_TRUE(answer.empty()) << "no query is taken after stop_receiving()";
    EXPECT_TRUE(server_->idle());
}

TEST_F(ServerTest, AnAddressInUseIsAnErrorNamingIt) {
    start();
    ServerOptions same;
    same.listen = {{test::v4(127, 0, 0, 1), port_}};
    Server other(io_, same, *path_);
    auto started = other.start();
    ASSERT_FALSE(started);
    EXPECT_NE(started.error().find("127.0.0.1:" + std::to_string(port_)), std::string::npos)
        << started.error();
}

}  // namespace
}  // namespace moat::server
