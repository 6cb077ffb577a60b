// PROXY protocol v2 headers parsed from any bytes: never crashes or reads outside the buffer,
// and the three answers agree with each other. A complete header is 16 octets or more, lies
// inside the buffer and within the cap, parses the same from exactly its own octets, and every
// shorter prefix of it is incomplete and asks for more than it has; an incomplete answer asks
// for more than it got; an invalid one gives a reason and none of its prefixes is complete.
// Addresses are set exactly for PROXY over IPv4/IPv6. A second parse under a small cap agrees
// with the first.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_check.hpp"
#include "moat/server/proxy_header.hpp"

namespace {

using moat::server::ProxyCommand;
using moat::server::ProxyParse;
using State = ProxyParse::State;

constexpr std::size_t kFamilyAt = 13;
/// A cap small enough that the fuzzer reaches it often.
constexpr std::size_t kSmallMaxLength = moat::server::kProxyV2FixedSize + 64;

bool same(const ProxyParse& a, const ProxyParse& b) {
    if (a.state != b.state) {
        return false;
    }
    switch (a.state) {
        case State::incomplete: return a.needed == b.needed;
        case State::invalid: return a.reason == b.reason;
        case State::complete:
            return a.header.length == b.header.length && a.header.command == b.header.command &&
                   a.header.addresses == b.header.addresses;
    }
    return false;
}

/// Every prefix shorter than `size` is incomplete and needs more than it has, or (when
/// `allow_invalid`) is refused; none is complete.
void check_prefixes(std::span<const std::uint8_t> bytes, std::size_t size, bool allow_invalid) {
    for (std::size_t cut = 0; cut < size; ++cut) {
        const ProxyParse part = moat::server::parse_proxy_v2(bytes.first(cut));
        if (allow_invalid && part.state == State::invalid) {
            continue;
        }
        MOAT_FUZZ_CHECK(part.state == State::incomplete, "prefix " + std::to_string(cut));
        MOAT_FUZZ_CHECK(part.needed > cut,
                        std::to_string(part.needed) + " at " + std::to_string(cut));
    }
}

void check_complete(std::span<const std::uint8_t> bytes, const ProxyParse& parsed) {
    const std::size_t length = parsed.header.length;
    MOAT_FUZZ_CHECK(length >= moat::server::kProxyV2FixedSize && length <= bytes.size() &&
                        length <= moat::server::kProxyV2DefaultMaxLength,
                    std::to_string(length));
    MOAT_FUZZ_CHECK(same(moat::server::parse_proxy_v2(bytes.first(length)), parsed));
    check_prefixes(bytes, length, false);
    // Addresses exactly for PROXY over AF_INET (1) or AF_INET6 (2), as the family octet says.
    const unsigned family = bytes[kFamilyAt] >> 4U;
    const bool has_addresses =
        parsed.header.command == ProxyCommand::proxy && (family == 1 || family == 2);
    MOAT_FUZZ_CHECK(parsed.header.addresses.has_value() == has_addresses);
    if (parsed.header.addresses) {
        const auto& a = *parsed.header.addresses;
        MOAT_FUZZ_CHECK(a.source.address.v6 == (family == 2) &&
                        a.destination.address.v6 == (family == 2));
        MOAT_FUZZ_CHECK(static_cast<unsigned>(a.transport) == (bytes[kFamilyAt] & 0x0FU));
    }
}

/// The same bytes under a cap of kSmallMaxLength: a header within it parses the same, a longer
/// one is refused, and whatever the default cap refuses or still waits for is no better.
void check_small_cap(std::span<const std::uint8_t> bytes, const ProxyParse& parsed) {
    const ProxyParse small = moat::server::parse_proxy_v2(bytes, kSmallMaxLength);
    switch (parsed.state) {
        case State::complete:
            if (parsed.header.length <= kSmallMaxLength) {
                MOAT_FUZZ_CHECK(same(small, parsed));
            } else {
                MOAT_FUZZ_CHECK(small.state == State::invalid);
            }
            break;
        case State::incomplete:
            MOAT_FUZZ_CHECK(small.state != State::complete);
            if (small.state == State::incomplete) {
                MOAT_FUZZ_CHECK(small.needed == parsed.needed && small.needed <= kSmallMaxLength);
            }
            break;
        case State::invalid: MOAT_FUZZ_CHECK(small.state == State::invalid); break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> bytes(data, size);
    const ProxyParse parsed = moat::server::parse_proxy_v2(bytes);
    switch (parsed.state) {
        case State::complete: check_complete(bytes, parsed); break;
        case State::incomplete:
            MOAT_FUZZ_CHECK(parsed.needed > size, std::to_string(parsed.needed));
            MOAT_FUZZ_CHECK(parsed.needed <= moat::server::kProxyV2DefaultMaxLength);
            check_prefixes(bytes, size, false);
            break;
        case State::invalid:
            MOAT_FUZZ_CHECK(!parsed.reason.empty());
            check_prefixes(bytes, size, true);
            break;
    }
    check_small_cap(bytes, parsed);
    return 0;
}
