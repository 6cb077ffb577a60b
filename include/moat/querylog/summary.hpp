// Counts over a time range of the query log: queries by outcome, per interval, and the most
// asked names, most blocked names and busiest clients (what `dnsmoat stats` prints, like
// `pihole -c`, and what the dashboard's overview will show).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moat::querylog {

struct Ranked {
    std::string name;
    std::uint64_t count = 0;

    friend bool operator==(const Ranked&, const Ranked&) = default;
};

struct Interval {
    std::int64_t start_us = 0;
    std::map<std::string, std::uint64_t> by_outcome;
};

struct Summary {
    std::int64_t from_us = 0;
    std::int64_t to_us = 0;
    std::uint64_t total = 0;
    std::map<std::string, std::uint64_t> by_outcome;
    std::vector<Interval> intervals;  ///< every interval of the range, empty ones included
    std::vector<Ranked> top_domains;
    std::vector<Ranked> top_blocked;
    std::vector<Ranked> top_clients;
};

struct SummaryRequest {
    std::int64_t from_us = 0;                ///< inclusive
    std::int64_t to_us = 0;                  ///< exclusive
    std::int64_t interval_us = 600'000'000;  ///< 10 minutes; at most 10,000 intervals in range
    std::size_t top = 10;                    ///< entries per ranking, 1..100
};

}  // namespace moat::querylog
