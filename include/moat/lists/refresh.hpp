// Refreshing one downloaded list: download, check, then install or keep the last good copy; and
// when each list is due next.
//
// A download replaces the copy only when it has entries and has not shrunk by more than the
// policy allows; otherwise the copy stays and the status says why. A copy that no longer matches
// its status (size, hash: copy_check.hpp) is downloaded whole, without validators, so a damaged
// copy is repaired rather than confirmed by a 304. Nothing here compiles a snapshot: the caller
// recompiles when a refresh reports `updated`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "moat/filter/list.hpp"
#include "moat/lists/fetch.hpp"
#include "moat/lists/list_status.hpp"
#include "moat/lists/state_dir.hpp"

namespace moat::lists {

struct ListSource {
    std::string name;
    std::string url;
    filter::ListFormat format = filter::ListFormat::auto_detect;
    bool include_subdomains = false;
    std::chrono::seconds refresh{std::chrono::hours{24}};
};

struct RefreshPolicy {
    FetchOptions fetch;
    /// Reject a download with fewer than (100 - this)% of the copy's entries; 100: never.
    std::uint32_t max_shrink_percent = 50;
};

enum class RefreshResult : std::uint8_t {
    updated,    ///< a new copy is installed: recompile
    unchanged,  ///< 304, or the same body again: nothing to do
    failed,     ///< download failed or was rejected: the last good copy (if any) stays
};

struct RefreshOutcome {
    RefreshResult result = RefreshResult::failed;
    ListStatus status;  ///< as the refresh left it
    /// The status reached the state directory; when not (a full or read-only disk) it is held in
    /// memory instead (StateDir::hold_status) and `status.last_error` says why when nothing else
    /// failed.
    bool saved = true;
};

/// The wall clock in Unix seconds, the unit of ListStatus times.
[[nodiscard]] std::int64_t unix_now() noexcept;

/// The validators a refresh sends for the copy `status` describes: none when the copy on disk does
/// not match it (`copy_matches` false), so that the server sends the whole list.
[[nodiscard]] Validators conditional_validators(const ListStatus& status, bool copy_matches);

/// Downloads `source` and updates its copy and status in `dir`, starting from
/// `dir.read_status` (a held status first). Nothing is downloaded when `dir` cannot be written:
/// the status says why. `now` is Unix seconds.
[[nodiscard]] RefreshOutcome refresh_list(const ListSource& source, const StateDir& dir,
                                          const RefreshPolicy& policy, std::int64_t now);

/// When `source` is due (Unix seconds): at once without an attempt on record; after a failure,
/// 1, 2, 4, ... minutes after the last attempt (at most the refresh interval); else the refresh
/// interval after the last success plus a jitter of up to a tenth of it (at most one hour)
/// drawn from `jitter_seed`, so homes started together do not ask the server together.
[[nodiscard]] std::int64_t next_refresh(const ListSource& source, const ListStatus* status,
                                        std::uint64_t jitter_seed) noexcept;

}  // namespace moat::lists
