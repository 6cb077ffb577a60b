// Downloads in a child process: the daemon asks `dnsmoat fetch-lists` (the same binary) to
// refresh a set of lists, so libcurl, the TLS libraries and whatever a list server sends never
// live in the DNS process (its memory stays that of DNS alone, and a crash in a download cannot
// take DNS down).
//
// The request goes to the child's stdin as JSON; the child refreshes each list (refresh_list:
// download, check, install, status file) and prints one "RESULT KEY" line per list; the parent
// reads each list's status back from the state directory, which the child wrote.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "moat/lists/refresh.hpp"

namespace moat::lists {

struct FetchRequest {
    std::string state_dir;
    RefreshPolicy policy;  ///< `policy.fetch.cancel` is not sent: the parent kills the child
    std::vector<ListSource> sources;
};

[[nodiscard]] std::string to_json(const FetchRequest& request);
[[nodiscard]] std::optional<FetchRequest> request_from_json(std::string_view text);

/// Parent side: runs `exe fetch-lists`, sends `request` and waits for the child, killing it
/// when `cancel` is set or it outlives the sum of the lists' timeouts. One outcome per source,
/// in order; a list the child did not report is `failed` with the reason in its status.
[[nodiscard]] std::vector<RefreshOutcome> refresh_in_child(const std::filesystem::path& exe,
                                                           const FetchRequest& request,
                                                           const std::atomic<bool>& cancel);

/// Child side (`dnsmoat fetch-lists`): reads a request from `in`, refreshes each list, writes
/// "updated|unchanged|failed KEY" lines to `out`. Returns the exit status (0, or 2 when the
/// request cannot be read).
int serve_fetch_request(std::istream& in, std::ostream& out);

}  // namespace moat::lists
