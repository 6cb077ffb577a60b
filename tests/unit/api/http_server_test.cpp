// The API's HTTP server on 127.0.0.1 with a real socket: an answer the handler defers goes out
// in request order (a pipelined request behind it waits), the peer's address reaches the
// handler, a handler that throws gets 500, and a deferred answer for a closed connection is
// dropped quietly.
#include "moat/api/http_server.hpp"

#include <gtest/gtest.h>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <future>
#include <thread>

namespace moat::api {
namespace {

class HttpServerTest : public ::testing::Test {
protected:
    void start(Handler handler) {
        HttpServerOptions o;
        o.listen.emplace_back(asio::ip::make_address("127.0.0.1"), 0);
        server_ = std::make_unique<HttpServer>(io_, o, std::move(handler));
        ASSERT_TRUE(server_->start());
        port_ = server_->local_endpoints().front().port();
        thread_ = std::thread([this] { io_.run(); });
    }
    void TearDown() override {
        asio::post(io_, [this] { server_->stop(); });
        work_.reset();
        io_.stop();
        if (thread_.joinable()) {
            thread_.join();
        }
    }
    /// Sends `bytes` and reads until the server closes or `until` appears `count` times.
    std::string exchange(const std::string& bytes, const std::string& until, int count) {
        asio::io_context client;
        asio::ip::tcp::socket s(client);
        s.connect({asio::ip::make_address("127.0.0.1"), port_});
        asio::write(s, asio::buffer(bytes));
        std::string got;
        std::array<char, 4096> buf{};
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        auto seen = [&] {
            int n = 0;
            for (std::size_t at = got.find(until); at != std::string::npos;
                 at = got.find(until, at + 1)) {
                ++n;
            }
            return n;
        };
        while (seen() < count && std::chrono::steady_clock::now() < deadline) {
            std::error_code ec;
            const std::size_t n = s.read_some(asio::buffer(buf), ec);
            if (ec) {
                break;
            }
            got.append(buf.data(), n);
        }
        return got;
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    std::unique_ptr<HttpServer> server_;
    std::uint16_t port_ = 0;
    std::thread thread_;
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
    std::promise<Responder> kept;
    auto future = kept.get_future();
    start([&](const http::Request&, const Peer&,
              const Responder& later) -> std::optional<http::Response> {
        kept.set_value(later);
        return std::nullopt;
    });
    {
        asio::io_context client;
        asio::ip::tcp::socket s(client);
        s.connect({asio::ip::make_address("127.0.0.1"), port_});
        asio::write(s, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
        ASSERT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    }  // the client closes before the answer
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Responder later = future.get();
    std::promise<void> done;
    asio::post(io_, [&] {
        later(text(200, "too late"));
        done.set_value();
    });
    EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
}

}  // namespace
}  // namespace moat::api
