// The HTTP/2 client session against a real server, bytes pumped both ways in memory: our own
// H2ServerSession for DoH POST and GET, concurrency and its limits, refused streams, a graceful
// GOAWAY, the body cap, fail_all() and garbage; a raw nghttp2 server for what ours never sends
// (resets, a GOAWAY below open streams, malformed and informational responses, big headers).
// Every test checks the handler ran once per stream and only from receive() or fail_all().
#include "moat/http/h2_client_session.hpp"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moat/http/h2_session.hpp"

namespace moat::http {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

Bytes filled(std::size_t size, std::uint8_t seed = 0) {
    Bytes b(size);
    for (std::size_t i = 0; i < size; ++i) {
        b[i] = static_cast<std::uint8_t>(seed + i * 7U);
    }
    return b;
}

/// A 33-byte DNS query: id 0x1234, RD, one question www.example.com A IN.
Bytes dns_query() {
    Bytes q{0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    for (const std::string_view label : {"www", "example", "com"}) {
        q.push_back(static_cast<std::uint8_t>(label.size()));
        q.insert(q.end(), label.begin(), label.end());
    }
    q.insert(q.end(), {0x00, 0x00, 0x01, 0x00, 0x01});
    return q;
}

nghttp2_nv nv(std::string_view name, std::string_view value) {
    return {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
            const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())),
            name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

constexpr std::array<H2Header, 2> kDohHeaders{
    {{"Content-Type", "application/dns-message"}, {"Accept", "application/dns-message"}}};

// ---- A raw server: nghttp2's server session, for frames H2ServerSession never sends ----

struct Upload {
    Bytes bytes;
    std::size_t sent = 0;
};

class RawServer {
public:
    RawServer() {
        nghttp2_session_callbacks* cb = nullptr;
        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_callbacks_set_on_frame_recv_callback(
            cb, [](nghttp2_session*, const nghttp2_frame* frame, void* self) {
                if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
                    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
                    static_cast<RawServer*>(self)->requests.push_back(frame->hd.stream_id);
                }
                return 0;
            });
        nghttp2_session_server_new(&session_, cb, this);
        nghttp2_session_callbacks_del(cb);
        nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
    }
    ~RawServer() { nghttp2_session_del(session_); }
    RawServer(const RawServer&) = delete;
    RawServer& operator=(const RawServer&) = delete;

    void respond(std::int32_t id, std::vector<nghttp2_nv> headers, Bytes body) {
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
        EXPECT_EQ(nghttp2_submit_response(session_, id, headers.data(), headers.size(),
                                          uploads_.back()->bytes.empty() ? nullptr : &provider),
                  0);
    }

    void informational(std::int32_t id) {
        const std::array<nghttp2_nv, 2> h{nv(":status", "103"), nv("content-type", "text/x")};
        EXPECT_EQ(nghttp2_submit_headers(session_, NGHTTP2_FLAG_NONE, id, nullptr, h.data(),
                                         h.size(), nullptr),
                  0);
    }

    void reset(std::int32_t id, std::uint32_t code) {
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, code);
    }

    void goaway(std::int32_t last_stream_id) {
        nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, last_stream_id, NGHTTP2_NO_ERROR,
                              nullptr, 0);
    }

    Bytes take_output() {
        Bytes out;
        const std::uint8_t* data = nullptr;
        for (ssize_t n; (n = nghttp2_session_mem_send(session_, &data)) > 0;) {
            out.insert(out.end(), data, data + n);
        }
        return out;
    }

    void receive(const Bytes& bytes) {
        const ssize_t n = nghttp2_session_mem_recv(session_, bytes.data(), bytes.size());
        EXPECT_EQ(n, static_cast<ssize_t>(bytes.size())) << nghttp2_strerror(static_cast<int>(n));
    }

    std::vector<std::int32_t> requests;  ///< stream ids of complete requests, in arrival order

private:
    nghttp2_session* session_ = nullptr;
    std::vector<std::unique_ptr<Upload>> uploads_;
};

// ---- The fixture: a client session, a server of either kind, what each side saw, the pump ----

struct Got {
    int status = 0;
    std::string content_type;
    std::optional<std::string> cache_control;
    Bytes body;
    std::string error;
};

struct Received {
    std::uint32_t stream_id = 0;
    std::string method;
    std::string path;
    std::string content_type;
    std::optional<std::string> accept;
    Bytes body;
};

class H2ClientSessionTest : public ::testing::Test {
protected:
    void make_client(const H2ClientLimits& limits = {}) {
        client_ = std::make_unique<H2ClientSession>(
            limits, [this](std::uint32_t id, const H2Response& r) {
                EXPECT_TRUE(inside_client_) << "handler for stream " << id << " ran outside "
                                            << "receive() and fail_all()";
                EXPECT_EQ(r.status == 0, !r.error.empty()) << r.status << " " << r.error;
                got_[id].push_back(
                    {r.status, std::string(r.content_type),
                     r.cache_control ? std::optional<std::string>(*r.cache_control) : std::nullopt,
                     Bytes(r.body.begin(), r.body.end()), std::string(r.error)});
                if (on_response_) {
                    on_response_(id, r);
                }
            });
        client_->start();
    }

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
        server_receive_ = [this](const Bytes& b) {
            if (auto r = server_->receive(b); !r) {
                ADD_FAILURE() << "server: " << r.error();
            }
        };
        server_output_ = [this] {
            const auto out = server_->pending_output();
            Bytes bytes(out.begin(), out.end());
            server_->consume_output(out.size());
            return bytes;
        };
    }

    void make_raw_server() {
        raw_ = std::make_unique<RawServer>();
        server_receive_ = [this](const Bytes& b) { raw_->receive(b); };
        server_output_ = [this] { return raw_->take_output(); };
    }

    void SetUp() override {
        make_client();
        make_server();
    }

    Bytes client_output() {
        const auto out = client_->pending_output();
        Bytes bytes(out.begin(), out.end());
        client_->consume_output(out.size());
        return bytes;
    }

    /// Feeds the client; a receive() error is kept, not fatal.
    void to_client(const Bytes& bytes) {
        if (bytes.empty() || client_error_) {
            return;
        }
        inside_client_ = true;
        auto r = client_->receive(bytes);
        inside_client_ = false;
        if (!r) {
            client_error_ = r.error();
        }
    }

    void fail_all(std::string_view reason) {
        inside_client_ = true;
        client_->fail_all(reason);
        inside_client_ = false;
    }

    /// Moves bytes both ways until neither side has any.
    void pump() {
        for (int round = 0; round < 1000; ++round) {
            const Bytes to_server = client_output();
            if (!to_server.empty()) {
                server_receive_(to_server);
            }
            const Bytes back = server_output_();
            to_client(back);
            if (to_server.empty() && back.empty()) {
                return;
            }
        }
        FAIL() << "the two sessions never went quiet";
    }

    std::uint32_t post(const Bytes& body) {
        const auto id = client_->request("POST", "dns.example", "/dns-query", kDohHeaders, body);
        EXPECT_TRUE(id);
        return id.value_or(0);
    }

    bool answer(std::uint32_t id, int status, const Bytes& body) {
        const std::array<H2Header, 2> headers{
            {{"Content-Type", "application/dns-message"}, {"Cache-Control", "max-age=300"}}};
        return server_->respond(id, status, headers, body);
    }

    /// The one report for `id`; fails the test when there is none or more than one.
    const Got& only(std::uint32_t id) {
        static const Got kNone;
        const auto it = got_.find(id);
        if (it == got_.end() || it->second.size() != 1) {
            ADD_FAILURE() << "stream " << id << " reported "
                          << (it == got_.end() ? 0 : it->second.size()) << " times";
            return kNone;
        }
        return it->second.front();
    }

    std::unique_ptr<H2ClientSession> client_;
    std::unique_ptr<H2ServerSession> server_;
    std::unique_ptr<RawServer> raw_;
    std::function<void(const Bytes&)> server_receive_;
    std::function<Bytes()> server_output_;
    std::map<std::uint32_t, std::vector<Got>> got_;
    std::vector<Received> received_;
    std::function<void(std::uint32_t, const H2Response&)> on_response_;
    std::function<void(std::uint32_t)> on_request_;
    std::optional<std::string> client_error_;
    bool inside_client_ = false;
};

TEST_F(H2ClientSessionTest, PostsADnsQuery) {
    const Bytes query = dns_query();
    ASSERT_EQ(query.size(), 33U);
    const Bytes reply = filled(49);
    on_request_ = [&](std::uint32_t id) { EXPECT_TRUE(answer(id, 200, reply)); };
    EXPECT_TRUE(client_->wants_write());  // the preface and SETTINGS
    // A content-length of the caller's is dropped: ours is written from the body.
    const std::array<H2Header, 3> headers{{{"Content-Type", "application/dns-message"},
                                           {"ACCEPT", "application/dns-message"},
                                           {"Content-Length", "999"}}};
    const auto id = client_->request("POST", "dns.example", "/dns-query", headers, query);
    ASSERT_TRUE(id);
    EXPECT_EQ(*id, 1U);
    EXPECT_EQ(client_->open_streams(), 1U);
    pump();

    ASSERT_EQ(received_.size(), 1U);
    EXPECT_EQ(received_[0].method, "POST");
    EXPECT_EQ(received_[0].path, "/dns-query");
    EXPECT_EQ(received_[0].content_type, "application/dns-message");
    EXPECT_EQ(received_[0].accept, "application/dns-message");
    EXPECT_EQ(received_[0].body, query);

    const Got& got = only(*id);
    EXPECT_EQ(got.status, 200);
    EXPECT_EQ(got.content_type, "application/dns-message");
    EXPECT_EQ(got.cache_control, "max-age=300");
    EXPECT_EQ(got.body, reply);
    EXPECT_EQ(got.error, "");
    EXPECT_EQ(client_->open_streams(), 0U);
    EXPECT_TRUE(client_->can_request());
    EXPECT_TRUE(client_->wants_read());
    EXPECT_FALSE(client_->wants_write());
    EXPECT_FALSE(client_->finished());
    EXPECT_FALSE(client_->going_away());
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, GetsWithoutABody) {
    on_request_ = [&](std::uint32_t id) { answer(id, 404, {}); };
    const auto id =
        client_->request("GET", "dns.example", "/dns-query?dns=AAABAAABAAAAAAAAAAABAAE", {}, {});
    ASSERT_TRUE(id);
    pump();
    ASSERT_EQ(received_.size(), 1U);
    EXPECT_EQ(received_[0].method, "GET");
    EXPECT_EQ(received_[0].path, "/dns-query?dns=AAABAAABAAAAAAAAAAABAAE");
    EXPECT_TRUE(received_[0].body.empty());
    EXPECT_EQ(only(*id).status, 404);
    EXPECT_TRUE(only(*id).body.empty());
}

TEST_F(H2ClientSessionTest, ManyConcurrentRequestsAnsweredOutOfOrder) {
    constexpr std::size_t kCount = 20;
    std::vector<std::uint32_t> ids;
    for (std::size_t i = 0; i < kCount; ++i) {
        ids.push_back(post(filled(33, static_cast<std::uint8_t>(i))));
    }
    EXPECT_EQ(client_->open_streams(), kCount);
    pump();
    ASSERT_EQ(received_.size(), kCount);
    EXPECT_TRUE(got_.empty());
    // Odd requests first, backwards, then the even ones; each answer is its query reversed.
    std::vector<const Received*> order;
    for (std::size_t i = kCount; i-- > 0;) {
        if (i % 2 == 1) order.push_back(&received_[i]);
    }
    for (std::size_t i = 0; i < kCount; i += 2) {
        order.push_back(&received_[i]);
    }
    for (const Received* r : order) {
        EXPECT_TRUE(answer(r->stream_id, 200, Bytes(r->body.rbegin(), r->body.rend())));
        if (r->stream_id % 3 == 0) {
            pump();  // some answers arrive alone, others together
        }
    }
    pump();
    for (std::size_t i = 0; i < kCount; ++i) {
        const Bytes query = filled(33, static_cast<std::uint8_t>(i));
        EXPECT_EQ(only(ids[i]).body, Bytes(query.rbegin(), query.rend())) << i;
    }
    EXPECT_EQ(got_.size(), kCount);
    EXPECT_EQ(client_->open_streams(), 0U);
}

TEST_F(H2ClientSessionTest, KeepsToTheServersConcurrencyLimit) {
    H2Limits limits;
    limits.max_concurrent_streams = 3;
    make_server(limits);
    pump();  // the SETTINGS exchange
    std::vector<std::uint32_t> ids;
    while (client_->can_request()) {
        ids.push_back(post(dns_query()));
    }
    EXPECT_EQ(ids.size(), 3U);
    EXPECT_FALSE(client_->request("POST", "dns.example", "/dns-query", kDohHeaders, dns_query()));
    pump();
    ASSERT_EQ(received_.size(), 3U);
    EXPECT_TRUE(answer(received_[1].stream_id, 200, bytes_of("one")));
    EXPECT_FALSE(client_->can_request());  // not until the answer arrives
    pump();
    EXPECT_EQ(only(ids[1]).body, bytes_of("one"));
    EXPECT_TRUE(client_->can_request());
    const std::uint32_t next = post(dns_query());
    EXPECT_FALSE(client_->can_request());
    pump();
    EXPECT_EQ(received_.size(), 4U);
    EXPECT_EQ(received_.back().stream_id, next);
    EXPECT_EQ(got_.size(), 1U);  // nothing refused
}

TEST_F(H2ClientSessionTest, KeepsToItsOwnConcurrencyLimit) {
    H2ClientLimits limits;
    limits.max_concurrent_streams = 2;
    make_client(limits);
    post(dns_query());
    post(dns_query());
    EXPECT_FALSE(client_->can_request());
    EXPECT_FALSE(client_->request("GET", "dns.example", "/dns-query?dns=x", {}, {}));
    pump();
    EXPECT_EQ(received_.size(), 2U);
}

TEST_F(H2ClientSessionTest, StreamsRefusedBeforeTheServersSettingsFail) {
    H2Limits limits;
    limits.max_concurrent_streams = 2;
    make_server(limits);
    // All three leave before the client has seen the server's SETTINGS (it assumes 100).
    const std::array<std::uint32_t, 3> ids{post(dns_query()), post(dns_query()), post(dns_query())};
    pump();
    ASSERT_EQ(received_.size(), 2U);
    EXPECT_EQ(only(ids[2]).status, 0);
    EXPECT_NE(only(ids[2]).error.find("refused"), std::string::npos) << only(ids[2]).error;
    EXPECT_EQ(client_->open_streams(), 2U);
    EXPECT_FALSE(client_->can_request());  // the server's limit is known now
    for (const Received& r : received_) {
        answer(r.stream_id, 200, bytes_of("ok"));
    }
    pump();
    EXPECT_EQ(only(ids[0]).status, 200);
    EXPECT_EQ(only(ids[1]).status, 200);
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, GracefulGoawayFailsUnsentStreamsAndAnswersProcessedOnes) {
    const std::uint32_t a = post(dns_query());
    const std::uint32_t b = post(dns_query());
    pump();
    ASSERT_EQ(received_.size(), 2U);
    server_->shutdown();
    // A request made before the client saw the GOAWAY, still in its output.
    const std::uint32_t c = post(dns_query());
    to_client(server_output_());
    EXPECT_TRUE(client_->going_away());
    EXPECT_FALSE(client_->can_request());
    EXPECT_FALSE(client_->request("POST", "dns.example", "/dns-query", kDohHeaders, dns_query()));
    EXPECT_EQ(only(c).status, 0);
    EXPECT_NE(only(c).error.find("not processed"), std::string::npos) << only(c).error;
    EXPECT_EQ(client_->open_streams(), 2U);

    pump();  // the PING round trip and the server's last GOAWAY
    EXPECT_EQ(received_.size(), 2U);
    EXPECT_TRUE(answer(a, 200, bytes_of("a")));
    EXPECT_TRUE(answer(b, 200, bytes_of("b")));
    pump();
    EXPECT_EQ(only(a).body, bytes_of("a"));
    EXPECT_EQ(only(b).body, bytes_of("b"));
    EXPECT_EQ(got_.size(), 3U);
    EXPECT_EQ(client_->open_streams(), 0U);
    EXPECT_TRUE(client_->finished());
    EXPECT_TRUE(server_->finished());
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, GoawayBelowOpenStreamsFailsTheOnesAbove) {
    make_raw_server();
    const std::array<std::uint32_t, 3> ids{post(dns_query()), post(dns_query()), post(dns_query())};
    pump();
    ASSERT_EQ(raw_->requests.size(), 3U);
    raw_->goaway(static_cast<std::int32_t>(ids[0]));
    pump();
    EXPECT_TRUE(client_->going_away());
    EXPECT_EQ(got_.count(ids[0]), 0U);
    for (const std::uint32_t id : {ids[1], ids[2]}) {
        EXPECT_EQ(only(id).status, 0);
        EXPECT_NE(only(id).error.find("not processed"), std::string::npos) << only(id).error;
    }
    raw_->respond(static_cast<std::int32_t>(ids[0]),
                  {nv(":status", "200"), nv("content-type", "application/dns-message")},
                  bytes_of("first"));
    pump();
    EXPECT_EQ(only(ids[0]).status, 200);
    EXPECT_EQ(only(ids[0]).body, bytes_of("first"));
    EXPECT_TRUE(client_->finished());
}

TEST_F(H2ClientSessionTest, BodyOverTheCapFailsThatStreamOnly) {
    H2ClientLimits limits;
    limits.max_response_body_bytes = 100;
    make_client(limits);
    const std::uint32_t at_cap = post(dns_query());
    const std::uint32_t over = post(dns_query());
    pump();
    ASSERT_EQ(received_.size(), 2U);
    answer(at_cap, 200, filled(100));
    answer(over, 200, filled(101));  // content-length: 101, refused before the body
    pump();
    EXPECT_EQ(only(at_cap).status, 200);
    EXPECT_EQ(only(at_cap).body, filled(100));
    EXPECT_EQ(only(over).status, 0);
    EXPECT_NE(only(over).error.find("body over 100"), std::string::npos) << only(over).error;
    // The connection is still fine.
    const std::uint32_t again = post(dns_query());
    pump();
    answer(again, 200, bytes_of("ok"));
    pump();
    EXPECT_EQ(only(again).body, bytes_of("ok"));
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, UndeclaredBodyOverTheCapIsResetAsItArrives) {
    make_raw_server();
    const std::uint32_t big = post(dns_query());
    const std::uint32_t small = post(dns_query());
    pump();
    raw_->respond(static_cast<std::int32_t>(big), {nv(":status", "200")}, filled(70000));
    raw_->respond(static_cast<std::int32_t>(small), {nv(":status", "200")}, filled(500));
    pump();
    EXPECT_EQ(only(big).status, 0);
    EXPECT_NE(only(big).error.find("body over 65535"), std::string::npos) << only(big).error;
    EXPECT_EQ(only(small).body, filled(500));
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, HeaderListOverTheCapFailsTheStream) {
    H2ClientLimits limits;
    limits.max_header_list_bytes = 512;
    make_client(limits);
    make_raw_server();
    const std::uint32_t id = post(dns_query());
    pump();
    const std::string pad(600, 'x');
    raw_->respond(static_cast<std::int32_t>(id), {nv(":status", "200"), nv("x-pad", pad)},
                  bytes_of("body"));
    pump();
    EXPECT_EQ(only(id).status, 0);
    EXPECT_NE(only(id).error.find("header list"), std::string::npos) << only(id).error;
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, ResetsAndMalformedResponsesFailTheirStreams) {
    make_raw_server();
    const std::array<std::uint32_t, 4> ids{post(dns_query()), post(dns_query()), post(dns_query()),
                                           post(dns_query())};
    pump();
    ASSERT_EQ(raw_->requests.size(), 4U);
    raw_->reset(static_cast<std::int32_t>(ids[0]), NGHTTP2_INTERNAL_ERROR);
    raw_->reset(static_cast<std::int32_t>(ids[1]), NGHTTP2_REFUSED_STREAM);
    // Declares 10 bytes, sends 5.
    raw_->respond(static_cast<std::int32_t>(ids[2]),
                  {nv(":status", "200"), nv("content-length", "10")}, bytes_of("short"));
    // A 1xx before the final response: only the final one's fields count.
    raw_->informational(static_cast<std::int32_t>(ids[3]));
    raw_->respond(static_cast<std::int32_t>(ids[3]),
                  {nv(":status", "200"), nv("content-type", "application/dns-message"),
                   nv("cache-control", "max-age=60"), nv("cache-control", "public")},
                  bytes_of("fine"));
    pump();
    EXPECT_EQ(only(ids[0]).status, 0);
    EXPECT_NE(only(ids[0]).error.find("reset"), std::string::npos) << only(ids[0]).error;
    EXPECT_NE(only(ids[1]).error.find("refused"), std::string::npos) << only(ids[1]).error;
    EXPECT_EQ(only(ids[2]).status, 0);
    EXPECT_NE(only(ids[2]).error.find("malformed"), std::string::npos) << only(ids[2]).error;
    EXPECT_EQ(only(ids[3]).status, 200);
    EXPECT_EQ(only(ids[3]).content_type, "application/dns-message");
    EXPECT_EQ(only(ids[3]).cache_control, "max-age=60, public");
    EXPECT_EQ(only(ids[3]).body, bytes_of("fine"));
    EXPECT_EQ(client_->open_streams(), 0U);
    EXPECT_TRUE(client_->can_request());
    EXPECT_FALSE(client_error_);
}

TEST_F(H2ClientSessionTest, FailAllReportsEveryPendingStreamOnce) {
    std::vector<std::uint32_t> ids;
    ids.reserve(5);
    for (int i = 0; i < 5; ++i) {
        ids.push_back(post(dns_query()));
    }
    pump();
    answer(ids[2], 200, bytes_of("done"));
    pump();
    EXPECT_EQ(got_.size(), 1U);
    fail_all("connection reset by peer");
    EXPECT_EQ(got_.size(), 5U);
    for (const std::uint32_t id : ids) {
        if (id != ids[2]) {
            EXPECT_EQ(only(id).status, 0);
            EXPECT_EQ(only(id).error, "connection reset by peer");
        }
    }
    EXPECT_EQ(only(ids[2]).status, 200);
    fail_all("again");  // nothing left to report
    EXPECT_EQ(got_.size(), 5U);
    EXPECT_EQ(client_->open_streams(), 0U);
    EXPECT_FALSE(client_->can_request());
    EXPECT_FALSE(client_->request("GET", "dns.example", "/dns-query?dns=x", {}, {}));
    EXPECT_TRUE(client_->finished());
    EXPECT_TRUE(client_->pending_output().empty());
    EXPECT_FALSE(client_->receive(bytes_of("late")));
}

TEST_F(H2ClientSessionTest, GarbageFromTheServerFailsReceive) {
    const std::uint32_t id = post(dns_query());
    client_output();  // written to the "server"
    inside_client_ = true;
    const auto r =
        client_->receive(bytes_of("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"));
    inside_client_ = false;
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("h2:"), std::string::npos) << r.error();
    EXPECT_TRUE(got_.empty());  // left for fail_all()
    EXPECT_FALSE(client_->can_request());
    EXPECT_FALSE(client_->wants_read());
    EXPECT_FALSE(client_output().empty());  // a GOAWAY
    EXPECT_TRUE(client_->finished());
    EXPECT_FALSE(client_->receive(bytes_of("more")));
    fail_all("closed");
    EXPECT_EQ(only(id).status, 0);
    EXPECT_EQ(only(id).error, r.error());  // the more telling reason
}

TEST_F(H2ClientSessionTest, HandlerMayRequestAgain) {
    on_request_ = [&](std::uint32_t id) { answer(id, 200, bytes_of("r")); };
    bool asked = false;
    std::optional<std::uint32_t> chained;
    on_response_ = [&](std::uint32_t, const H2Response&) {
        if (!std::exchange(asked, true)) {
            chained = client_->request("GET", "dns.example", "/dns-query?dns=y", {}, {});
        }
    };
    const std::uint32_t first = post(dns_query());
    pump();
    EXPECT_EQ(only(first).status, 200);
    ASSERT_TRUE(chained);
    EXPECT_EQ(only(*chained).status, 200);
    EXPECT_EQ(received_.size(), 2U);
}

TEST_F(H2ClientSessionTest, HandlerExceptionFailsTheConnection) {
    on_request_ = [&](std::uint32_t id) { answer(id, 200, bytes_of("r")); };
    on_response_ = [](std::uint32_t, const H2Response&) { throw std::runtime_error("boom"); };
    const std::uint32_t first = post(dns_query());
    pump();
    ASSERT_TRUE(client_error_);
    EXPECT_NE(client_error_->find("boom"), std::string::npos) << *client_error_;
    EXPECT_EQ(only(first).status, 200);  // reported once, even though the handler threw
    EXPECT_FALSE(client_->can_request());
}

TEST_F(H2ClientSessionTest, DestroyedWithOpenStreamsReportsNothing) {
    post(dns_query());
    pump();
    client_.reset();
    EXPECT_TRUE(got_.empty());
}

}  // namespace
}  // namespace moat::http
