#include "doh_exchange.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "moat/core/ascii.hpp"
#include "moat/core/base64url.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/types.hpp"

namespace moat::server {
namespace {

/// The value of the `dns` parameter of a query string ("a=1&dns=...&b=2").
std::optional<std::string_view> dns_parameter(std::string_view query) {
    while (!query.empty()) {
        const std::size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        if (pair.starts_with("dns=")) {
            return pair.substr(4);
        }
        if (amp == std::string_view::npos) {
            break;
        }
        query.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

/// "application/dns-message", allowing parameters after ';' and any letter case.
bool is_dns_message(std::string_view content_type) {
    const std::string_view type = content_type.substr(0, content_type.find(';'));
    std::string_view trimmed = type;
    while (!trimmed.empty() && trimmed.back() == ' ') {
        trimmed.remove_suffix(1);
    }
    return ascii_iequal(trimmed, kDnsMessageType);
}

}  // namespace

DohQuery doh_query_of(const DohRequest& request, std::string_view doh_path,
                      std::vector<std::uint8_t>& scratch) {
    if (request.path != doh_path) {
        return {404, {}};
    }
    if (request.method == "GET") {
        const auto encoded = dns_parameter(request.query);
        if (!encoded) {
            return {400, {}};
        }
        scratch.resize(std::min(encoded->size() * 3 / 4 + 3, wire::kMaxMessageSize));
        const auto size = base64url_decode(*encoded, scratch);
        if (!size || *size < wire::kHeaderSize) {
            return {400, {}};
        }
        return {200, std::span<const std::uint8_t>(scratch.data(), *size)};
    }
    if (request.method == "POST") {
        if (!is_dns_message(request.content_type)) {
            return {415, {}};
        }
        if (request.body.size() < wire::kHeaderSize ||
            request.body.size() > wire::kMaxMessageSize) {
            return {400, {}};
        }
        return {200, request.body};
    }
    return {405, {}};
}

std::string doh_cache_control(std::span<const std::uint8_t> answer) {
    auto view = wire::MessageView::parse(answer);
    if (!view) {
        return "max-age=0";
    }
    std::uint32_t smallest = std::numeric_limits<std::uint32_t>::max();
    for (const wire::Section section : {wire::Section::answer, wire::Section::authority}) {
        auto records = view->section(section);
        for (const wire::RecordView& r : records) {
            smallest = std::min(smallest, r.ttl);
        }
        if (records.error()) {
            return "max-age=0";
        }
    }
    if (smallest == std::numeric_limits<std::uint32_t>::max()) {
        smallest = 0;
    }
    return "max-age=" + std::to_string(smallest);
}

}  // namespace moat::server
