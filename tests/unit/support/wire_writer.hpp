// Hand-made DNS messages for the wire tests: a tiny appender that writes exactly the bytes it is
// told to (no validation, no compression), so tests can build malformed input on purpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"

namespace moat::test {

/// The uncompressed wire form of a presentation-format name; throws on a bad name.
inline std::vector<std::uint8_t> wire_name(std::string_view text) {
    auto name = wire::Name::from_text(text);
    if (!name) {
        throw std::invalid_argument("bad test name: " + std::string(text));
    }
    return {name->wire().begin(), name->wire().end()};
}

/// Concatenates byte vectors.
inline std::vector<std::uint8_t> cat(std::initializer_list<std::span<const std::uint8_t>> parts) {
    std::vector<std::uint8_t> out;
    for (const auto part : parts) {
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

inline std::vector<std::uint8_t> u16_bytes(std::uint16_t v) {
    return {static_cast<std::uint8_t>(v >> 8U), static_cast<std::uint8_t>(v)};
}

inline std::vector<std::uint8_t> u32_bytes(std::uint32_t v) {
    return {static_cast<std::uint8_t>(v >> 24U), static_cast<std::uint8_t>(v >> 16U),
            static_cast<std::uint8_t>(v >> 8U), static_cast<std::uint8_t>(v)};
}

class WireWriter {
public:
    /// Starts with a 12-byte header.
    WireWriter(std::uint16_t qd, std::uint16_t an, std::uint16_t ns, std::uint16_t ar,
               std::uint16_t flags = 0x8000, std::uint16_t id = 0x1234) {
        u16(id).u16(flags).u16(qd).u16(an).u16(ns).u16(ar);
    }

    /// One label of `count` copies of `c`.
    WireWriter& label_of(char c, unsigned count) {
        u8(count);
        for (unsigned i = 0; i < count; ++i) {
            u8(static_cast<unsigned char>(c));
        }
        return *this;
    }
    WireWriter& u8(unsigned v) {
        bytes_.push_back(static_cast<std::uint8_t>(v));
        return *this;
    }
    WireWriter& u16(std::uint16_t v) { return raw(u16_bytes(v)); }
    WireWriter& u32(std::uint32_t v) { return raw(u32_bytes(v)); }
    WireWriter& raw(std::span<const std::uint8_t> b) {
        bytes_.insert(bytes_.end(), b.begin(), b.end());
        return *this;
    }
    WireWriter& raw(std::initializer_list<unsigned> b) {
        for (const unsigned v : b) {
            u8(v);
        }
        return *this;
    }
    /// An uncompressed name from text.
    WireWriter& name(std::string_view text) { return raw(wire_name(text)); }
    /// The longest legal name, uncompressed: 63 'a', 63 'b', 63 'c', 61 'd' and the root,
    /// 255 octets.
    WireWriter& longest_name() {
        for (const char c : {'a', 'b', 'c'}) {
            label_of(c, 63);
        }
        label_of('d', 61);
        return u8(0);
    }
    /// A compression pointer to `offset`.
    WireWriter& ptr(std::size_t offset) {
        return u8(0xC0U | ((offset >> 8U) & 0x3FU)).u8(offset & 0xFFU);
    }
    /// Question fields after a name written by the caller.
    WireWriter& qfields(wire::RrType type, wire::RrClass rclass = wire::RrClass::in) {
        return u16(wire::to_u16(type)).u16(wire::to_u16(rclass));
    }
    WireWriter& question(std::string_view qname, wire::RrType type,
                         wire::RrClass rclass = wire::RrClass::in) {
        return name(qname).qfields(type, rclass);
    }
    /// Record fields after an owner written by the caller, RDLENGTH from `rdata`.
    WireWriter& rfields(wire::RrType type, std::span<const std::uint8_t> rdata,
                        std::uint16_t rclass = 1, std::uint32_t ttl = 3600) {
        u16(wire::to_u16(type)).u16(rclass).u32(ttl).u16(static_cast<std::uint16_t>(rdata.size()));
        rdata_offset_ = bytes_.size();
        return raw(rdata);
    }
    WireWriter& rr(std::string_view owner, wire::RrType type, std::span<const std::uint8_t> rdata,
                   std::uint16_t rclass = 1, std::uint32_t ttl = 3600) {
        return name(owner).rfields(type, rdata, rclass, ttl);
    }

    [[nodiscard]] std::size_t size() const { return bytes_.size(); }
    /// Offset of the RDATA of the last record written with rfields()/rr().
    [[nodiscard]] std::size_t rdata_offset() const { return rdata_offset_; }
    [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }
    [[nodiscard]] std::vector<std::uint8_t> take() { return std::move(bytes_); }

private:
    std::vector<std::uint8_t> bytes_;
    std::size_t rdata_offset_ = 0;
};

}  // namespace moat::test
