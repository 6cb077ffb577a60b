// The HTTP/2 server session against a real nghttp2 client session, bytes pumped both ways in
// memory: DoH GET and POST, answers from inside the handler and later, out of order, after the
// client reset the stream; the limits (body, declared length, header list, concurrent streams);
// lowercase names; a bad preface, a protocol error and a failing handler; graceful shutdown.
#include "moat/http/h2_session.hpp"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace moat::http {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

Bytes filled(std::size_t size) {
    Bytes b(size);
    for (std::size_t i = 0; i < size; ++i) {
        b[i] = static_cast<std::uint8_t>(i * 7U);
    }
    return b;
}

nghttp2_nv nv(std::string_view name, std::string_view value) {
    return {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
            const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())),
            name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

// ---- A client: nghttp2's client session, recording what comes back per stream ----

struct ClientStream {
    std::map<std::string, std::string> headers;  ///< response fields, :status included
    Bytes body;
    bool closed = false;
    std::uint32_t close_code = 0;
};

struct Upload {
    Bytes bytes;
    std::size_t sent = 0;
};

struct Goaway {
    std::int32_t last_stream_id = 0;
    std::uint32_t error_code = 0;
};

class Client {
public:
    Client() {
        nghttp2_session_callbacks* cb = nullptr;
        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_callbacks_set_on_header_callback(
            cb, [](nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                   std::size_t name_size, const std::uint8_t* value, std::size_t value_size,
                   std::uint8_t, void* self) {
                static_cast<Client*>(self)->streams[frame->hd.stream_id].headers.emplace(
                    std::string(reinterpret_cast<const char*>(name), name_size),
                    std::string(reinterpret_cast<const char*>(value), value_size));
                return 0;
            });
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
            cb, [](nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                   std::size_t size, void* self) {
                Bytes& body = static_cast<Client*>(self)->streams[id].body;
                body.insert(body.end(), data, data + size);
                return 0;
            });
        nghttp2_session_callbacks_set_on_stream_close_callback(
            cb, [](nghttp2_session*, std::int32_t id, std::uint32_t code, void* self) {
                ClientStream& s = static_cast<Client*>(self)->streams[id];
                s.closed = true;
                s.close_code = code;
                return 0;
            });
        nghttp2_session_callbacks_set_on_frame_recv_callback(
            cb, [](nghttp2_session*, const nghttp2_frame* frame, void* self) {
                if (frame->hd.type == NGHTTP2_GOAWAY) {
                    static_cast<Client*>(self)->goaways.push_back(
                        {frame->goaway.last_stream_id, frame->goaway.error_code});
                }
                return 0;
            });
        nghttp2_session_client_new(&session, cb, this);
        nghttp2_session_callbacks_del(cb);
        nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, nullptr, 0);
    }
    ~Client() { nghttp2_session_del(session); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    std::int32_t get(std::string_view path, std::vector<nghttp2_nv> extra = {}) {
        return request("GET", path, std::move(extra), nullptr);
    }

    std::int32_t post(std::string_view path, Bytes body, std::vector<nghttp2_nv> extra = {}) {
        extra.push_back(nv("content-type", "application/dns-message"));
        uploads_.push_back(std::make_unique<Upload>(Upload{std::move(body), 0}));
        nghttp2_data_provider provider{};
        provider.source.ptr = uploads_.back().get();
        provider.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf,
                                    std::size_t length, std::uint32_t* flags,
                                    nghttp2_data_source* source, void*) -> ssize_t {
            auto& up = *static_cast<Upload*>(source->ptr);
            const std::size_t n = std::min(length, up.bytes.size() - up.sent);
            std::memcpy(buf, up.bytes.data() + up.sent, n);
            up.sent += n;
            if (up.sent == up.bytes.size()) {
                *flags |= NGHTTP2_DATA_FLAG_EOF;
            }
            return static_cast<ssize_t>(n);
        };
        return request("POST", path, std::move(extra), &provider);
    }

    void reset(std::int32_t id) {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    }

    Bytes take_output() {
        Bytes out;
        const std::uint8_t* data = nullptr;
        for (ssize_t n; (n = nghttp2_session_mem_send(session, &data)) > 0;) {
            out.insert(out.end(), data, data + n);
        }
        return out;
    }

    void receive(const Bytes& bytes) {
        const ssize_t n = nghttp2_session_mem_recv(session, bytes.data(), bytes.size());
        EXPECT_EQ(n, static_cast<ssize_t>(bytes.size())) << nghttp2_strerror(static_cast<int>(n));
    }

    /// Bytes of the `n`th post()'s body handed to nghttp2 so far.
    [[nodiscard]] std::size_t uploaded(std::size_t n) const { return uploads_.at(n)->sent; }

    nghttp2_session* session = nullptr;
    std::map<std::int32_t, ClientStream> streams;
    std::vector<Goaway> goaways;

private:
    std::int32_t request(std::string_view method, std::string_view path,
                         std::vector<nghttp2_nv> extra, const nghttp2_data_provider* provider) {
        std::vector<nghttp2_nv> h{nv(":method", method), nv(":scheme", "https"),
                                  nv(":authority", "dns.lan"), nv(":path", path)};
        h.insert(h.end(), extra.begin(), extra.end());
        const std::int32_t id =
            nghttp2_submit_request(session, nullptr, h.data(), h.size(), provider, nullptr);
        EXPECT_GT(id, 0);
        return id;
    }

    std::vector<std::unique_ptr<Upload>> uploads_;
};

// ---- The fixture: a server session, what reached its handler, the pump ----

struct Received {
    std::uint32_t stream_id = 0;
    std::string method;
    std::string path;
    std::string content_type;
    std::optional<std::string> accept;
    Bytes body;
};

constexpr std::string_view kDnsGet = "/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB";

class H2SessionTest : public ::testing::Test {
protected:
    void make_server(const H2Limits& limits = {}) {
        server_ =
            std::make_unique<H2ServerSession>(limits, [this](std::uint32_t id, const H2Request& r) {
                received_.push_back(
                    {id, std::string(r.method), std::string(r.path), std::string(r.content_type),
                     r.accept ? std::optional<std::string>(*r.accept) : std::nullopt,
                     Bytes(r.body.begin(), r.body.end())});
                if (on_request_) {
                    on_request_(id);
                }
            });
        server_->start();
    }
    void SetUp() override { make_server(); }

    /// Moves bytes both ways until neither side has any. A receive() error is kept, not fatal.
    void pump() {
        for (int round = 0; round < 1000; ++round) {
            const Bytes to_server = client_.take_output();
            if (!to_server.empty() && !receive_error_) {
                if (auto r = server_->receive(to_server); !r) {
                    receive_error_ = r.error();
                }
            }
            const auto out = server_->pending_output();
            const Bytes to_client(out.begin(), out.end());
            server_->consume_output(out.size());
            if (!to_client.empty()) {
                client_.receive(to_client);
            }
            if (to_server.empty() && to_client.empty()) {
                return;
            }
        }
        FAIL() << "the two sessions never went quiet";
    }

    bool answer(std::uint32_t id, int status, const Bytes& body) {
        const std::array<H2Header, 2> headers{
            {{"Content-Type", "application/dns-message"}, {"Cache-Control", "max-age=300"}}};
        return server_->respond(id, status, headers, body);
    }

    Client client_;
    std::unique_ptr<H2ServerSession> server_;
    std::vector<Received> received_;
    std::function<void(std::uint32_t)> on_request_;
    std::optional<std::string> receive_error_;
};

TEST_F(H2SessionTest, AnswersADohGet) {
    const std::int32_t id = client_.get(kDnsGet, {nv("accept", "application/dns-message")});
    pump();
    EXPECT_EQ(nghttp2_session_get_remote_settings(client_.session,
                                                  NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS),
              100U);
    ASSERT_EQ(received_.size(), 1U);
    const Received& r = received_[0];
    EXPECT_EQ(r.stream_id, static_cast<std::uint32_t>(id));
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.path, kDnsGet);
    EXPECT_EQ(r.accept, "application/dns-message");
    EXPECT_EQ(r.content_type, "");
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(server_->open_streams(), 1U);

    const Bytes answer_bytes = filled(45);
    ASSERT_TRUE(answer(r.stream_id, 200, answer_bytes));
    pump();
    const ClientStream& s = client_.streams[id];
    EXPECT_TRUE(s.closed);
    EXPECT_EQ(s.close_code, NGHTTP2_NO_ERROR);
    EXPECT_EQ(s.headers.at(":status"), "200");
    EXPECT_EQ(s.headers.at("content-type"), "application/dns-message");
    EXPECT_EQ(s.headers.at("cache-control"), "max-age=300");
    EXPECT_EQ(s.headers.at("content-length"), "45");
    EXPECT_EQ(s.body, answer_bytes);
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_FALSE(server_->wants_write());
    EXPECT_TRUE(server_->wants_read());
    EXPECT_FALSE(server_->finished());
    EXPECT_FALSE(answer(r.stream_id, 200, answer_bytes));  // answered and closed
}

TEST_F(H2SessionTest, AnswersADohPostFromInsideTheHandler) {
    on_request_ = [this](std::uint32_t id) { EXPECT_TRUE(answer(id, 200, bytes_of("reply"))); };
    const Bytes query = filled(33);
    const std::int32_t id = client_.post("/dns-query", query);
    pump();
    ASSERT_EQ(received_.size(), 1U);
    EXPECT_EQ(received_[0].method, "POST");
    EXPECT_EQ(received_[0].path, "/dns-query");
    EXPECT_EQ(received_[0].content_type, "application/dns-message");
    EXPECT_FALSE(received_[0].accept);
    EXPECT_EQ(received_[0].body, query);
    EXPECT_EQ(client_.streams[id].headers.at(":status"), "200");
    EXPECT_EQ(client_.streams[id].body, bytes_of("reply"));
    EXPECT_EQ(server_->open_streams(), 0U);
}

TEST_F(H2SessionTest, ConcurrentStreamsAnsweredOutOfOrder) {
    const std::array<std::int32_t, 3> ids{client_.get("/dns-query?dns=a"),
                                          client_.get("/dns-query?dns=b"),
                                          client_.get("/dns-query?dns=c")};
    pump();
    ASSERT_EQ(received_.size(), 3U);
    EXPECT_EQ(server_->open_streams(), 3U);
    EXPECT_TRUE(answer(static_cast<std::uint32_t>(ids[2]), 200, bytes_of("third")));
    EXPECT_TRUE(answer(static_cast<std::uint32_t>(ids[0]), 200, bytes_of("first")));
    pump();
    EXPECT_EQ(server_->open_streams(), 1U);
    EXPECT_TRUE(answer(static_cast<std::uint32_t>(ids[1]), 404, {}));
    pump();
    EXPECT_EQ(client_.streams[ids[0]].body, bytes_of("first"));
    EXPECT_EQ(client_.streams[ids[1]].headers.at(":status"), "404");
    EXPECT_EQ(client_.streams[ids[1]].headers.at("content-length"), "0");
    EXPECT_TRUE(client_.streams[ids[1]].body.empty());
    EXPECT_EQ(client_.streams[ids[2]].body, bytes_of("third"));
    EXPECT_EQ(server_->open_streams(), 0U);
}

TEST_F(H2SessionTest, DelayedAnswerAfterOtherTraffic) {
    const std::int32_t slow = client_.get("/dns-query?dns=slow");
    pump();
    on_request_ = [this](std::uint32_t id) { answer(id, 200, bytes_of("fast")); };
    const std::int32_t fast = client_.post("/dns-query", filled(40));
    nghttp2_submit_ping(client_.session, NGHTTP2_FLAG_NONE, nullptr);
    pump();
    EXPECT_EQ(client_.streams[fast].body, bytes_of("fast"));
    EXPECT_FALSE(client_.streams[slow].closed);
    EXPECT_EQ(server_->open_streams(), 1U);

    const Bytes late = filled(300);
    EXPECT_TRUE(answer(static_cast<std::uint32_t>(slow), 200, late));
    pump();
    EXPECT_EQ(client_.streams[slow].body, late);
    EXPECT_EQ(server_->open_streams(), 0U);
}

TEST_F(H2SessionTest, AnswerAfterTheClientResetIsDropped) {
    const std::int32_t id = client_.get(kDnsGet);
    pump();
    client_.reset(id);
    pump();
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_FALSE(answer(static_cast<std::uint32_t>(id), 200, filled(50)));
    EXPECT_FALSE(server_->respond(999, 200, {}, {}));  // never opened
    pump();
    EXPECT_TRUE(client_.streams[id].headers.empty());

    // A reset that arrives after the answer was queued, before it was written.
    const std::int32_t id2 = client_.get(kDnsGet);
    pump();
    EXPECT_TRUE(answer(static_cast<std::uint32_t>(id2), 200, filled(20000)));
    client_.reset(id2);
    ASSERT_TRUE(server_->receive(client_.take_output()));
    EXPECT_EQ(server_->open_streams(), 0U);
    pump();
    EXPECT_TRUE(client_.streams[id2].body.empty());

    // The connection is still fine.
    on_request_ = [this](std::uint32_t i) { answer(i, 200, bytes_of("ok")); };
    const std::int32_t id3 = client_.get(kDnsGet);
    pump();
    EXPECT_EQ(client_.streams[id3].body, bytes_of("ok"));
    EXPECT_FALSE(receive_error_);
}

TEST_F(H2SessionTest, BodyAtTheCapIsTakenAndOverItGets413) {
    H2Limits limits;
    limits.max_request_body_bytes = 100;
    make_server(limits);
    on_request_ = [this](std::uint32_t id) { answer(id, 200, bytes_of("ok")); };
    const std::int32_t at_cap = client_.post("/dns-query", filled(100));
    const std::int32_t over = client_.post("/dns-query", filled(101));
    pump();
    ASSERT_EQ(received_.size(), 1U);
    EXPECT_EQ(received_[0].stream_id, static_cast<std::uint32_t>(at_cap));
    EXPECT_EQ(client_.streams[at_cap].headers.at(":status"), "200");
    EXPECT_EQ(client_.streams[over].headers.at(":status"), "413");
    EXPECT_EQ(client_.streams[over].headers.at("content-length"), "0");
    EXPECT_TRUE(client_.streams[over].closed);
    EXPECT_EQ(server_->open_streams(), 0U);
}

TEST_F(H2SessionTest, UploadsOverTheCapAre413AndStoppedWithNoError) {
    H2Limits limits;
    limits.max_request_body_bytes = 1000;
    make_server(limits);
    // 70,000 bytes outgrow the 65,535-byte windows: the client is still sending when the 413
    // goes out, and the RST_STREAM(NO_ERROR) after it ends the upload. One body goes over the
    // cap as it arrives, the other declares its length up front and is refused before any DATA.
    const std::int32_t undeclared = client_.post("/dns-query", filled(70000));
    const std::int32_t declared =
        client_.post("/dns-query", filled(70000), {nv("content-length", "70000")});
    pump();
    EXPECT_TRUE(received_.empty());
    for (const std::int32_t id : {undeclared, declared}) {
        const ClientStream& s = client_.streams[id];
        EXPECT_EQ(s.headers.at(":status"), "413") << id;
        EXPECT_TRUE(s.closed) << id;
        EXPECT_EQ(s.close_code, NGHTTP2_NO_ERROR) << id;
    }
    EXPECT_LT(client_.uploaded(0), 70000U);
    EXPECT_LT(client_.uploaded(1), 70000U);
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_FALSE(receive_error_);
}

TEST_F(H2SessionTest, HeaderListOverTheLimitGets431) {
    H2Limits limits;
    limits.max_header_list_bytes = 512;
    make_server(limits);
    const std::string pad(600, 'x');
    const std::int32_t id = client_.get(kDnsGet, {nv("x-pad", pad)});
    pump();
    EXPECT_TRUE(received_.empty());
    EXPECT_EQ(client_.streams[id].headers.at(":status"), "431");
    EXPECT_EQ(
        nghttp2_session_get_remote_settings(client_.session, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE),
        512U);
}

TEST_F(H2SessionTest, UppercaseRequestFieldNamesResetTheStream) {
    // nghttp2 lowercases the names it copies; NO_COPY_NAME sends this one as written.
    nghttp2_nv upper = nv("Accept", "application/dns-message");
    upper.flags = NGHTTP2_NV_FLAG_NO_COPY_NAME;
    const std::int32_t id = client_.get(kDnsGet, {upper});
    pump();
    EXPECT_TRUE(received_.empty());
    EXPECT_TRUE(client_.streams[id].closed);
    EXPECT_EQ(client_.streams[id].close_code, NGHTTP2_PROTOCOL_ERROR);
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_FALSE(receive_error_);
}

TEST_F(H2SessionTest, StreamsOverTheLimitAreRefused) {
    H2Limits limits;
    limits.max_concurrent_streams = 2;
    make_server(limits);
    // All three leave before the client has seen the server's SETTINGS.
    const std::array<std::int32_t, 3> ids{client_.get("/a"), client_.get("/b"), client_.get("/c")};
    pump();
    EXPECT_EQ(received_.size(), 2U);
    EXPECT_EQ(server_->open_streams(), 2U);
    EXPECT_TRUE(client_.streams[ids[2]].closed);
    EXPECT_EQ(client_.streams[ids[2]].close_code, NGHTTP2_REFUSED_STREAM);
}

TEST_F(H2SessionTest, PartialWritesKeepTheRest) {
    const std::int32_t id = client_.get(kDnsGet);
    pump();
    answer(static_cast<std::uint32_t>(id), 200, filled(1000));
    const auto first = server_->pending_output();
    ASSERT_GT(first.size(), 10U);
    const Bytes whole(first.begin(), first.end());
    server_->consume_output(10);
    const auto rest = server_->pending_output();
    EXPECT_EQ(Bytes(rest.begin(), rest.end()), Bytes(whole.begin() + 10, whole.end()));
    server_->consume_output(rest.size());
    EXPECT_FALSE(server_->wants_write());
}

TEST_F(H2SessionTest, GarbageInsteadOfThePrefaceFails) {
    const auto r = server_->receive(bytes_of("GET / HTTP/1.1\r\nHost: dns.lan\r\n\r\n"));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("h2:"), std::string::npos) << r.error();
    EXPECT_FALSE(server_->wants_read());
    server_->consume_output(server_->pending_output().size());
    EXPECT_TRUE(server_->finished());
    EXPECT_FALSE(server_->receive(bytes_of("more")));
}

TEST_F(H2SessionTest, ProtocolErrorIsAnsweredWithGoaway) {
    pump();
    // A DATA frame on stream 0 is a connection error (RFC 9113 §6.1).
    ASSERT_TRUE(server_->receive(Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0}));
    const auto out = server_->pending_output();
    client_.receive(Bytes(out.begin(), out.end()));
    server_->consume_output(out.size());
    ASSERT_EQ(client_.goaways.size(), 1U);
    EXPECT_EQ(client_.goaways[0].error_code, NGHTTP2_PROTOCOL_ERROR);
    EXPECT_TRUE(server_->finished());
    EXPECT_FALSE(server_->receive(Bytes{0}));
}

TEST_F(H2SessionTest, HandlerExceptionFailsTheConnection) {
    on_request_ = [](std::uint32_t) { throw std::runtime_error("boom"); };
    client_.get(kDnsGet);
    pump();
    ASSERT_TRUE(receive_error_);
    EXPECT_NE(receive_error_->find("boom"), std::string::npos) << *receive_error_;
    ASSERT_FALSE(client_.goaways.empty());
    EXPECT_EQ(client_.goaways.back().error_code, NGHTTP2_INTERNAL_ERROR);
    EXPECT_TRUE(server_->finished());
}

TEST_F(H2SessionTest, GracefulShutdownWaitsForOpenStreams) {
    const std::int32_t id = client_.get(kDnsGet);
    pump();
    server_->shutdown();
    pump();
    // The notice, then (after the PING's round trip) the last stream processed.
    ASSERT_EQ(client_.goaways.size(), 2U);
    EXPECT_EQ(client_.goaways[0].last_stream_id, 0x7fffffff);
    EXPECT_EQ(client_.goaways[1].last_stream_id, id);
    EXPECT_EQ(client_.goaways[1].error_code, NGHTTP2_NO_ERROR);
    EXPECT_FALSE(server_->finished());
    EXPECT_EQ(server_->open_streams(), 1U);

    EXPECT_TRUE(answer(static_cast<std::uint32_t>(id), 200, bytes_of("last")));
    pump();
    EXPECT_EQ(client_.streams[id].body, bytes_of("last"));
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_TRUE(server_->finished());
    EXPECT_FALSE(receive_error_);
}

TEST_F(H2SessionTest, GracefulShutdownOfAnIdleConnection) {
    pump();
    server_->shutdown();
    server_->shutdown();  // idempotent
    EXPECT_TRUE(server_->wants_write());
    pump();
    // An idle nghttp2 client stops reading after the first GOAWAY (it would close); it still
    // acks the PING, so the server sends its last GOAWAY and is done.
    ASSERT_FALSE(client_.goaways.empty());
    EXPECT_EQ(client_.goaways[0].error_code, NGHTTP2_NO_ERROR);
    EXPECT_EQ(server_->open_streams(), 0U);
    EXPECT_TRUE(server_->finished());
}

}  // namespace
}  // namespace moat::http
