// Names of the pipeline's own zones, and comparing lower-cased, uncompressed wire names by
// domain: the tests of "is this name in that zone" that several steps of the pipeline make.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "moat/wire/name.hpp"

namespace moat::engine {

/// A name the engine knows by heart (special-use and reverse zones); `text` must be valid.
[[nodiscard]] inline wire::Name name_of(std::string_view text) {
    return *wire::Name::from_text(text);
}

/// True when `name` is `zone` or below it; both lower-cased uncompressed wire names.
[[nodiscard]] inline bool is_under(std::span<const std::uint8_t> name,
                                   std::span<const std::uint8_t> zone) noexcept {
    // The zone can only be the name's last zone.size() octets: compared first, they settle
    // nearly every name in a few octets (the pipeline asks this of every query, for localhost
    // and the special-use zones). Only a matching tail needs the walk that tells whether it
    // starts at a label, not inside one ("a\x09localhost" ends in localhost's octets).
    if (zone.size() > name.size()) {
        return false;
    }
    const std::size_t start = name.size() - zone.size();
    if (!std::equal(zone.begin(), zone.end(), name.begin() + static_cast<std::ptrdiff_t>(start))) {
        return false;
    }
    std::size_t pos = 0;
    while (pos < start) {
        pos += name[pos] + 1U;
    }
    return pos == start;
}

}  // namespace moat::engine
