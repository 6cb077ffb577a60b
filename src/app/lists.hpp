// Compiling the configured lists (and, without a config file, the built-in one) into a snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "moat/config/config.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::app {

/// Where each compiled list came from, by list index: for `dnsmoat query` to quote the rule.
struct ListSource {
    std::string name;
    std::string path;  ///< empty for the built-in list; the copy on disk for a `url` list
    bool embedded = false;
};

struct CompiledLists {
    std::shared_ptr<const filter::Snapshot> snapshot;
    std::vector<ListSource> sources;
    /// Local lists that could not be read (file missing, unreadable): a reload with problems
    /// keeps the running lists.
    std::vector<std::string> problems;
    /// `url` lists with no downloaded copy yet: compiled without them, added once downloaded.
    std::vector<std::string> pending;
};

[[nodiscard]] filter::ListFormat list_format(config::ListFormat f) noexcept;

/// The id (filter::ListSpec::id) of a configured list, stable whatever lists fail to load: 0 is
/// the built-in list, then the [[blocklists]] in order, then the [[allowlists]].
[[nodiscard]] std::uint32_t list_id(const config::Config& config, filter::ListKind kind,
                                    std::size_t index) noexcept;

/// The names the [rules] lists carry in verdicts, the log and EDE texts.
inline constexpr const char* kDenyRulesName = "deny rules";
inline constexpr const char* kAllowRulesName = "allow rules";

/// The list id of [rules] deny (kind block) or allow (kind allow): after every configured list.
[[nodiscard]] std::uint32_t rules_id(const config::Config& config, filter::ListKind kind) noexcept;

/// The rules as a list file's text, one per line (so a rule's line is its index + 1).
[[nodiscard]] std::string rules_text(const std::vector<std::string>& rules);

/// "2026-11-30 04:12:09" in the local time zone, or "never" for 0: times of list downloads.
[[nodiscard]] std::string local_time_text(std::int64_t unix_seconds);

/// Compiles every enabled list of `config`, plus the built-in list when `with_embedded`. `url`
/// lists are read from their last good copy in `config.lists.state_dir`. Logs a line per list and
/// its first invalid lines (file:line). A list that cannot be read is skipped and named in
/// `problems` (or `pending`); the result is null only when the compiler itself fails.
[[nodiscard]] CompiledLists compile_lists(const config::Config& config, bool with_embedded);

}  // namespace moat::app
