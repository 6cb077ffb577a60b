// The API's HTTP server on 127.0.0.1 with a real socket: an answer the handler defers goes out
// in request order (a pipelined request behind it waits), the peer's address reaches the
// handler, a handler that throws gets 500, and a deferred answer for a closed connection is
// dropped quietly.
//
// Client and server share one io_context driven by the test's own thread: no second thread
// contends for the scheduler's lock, so these tests also run under qemu-user (see
// tests/support/emulation.hpp for what two contending threads do there).
#include "moat/api/http_server.hpp"

#include <gtest/gtest.h>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

namespace moat::api {
namespace {

constexpr auto kPatience = std::chrono::seconds(5);

class HttpServerTest : public ::testing::Test {
protected:
    void start(Handler handler) {
        HttpServerOptions o;
        o.listen.emplace_back(asio::ip::make_address("127.0.0.1"), 0);
        server_ = std::make_unique<HttpServer>(io_, o, std::move(handler));
        ASSERT_TRUE(server_->start());
        port_ = server_->local_endpoints().front().port();
    }
    void TearDown() override {
        if (server_) {
            server_->stop();
        }
        io_.run_for(std::chrono::milliseconds(50));
    }
    /// Runs the loop until `done()` holds or the patience runs out.
    template <typename Done>
    void run_until(Done done) {
        const auto deadline = std::chrono::steady_clock::now() + kPatience;
        io_.restart();
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            io_.run_for(std::chrono::milliseconds(10));
            io_.restart();
        }
    }
    /// Connects a client socket and sends `bytes` (both asynchronously on the shared loop).
    std::shared_ptr<asio::ip::tcp::socket> send(const std::string& bytes) {
        auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
        auto payload = std::make_shared<std::string>(bytes);
        bool sent = false;
        socket->async_connect({asio::ip::make_address("127.0.0.1"), port_},
                              [socket, payload, &sent](const std::error_code& ec) {
                                  ASSERT_FALSE(ec) << ec.message();
                                  asio::async_write(
                                      *socket, asio::buffer(*payload),
                                      [payload, &sent](const std::error_code& wec, std::size_t) {
                                          ASSERT_FALSE(wec) << wec.message();
                                          sent = true;
                                      });
                              });
        run_until([&] { return sent; });
        EXPECT_TRUE(sent);
        return socket;
    }
    /// Sends `bytes` and reads until the server closes or `until` appears `count` times.
    std::string exchange(const std::string& bytes, const std::string& until, int count) {
        auto socket = send(bytes);
        std::string got;
        bool closed = false;
        std::array<char, 4096> buf{};
        std::function<void()> read_more = [&] {
            socket->async_read_some(asio::buffer(buf),
                                    [&](const std::error_code& ec, std::size_t n) {
                                        if (ec) {
                                            closed = true;
                                            return;
                                        }
                                        got.append(buf.data(), n);
                                        read_more();
                                    });
        };
        read_more();
        auto seen = [&] {
            int n = 0;
            for (std::size_t at = got.find(until); at != std::string::npos;
                 at = got.find(until, at + 1)) {
                ++n;
            }
            return n;
        };
        run_until([&] { return closed || seen() >= count; });
        socket->close();
        io_.restart();
        io_.poll();  // the cancelled read completes while `got` and `buf` still live
        return got;
    }

    asio::io_context io_;
    std::unique_ptr<HttpServer> server_;
    std::uint16_t port_ = 0;
};

http::Response text(int status, std::string body) {
    http::Response r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

TEST_F(HttpServerTest, DeferredAnswersKeepRequestOrder) {
    std::string peer;
    start([&](const http::Request& r, const Peer& p,
              const Responder& later) -> std::optional<http::Response> {
        peer = p.address.to_string();
        if (r.path == "/slow") {
            auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
            timer->async_wait(
                [timer, later](const std::error_code&) { later(text(200, "slow-answer")); });
            return std::nullopt;
        }
        return text(200, "fast-answer");
    });
    const std::string got = exchange(
        "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n", "-answer", 2);
    const auto slow = got.find("slow-answer");
    const auto fast = got.find("fast-answer");
    ASSERT_NE(slow, std::string::npos) << got;
    ASSERT_NE(fast, std::string::npos) << got;
    EXPECT_LT(slow, fast);  // the fast one waited for the slow one before it
    EXPECT_EQ(peer, "127.0.0.1");
    EXPECT_NE(got.find("X-Content-Type-Options: nosniff"), std::string::npos);
}

TEST_F(HttpServerTest, AThrowingHandlerGets500AndTheConnectionGoesOn) {
    start(
        [](const http::Request& r, const Peer&, const Responder&) -> std::optional<http::Response> {
            if (r.path == "/throw") {
                throw std::runtime_error("boom");
            }
            return text(200, "fine-answer");
        });
    const std::string got = exchange(
        "GET /throw HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1", 2);
    EXPECT_NE(got.find("HTTP/1.1 500"), std::string::npos) << got;
    EXPECT_NE(got.find("fine-answer"), std::string::npos) << got;
}

TEST_F(HttpServerTest, ADeferredAnswerAfterTheClientLeftIsDropped) {
    Responder kept;
    start([&](const http::Request&, const Peer&,
              const Responder& later) -> std::optional<http::Response> {
        kept = later;
        return std::nullopt;
    });
    auto client = send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    run_until([&] { return static_cast<bool>(kept); });
    ASSERT_TRUE(kept);
    client->close();                             // the client leaves before the answer
    io_.run_for(std::chrono::milliseconds(50));  // and the server notices
    kept(text(200, "too late"));                 // nothing to write to: dropped
    io_.restart();
    io_.run_for(std::chrono::milliseconds(50));
    // Still serving: a new client gets its (deferred) answer at once.
    kept = nullptr;
    auto second = send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    run_until([&] { return static_cast<bool>(kept); });
    ASSERT_TRUE(kept);
    kept(text(200, "in-time"));
    std::string got;
    std::array<char, 512> buf{};
    bool read = false;
    second->async_read_some(asio::buffer(buf), [&](const std::error_code& ec, std::size_t n) {
        if (!ec) {
            got.assign(buf.data(), n);
        }
        read = true;
    });
    run_until([&] { return read; });
    EXPECT_NE(got.find("in-time"), std::string::npos) << got;
}

}  // namespace
}  // namespace moat::api
