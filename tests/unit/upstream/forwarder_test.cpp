// Forwarder against in-test UDP and TCP responders on 127.0.0.1 (ephemeral ports), driven by
// io_context::run_for in bounded loops: answers and server text, random ID and source port,
// spoofed and wrong replies ignored, failover on timeout and on error rcodes, TCP after a
// truncated answer, total timeout, coalescing, unroutable queries and cancel_all().
#include "moat/upstream/forwarder.hpp"

#include <gtest/gtest.h>

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "moat/core/bytes.hpp"
#include "moat/upstream/options.hpp"
#include "moat/upstream/stats.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/types.hpp"
#include "upstream_fixtures.hpp"

namespace moat::upstream {
namespace {

using asio::ip::tcp;
using asio::ip::udp;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;
using Address4 = std::array<std::uint8_t, 4>;
using test::make_query;
using test::make_reply;
using test::read_reply;
using wire::Header;
using wire::Rcode;

constexpr Address4 kRight{192, 0, 2, 1};
constexpr Address4 kSpoofed{203, 0, 113, 66};
constexpr Address4 kOverTcp{198, 51, 100, 7};

/// Runs `io` in short slices until `done()` or `limit` has passed.
template <class Done>
bool run_until(asio::io_context& io, Done done, milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!done() && Clock::now() < deadline) {
        io.restart();
        io.run_for(milliseconds{5});
    }
    return done();
}

/// Runs `io` for `span`, whatever happens.
void run_for_a_while(asio::io_context& io, milliseconds span) {
    run_until(
        io, [] { return false; }, span);
}

/// The bytes of a message after its ID.
Bytes after_id(const Bytes& message) {
    return message.size() < 2 ? Bytes{} : Bytes(message.begin() + 2, message.end());
}

std::vector<Address4> answers_of(const Bytes& reply) { return read_reply(reply).a; }

// ---- responders
// ----------------------------------------------------------------------------------

struct Received {
    Bytes bytes;
    udp::endpoint from;
};

/// A UDP DNS server on the loopback: records each datagram and lets the behaviour answer it.
class UdpResponder {
public:
    using Behaviour = std::function<void(UdpResponder&, const Received&)>;

    UdpResponder(asio::io_context& io, const udp::endpoint& at, Behaviour behaviour)
        : io_(io),
          socket_(io, at),
          other_(io, udp::endpoint(at.address(), 0)),
          behaviour_(std::move(behaviour)) {
        receive();
    }
    ~UdpResponder() {
        std::error_code ec;
        socket_.close(ec);
        other_.close(ec);
        for (auto& t : timers_) {
            t->cancel();
        }
    }
    UdpResponder(const UdpResponder&) = delete;
    UdpResponder& operator=(const UdpResponder&) = delete;

    [[nodiscard]] std::uint16_t port() const { return socket_.local_endpoint().port(); }
    [[nodiscard]] ServerAddress address() const {
        const auto ip = socket_.local_endpoint().address();
        if (ip.is_v6()) {
            return test::loopback_v6(port());
        }
        return test::loopback(port());
    }

    /// Sends `bytes` to where `query` came from, from the server's socket.
    void reply(const Received& query, const Bytes& bytes) {
        std::error_code ec;
        socket_.send_to(asio::buffer(bytes), query.from, 0, ec);
        EXPECT_FALSE(ec) << ec.message();
    }
    /// The same, from another socket (another source port).
    void reply_from_other(const Received& query, const Bytes& bytes) {
        std::error_code ec;
        other_.send_to(asio::buffer(bytes), query.from, 0, ec);
        EXPECT_FALSE(ec) << ec.message();
    }
    /// Sends `bytes` from the server's socket after `delay`.
    void reply_later(const Received& query, Bytes bytes, milliseconds delay) {
        auto timer = std::make_shared<asio::steady_timer>(io_, delay);
        timers_.push_back(timer);
        timer->async_wait(
            [this, timer, to = query.from, out = std::move(bytes)](const std::error_code& ec) {
                if (!ec) {
                    std::error_code send_ec;
                    socket_.send_to(asio::buffer(out), to, 0, send_ec);
                }
            });
    }

    std::vector<Received> received;

private:
    void receive() {
        socket_.async_receive_from(
            asio::buffer(buffer_), sender_, [this](const std::error_code& ec, std::size_t n) {
                if (ec) {
                    return;
                }
                const Received got{Bytes(buffer_.data(), buffer_.data() + n), sender_};
                received.push_back(got);
                if (behaviour_) {
                    behaviour_(*this, got);
                }
                receive();
            });
    }

    asio::io_context& io_;
    udp::socket socket_;
    udp::socket other_;
    Behaviour behaviour_;
    std::array<std::uint8_t, 65535> buffer_{};
    udp::endpoint sender_;
    std::vector<std::shared_ptr<asio::steady_timer>> timers_;
};

UdpResponder::Behaviour answers(Address4 a) {
    return [a](UdpResponder& r, const Received& q) { r.reply(q, make_reply(q.bytes, {.a = a})); };
}
UdpResponder::Behaviour silent() { return {}; }
UdpResponder::Behaviour answers_with(Rcode rcode) {
    return [rcode](UdpResponder& r, const Received& q) {
        r.reply(q, make_reply(q.bytes, {.rcode = rcode}));
    };
}
UdpResponder::Behaviour truncates() {
    return [](UdpResponder& r, const Received& q) {
        r.reply(q, make_reply(q.bytes,
                              {.flags = Header::kQr | Header::kRd | Header::kRa | Header::kTc}));
    };
}

/// A TCP DNS server on the loopback: two-octet length, query, answer.
class TcpResponder {
public:
    using Answer = std::function<Bytes(const Bytes& query)>;

    TcpResponder(asio::io_context& io, const tcp::endpoint& at, Answer answer)
        : acceptor_(io, at), answer_(std::move(answer)) {
        accept();
    }
    ~TcpResponder() {
        std::error_code ec;
        acceptor_.close(ec);
    }
    TcpResponder(const TcpResponder&) = delete;
    TcpResponder& operator=(const TcpResponder&) = delete;

    [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

    std::vector<Bytes> queries;
    int connections = 0;

private:
    struct Connection {
        explicit Connection(tcp::socket s) : socket(std::move(s)) {}
        tcp::socket socket;
        std::array<std::uint8_t, 2> length{};
        Bytes body;
        Bytes out;
    };

    void accept() {
        acceptor_.async_accept([this](const std::error_code& ec, tcp::socket s) {
            if (ec) {
                return;
            }
            ++connections;
            serve(std::make_shared<Connection>(std::move(s)));
            accept();
        });
    }
    void serve(const std::shared_ptr<Connection>& c) {
        asio::async_read(
            c->socket, asio::buffer(c->length), [this, c](const std::error_code& ec, std::size_t) {
                if (ec) {
                    return;
                }
                c->body.resize(load_u16(c->length.data()));
                asio::async_read(c->socket, asio::buffer(c->body),
                                 [this, c](const std::error_code& body_ec, std::size_t) {
                                     if (body_ec) {
                                         return;
                                     }
                                     queries.push_back(c->body);
                                     const Bytes reply = answer_(c->body);
                                     c->out.resize(2 + reply.size());
                                     store_u16(c->out.data(),
                                               static_cast<std::uint16_t>(reply.size()));
                                     std::copy(reply.begin(), reply.end(), c->out.begin() + 2);
                                     asio::async_write(c->socket, asio::buffer(c->out),
                                                       [c](const std::error_code&, std::size_t) {});
                                 });
            });
    }

    tcp::acceptor acceptor_;
    Answer answer_;
};

// ---- fixture
// -------------------------------------------------------------------------------------

/// What one callback saw.
struct Outcome {
    int calls = 0;
    bool ok = false;
    Bytes reply;
    std::string server;
    Clock::time_point at{};
};

std::string text_of(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

class ForwarderTest : public ::testing::Test {
protected:
    asio::io_context io_;
    std::deque<Outcome> outcomes_;  // before the forwarder: its destructor may still call back
    std::vector<std::unique_ptr<UdpResponder>> udp_servers_;
    std::vector<std::unique_ptr<TcpResponder>> tcp_servers_;
    std::unique_ptr<Forwarder> forwarder_;

    static Options options(milliseconds timeout, milliseconds total) {
        Options o;
        o.timeout = timeout;
        o.total_timeout = total;
        return o;
    }

    UdpResponder& udp_server(UdpResponder::Behaviour behaviour) {
        udp_servers_.push_back(std::make_unique<UdpResponder>(
            io_, udp::endpoint(asio::ip::address_v4::loopback(), 0), std::move(behaviour)));
        return *udp_servers_.back();
    }

    /// A UDP and a TCP responder on the same loopback port.
    std::pair<UdpResponder*, TcpResponder*> udp_and_tcp_server(
        const UdpResponder::Behaviour& behaviour, const TcpResponder::Answer& answer) {
        for (int attempt = 0; attempt < 20; ++attempt) {
            auto u = std::make_unique<UdpResponder>(
                io_, udp::endpoint(asio::ip::address_v4::loopback(), 0), behaviour);
            try {
                auto t = std::make_unique<TcpResponder>(
                    io_, tcp::endpoint(asio::ip::address_v4::loopback(), u->port()), answer);
                udp_servers_.push_back(std::move(u));
                tcp_servers_.push_back(std::move(t));
                return {udp_servers_.back().get(), tcp_servers_.back().get()};
            } catch (const std::system_error&) {
                // that TCP port is taken; try another UDP port
            }
        }
        ADD_FAILURE() << "no port free for both UDP and TCP";
        return {nullptr, nullptr};
    }

    Forwarder& make(std::vector<Route> routes, Options o) {
        o.routes = std::move(routes);
        forwarder_ = std::make_unique<Forwarder>(io_, std::move(o));
        return *forwarder_;
    }
    Forwarder& make(std::vector<ServerAddress> servers, Options o) {
        return make(std::vector<Route>{Route{std::move(servers)}}, std::move(o));
    }

    Outcome& forward(const Bytes& query, std::size_t route = 0) {
        Outcome& o = outcomes_.emplace_back();
        forwarder_->forward(query, route, [&o](const Result& r) {
            ++o.calls;
            o.ok = r.ok;
            o.reply.assign(r.reply.begin(), r.reply.end());
            o.server = r.server;
            o.at = Clock::now();
        });
        return o;
    }

    bool wait_for(const Outcome& o, milliseconds limit = milliseconds{5000}) {
        return run_until(
            io_, [&o] { return o.calls > 0; }, limit);
    }

    [[nodiscard]] const Stats& stats() const { return forwarder_->stats(); }
};

std::uint64_t get(const std::atomic<std::uint64_t>& counter) { return counter.load(); }

// ---- answers
// -------------------------------------------------------------------------------------

TEST_F(ForwarderTest, AnswerReachesTheCallbackWithTheServerText) {
    UdpResponder& server = udp_server(answers(kRight));
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    const Bytes query = make_query();
    Outcome& o = forward(query);
    EXPECT_EQ(o.calls, 0) << "the callback ran inside forward()";
    EXPECT_EQ(forwarder_->in_flight(), 1U);
    ASSERT_TRUE(wait_for(o));

    EXPECT_EQ(o.calls, 1);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, text_of(server.port()));
    EXPECT_EQ(answers_of(o.reply), std::vector<Address4>{kRight});
    ASSERT_EQ(server.received.size(), 1U);
    EXPECT_EQ(test::id_of(o.reply), test::id_of(server.received[0].bytes))
        << "the reply is the upstream's, with the upstream ID";
    EXPECT_EQ(forwarder_->in_flight(), 0U);

    EXPECT_EQ(get(stats().queries), 1U);
    EXPECT_EQ(get(stats().sent), 1U);
    EXPECT_EQ(get(stats().answered), 1U);
    EXPECT_EQ(get(stats().failed), 0U);
    EXPECT_EQ(get(stats().ignored), 0U);

    run_for_a_while(io_, milliseconds{100});
    EXPECT_EQ(o.calls, 1) << "the callback runs exactly once";
}

TEST_F(ForwarderTest, NxDomainIsAnAnswer) {
    UdpResponder& server = udp_server(answers_with(Rcode::nxdomain));
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(read_reply(o.reply).header.rcode_low(), 3U);
    EXPECT_EQ(get(stats().error_rcodes), 0U);
}

TEST_F(ForwarderTest, UpstreamQueryHasRandomIdAndSourcePort) {
    UdpResponder& server = udp_server(answers(kRight));
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    const Bytes query = make_query({.id = 0xBEEF});
    constexpr std::size_t kQueries = 8;
    for (std::size_t i = 0; i < kQueries; ++i) {
        Outcome& o = forward(query);
        ASSERT_TRUE(wait_for(o));
        ASSERT_TRUE(o.ok);
    }
    ASSERT_EQ(server.received.size(), kQueries) << "sequential queries are not coalesced";
    std::set<std::uint16_t> ids;
    std::set<std::uint16_t> ports;
    std::size_t client_id = 0;
    for (const Received& r : server.received) {
        ids.insert(test::id_of(r.bytes));
        ports.insert(r.from.port());
        client_id += test::id_of(r.bytes) == 0xBEEF ? 1U : 0U;
        EXPECT_EQ(after_id(r.bytes), after_id(query)) << "only the ID is replaced";
        EXPECT_EQ(r.from.address(), asio::ip::address_v4::loopback());
    }
    EXPECT_GE(ids.size(), kQueries - 1) << "IDs repeat";
    EXPECT_LE(client_id, 1U) << "the client's ID went upstream";
    // Queries share a pool of 16 sockets on random ports (udp_pool.hpp; the pool's own test
    // covers the rotation): 8 queries landing on one socket has odds of 16^-7.
    EXPECT_GE(ports.size(), 2U) << "every query left from one source port";
}

TEST_F(ForwarderTest, WrongIdFirstThenRightId) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        const auto id = static_cast<std::uint16_t>(test::id_of(q.bytes) ^ 0x0101U);
        r.reply(q, make_reply(q.bytes, {.id = id, .a = kSpoofed}));
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(answers_of(o.reply), std::vector<Address4>{kRight});
    EXPECT_EQ(test::id_of(o.reply), test::id_of(server.received.at(0).bytes));
    EXPECT_EQ(get(stats().ignored), 1U);
    EXPECT_EQ(get(stats().answered), 1U);
}

TEST_F(ForwarderTest, WrongQuestionAndGarbageAreIgnored) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply(q, make_reply(q.bytes, {.qname = "evil.example.net", .a = kSpoofed}));
        r.reply(q, Bytes{1, 2, 3});
        r.reply(q, make_reply(q.bytes, {.flags = Header::kRd, .a = kSpoofed}));  // QR=0
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(answers_of(o.reply), std::vector<Address4>{kRight});
    EXPECT_EQ(get(stats().ignored), 3U);
}

TEST_F(ForwarderTest, ReplyFromAnotherSourcePortIsIgnored) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_from_other(q, make_reply(q.bytes, {.a = kSpoofed}));  // right ID and question
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(answers_of(o.reply), std::vector<Address4>{kRight});
    EXPECT_EQ(get(stats().ignored), 1U);
}

TEST_F(ForwarderTest, OnlyASpoofedReplyIsNoAnswer) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_from_other(q, make_reply(q.bytes, {.a = kSpoofed}));
    });
    make({server.address()}, options(milliseconds{200}, milliseconds{2000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(get(stats().ignored), 1U);
    EXPECT_EQ(get(stats().failed), 1U);
}

// ---- failover
// ------------------------------------------------------------------------------------

TEST_F(ForwarderTest, SilentFirstServerFailsOverAfterTheTimeout) {
    constexpr milliseconds kTimeout{250};
    UdpResponder& first = udp_server(silent());
    UdpResponder& second = udp_server(answers(kRight));
    make({first.address(), second.address()}, options(kTimeout, milliseconds{5000}));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, text_of(second.port()));
    EXPECT_EQ(answers_of(o.reply), std::vector<Address4>{kRight});
    EXPECT_GE(o.at - start, kTimeout) << "the second server was asked before the timeout";
    EXPECT_LT(o.at - start, milliseconds{2500});
    EXPECT_EQ(first.received.size(), 1U);
    EXPECT_EQ(second.received.size(), 1U);
    EXPECT_EQ(get(stats().timeouts), 1U);
    EXPECT_EQ(get(stats().sent), 2U);
}

TEST_F(ForwarderTest, FailoverKeepsTheFirstAttemptOpenForALateAnswer) {
    constexpr milliseconds kTimeout{400};
    UdpResponder& first = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{600});
    });
    UdpResponder& second = udp_server(silent());
    make({first.address(), second.address()}, options(kTimeout, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok) << "the late answer of the first server should still win";
    EXPECT_EQ(o.server, text_of(first.port()));
    EXPECT_EQ(second.received.size(), 1U);
}

TEST_F(ForwarderTest, ErrorRcodeMovesToTheNextServerAtOnce) {
    for (const Rcode rcode : {Rcode::servfail, Rcode::refused, Rcode::notimp, Rcode::formerr}) {
        SCOPED_TRACE(static_cast<unsigned>(rcode));
        constexpr milliseconds kTimeout{3000};
        UdpResponder& first = udp_server(answers_with(rcode));
        UdpResponder& second = udp_server(answers(kRight));
        make({first.address(), second.address()}, options(kTimeout, milliseconds{6000}));
        const auto start = Clock::now();
        Outcome& o = forward(make_query());
        ASSERT_TRUE(wait_for(o));
        EXPECT_TRUE(o.ok);
        EXPECT_EQ(o.server, text_of(second.port()));
        EXPECT_LT(o.at - start, kTimeout / 3) << "waited for the timeout after an error rcode";
        EXPECT_EQ(get(stats().error_rcodes), 1U);
        EXPECT_EQ(get(stats().timeouts), 0U);
    }
}

TEST_F(ForwarderTest, TruncatedUdpAnswerIsRetriedOverTcpOnTheSameServer) {
    auto [u, t] = udp_and_tcp_server(truncates(),
                                     [](const Bytes& q) { return make_reply(q, {.a = kOverTcp}); });
    ASSERT_NE(u, nullptr);
    UdpResponder& other = udp_server(answers(kRight));
    make({u->address(), other.address()}, options(milliseconds{2000}, milliseconds{5000}));
    const Bytes query = make_query();
    Outcome& o = forward(query);
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, text_of(u->port()));
    const auto reply = read_reply(o.reply);
    EXPECT_FALSE(reply.header.tc());
    EXPECT_EQ(reply.a, std::vector<Address4>{kOverTcp});
    EXPECT_EQ(u->received.size(), 1U);
    ASSERT_EQ(t->queries.size(), 1U);
    EXPECT_EQ(after_id(t->queries[0]), after_id(query));
    EXPECT_EQ(test::id_of(o.reply), test::id_of(t->queries[0]));
    EXPECT_TRUE(other.received.empty()) << "the next server was asked";
    EXPECT_EQ(get(stats().tcp_retries), 1U);
    EXPECT_EQ(get(stats().sent), 2U);
}

TEST_F(ForwarderTest, ServFailOverTcpMovesToTheNextServer) {
    auto [u, t] = udp_and_tcp_server(
        truncates(), [](const Bytes& q) { return make_reply(q, {.rcode = Rcode::servfail}); });
    ASSERT_NE(u, nullptr);
    UdpResponder& other = udp_server(answers(kRight));
    make({u->address(), other.address()}, options(milliseconds{3000}, milliseconds{6000}));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, text_of(other.port()));
    EXPECT_LT(o.at - start, milliseconds{1000});
    EXPECT_EQ(t->queries.size(), 1U);
    EXPECT_EQ(get(stats().error_rcodes), 1U);
}

TEST_F(ForwarderTest, TruncatedAnswerWithoutTcpMovesToTheNextServer) {
    // Nothing listens on TCP at the first server's port: the connection is refused.
    UdpResponder& first = udp_server(truncates());
    UdpResponder& second = udp_server(answers(kRight));
    make({first.address(), second.address()}, options(milliseconds{3000}, milliseconds{6000}));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, text_of(second.port()));
    EXPECT_LT(o.at - start, milliseconds{1000});
    EXPECT_EQ(get(stats().tcp_retries), 1U);
}

// ---- failure
// -------------------------------------------------------------------------------------

TEST_F(ForwarderTest, EveryServerSilentFailsAtTheTotalTimeout) {
    constexpr milliseconds kTotal{400};
    UdpResponder& first = udp_server(silent());
    UdpResponder& second = udp_server(silent());
    make({first.address(), second.address()}, options(milliseconds{3000}, kTotal));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(o.reply.empty());
    EXPECT_GE(o.at - start, kTotal);
    EXPECT_LT(o.at - start, kTotal + milliseconds{1000});
    EXPECT_EQ(get(stats().failed), 1U);
    EXPECT_EQ(forwarder_->in_flight(), 0U);
    run_for_a_while(io_, milliseconds{100});
    EXPECT_EQ(o.calls, 1);
}

TEST_F(ForwarderTest, EveryServerTimingOutFailsBeforeTheTotalTimeout) {
    constexpr milliseconds kTimeout{150};
    UdpResponder& first = udp_server(silent());
    UdpResponder& second = udp_server(silent());
    make({first.address(), second.address()}, options(kTimeout, milliseconds{5000}));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_FALSE(o.ok);
    EXPECT_GE(o.at - start, 2 * kTimeout);
    EXPECT_LT(o.at - start, milliseconds{2500});
    EXPECT_EQ(first.received.size(), 1U);
    EXPECT_EQ(second.received.size(), 1U);
    EXPECT_EQ(get(stats().timeouts), 2U);
    EXPECT_EQ(get(stats().failed), 1U);
}

TEST_F(ForwarderTest, EveryServerAnsweringServFailFailsAtOnce) {
    UdpResponder& first = udp_server(answers_with(Rcode::servfail));
    UdpResponder& second = udp_server(answers_with(Rcode::refused));
    make({first.address(), second.address()}, options(milliseconds{3000}, milliseconds{6000}));
    const auto start = Clock::now();
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_FALSE(o.ok);
    EXPECT_LT(o.at - start, milliseconds{1000});
    EXPECT_EQ(get(stats().error_rcodes), 2U);
    EXPECT_EQ(get(stats().failed), 1U);
}

// ---- coalescing
// ----------------------------------------------------------------------------------

TEST_F(ForwarderTest, IdenticalQueriesInFlightShareOneUpstreamQuery) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    // Two clients ask the same question with their own IDs.
    Outcome& a = forward(make_query({.id = 0x0001}));
    Outcome& b = forward(make_query({.id = 0x0002}));
    EXPECT_EQ(forwarder_->in_flight(), 1U);
    ASSERT_TRUE(run_until(
        io_, [&] { return a.calls > 0 && b.calls > 0; }, milliseconds{5000}));
    EXPECT_EQ(a.calls, 1);
    EXPECT_EQ(b.calls, 1);
    EXPECT_TRUE(a.ok);
    EXPECT_TRUE(b.ok);
    EXPECT_EQ(a.reply, b.reply);
    EXPECT_EQ(server.received.size(), 1U);
    EXPECT_EQ(get(stats().queries), 2U);
    EXPECT_EQ(get(stats().coalesced), 1U);
    EXPECT_EQ(get(stats().sent), 1U);
    EXPECT_EQ(get(stats().answered), 1U);
}

TEST_F(ForwarderTest, OtherQuestionsAndRoutesAreNotCoalesced) {
    UdpResponder& server = udp_server(answers(kRight));
    make(std::vector<Route>{Route{{server.address()}}, Route{{server.address()}}},
         options(milliseconds{2000}, milliseconds{5000}));
    Outcome& a = forward(make_query({.qname = "a.example.com"}));
    Outcome& b = forward(make_query({.qname = "b.example.com"}));
    Outcome& c = forward(make_query({.qname = "a.example.com"}), 1);
    Outcome& d = forward(make_query({.qname = "a.example.com", .qtype = wire::RrType::aaaa}));
    Outcome& e = forward(make_query({.qname = "a.example.com", .edns = false}));
    EXPECT_EQ(forwarder_->in_flight(), 5U);
    ASSERT_TRUE(run_until(
        io_, [&] { return a.calls + b.calls + c.calls + d.calls + e.calls == 5; },
        milliseconds{5000}));
    EXPECT_EQ(server.received.size(), 5U);
    EXPECT_EQ(get(stats().coalesced), 0U);
}

// ---- unroutable, overload, cancel ---------------------------------------------------------------

TEST_F(ForwarderTest, RouteWithoutServersFailsLater) {
    UdpResponder& server = udp_server(answers(kRight));
    make(std::vector<Route>{Route{{server.address()}}, Route{}},
         options(milliseconds{2000}, milliseconds{5000}));
    Outcome& empty = forward(make_query(), 1);
    Outcome& missing = forward(make_query(), 7);
    EXPECT_EQ(empty.calls, 0) << "the callback ran inside forward()";
    EXPECT_EQ(missing.calls, 0) << "the callback ran inside forward()";
    ASSERT_TRUE(run_until(
        io_, [&] { return empty.calls > 0 && missing.calls > 0; }, milliseconds{2000}));
    EXPECT_EQ(empty.calls, 1);
    EXPECT_FALSE(empty.ok);
    EXPECT_EQ(missing.calls, 1);
    EXPECT_FALSE(missing.ok);
    EXPECT_TRUE(server.received.empty());
    EXPECT_EQ(get(stats().failed), 2U);
    EXPECT_EQ(get(stats().sent), 0U);
}

TEST_F(ForwarderTest, QueryShorterThanAHeaderFailsLater) {
    UdpResponder& server = udp_server(answers(kRight));
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(Bytes{0x12, 0x34, 0x01});
    EXPECT_EQ(o.calls, 0);
    ASSERT_TRUE(wait_for(o, milliseconds{2000}));
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(server.received.empty());
}

TEST_F(ForwarderTest, TooManyInFlightFailsNewQuestionsAtOnce) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    Options o = options(milliseconds{2000}, milliseconds{5000});
    o.max_in_flight = 1;
    make({server.address()}, o);
    Outcome& first = forward(make_query({.qname = "a.example.com"}));
    Outcome& second = forward(make_query({.qname = "b.example.com"}));
    EXPECT_EQ(second.calls, 0) << "the callback ran inside forward()";
    ASSERT_TRUE(run_until(
        io_, [&] { return first.calls + second.calls == 2; }, milliseconds{5000}));
    EXPECT_TRUE(first.ok);
    EXPECT_FALSE(second.ok);
    EXPECT_EQ(get(stats().overloaded), 1U);
    EXPECT_EQ(server.received.size(), 1U);
}

// Options::max_in_flight bounds "distinct questions in flight"; a query that joins one already
// in flight adds no question, socket or timer, so it should not be refused.
TEST_F(ForwarderTest, WhenFullAQueryJoiningOneInFlightIsStillCoalesced) {
    UdpResponder& server = udp_server([](UdpResponder& r, const Received& q) {
        r.reply_later(q, make_reply(q.bytes, {.a = kRight}), milliseconds{50});
    });
    Options o = options(milliseconds{2000}, milliseconds{5000});
    o.max_in_flight = 1;
    make({server.address()}, o);
    Outcome& first = forward(make_query({.id = 1, .qname = "a.example.com"}));
    Outcome& joined = forward(make_query({.id = 2, .qname = "a.example.com"}));
    ASSERT_TRUE(run_until(
        io_, [&] { return first.calls + joined.calls == 2; }, milliseconds{5000}));
    EXPECT_TRUE(first.ok);
    EXPECT_TRUE(joined.ok) << "an identical question in flight was refused as overload";
    EXPECT_EQ(get(stats().coalesced), 1U);
    EXPECT_EQ(get(stats().overloaded), 0U);
    EXPECT_EQ(server.received.size(), 1U);
}

TEST_F(ForwarderTest, CancelAllFailsEverythingInFlight) {
    UdpResponder& server = udp_server(silent());
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& a = forward(make_query({.qname = "a.example.com"}));
    Outcome& b = forward(make_query({.qname = "b.example.com"}));
    Outcome& b2 = forward(make_query({.id = 9, .qname = "b.example.com"}));
    ASSERT_TRUE(run_until(
        io_, [&] { return server.received.size() == 2; }, milliseconds{2000}));
    EXPECT_EQ(forwarder_->in_flight(), 2U);
    forwarder_->cancel_all();
    run_until(
        io_, [&] { return a.calls + b.calls + b2.calls == 3; }, milliseconds{1000});
    for (const Outcome* o : {&a, &b, &b2}) {
        EXPECT_EQ(o->calls, 1);
        EXPECT_FALSE(o->ok);
    }
    EXPECT_EQ(forwarder_->in_flight(), 0U);
    EXPECT_EQ(get(stats().failed), 2U);
    run_for_a_while(io_, milliseconds{200});
    EXPECT_EQ(a.calls, 1);
    EXPECT_EQ(b.calls, 1);
    EXPECT_EQ(b2.calls, 1);
}

TEST_F(ForwarderTest, CancelAllBeforeTheQueryStartedSendsNothing) {
    UdpResponder& server = udp_server(answers(kRight));
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    forwarder_->cancel_all();
    run_for_a_while(io_, milliseconds{200});
    EXPECT_EQ(o.calls, 1);
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(server.received.empty());
    EXPECT_EQ(get(stats().sent), 0U);
}

TEST_F(ForwarderTest, DestructorFailsQueriesInFlight) {
    UdpResponder& server = udp_server(silent());
    make({server.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(run_until(
        io_, [&] { return !server.received.empty(); }, milliseconds{2000}));
    forwarder_.reset();
    run_for_a_while(io_, milliseconds{50});
    EXPECT_EQ(o.calls, 1);
    EXPECT_FALSE(o.ok);
}

// ---- reconfigure, IPv6
// ---------------------------------------------------------------------------

TEST_F(ForwarderTest, ReconfigureSendsNewQueriesToTheNewServers) {
    UdpResponder& before = udp_server(answers(kSpoofed));
    UdpResponder& after = udp_server(answers(kRight));
    make({before.address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& first = forward(make_query());
    ASSERT_TRUE(wait_for(first));
    Options next = options(milliseconds{2000}, milliseconds{5000});
    next.routes = {Route{{after.address()}}};
    forwarder_->reconfigure(next);
    EXPECT_EQ(forwarder_->options().routes.at(0).servers.at(0), after.address());
    Outcome& second = forward(make_query());
    ASSERT_TRUE(wait_for(second));
    EXPECT_EQ(answers_of(first.reply), std::vector<Address4>{kSpoofed});
    EXPECT_EQ(answers_of(second.reply), std::vector<Address4>{kRight});
    EXPECT_EQ(second.server, text_of(after.port()));
}

TEST_F(ForwarderTest, Ipv6LoopbackServer) {
    UdpResponder* server = nullptr;
    try {
        udp_servers_.push_back(std::make_unique<UdpResponder>(
            io_, udp::endpoint(asio::ip::address_v6::loopback(), 0), answers(kRight)));
        server = udp_servers_.back().get();
    } catch (const std::system_error& e) {
        GTEST_SKIP() << "no IPv6 loopback: " << e.what();
    }
    make({server->address()}, options(milliseconds{2000}, milliseconds{5000}));
    Outcome& o = forward(make_query());
    ASSERT_TRUE(wait_for(o));
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.server, "[::1]:" + std::to_string(server->port()));
    ASSERT_EQ(server->received.size(), 1U);
    EXPECT_EQ(server->received[0].from.address(), asio::ip::address_v6::loopback());
}

}  // namespace
}  // namespace moat::upstream
