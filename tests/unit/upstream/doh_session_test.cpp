// DohSession: the DNS-over-HTTPS protocol without a connection, against the real HTTP/2 server
// session (moat::http::H2ServerSession) in memory. Queries go out as POSTs with ID 0; answers come
// back with the query's own ID, failures with their reason; and a connection dropped from inside
// an answer's delivery keeps the HTTP/2 session alive until it returns, its later streams
// reaching no query. (The asan stage runs these: a session destroyed from its own handler is a
// use-after-free there.)
#include "doh_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "moat/core/bytes.hpp"
#include "moat/http/h2_session.hpp"

namespace moat::upstream {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::string_view kDnsMessage = "application/dns-message";

/// A 12-octet header with `id`, then `body` (enough to tell messages apart).
Bytes message(std::uint16_t id, const std::string& body = {}) {
    // Sized once and filled in place: growing it by insert() trips GCC 12's
    // -Wstringop-overread false positive under -O3 with LTO (GCC bugs 100366, 106199).
    Bytes m(12 + body.size(), 0);
    store_u16(m.data(), id);
    std::copy(body.begin(), body.end(), m.begin() + 12);
    return m;
}

/// What a session has to write, all of it.
template <typename Session>
Bytes drain_output(Session& s) {
    Bytes out;
    while (s.wants_write()) {
        const auto chunk = s.pending_output();
        if (chunk.empty()) {
            break;
        }
        out.insert(out.end(), chunk.begin(), chunk.end());
        s.consume_output(chunk.size());
    }
    return out;
}

/// The DoH server: records each request and answers when told.
struct Server {
    struct Request {
        std::uint32_t stream;
        std::string method;
        std::string path;
        std::string content_type;
        std::string accept;
        Bytes body;
    };
    std::vector<Request> requests;
    http::H2ServerSession h2;

    explicit Server(const http::H2Limits& limits = {})
        : h2(limits, [this](std::uint32_t stream, const http::H2Request& r) {
              requests.push_back({stream, std::string(r.method), std::string(r.path),
                                  std::string(r.content_type), std::string(r.accept.value_or("")),
                                  Bytes(r.body.begin(), r.body.end())});
          }) {
        h2.start();
    }

    /// Reads what the client wrote.
    void read(DohSession& client) { ASSERT_TRUE(h2.receive(drain_output(client)).has_value()); }

    /// Answers request `i`: `status`, a DNS message with ID 0 and `body`.
    void answer(std::size_t i, int status, const Bytes& dns) {
        const std::vector<http::H2Header> headers{{"content-type", kDnsMessage}};
        ASSERT_TRUE(h2.respond(requests.at(i).stream, status, headers, dns));
    }

    Bytes output() { return drain_output(h2); }
};

struct Delivered {
    std::uint16_t query_id;
    std::string error;
    Bytes reply;
};

/// An exchange for a query of `id` carrying `tag`, whose outcome is recorded in `out`.
EncryptedExchange exchange(std::uint16_t id, const std::string& tag, std::vector<Delivered>& out) {
    EncryptedExchange x;
    x.query = message(id, tag);
    x.done = [&out, id](const std::string& error, std::span<const std::uint8_t> reply) {
        out.push_back({id, error, Bytes(reply.begin(), reply.end())});
    };
    return x;
}

DohSession::Deliver run_done() {
    return [](EncryptedExchange& x, std::string_view error, std::span<const std::uint8_t> reply) {
        x.done(std::string(error), reply);
    };
}

/// A client session started against `server`, the preface and both SETTINGS exchanged.
void connect(DohSession& client, Server& server) {
    client.start("dns.test:8443", "/dns-query");
    server.read(client);
    ASSERT_TRUE(client.receive(server.output(), run_done()).has_value());
    server.read(client);  // the SETTINGS acknowledgement
}

/// A session connected to a server, both SETTINGS exchanged; outcomes recorded in `got_`.
class DohSessionTest : public ::testing::Test {
protected:
    void SetUp() override { connect(client_, server_); }

    /// Sends queries with IDs 1..n, each carrying "q", and has the server read them.
    void send_queries(std::uint16_t n) {
        for (std::uint16_t id = 1; id <= n; ++id) {
            EncryptedExchange x = exchange(id, "q", got_);
            ASSERT_TRUE(client_.send(x));
        }
        server_.read(client_);
        ASSERT_EQ(server_.requests.size(), n);
    }

    /// Sends queries with IDs 1..n and has the server answer each with 200 and a message
    /// carrying "a" and its index; returns the server's bytes, not yet read by the client.
    Bytes answered_queries(std::uint16_t n) {
        send_queries(n);
        for (std::size_t i = 0; i < n; ++i) {
            server_.answer(i, 200, message(0, "a" + std::to_string(i)));
        }
        return server_.output();
    }

    DohSession client_;
    Server server_;
    std::vector<Delivered> got_;
};

TEST_F(DohSessionTest, AQueryGoesOutAsAPostWithIdZeroAndItsAnswerGetsTheQueryId) {
    EncryptedExchange x = exchange(0xBEEF, "question", got_);
    ASSERT_TRUE(client_.send(x));
    EXPECT_TRUE(client_.in_flight());
    server_.read(client_);
    ASSERT_EQ(server_.requests.size(), 1U);
    const Server::Request& r = server_.requests[0];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/dns-query");
    EXPECT_EQ(r.content_type, kDnsMessage);
    EXPECT_EQ(r.accept, kDnsMessage);
    EXPECT_EQ(r.body, message(0, "question")) << "RFC 8484 §4.1: ID 0, the rest as given";

    server_.answer(0, 200, message(0, "answer"));
    ASSERT_TRUE(client_.receive(server_.output(), run_done()).has_value());
    ASSERT_EQ(got_.size(), 1U);
    EXPECT_EQ(got_[0].error, "");
    EXPECT_EQ(got_[0].reply, message(0xBEEF, "answer"));
    EXPECT_FALSE(client_.in_flight());
}

TEST_F(DohSessionTest, AnHttpErrorOrAShortBodyIsDeliveredAsAFailure) {
    send_queries(3);
    server_.answer(0, 503, {});
    server_.answer(1, 200, Bytes{1, 2, 3, 4, 5});
    server_.answer(2, 200, message(0, "fine"));
    ASSERT_TRUE(client_.receive(server_.output(), run_done()).has_value());
    ASSERT_EQ(got_.size(), 3U);
    EXPECT_EQ(got_[0].error, "HTTP status 503");
    EXPECT_TRUE(got_[0].reply.empty());
    EXPECT_EQ(got_[1].error, "an answer of 5 octets");
    EXPECT_TRUE(got_[1].reply.empty());
    EXPECT_EQ(got_[2].error, "");
    EXPECT_EQ(got_[2].reply, message(3, "fine"));
}

TEST_F(DohSessionTest, ADropInsideADeliveryKeepsTheSessionUntilReceiveReturns) {
    const Bytes answers = answered_queries(3);
    std::vector<EncryptedExchange> taken;
    std::size_t deliveries = 0;
    const auto received = client_.receive(answers, [&](EncryptedExchange& x, std::string_view error,
                                                       std::span<const std::uint8_t> reply) {
        ++deliveries;
        x.done(std::string(error), reply);
        taken = client_.take_in_flight();  // the connection drops from the completion
    });
    EXPECT_TRUE(received.has_value());
    EXPECT_EQ(deliveries, 1U) << "the answers after the drop reach no query";
    ASSERT_EQ(got_.size(), 1U);
    EXPECT_EQ(got_[0].reply, message(1, "a0")) << "the answer being delivered stays readable";
    ASSERT_EQ(taken.size(), 2U) << "the other two are handed back for a retry";
    EXPECT_EQ(taken[0].query, message(2, "q"));
    EXPECT_EQ(taken[1].query, message(3, "q"));
    EXPECT_FALSE(client_.started());
    EXPECT_FALSE(client_.in_flight());
}

TEST_F(DohSessionTest, ANewSessionStartedInsideADeliveryGetsNothingOfTheOldOne) {
    const Bytes answers = answered_queries(2);
    std::vector<EncryptedExchange> retry;
    std::size_t deliveries = 0;
    const auto received = client_.receive(answers, [&](EncryptedExchange& x, std::string_view error,
                                                       std::span<const std::uint8_t> reply) {
        ++deliveries;
        x.done(std::string(error), reply);
        retry = client_.take_in_flight();
        client_.start("dns.test:8443", "/dns-query");  // reconnected at once
        EXPECT_FALSE(client_.send(retry.at(0))) << "streams open after receive() returns";
    });
    EXPECT_TRUE(received.has_value());
    EXPECT_EQ(deliveries, 1U);
    ASSERT_EQ(retry.size(), 1U);
    EXPECT_EQ(retry[0].query, message(2, "q")) << "send() left it as it was";

    // The retry goes out on the new session, on stream 1 as the dropped session's first query
    // did; only the new server's answer completes it.
    Server fresh;
    ASSERT_TRUE(client_.send(retry[0]));
    fresh.read(client_);
    ASSERT_EQ(fresh.requests.size(), 1U);
    EXPECT_EQ(fresh.requests[0].stream, server_.requests[0].stream);
    fresh.answer(0, 200, message(0, "retried"));
    ASSERT_TRUE(client_.receive(fresh.output(), run_done()).has_value());
    ASSERT_EQ(got_.size(), 2U);
    EXPECT_EQ(got_[1].reply, message(2, "retried"));
}

TEST_F(DohSessionTest, AQuerySentFromADeliveryWaitsForReceiveToReturn) {
    const Bytes answer = answered_queries(1);
    EncryptedExchange next = exchange(2, "next", got_);
    bool sent_inside = true;
    ASSERT_TRUE(client_
                    .receive(answer,
                             [&](EncryptedExchange& x, std::string_view error,
                                 std::span<const std::uint8_t> reply) {
                                 x.done(std::string(error), reply);
                                 sent_inside = client_.send(next);
                             })
                    .has_value());
    EXPECT_FALSE(sent_inside);
    EXPECT_EQ(next.query, message(2, "next")) << "a refused exchange is left as it was";
    EXPECT_TRUE(client_.send(next));
    server_.read(client_);
    EXPECT_EQ(server_.requests.size(), 2U);
}

TEST_F(DohSessionTest, ReceiveCalledFromItsOwnDeliveryFailsTheConnection) {
    const Bytes answer = answered_queries(1);
    const Bytes nothing;
    const auto received = client_.receive(
        answer, [&](EncryptedExchange&, std::string_view, std::span<const std::uint8_t>) {
            (void)client_.receive(nothing, run_done());
        });
    ASSERT_FALSE(received.has_value());
    EXPECT_NE(received.error().find("called again from its own deliver"), std::string::npos)
        << received.error();
}

TEST_F(DohSessionTest, BytesThatAreNotHttp2FailTheConnectionAndKeepTheQueries) {
    send_queries(1);
    const std::string garbage = "HTTP/1.1 400 Bad Request\r\n\r\n";
    const Bytes bytes(garbage.begin(), garbage.end());
    EXPECT_FALSE(client_.receive(bytes, run_done()).has_value());
    EXPECT_TRUE(got_.empty());
    const std::vector<EncryptedExchange> taken = client_.take_in_flight();
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].query, message(1, "q"));
}

TEST_F(DohSessionTest, AGoawaySpendsTheSessionOnceItsStreamsAreAnswered) {
    send_queries(1);
    server_.h2.shutdown();
    ASSERT_TRUE(client_.receive(server_.output(), run_done()).has_value());
    EXPECT_FALSE(client_.spent()) << "its stream is still to be answered";
    EncryptedExchange refused = exchange(2, "q", got_);
    EXPECT_FALSE(client_.send(refused)) << "no new stream on a session going away";
    server_.read(client_);
    server_.answer(0, 200, message(0, "last"));
    ASSERT_TRUE(client_.receive(server_.output(), run_done()).has_value());
    ASSERT_EQ(got_.size(), 1U);
    EXPECT_EQ(got_[0].reply, message(1, "last"));
    EXPECT_TRUE(client_.spent());
}

TEST(DohSession, TheServersStreamLimitHoldsQueriesBack) {
    DohSession client;
    http::H2Limits limits;
    limits.max_concurrent_streams = 2;
    Server server(limits);
    connect(client, server);
    std::vector<Delivered> got;
    EncryptedExchange a = exchange(1, "q", got);
    EncryptedExchange b = exchange(2, "q", got);
    EncryptedExchange c = exchange(3, "q", got);
    EXPECT_TRUE(client.send(a));
    EXPECT_TRUE(client.send(b));
    EXPECT_FALSE(client.send(c));
    EXPECT_EQ(client.in_flight_count(), 2U);
}

TEST(DohSession, NothingGoesOutBeforeStartAndStartWithQueriesInFlightIsRefused) {
    DohSession client;
    std::vector<Delivered> got;
    EncryptedExchange x = exchange(1, "q", got);
    EXPECT_FALSE(client.send(x));
    EXPECT_FALSE(client.receive(message(0), run_done()).has_value());
    EXPECT_TRUE(client.pending_output().empty());
    client.start("dns.test", "/dns-query");
    ASSERT_TRUE(client.send(x));
    EXPECT_THROW(client.start("dns.test", "/dns-query"), std::logic_error);
    EXPECT_TRUE(client.in_flight()) << "the refused start() lost nothing";
}

}  // namespace
}  // namespace moat::upstream
