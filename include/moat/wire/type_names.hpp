// Mnemonics of RR types and response codes for people (logs, the CLI, the API): "AAAA" for 28, and
// RFC 3597's "TYPE123" for types without one here. Both directions, case-insensitive on input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moat::wire {

[[nodiscard]] std::string type_name(std::uint16_t type);
/// "aaaa", "AAAA", "TYPE28" or "28" → 28; nullopt for anything else.
[[nodiscard]] std::optional<std::uint16_t> type_from_name(std::string_view text);

/// The mnemonic of a response code (RFC 6895 §2.3): "NOERROR", "NXDOMAIN", ..., "RCODE12" for
/// the unassigned ones, of the 4-bit header codes 0..15.
[[nodiscard]] std::string_view rcode_name(std::uint8_t rcode) noexcept;

}  // namespace moat::wire
