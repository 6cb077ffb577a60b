// The query dnsmoat sends upstream for a client's question.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "moat/cache/cache_key.hpp"

namespace moat::engine {

/// Writes into `out`: ID 0 (the upstream client sets a random one), RD set, CD echoed from the
/// client, the lower-cased question of `key`, and an OPT with our UDP size, the client's DO bit
/// (`key.dnssec_ok()`) and `options` (already encoded; e.g. the client's ECS when not stripped).
void build_forward_query(const cache::CacheKey& key, bool checking_disabled,
                         std::uint16_t udp_payload_size, std::span<const std::uint8_t> options,
                         std::vector<std::uint8_t>& out);

}  // namespace moat::engine
