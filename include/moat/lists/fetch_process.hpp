// Downloads in a child process: the daemon asks `dnsmoat fetch-lists` (the same binary) to
// refresh a set of lists, so libcurl, the TLS libraries and whatever a list server sends never
// live in the DNS process (its memory stays that of DNS alone, and a crash in a download cannot
// take DNS down).
//
// The request goes to the child's stdin as JSON; the child refreshes each list (refresh_list:
// download, check, install, status file) and prints one JSON line per list with the result and
// the status it left. The parent takes the status from that line, not from the state directory:
// a full or read-only disk keeps the child from writing it, and the reason and the failure count
// must still reach the log, the schedule and the metrics. Statuses the disk refused are held in
// memory (StateDir::hold_status) and sent with the next request, so the child starts from them.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moat/lists/refresh.hpp"

namespace moat::lists {

struct FetchRequest {
    std::string state_dir;
    RefreshPolicy policy;  ///< `policy.fetch.cancel` is not sent: the parent kills the child
    std::vector<ListSource> sources;
    /// By StateDir key: statuses newer than their files (the disk refused them). Filled by
    /// refresh_in_child from what the parent holds.
    std::map<std::string, ListStatus> held;
};

[[nodiscard]] std::string to_json(const FetchRequest& request);
[[nodiscard]] std::optional<FetchRequest> request_from_json(std::string_view text);

/// Parent side: runs `exe fetch-lists`, sends `request` and waits for the child, killing it
/// when `cancel` is set or it outlives the sum of the lists' timeouts. One outcome per source,
/// in order; a list the child did not report is `failed` with the reason in its status. Holds
/// (or releases) each status in memory as the child could (not) write it.
[[nodiscard]] std::vector<RefreshOutcome> refresh_in_child(const std::filesystem::path& exe,
                                                           const FetchRequest& request,
                                                           const std::atomic<bool>& cancel);

/// Child side (`dnsmoat fetch-lists`): reads a request from `in`, refreshes each list, writes a
/// result line per list to `out` ({"key", "result": "updated|unchanged|failed", "saved",
/// "status"}). Returns the exit status (0, or 2 when the request cannot be read).
int serve_fetch_request(std::istream& in, std::ostream& out);

}  // namespace moat::lists
