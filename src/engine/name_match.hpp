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
    std::size_t pos = 0;
    while (pos < name.size()) {
        if (name.size() - pos == zone.size() &&
            std::equal(zone.begin(), zone.end(), name.begin() + static_cast<std::ptrdiff_t>(pos))) {
            return true;
        }
        if (name[pos] == 0) {
            break;
        }
        pos += name[pos] + 1U;
    }
    return false;
}

}  // namespace moat::engine
