// A list status as a JSON value rather than text, for documents that carry statuses inside them
// (the fetcher's request and its result lines); list_status.hpp turns the same value into text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "moat/lists/list_status.hpp"

namespace moat::lists::detail {

[[nodiscard]] nlohmann::json status_document(const ListStatus& status);
/// Empty when `doc` is not a status document.
[[nodiscard]] std::optional<ListStatus> status_from_document(const nlohmann::json& doc);

}  // namespace moat::lists::detail
