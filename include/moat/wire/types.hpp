// DNS vocabulary: record types, classes, opcodes, rcodes, sections and the hard limits of the
// wire format (RFC 1035 §2.3.4, §4.1.4). Values are the IANA registry numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moat::wire {

enum class RrType : std::uint16_t {
    a = 1,
    ns = 2,
    md = 3,
    mf = 4,
    cname = 5,
    soa = 6,
    mb = 7,
    mg = 8,
    mr = 9,
    null_rr = 10,
    wks = 11,
    ptr = 12,
    hinfo = 13,
    minfo = 14,
    mx = 15,
    txt = 16,
    rp = 17,
    afsdb = 18,
    sig = 24,
    key = 25,
    px = 26,
    aaaa = 28,
    nxt = 30,
    srv = 33,
    naptr = 35,
    kx = 36,
    dname = 39,
    opt = 41,
    ds = 43,
    rrsig = 46,
    nsec = 47,
    dnskey = 48,
    nsec3 = 50,
    nsec3param = 51,
    tlsa = 52,
    svcb = 64,
    https = 65,
    any = 255,
    uri = 256,
    caa = 257,
};

enum class RrClass : std::uint16_t {
    in = 1,
    ch = 3,
    hs = 4,
    none = 254,
    any = 255,
};

enum class Opcode : std::uint8_t {
    query = 0,
    iquery = 1,
    status = 2,
    notify = 4,
    update = 5,
};

/// Response codes, including the extended ones that need EDNS (values above 15).
enum class Rcode : std::uint16_t {
    noerror = 0,
    formerr = 1,
    servfail = 2,
    nxdomain = 3,
    notimp = 4,
    refused = 5,
    badvers = 16,
};

/// The three record sections after the question, in wire order.
enum class Section : std::uint8_t {
    answer = 0,
    authority = 1,
    additional = 2,
};

/// Wire-format limits (RFC 1035 §2.3.4 and §4.1.4).
inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kMaxNameLength = 255;  ///< octets, uncompressed, root included
inline constexpr std::size_t kMaxLabelLength = 63;  ///< octets
inline constexpr std::size_t kMaxLabels = 127;      ///< labels, root excluded
inline constexpr std::size_t kMaxMessageSize = 65535;
inline constexpr std::size_t kMaxPointerOffset = 0x3FFF;  ///< 14-bit compression pointer
inline constexpr std::size_t kClassicUdpSize = 512;       ///< without EDNS (RFC 1035 §4.2.1)

/// Most compression pointers one name may follow. A pointer must point strictly before the
/// segment that contains it, so chains cannot loop; the limit only bounds the work. 128 accepts
/// every legal name (each hop but the first must lead to at least one more label, and a name
/// has at most 127) including the 121-hop owners of the `pathological` benchmark fixture.
inline constexpr std::size_t kMaxPointerHops = 128;

[[nodiscard]] constexpr std::uint16_t to_u16(RrType t) noexcept {
    return static_cast<std::uint16_t>(t);
}
[[nodiscard]] constexpr std::uint16_t to_u16(RrClass c) noexcept {
    return static_cast<std::uint16_t>(c);
}

}  // namespace moat::wire
