// Embedded defaults and the config-file spelling of enum values.
#include "moat/config/config.hpp"

namespace moat::config {

std::vector<Cidr> default_allowed_clients() {
    // Literals known to parse; a failure here is a programming error caught by the tests.
    std::vector<Cidr> out;
    for (const char* text : {"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                             "100.64.0.0/10", "::1/128", "fc00::/7", "fe80::/10"}) {
        if (auto cidr = parse_cidr(text)) {
            out.push_back(*cidr);
        }
    }
    return out;
}

std::vector<Cidr> default_rate_limit_exempt() {
    std::vector<Cidr> out;
    for (const char* text : {"127.0.0.0/8", "::1/128"}) {
        if (auto cidr = parse_cidr(text)) {
            out.push_back(*cidr);
        }
    }
    return out;
}

Config defaults() { return Config{}; }

const char* to_text(UpstreamStrategy v) noexcept {
    switch (v) {
        case UpstreamStrategy::failover: return "failover";
        case UpstreamStrategy::fastest: return "fastest";
        case UpstreamStrategy::hedge: return "hedge";
    }
    return "failover";
}

const char* to_text(ListFormat v) noexcept {
    switch (v) {
        case ListFormat::automatic: return "auto";
        case ListFormat::hosts: return "hosts";
        case ListFormat::domains: return "domains";
        case ListFormat::adblock: return "adblock";
        case ListFormat::regex: return "regex";
    }
    return "auto";
}

const char* to_text(BlockingMode v) noexcept {
    switch (v) {
        case BlockingMode::null_ip: return "null";
        case BlockingMode::nxdomain: return "nxdomain";
        case BlockingMode::refused: return "refused";
        case BlockingMode::custom: return "custom";
    }
    return "null";
}

const char* to_text(LogPrivacy v) noexcept {
    switch (v) {
        case LogPrivacy::full: return "full";
        case LogPrivacy::hide_domains: return "hide_domains";
        case LogPrivacy::hide_clients: return "hide_clients";
        case LogPrivacy::anonymous: return "anonymous";
    }
    return "full";
}

const char* to_text(RecordType v) noexcept {
    switch (v) {
        case RecordType::a: return "A";
        case RecordType::aaaa: return "AAAA";
        case RecordType::cname: return "CNAME";
        case RecordType::ptr: return "PTR";
        case RecordType::txt: return "TXT";
    }
    return "A";
}

const char* to_text(LogLevel v) noexcept {
    switch (v) {
        case LogLevel::trace: return "trace";
        case LogLevel::debug: return "debug";
        case LogLevel::info: return "info";
        case LogLevel::warn: return "warn";
        case LogLevel::error: return "error";
    }
    return "info";
}

}  // namespace moat::config
