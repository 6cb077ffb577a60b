// Loading a configuration: a file or a string in TOML or JSON (one schema, two syntaxes) →
// a validated Config, or every error found with file, line and key path.
//
// The syntax follows the file extension (.toml, .json; anything else is an error). A file that
// sets nothing yields defaults(). Keys absent from the file keep their defaults. The result is
// all or nothing: with any error there is no Config, so a reload keeps the running one (the
// caller's job). Reads the file; no logging, no other side effect.
#pragma once

#include <filesystem>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/config/config.hpp"
#include "moat/config/config_error.hpp"

namespace moat::config {

enum class Syntax : std::uint8_t { toml, json };

/// The syntax for `path` from its extension (case-insensitive), else a bad_extension error.
tl::expected<Syntax, ConfigError> syntax_of(const std::filesystem::path& path);

/// Reads and validates `path`. Errors name the file as `path` was given.
tl::expected<Config, ConfigErrors> load_file(const std::filesystem::path& path);

/// Validates `text` in `syntax`; errors name `file_name` (e.g. "<defaults>" or a test label).
tl::expected<Config, ConfigErrors> parse(std::string_view text, Syntax syntax,
                                         std::string_view file_name = "<string>");

}  // namespace moat::config
