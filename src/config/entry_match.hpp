// Which entry of an array of tables ([[blocklists]], [[groups]], ...) an entry of the changed
// tree continues, so that a comment written above an entry stays with it when the API removes,
// adds or edits entries before it. Private to the config module (document.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "moat/config/document.hpp"

namespace moat::config::detail {

/// For each entry of `now`, the index of the entry of `before` it continues, or nothing for one
/// the change added. Both are arrays of tables. An entry equal to an old one continues it; an
/// entry the change edited continues the old entry left over that shares the most keys with
/// equal values (at least one), the nearer in position on a tie. No old entry is used twice.
[[nodiscard]] std::vector<std::optional<std::size_t>> match_entries(const Document& before,
                                                                    const Document& now);

}  // namespace moat::config::detail
