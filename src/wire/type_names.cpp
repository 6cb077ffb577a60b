#include "moat/wire/type_names.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "moat/core/ascii.hpp"

namespace moat::wire {
namespace {

// The types a household's log shows, and those people search for.
constexpr std::array<std::pair<std::uint16_t, std::string_view>, 22> kNames{{
    {1, "A"},      {2, "NS"},     {5, "CNAME"}, {6, "SOA"},     {12, "PTR"},   {13, "HINFO"},
    {15, "MX"},    {16, "TXT"},   {28, "AAAA"}, {33, "SRV"},    {35, "NAPTR"}, {39, "DNAME"},
    {43, "DS"},    {46, "RRSIG"}, {47, "NSEC"}, {48, "DNSKEY"}, {50, "NSEC3"}, {64, "SVCB"},
    {65, "HTTPS"}, {252, "AXFR"}, {255, "ANY"}, {257, "CAA"},
}};

std::optional<std::uint16_t> number(std::string_view digits) {
    std::uint16_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
        return std::nullopt;
    }
    return value;
}

}  // namespace

std::string type_name(std::uint16_t type) {
    for (const auto& [value, name] : kNames) {
        if (value == type) {
            return std::string(name);
        }
    }
    return "TYPE" + std::to_string(type);
}

std::optional<std::uint16_t> type_from_name(std::string_view text) {
    for (const auto& [value, name] : kNames) {
        if (ascii_iequal(text, name)) {
            return value;
        }
    }
    if (text.size() > 4 && ascii_iequal(text.substr(0, 4), "TYPE")) {
        return number(text.substr(4));
    }
    return number(text);
}

std::string_view rcode_name(std::uint8_t rcode) noexcept {
    static constexpr std::array<std::string_view, 16> kNames{
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",  "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET",
        "NXRRSET", "NOTAUTH", "NOTZONE",  "DSOTYPENI", "RCODE12", "RCODE13", "RCODE14",  "RCODE15"};
    return kNames[rcode & 0x0FU];
}

}  // namespace moat::wire
