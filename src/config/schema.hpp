// The schema readers: document tree → validated Config (schema.cpp), with the [local] section
// in local_schema.cpp and [[groups]] in group_schema.cpp.
#pragma once

#include <string_view>
#include <tl/expected.hpp>

#include "moat/config/config.hpp"
#include "moat/config/config_error.hpp"
#include "node.hpp"
#include "table_reader.hpp"

namespace moat::config::detail {

/// Validates the whole document; all errors or a Config.
tl::expected<Config, ConfigErrors> to_config(const Node& root, std::string_view file_name);

/// [local]: `records` (an array of {name, type, value} tables, or a table of
/// name = "TYPE VALUE" / ["TYPE VALUE", ...]), `hosts_file`, `ttl`.
void read_local(TableReader& t, LocalConfig& out);

/// [[groups]] (group_schema.cpp); after the lists, whose names groups refer to.
void read_groups(TableReader& top, Config& config);

/// The names of [blocking] mode, shared by a group's `blocking_mode`.
[[nodiscard]] EnumNames<BlockingMode> blocking_mode_names();

}  // namespace moat::config::detail
