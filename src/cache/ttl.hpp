// TTL rules shared by the cache's files. Private to the cache module.
#pragma once

#include <cstdint>

namespace moat::cache {

/// RFC 2181 §8: a TTL with the top bit set is treated as zero.
[[nodiscard]] constexpr std::uint32_t sanitise_ttl(std::uint32_t ttl) noexcept {
    return (ttl & 0x80000000U) != 0 ? 0 : ttl;
}

}  // namespace moat::cache
