// `dnsmoat log`: searches the query log (newest first), like `pihole -q` and the incumbents'
// query log pages, straight from the database file: no running daemon needed, and reading never
// blocks the daemon's writer (WAL).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon.hpp"

namespace moat::app {

struct LogQuery {
    std::string domain;
    std::string match = "substring";  ///< substring, suffix or exact
    std::string client;
    std::string outcome;
    std::string type;   ///< "AAAA", "TYPE65", "28"
    std::string since;  ///< a duration back from now: "15m", "2h", "7d"
    std::size_t limit = 50;
    std::optional<std::int64_t> before;  ///< a previous page's `next`
    bool json = false;
};

/// Prints one page of matching queries; returns the exit status (0; 2 for a bad argument; 78 for
/// a bad config; 1 when the log cannot be read).
int run_log(const Launch& launch, const LogQuery& query);

}  // namespace moat::app
