// The DoH request mapping (RFC 8484) on any request: the input is split at '\n' into method,
// path, query and content type, and the rest is the body. doh_query_of() never crashes, answers
// one of 200, 400, 404, 405, 415, each only where it applies (404 for another path, 405 for
// neither GET nor POST, 415 only for a POST), and a 200 carries 12..65535 octets that are the
// POST body itself or, for a GET, lie in the scratch buffer and spell exactly the `dns`
// parameter in base64url. doh_cache_control() gives "max-age=" and a 32-bit number without
// leading zeros, on the accepted message and on the raw body.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "doh_exchange.hpp"
#include "fuzz_check.hpp"
#include "moat/core/base64url.hpp"

namespace {

constexpr std::string_view kDohPath = "/dns-query";
constexpr char kSeparator = '\n';
constexpr std::size_t kMinMessage = 12;
constexpr std::size_t kMaxMessage = 65535;

/// The text up to the next separator (all of it when there is none); `rest` moves past it.
std::string_view next_field(std::string_view& rest) {
    const std::size_t end = rest.find(kSeparator);
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    return field;
}

bool inside(std::span<const std::uint8_t> part, const std::uint8_t* begin, std::size_t size) {
    return part.data() >= begin && part.data() + part.size() <= begin + size;
}

void check_cache_control(std::span<const std::uint8_t> answer) {
    const std::string value = moat::server::doh_cache_control(answer);
    constexpr std::string_view kPrefix = "max-age=";
    MOAT_FUZZ_CHECK(value.starts_with(kPrefix), value);
    const std::string_view digits = std::string_view(value).substr(kPrefix.size());
    MOAT_FUZZ_CHECK(!digits.empty() && digits.size() <= 10, value);
    MOAT_FUZZ_CHECK(digits.size() == 1 || digits.front() != '0', value);
    std::uint64_t seconds = 0;
    for (const char c : digits) {
        MOAT_FUZZ_CHECK(c >= '0' && c <= '9', value);
        seconds = seconds * 10 + static_cast<std::uint64_t>(c - '0');
    }
    MOAT_FUZZ_CHECK(seconds <= std::numeric_limits<std::uint32_t>::max(), value);
}

void check_accepted(const moat::server::DohRequest& request, const moat::server::DohQuery& query,
                    const std::vector<std::uint8_t>& scratch) {
    MOAT_FUZZ_CHECK(query.message.size() >= kMinMessage && query.message.size() <= kMaxMessage,
                    std::to_string(query.message.size()));
    if (request.method == "POST") {
        MOAT_FUZZ_CHECK(query.message.data() == request.body.data() &&
                        query.message.size() == request.body.size());
        return;
    }
    MOAT_FUZZ_CHECK(request.method == "GET", std::string(request.method));
    MOAT_FUZZ_CHECK(inside(query.message, scratch.data(), scratch.size()));
    // The decoder is strict, so the message has one spelling: a whole `dns=` pair of the query.
    const std::string pair = "&dns=" + moat::base64url_encode(query.message) + "&";
    MOAT_FUZZ_CHECK(("&" + std::string(request.query) + "&").find(pair) != std::string::npos, pair);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    moat::server::DohRequest request;
    request.method = next_field(rest);
    request.path = next_field(rest);
    request.query = next_field(rest);
    request.content_type = next_field(rest);
    // The body is all that follows the fourth separator, separators included.
    request.body = std::span<const std::uint8_t>(data + (size - rest.size()), rest.size());

    std::vector<std::uint8_t> scratch;
    const moat::server::DohQuery query = moat::server::doh_query_of(request, kDohPath, scratch);
    const bool known_method = request.method == "GET" || request.method == "POST";
    switch (query.status) {
        case 200: check_accepted(request, query, scratch); break;
        case 400: MOAT_FUZZ_CHECK(request.path == kDohPath && known_method); break;
        case 404: MOAT_FUZZ_CHECK(request.path != kDohPath); break;
        case 405: MOAT_FUZZ_CHECK(request.path == kDohPath && !known_method); break;
        case 415: MOAT_FUZZ_CHECK(request.path == kDohPath && request.method == "POST"); break;
        default: moat::fuzz::fail("unexpected status", std::to_string(query.status));
    }
    if (query.status != 200) {
        MOAT_FUZZ_CHECK(query.message.empty());
    } else {
        check_cache_control(query.message);
    }
    check_cache_control(request.body);
    return 0;
}
