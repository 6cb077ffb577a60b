// The OPT record of a query (RFC 6891): presence, version, DO, the client's UDP size, and the
// Client Subnet option (which we strip or pass on).
#pragma once

#include <cstdint>
#include <span>
#include <tl/expected.hpp>

#include "moat/engine/engine.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::engine {

inline constexpr std::uint16_t kEdnsOptionClientSubnet = 8;    // RFC 7871
inline constexpr std::uint16_t kEdnsOptionExtendedError = 15;  // RFC 8914

struct QueryEdns {
    ClientEdns client;
    std::uint8_t version = 0;
    /// The ECS option as (code, length, data), in the query's bytes (a copy would allocate for
    /// every query that carries one); empty when absent.
    std::span<const std::uint8_t> client_subnet;
};

/// Reads the query's OPT; the result points into the query's bytes. Errors (a record section that
/// does not parse, two OPT records, an OPT not at the root or with broken options) mean FORMERR.
tl::expected<QueryEdns, wire::WireError> read_query_edns(const wire::MessageView& query);

}  // namespace moat::engine
