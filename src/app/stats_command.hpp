// `dnsmoat stats`: what the query log says about a recent period, like `pihole -c`: queries by
// outcome, per interval, and the most asked names, most blocked names and busiest clients. Read
// from the database file; no running daemon needed.
#pragma once

#include <cstddef>
#include <string>

#include "daemon.hpp"

namespace moat::app {

struct StatsQuery {
    std::string since = "24h";    ///< the period, back from now
    std::string interval = "1h";  ///< the length of each line of the history
    std::size_t top = 10;
    bool json = false;
};

/// Prints the summary; returns the exit status (0; 2 for a bad argument; 78 for a bad config;
/// 1 when the log cannot be read).
int run_stats(const Launch& launch, const StatsQuery& query);

}  // namespace moat::app
