// What a command starts from: the config file (or none: the embedded defaults) and the command
// line's overrides, and the config they make together.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "moat/config/config.hpp"
#include "overrides.hpp"

namespace moat::app {

struct Launch {
    /// The config file; none: the embedded defaults (with the built-in blocklist).
    std::optional<std::filesystem::path> config_file;
    Overrides overrides;
};

/// The config of `launch`: its file (or the embedded defaults) with the overrides applied; the
/// error text names file, line and key (or the flag).
[[nodiscard]] tl::expected<config::Config, std::string> load_config(const Launch& launch);

}  // namespace moat::app
