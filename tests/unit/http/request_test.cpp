// HTTP/1.1 request parsing: complete, partial and pipelined requests; keep-alive rules; every
// refusal that keeps a request from being read two ways (bare LF, space before a colon, folded
// lines, conflicting lengths, Transfer-Encoding); the size limits; responses written to bytes.
#include "moat/http/request.hpp"

#include <gtest/gtest.h>

#include <string>

#include "moat/http/response.hpp"

namespace moat::http {
namespace {

Parsed parse(std::string_view text, Request& r, const Limits& limits = {}) {
    return parse_request(text, r, limits);
}

Errc error_of(std::string_view text, const Limits& limits = {}) {
    Request r;
    const Parsed p = parse(text, r, limits);
    EXPECT_EQ(p.state, Parsed::State::error) << text;
    return p.error;
}

TEST(HttpRequest, ParsesAGetWithHeadersAndQuery) {
    const std::string text =
        "GET /api/log?domain=ads&limit=5 HTTP/1.1\r\nHost: pi.lan\r\nAccept:  text/plain \r\n"
        "X-Empty:\r\n\r\n";
    Request r;
    const Parsed p = parse(text, r);
    ASSERT_EQ(p.state, Parsed::State::complete);
    EXPECT_EQ(p.consumed, text.size());
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/api/log?domain=ads&limit=5");
    EXPECT_EQ(r.path, "/api/log");
    EXPECT_EQ(r.query, "domain=ads&limit=5");
    EXPECT_EQ(r.minor_version, 1);
    EXPECT_EQ(r.header("HOST"), "pi.lan");
    EXPECT_EQ(r.header("accept"), "text/plain");
    EXPECT_EQ(r.header("x-empty"), "");
    EXPECT_FALSE(r.header("cookie"));
    EXPECT_TRUE(r.keep_alive);
    EXPECT_TRUE(r.body.empty());
}

TEST(HttpRequest, WaitsForTheWholeHeadAndBody) {
    const std::string text = "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
    Request r;
    for (std::size_t n = 0; n < text.size(); ++n) {
        EXPECT_EQ(parse(text.substr(0, n), r).state, Parsed::State::incomplete) << n;
    }
    const Parsed p = parse(text, r);
    ASSERT_EQ(p.state, Parsed::State::complete);
    EXPECT_EQ(r.body, "hello");
}

TEST(HttpRequest, PipelinedRequestsComeOneAtATime) {
    const std::string text = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
    Request r;
    const Parsed first = parse(text, r);
    ASSERT_EQ(first.state, Parsed::State::complete);
    EXPECT_EQ(r.path, "/a");
    const Parsed second = parse(std::string_view(text).substr(first.consumed), r);
    ASSERT_EQ(second.state, Parsed::State::complete);
    EXPECT_EQ(r.path, "/b");
    EXPECT_FALSE(r.keep_alive);
    EXPECT_EQ(first.consumed + second.consumed, text.size());
}

TEST(HttpRequest, KeepAliveFollowsTheVersion) {
    Request r;
    ASSERT_EQ(parse("GET / HTTP/1.0\r\n\r\n", r).state, Parsed::State::complete);
    EXPECT_FALSE(r.keep_alive);
    ASSERT_EQ(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", r).state,
              Parsed::State::complete);
    EXPECT_TRUE(r.keep_alive);
    ASSERT_EQ(parse("GET / HTTP/1.1\r\nConnection: upgrade, close\r\n\r\n", r).state,
              Parsed::State::complete);
    EXPECT_FALSE(r.keep_alive);
}

TEST(HttpRequest, RefusesWhatCouldBeReadTwoWays) {
    EXPECT_EQ(error_of("GET / HTTP/1.1\nHost: a\r\n\r\n"), Errc::bad_request);  // bare LF
    EXPECT_EQ(error_of("GET / HTTP/1.1\nHost: a\n\n"), Errc::bad_request);      // never CRLF CRLF
    EXPECT_EQ(error_of("GET / HTTP/1.1\n"), Errc::bad_request);                 // even unfinished
    EXPECT_EQ(error_of("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("GET / HTTP/1.1\r\nX-A: 1\rX\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
              Errc::bad_request);
    EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
              Errc::unsupported_encoding);
    EXPECT_EQ(error_of("GET / HTTP/2.0\r\n\r\n"), Errc::bad_version);
    EXPECT_EQ(error_of("GET / FTP/1.0\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("GET  / HTTP/1.1\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("GET http://evil/ HTTP/1.1\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of("G(T / HTTP/1.1\r\n\r\n"), Errc::bad_request);
    EXPECT_EQ(error_of(std::string("GET /\x01 HTTP/1.1\r\n\r\n")), Errc::bad_request);
    // A view literal keeps the NUL inside the header and ends where the request does.
    using std::string_view_literals::operator""sv;
    EXPECT_EQ(error_of("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"sv), Errc::bad_request);
    // Agreeing duplicates are one length.
    Request r;
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok", r).state,
              Parsed::State::complete);
}

TEST(HttpRequest, LimitsAreEnforced) {
    const Limits small{64, 10};
    const std::string long_header = "GET / HTTP/1.1\r\nX: " + std::string(100, 'a') + "\r\n\r\n";
    EXPECT_EQ(error_of(long_header, small), Errc::headers_too_large);
    // Without an end of the head in sight, too many bytes are already an error.
    EXPECT_EQ(error_of("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), small),
              Errc::headers_too_large);
    EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", small),
              Errc::body_too_large);
    std::string many = "GET / HTTP/1.1\r\n";
    for (std::size_t i = 0; i <= Request::kMaxHeaders; ++i) {
        many += "X-" + std::to_string(i) + ": v\r\n";
    }
    EXPECT_EQ(error_of(many + "\r\n"), Errc::bad_request);
    EXPECT_EQ(status_of(Errc::headers_too_large), 431);
    EXPECT_EQ(status_of(Errc::body_too_large), 413);
}

TEST(HttpResponse, SerializesWithLengthAndClose) {
    Response r;
    r.status = 404;
    r.header("Content-Type", "text/plain").body = "nope";
    r.close = true;
    EXPECT_EQ(serialize(r),
              "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
              "Connection: close\r\n\r\nnope");
    r.close = false;
    EXPECT_EQ(serialize(r, true),
              "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\n");
}

}  // namespace
}  // namespace moat::http
