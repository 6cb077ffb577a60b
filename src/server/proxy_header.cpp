// PROXY v2: the fixed 16 octets are checked byte by byte as they arrive (so a wrong one is
// refused at once), then the length field bounds the address block and the TLVs.
#include "moat/server/proxy_header.hpp"

#include <algorithm>

#include "moat/core/bytes.hpp"

namespace moat::server {
namespace {

constexpr std::size_t kVersionCommandAt = 12;
constexpr std::size_t kFamilyAt = 13;
constexpr std::size_t kLengthAt = 14;
constexpr unsigned kVersion2 = 2;
constexpr std::size_t kTlvHeader = 3;  // type, 16-bit length

// Address families (high nibble of octet 13).
constexpr unsigned kAfInet = 1;
constexpr unsigned kAfInet6 = 2;

ProxyParse incomplete(std::size_t needed) noexcept {
    ProxyParse result;
    result.needed = needed;
    return result;
}

ProxyParse invalid(std::string_view reason) noexcept {
    ProxyParse result;
    result.state = ProxyParse::State::invalid;
    result.reason = reason;
    return result;
}

/// Octets of the address block for a family/transport octet; nullopt for the values the spec
/// says a receiver must refuse (anything but UNSPEC and {INET, INET6, UNIX} x {STREAM, DGRAM}).
std::optional<std::size_t> address_block_size(std::uint8_t family_transport) noexcept {
    switch (family_transport) {
        case 0x00: return 0;  // UNSPEC: nothing we can use
        case 0x11:
        case 0x12: return 12;  // IPv4: 2 x 4 octets, 2 ports
        case 0x21:
        case 0x22: return 36;  // IPv6: 2 x 16 octets, 2 ports
        case 0x31:
        case 0x32: return 216;  // AF_UNIX: 2 x 108-octet paths
        default: return std::nullopt;
    }
}

/// Checks whatever part of the fixed 16 octets has arrived; an empty reason when it is a valid
/// prefix. Each octet is judged as soon as it is there.
std::string_view check_fixed(std::span<const std::uint8_t> bytes) noexcept {
    const std::size_t n = std::min(bytes.size(), kProxyV2Signature.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (bytes[i] != kProxyV2Signature[i]) {
            return i == 0 && bytes[0] == 'P' ? "PROXY v1 text header (only v2 is accepted)"
                                             : "bad signature";
        }
    }
    if (bytes.size() <= kVersionCommandAt) {
        return {};
    }
    const unsigned version = bytes[kVersionCommandAt] >> 4U;
    const unsigned command = bytes[kVersionCommandAt] & 0x0FU;
    if (version != kVersion2) {
        return "unsupported version";
    }
    if (command > static_cast<unsigned>(ProxyCommand::proxy)) {
        return "unknown command";
    }
    // LOCAL ignores the family (§2.2), so only PROXY has its family judged.
    if (bytes.size() > kFamilyAt && command == static_cast<unsigned>(ProxyCommand::proxy) &&
        !address_block_size(bytes[kFamilyAt])) {
        return "unknown address family or transport";
    }
    return {};
}

/// Whether the TLVs in `block` (what follows the addresses) each lie whole inside it.
bool tlvs_fit(std::span<const std::uint8_t> block) noexcept {
    std::size_t pos = 0;
    while (pos < block.size()) {
        if (block.size() - pos < kTlvHeader) {
            return false;
        }
        pos += kTlvHeader + load_u16(block.data() + pos + 1);
    }
    return pos == block.size();
}

/// The endpoint at `address` (4 or 16 octets) with the port at `port`.
ProxyEndpoint endpoint(const std::uint8_t* address, bool v6, const std::uint8_t* port) noexcept {
    ProxyEndpoint out;
    out.address.v6 = v6;
    std::copy_n(address, v6 ? 16 : 4, out.address.bytes.begin());
    out.port = load_u16(port);
    return out;
}

}  // namespace

ProxyParse parse_proxy_v2(std::span<const std::uint8_t> bytes, std::size_t max_length) noexcept {
    if (const std::string_view reason = check_fixed(bytes); !reason.empty()) {
        return invalid(reason);
    }
    if (bytes.size() < kProxyV2FixedSize) {
        return incomplete(kProxyV2FixedSize);
    }
    const std::size_t total = kProxyV2FixedSize + load_u16(bytes.data() + kLengthAt);
    if (total > max_length) {
        return invalid("header longer than the limit");
    }
    const auto command = static_cast<ProxyCommand>(bytes[kVersionCommandAt] & 0x0FU);
    const std::uint8_t family_transport = bytes[kFamilyAt];
    // check_fixed() has accepted the family of a PROXY header, so the size is known.
    const std::size_t address_size =
        command == ProxyCommand::proxy ? address_block_size(family_transport).value_or(0) : 0;
    if (kProxyV2FixedSize + address_size > total) {
        return invalid("address block longer than the header");
    }
    if (bytes.size() < total) {
        return incomplete(total);
    }

    ProxyParse result;
    result.state = ProxyParse::State::complete;
    result.header.length = total;
    result.header.command = command;
    // LOCAL and UNSPEC: the block is ignored whole (its layout is not defined), and the caller
    // keeps the socket's peer.
    if (command == ProxyCommand::local || family_transport == 0x00) {
        return result;
    }
    const std::size_t tlvs_at = kProxyV2FixedSize + address_size;
    if (!tlvs_fit(bytes.subspan(tlvs_at, total - tlvs_at))) {
        return invalid("TLV runs past the header");
    }
    const unsigned family = family_transport >> 4U;
    if (family == kAfInet || family == kAfInet6) {
        // Source address, destination address, source port, destination port.
        const bool v6 = family == kAfInet6;
        const std::size_t size = v6 ? 16 : 4;
        const std::uint8_t* block = bytes.data() + kProxyV2FixedSize;
        result.header.addresses =
            ProxyAddresses{static_cast<ProxyTransport>(family_transport & 0x0FU),
                           endpoint(block, v6, block + 2 * size),
                           endpoint(block + size, v6, block + 2 * size + 2)};
    }
    return result;
}

}  // namespace moat::server
