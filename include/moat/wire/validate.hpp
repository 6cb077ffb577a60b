// A single-pass, fail-fast check of a whole message: header counts, every name (with the limits
// of name_decoder.hpp), every record's framing and every typed RDATA layout (rdata.hpp), the OPT
// rules of RFC 6891 (at most one, in the additional section, owned by the root), and no bytes
// after the last record. Returns the first error with its offset. Allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <tl/expected.hpp>

#include "moat/wire/wire_error.hpp"

namespace moat::wire {

Status validate(std::span<const std::uint8_t> msg) noexcept;

}  // namespace moat::wire
