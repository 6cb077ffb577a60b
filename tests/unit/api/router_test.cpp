// Routing without sockets: path parameters and query strings decoded, 404 for unknown paths, 405
// with Allow for a known path and another method, HEAD served by GET, and bodies that must be
// JSON objects.
#include "moat/api/router.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace moat::api {
namespace {

struct Req {
    std::string text;
    http::Request request;
    explicit Req(const std::string& head, const std::string& body = {},
                 const std::string& type = "application/json") {
        text = head + " HTTP/1.1\r\nHost: x\r\nContent-Type: " + type +
               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        EXPECT_EQ(http::parse_request(text, request).state, http::Parsed::State::complete);
    }
};

std::optional<http::Response> route(const Router& r, const std::string& head,
                                    const std::string& body = {}) {
    Req req(head, body);
    return r.route(req.request, Peer{}, [](const http::Response&) {});
}

TEST(PercentDecode, DecodesAndRefusesMalformedEscapes) {
    EXPECT_EQ(percent_decode("a%2Fb%20c"), "a/b c");
    EXPECT_EQ(percent_decode("a+b", true), "a b");
    EXPECT_EQ(percent_decode("a+b", false), "a+b");
    EXPECT_FALSE(percent_decode("%"));
    EXPECT_FALSE(percent_decode("%4"));
    EXPECT_FALSE(percent_decode("%zz"));
}

TEST(Router, MatchesPatternsAndDecodesParameters) {
    Router r;
    std::string seen;
    r.add("GET", "/api/lists/{kind}/{name}", [&](const http::Request&, const Params& p) {
        seen = p.path.at("kind") + "|" + p.path.at("name") + "|" + p.query_or("x", "none") + "|" +
               p.query_or("y");
        return json_response(200, {});
    });
    ASSERT_EQ(route(r, "GET /api/lists/block/my%20list?y=a+b%26c")->status, 200);
    EXPECT_EQ(seen, "block|my list|none|a b&c");
    ASSERT_EQ(route(r, "HEAD /api/lists/block/x")->status, 200);
    EXPECT_EQ(route(r, "GET /api/lists/block")->status, 404);
    EXPECT_EQ(route(r, "GET /api/lists/block/x/y")->status, 404);
    EXPECT_EQ(route(r, "GET /api/lists/block/x?y=%zz")->status, 400);
    const auto wrong = route(r, "PUT /api/lists/block/x");
    ASSERT_EQ(wrong->status, 405);
    EXPECT_EQ(wrong->headers.back(), (std::pair<std::string, std::string>{"Allow", "GET"}));
    EXPECT_TRUE(r.knows("/api/lists/a/b"));
    EXPECT_FALSE(r.knows("/api/other"));
}

TEST(Router, AHandlerMayDeferItsAnswer) {
    Router r;
    Responder kept;
    r.add("POST", "/slow",
          [&](const http::Request&, const Params&, const Peer&,
              const Responder& later) -> std::optional<http::Response> {
              kept = later;
              return std::nullopt;
          });
    Req req("POST /slow");
    std::optional<http::Response> answered;
    EXPECT_FALSE(r.route(req.request, Peer{}, [&](http::Response x) { answered = std::move(x); }));
    kept(json_response(202, {}));
    ASSERT_TRUE(answered);
    EXPECT_EQ(answered->status, 202);
}

TEST(BodyObject, OnlyJsonObjects) {
    std::optional<http::Response> error;
    EXPECT_EQ(body_object(Req("POST /x", R"({"a": 1})").request, error)["a"], 1);
    EXPECT_FALSE(error);
    (void)body_object(Req("POST /x", "[1]").request, error);
    ASSERT_TRUE(error);
    EXPECT_EQ(error->status, 400);
    error.reset();
    (void)body_object(Req("POST /x", "{\"a\"").request, error);
    EXPECT_EQ(error->status, 400);
    error.reset();
    (void)body_object(Req("POST /x", "{}", "text/plain").request, error);
    EXPECT_EQ(error->status, 415);
    error.reset();
    (void)body_object(Req("POST /x", "{}", "application/json; charset=utf-8").request, error);
    EXPECT_FALSE(error);
}

TEST(JsonResponse, IsTheCompactDocumentAndOneNewline) {
    const http::Response r = json_response(201, {{"id", 7}, {"name", "a b"}});
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(r.body, "{\"id\":7,\"name\":\"a b\"}\n");
    EXPECT_NE(std::find(r.headers.begin(), r.headers.end(),
                        std::pair<std::string, std::string>("Content-Type", "application/json")),
              r.headers.end());
}

TEST(JsonResponse, ReplacesInvalidUtf8RatherThanThrowing) {
    const http::Response r = json_response(200, {{"name", std::string("bad\xff")}});
    EXPECT_EQ(r.status, 200);
    EXPECT_NE(r.body.find("bad"), std::string::npos);
}

}  // namespace
}  // namespace moat::api
