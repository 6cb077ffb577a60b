// What a "parse" benchmark must touch, and a checksum that proves it did.
//
// Every library's visitor (dnsmoat here; libknot and ldns in bench/compare) walks a message the
// same way and feeds the same sequence of values into VisitStats: the header fields, each name
// label by label, each record's type/class/TTL, and each typed RDATA field (addresses, the names
// inside NS/CNAME/PTR/MX/SOA, SOA's numbers, every TXT string, every EDNS option). Equal stats
// mean the libraries saw the same message.
//
// The mix is order- and content-sensitive but deliberately cheap (a rotate and an add on the
// dependency chain; the multiply is off it), and byte fields are read as at most two loads per
// 8 octets with no per-byte loop, so the visit costs the same small amount for every library
// and does not hide differences between decoders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moat::bench {

struct VisitStats {
    static constexpr std::uint64_t kPrime = 0x100000001B3ULL;

    std::uint64_t records = 0;
    std::uint64_t names = 0;
    std::uint64_t labels = 0;
    std::uint64_t checksum = 0xCBF29CE484222325ULL;

    void value(std::uint64_t v) noexcept {
        checksum = ((checksum << 5U) | (checksum >> 59U)) + v * kPrime;
    }

    /// A byte field: its length, then its octets as 64-bit words. Short fields use overlapping
    /// loads that together cover every octet, so each length maps its content one-to-one.
    void bytes(const std::uint8_t* p, std::size_t n) noexcept {
        value(n);
        if (n >= 4 && n <= 8) {
            value(load32(p) | (static_cast<std::uint64_t>(load32(p + n - 4)) << 32U));
        } else if (n > 0 && n < 4) {
            value((static_cast<std::uint64_t>(p[0]) << 16U) |
                  (static_cast<std::uint64_t>(p[n / 2]) << 8U) | p[n - 1]);
        } else if (n > 8) {
            std::size_t i = 0;
            for (; i + 8 < n; i += 8) {
                value(load64(p + i));
            }
            value(load64(p + n - 8));  // the last 8 octets, overlapping the previous word
        }
    }

    void begin_name() noexcept { ++names; }
    void label(const std::uint8_t* p, std::size_t n) noexcept {
        ++labels;
        bytes(p, n);
    }
    void end_name() noexcept { value(0x100); }  // no label value can be 0x100

    friend bool operator==(const VisitStats&, const VisitStats&) = default;

private:
    static std::uint32_t load32(const std::uint8_t* p) noexcept {
        std::uint32_t w = 0;
        std::memcpy(&w, p, 4);
        return w;
    }
    static std::uint64_t load64(const std::uint8_t* p) noexcept {
        std::uint64_t w = 0;
        std::memcpy(&w, p, 8);
        return w;
    }
};

}  // namespace moat::bench
