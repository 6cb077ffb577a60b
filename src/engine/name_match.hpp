// Comparing lower-cased, uncompressed wire names by domain: the tests of "is this name in that
// zone" that several steps of the pipeline make.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace moat::engine {

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
