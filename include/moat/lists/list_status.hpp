// What is known about one downloaded list: its last good copy (entries, bytes, validators for a
// conditional GET) and how its downloads went (last success, last error, failures in a row).
//
// Kept beside the copy in the state directory as JSON (StateDir), written by the refresher and
// read by the daemon's scheduler and by `dnsmoat lists`. Times are Unix seconds, 0 for never.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "moat/filter/list.hpp"

namespace moat::lists {

struct ListStatus {
    std::string name;
    std::string url;
    // The last good copy; all zero while there is none.
    std::uint64_t entries = 0;
    std::uint64_t lines = 0;
    std::uint64_t invalid = 0;
    std::vector<filter::InvalidLine> first_invalid;
    std::uint64_t bytes = 0;
    std::uint64_t content_hash = 0;  ///< to notice an unchanged body from a server without ETag
    std::string etag;                ///< sent back as If-None-Match
    std::string last_modified;       ///< sent back as If-Modified-Since
    std::int64_t last_changed = 0;   ///< when the copy was last replaced
    // The downloads.
    std::int64_t last_attempt = 0;
    std::int64_t last_success = 0;  ///< a new copy, an unchanged body or a 304
    std::string last_error;         ///< of the last attempt; empty when it succeeded
    std::uint32_t failures = 0;     ///< failed or rejected attempts since the last success

    [[nodiscard]] bool has_copy() const noexcept { return last_changed != 0; }

    friend bool operator==(const ListStatus&, const ListStatus&) = default;
};

[[nodiscard]] std::string to_json(const ListStatus& status);
/// Empty when `text` is not a status document (a damaged file is treated as absent).
[[nodiscard]] std::optional<ListStatus> status_from_json(std::string_view text);

}  // namespace moat::lists
