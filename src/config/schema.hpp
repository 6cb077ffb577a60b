// The schema readers: document tree → validated Config (schema.cpp), with the [local] section
// in local_schema.cpp.
#pragma once

#include <string_view>
#include <tl/expected.hpp>

#include "moat/config/config.hpp"
#include "moat/config/config_error.hpp"
#include "node.hpp"

namespace moat::config::detail {

class TableReader;

/// Validates the whole document; all errors or a Config.
tl::expected<Config, ConfigErrors> to_config(const Node& root, std::string_view file_name);

/// [local]: `records` (an array of {name, type, value} tables, or a table of
/// name = "TYPE VALUE" / ["TYPE VALUE", ...]), `hosts_file`, `ttl`.
void read_local(TableReader& t, LocalConfig& out);

}  // namespace moat::config::detail
