// An owned resource record, for tests, configuration-made records and round trips.
//
// RDATA is held uncompressed (names inside it in full wire form), which is the form the builder
// takes and the form RFC 4034 §6.2 calls canonical apart from case. Not for the query hot path:
// constructing one allocates.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

struct Record {
    Name owner;
    RrType type{};
    std::uint16_t rclass = to_u16(RrClass::in);
    std::uint32_t ttl = 0;
    std::vector<std::uint8_t> rdata;  ///< uncompressed

    friend bool operator==(const Record&, const Record&) = default;
};

/// Copies a record out of a message, decompressing the names inside its RDATA. Fails when the
/// RDATA does not match its type's layout.
tl::expected<Record, WireError> to_record(const RecordView& rr);

/// Writes the record's RDATA into `out` with every name inside it decompressed (the form Record
/// holds) and returns its length. No allocation. Errc::no_space when `out` is too small; the
/// result is at most rdata_length + 254 octets per name in the type's layout.
tl::expected<std::size_t, WireError> decompress_rdata(const RecordView& rr,
                                                      std::span<std::uint8_t> out) noexcept;

/// Encoders for the uncompressed RDATA of common types.
namespace encode {
std::vector<std::uint8_t> a(std::array<std::uint8_t, 4> address);
std::vector<std::uint8_t> aaaa(const std::array<std::uint8_t, 16>& address);
std::vector<std::uint8_t> name(const Name& target);  ///< NS, CNAME, PTR, DNAME
std::vector<std::uint8_t> mx(std::uint16_t preference, const Name& exchange);
/// Each string must be at most 255 octets.
tl::expected<std::vector<std::uint8_t>, WireError> txt(std::span<const std::string_view> strings);
std::vector<std::uint8_t> soa(const Name& mname, const Name& rname, std::uint32_t serial,
                              std::uint32_t refresh, std::uint32_t retry, std::uint32_t expire,
                              std::uint32_t minimum);
std::vector<std::uint8_t> srv(std::uint16_t priority, std::uint16_t weight, std::uint16_t port,
                              const Name& target);
}  // namespace encode

}  // namespace moat::wire
