// Compiling the configured lists (and, without a config file, the built-in one) into a snapshot.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "moat/config/config.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::app {

/// Where each compiled list came from, by list index: for `dnsmoat query` to quote the rule.
struct ListSource {
    std::string name;
    std::string path;  ///< empty for the built-in list
    bool embedded = false;
};

struct CompiledLists {
    std::shared_ptr<const filter::Snapshot> snapshot;
    std::vector<ListSource> sources;
    /// Lists that could not be read (file missing, unreadable, URL not supported yet).
    std::vector<std::string> problems;
};

/// Compiles every enabled list of `config`, plus the built-in list when `with_embedded`. Logs a
/// line per list and its first invalid lines (file:line). A list that cannot be read is skipped
/// and named in `problems`; the result is null only when the compiler itself fails.
[[nodiscard]] CompiledLists compile_lists(const config::Config& config, bool with_embedded);

}  // namespace moat::app
