// Writing answers: error answers, blocked answers, local answers, and turning a stored (cached or
// freshly normalised) answer into what one client receives.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "moat/engine/engine.hpp"
#include "moat/engine/local_zone.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {

/// Extended DNS Error info codes we send (RFC 8914 §4).
enum class ExtendedError : std::uint16_t {
    none = 0xFFFF,
    stale_answer = 3,
    blocked = 15,
    filtered = 17,
    prohibited = 18,
    no_reachable_authority = 22,
};

/// Longest EXTRA-TEXT put in an Extended DNS Error (a list name: no need for more).
inline constexpr std::size_t kMaxEdeText = 120;
/// Room for one EDE option: code, length, info code, text.
using EdeBuffer = std::array<std::uint8_t, 6 + kMaxEdeText>;

/// The client side of one answer: whom it goes to and how big it may be.
struct ReplyTo {
    std::uint16_t id = 0;
    std::uint16_t query_flags = 0;
    /// Echo the query's opcode (answers to opcodes other than QUERY, RFC 1035 §4.1.1).
    bool echo_opcode = false;
    std::span<const std::uint8_t> qname;  ///< uncompressed, the client's spelling
    wire::RrType qtype{};
    wire::RrClass qclass{};
    ClientEdns edns;
    std::uint16_t our_udp_size = 1232;
    std::size_t limit = 512;  ///< octets the answer may have
    /// EXTRA-TEXT of the answer's Extended DNS Error, if it has one (the blocking list's name);
    /// must stay valid until the answer is written.
    std::string_view ede_text;
};

/// The size limit of an answer to `client` with `edns`, capped by our own UDP size.
[[nodiscard]] std::size_t answer_limit(Transport transport, const ClientEdns& edns,
                                       std::uint16_t our_udp_size) noexcept;

/// A header-only answer (no question): FORMERR to a query whose question could not be read.
std::size_t write_header_only(std::span<std::uint8_t> out, const wire::Header& query,
                              wire::Rcode rcode) noexcept;

/// Question echoed, no records: error codes, NODATA, NXDOMAIN. `aa`: answered authoritatively.
std::size_t write_empty(std::span<std::uint8_t> out, const ReplyTo& to, wire::Rcode rcode,
                        bool aa = false, ExtendedError ede = ExtendedError::none) noexcept;

/// The answer to a blocked name in the configured mode.
std::size_t write_blocked(std::span<std::uint8_t> out, const ReplyTo& to,
                          const BlockingOptions& blocking) noexcept;
/// write_blocked()'s common case, an address or NODATA answer that fits, written octet by octet
/// without the message builder (a blocked query's answer is always the same shape, and building
/// it took a quarter of the blocked path). 0 for any other case. The same octets as
/// write_blocked_built(), which a test checks over every mode, type, EDNS and size.
std::size_t write_blocked_directly(std::span<std::uint8_t> out, const ReplyTo& to,
                                   const BlockingOptions& blocking) noexcept;
/// write_blocked() with the message builder: every case, truncation included.
std::size_t write_blocked_built(std::span<std::uint8_t> out, const ReplyTo& to,
                                const BlockingOptions& blocking) noexcept;

/// One record set answered authoritatively for the question's own name (localhost, local zone).
/// `records` are (type, uncompressed RDATA); CNAMEs are followed inside `zone` (if given).
std::size_t write_local(std::span<std::uint8_t> out, const ReplyTo& to,
                        const std::vector<LocalRecord>& records, const LocalZone* zone,
                        std::uint32_t ttl) noexcept;

/// Turns the stored answer at the start of `out` (`size` octets, the client's ID already in
/// place, no OPT) into the client's answer: RD and CD echoed, RA set, OPT appended when the
/// query had one, and rebuilt to a whole record with TC set when it exceeds `to.limit`.
/// `scratch` and `rdata` are reusable buffers. Returns the new size, 0 when unusable.
std::size_t finish_for_client(std::span<std::uint8_t> out, std::size_t size, const ReplyTo& to,
                              ExtendedError ede, std::vector<std::uint8_t>& scratch,
                              std::vector<std::uint8_t>& rdata) noexcept;

}  // namespace moat::engine
