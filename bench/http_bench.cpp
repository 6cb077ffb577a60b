// dnsmoat-bench-http: Google Benchmark of the http module, the part of every dashboard request and
// every DNS-over-HTTPS query that is not TLS or the DNS answer itself: an HTTP/1.1 request parsed
// (a browser's dashboard request, a DoH GET), a response serialized, and one DoH exchange over
// HTTP/2 between dnsmoat's client session (a DoH upstream) and its server session (the DoH
// listener), connected in memory.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "moat/http/h2_client_session.hpp"
#include "moat/http/h2_session.hpp"
#include "moat/http/request.hpp"
#include "moat/http/response.hpp"

namespace {

// What Chromium sends for one of the dashboard's API calls, session cookie included.
constexpr std::string_view kDashboardRequest =
    "GET /api/stats/summary?hours=24 HTTP/1.1\r\n"
    "Host: 192.168.1.2:8080\r\n"
    "Connection: keep-alive\r\n"
    "sec-ch-ua: \"Chromium\";v=\"120\", \"Not?A_Brand\";v=\"8\"\r\n"
    "sec-ch-ua-mobile: ?0\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36\r\n"
    "sec-ch-ua-platform: \"Linux\"\r\n"
    "Accept: application/json\r\n"
    "Sec-Fetch-Site: same-origin\r\n"
    "Sec-Fetch-Mode: cors\r\n"
    "Sec-Fetch-Dest: empty\r\n"
    "Referer: http://192.168.1.2:8080/\r\n"
    "Accept-Encoding: gzip, deflate\r\n"
    "Accept-Language: en-GB,en;q=0.9\r\n"
    "Cookie: dnsmoat_session=Vb3kq9M0yJ2xWc8tZp4rNf6hLd1sAe7u\r\n"
    "\r\n";

// RFC 8484 §4.1.1's example query for www.example.com A, as a DoH GET over HTTP/1.1.
constexpr std::string_view kDohGet =
    "GET /dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB HTTP/1.1\r\n"
    "Host: dns.example\r\n"
    "Accept: application/dns-message\r\n"
    "\r\n";

void request_parse(benchmark::State& state, std::string_view bytes) {
    moat::http::Request request;
    for (auto _ : state) {
        const moat::http::Parsed parsed = moat::http::parse_request(bytes, request);
        if (parsed.state != moat::http::Parsed::State::complete) {
            state.SkipWithError("the request did not parse");
            break;
        }
        benchmark::DoNotOptimize(request.header("cookie"));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK_CAPTURE(request_parse, dashboard, kDashboardRequest);
BENCHMARK_CAPTURE(request_parse, doh_get, kDohGet);

/// The head of a request that has not all arrived: the parser says incomplete.
void request_parse_incomplete(benchmark::State& state) {
    const std::string_view half = kDashboardRequest.substr(0, kDashboardRequest.size() / 2);
    moat::http::Request request;
    for (auto _ : state) {
        benchmark::DoNotOptimize(moat::http::parse_request(half, request));
    }
}
BENCHMARK(request_parse_incomplete);

/// A JSON answer of the dashboard's size (about 2 KiB) with its headers.
void response_serialize(benchmark::State& state) {
    moat::http::Response response;
    response.header("Content-Type", "application/json")
        .header("Cache-Control", "no-store")
        .header("X-Content-Type-Options", "nosniff");
    response.body.assign(2048, 'x');
    for (auto _ : state) {
        benchmark::DoNotOptimize(moat::http::serialize(response));
    }
}
BENCHMARK(response_serialize);

/// Moves every byte one session wants to write into the other; false when a receive() failed.
template <typename From, typename To>
bool pump(From& from, To& to) {
    for (auto out = from.pending_output(); !out.empty(); out = from.pending_output()) {
        if (!to.receive(out)) {
            return false;
        }
        from.consume_output(out.size());
    }
    return true;
}

/// One DoH query over an open HTTP/2 connection: the client's POST (HEADERS and DATA), the
/// server's 200 with the answer, both sessions' framing and HPACK. 33 octets asked, 49 answered.
void h2_exchange(benchmark::State& state) {
    // www.example.com A, and an answer with one record.
    static constexpr std::array<std::uint8_t, 33> kQuery{
        0,   0,   1,   0,   0,   1,   0,   0, 0,   0,   0,   0, 3, 'w', 'w', 'w', 7,
        'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1,   0,   1};
    std::array<std::uint8_t, 49> answer{};
    std::copy(kQuery.begin(), kQuery.end(), answer.begin());
    answer[2] = 0x81;
    answer[3] = 0x80;
    answer[7] = 1;  // ANCOUNT 1: a pointer to the question's name, A IN, TTL, 4 octets
    const std::array<std::uint8_t, 16> record{0xC0, 12,   0, 1, 0,  1,   0,   0,
                                              0x0E, 0x10, 0, 4, 93, 184, 216, 34};
    std::copy(record.begin(), record.end(), answer.begin() + kQuery.size());

    moat::http::H2ServerSession* server_ptr = nullptr;
    static constexpr std::array<moat::http::H2Header, 2> kAnswerHeaders{
        {{"content-type", "application/dns-message"}, {"cache-control", "max-age=3600"}}};
    moat::http::H2ServerSession server({}, [&](std::uint32_t stream, const moat::http::H2Request&) {
        server_ptr->respond(stream, 200, kAnswerHeaders, answer);
    });
    server_ptr = &server;
    std::int64_t answered = 0;
    moat::http::H2ClientSession client({}, [&](std::uint32_t, const moat::http::H2Response& r) {
        answered += r.status == 200 && r.body.size() == answer.size() ? 1 : 0;
    });
    static constexpr std::array<moat::http::H2Header, 2> kQueryHeaders{
        {{"content-type", "application/dns-message"}, {"accept", "application/dns-message"}}};
    // The connection's prefaces and SETTINGS, once, as on a connection kept open.
    client.start();
    server.start();
    if (!pump(client, server) || !pump(server, client) || !pump(client, server)) {
        state.SkipWithError("the sessions did not connect");
        return;
    }
    for (auto _ : state) {
        if (!client.request("POST", "dns.example", "/dns-query", kQueryHeaders, kQuery) ||
            !pump(client, server) || !pump(server, client)) {
            state.SkipWithError("an exchange failed");
            break;
        }
    }
    // The client's WINDOW_UPDATEs and the like, so the last exchange is complete on both sides.
    (void)pump(client, server);
    if (!state.error_occurred() && answered != state.iterations()) {
        state.SkipWithError("a response was missing or wrong");
    }
}
BENCHMARK(h2_exchange);

}  // namespace

BENCHMARK_MAIN();
