// What both HTTP/2 sessions (the DoH listener's server side and the DoH upstreams' client side)
// share about nghttp2: header fields handed to it, and the limits RFC 9113 sets.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace moat::http::h2 {

/// pending_output() stops pulling frames past this, so output the peer does not read stays in
/// nghttp2's queue, where its flood limits (PING and SETTINGS acks) see it.
inline constexpr std::size_t kOutputHighWater = std::size_t{64} * 1024;

/// Stream ids are 31 bits (RFC 9113 §5.1.1).
inline constexpr std::uint32_t kMaxStreamId = std::numeric_limits<std::int32_t>::max();

/// RFC 9113 §6.5.2: each field of a header list counts its name, its value and 32 bytes.
inline constexpr std::size_t kFieldOverhead = 32;

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) noexcept {
    return {reinterpret_cast<const char*>(data), size};
}

/// nghttp2 copies name and value (NGHTTP2_NV_FLAG_NONE); its struct is only not const-correct.
inline nghttp2_nv make_nv(std::string_view name, std::string_view value) noexcept {
    return {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
            const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())),
            name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

}  // namespace moat::http::h2
