// The 12-byte DNS message header (RFC 1035 §4.1.1) as plain fields.
//
// Flags are kept as the raw 16-bit word so a response can echo a query's flags with one copy;
// the accessors name each bit.
#pragma once

#include <cstdint>

#include "moat/core/bytes.hpp"
#include "moat/wire/types.hpp"

namespace moat::wire {

struct Header {
    static constexpr std::uint16_t kQr = 0x8000;
    static constexpr std::uint16_t kAa = 0x0400;
    static constexpr std::uint16_t kTc = 0x0200;
    static constexpr std::uint16_t kRd = 0x0100;
    static constexpr std::uint16_t kRa = 0x0080;
    static constexpr std::uint16_t kAd = 0x0020;
    static constexpr std::uint16_t kCd = 0x0010;

    std::uint16_t id = 0;
    std::uint16_t flags = 0;
    std::uint16_t qdcount = 0;
    std::uint16_t ancount = 0;
    std::uint16_t nscount = 0;
    std::uint16_t arcount = 0;

    [[nodiscard]] bool qr() const noexcept { return (flags & kQr) != 0; }
    [[nodiscard]] bool aa() const noexcept { return (flags & kAa) != 0; }
    [[nodiscard]] bool tc() const noexcept { return (flags & kTc) != 0; }
    [[nodiscard]] bool rd() const noexcept { return (flags & kRd) != 0; }
    [[nodiscard]] bool ra() const noexcept { return (flags & kRa) != 0; }
    [[nodiscard]] bool ad() const noexcept { return (flags & kAd) != 0; }
    [[nodiscard]] bool cd() const noexcept { return (flags & kCd) != 0; }
    [[nodiscard]] Opcode opcode() const noexcept {
        return static_cast<Opcode>((flags >> 11U) & 0x0FU);
    }
    /// The low four bits of the response code; EDNS carries the upper eight (RFC 6891 §6.1.3).
    [[nodiscard]] std::uint8_t rcode_low() const noexcept {
        return static_cast<std::uint8_t>(flags & 0x0FU);
    }

    void set_flag(std::uint16_t bit, bool on) noexcept {
        flags = static_cast<std::uint16_t>(on ? (flags | bit) : (flags & ~bit));
    }
    void set_opcode(Opcode op) noexcept {
        flags = static_cast<std::uint16_t>((flags & ~0x7800U) |
                                           ((static_cast<unsigned>(op) & 0x0FU) << 11U));
    }
    void set_rcode_low(std::uint8_t rcode) noexcept {
        flags = static_cast<std::uint16_t>((flags & ~0x000FU) | (rcode & 0x0FU));
    }

    /// Reads a header from 12 bytes the caller has checked exist.
    [[nodiscard]] static Header load(const std::uint8_t* p) noexcept {
        return Header{load_u16(p),     load_u16(p + 2), load_u16(p + 4),
                      load_u16(p + 6), load_u16(p + 8), load_u16(p + 10)};
    }
    /// Writes the header into 12 bytes the caller has checked exist.
    void store(std::uint8_t* p) const noexcept {
        store_u16(p, id);
        store_u16(p + 2, flags);
        store_u16(p + 4, qdcount);
        store_u16(p + 6, ancount);
        store_u16(p + 8, nscount);
        store_u16(p + 10, arcount);
    }

    friend bool operator==(const Header&, const Header&) = default;
};

}  // namespace moat::wire
