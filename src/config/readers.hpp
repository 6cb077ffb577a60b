// The two syntax readers: text → detail::Node tree (a table at the root), or the syntax errors
// found (TOML and JSON parsers stop at the first one).
#pragma once

#include <string_view>
#include <tl/expected.hpp>

#include "moat/config/config_error.hpp"
#include "node.hpp"

namespace moat::config::detail {

tl::expected<Node, ConfigErrors> read_toml(std::string_view text, std::string_view file_name);
tl::expected<Node, ConfigErrors> read_json(std::string_view text, std::string_view file_name);

}  // namespace moat::config::detail
