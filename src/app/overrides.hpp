// Command-line flags that override the config file for one run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "moat/config/config.hpp"

namespace moat::app {

struct Overrides {
    std::vector<std::string> listen;      ///< --listen ADDR:PORT (replaces server.listen)
    std::vector<std::string> upstreams;   ///< --upstream ADDR[:PORT] (replaces upstream.servers)
    std::vector<std::string> blocklists;  ///< --blocklist FILE (added)
    std::vector<std::string> allowlists;  ///< --allowlist FILE (added)
    std::string log_level;                ///< --log-level
};

/// Applies `o` to `config`; the error names the flag and the bad value.
[[nodiscard]] std::optional<std::string> apply_overrides(const Overrides& o,
                                                         config::Config& config);

}  // namespace moat::app
