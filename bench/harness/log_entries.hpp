// Query-log entries shaped like a household's day: a few names and devices take most queries
// (Zipf), outcomes and types in the proportions a home network shows, a blocked answer with its
// list and line, a forwarded one with its upstream. Shared by dnsmoat-bench-querylog (a month of
// rows, then searches) and dnsmoat-bench-querylog-writer (the writer's own costs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "domains.hpp"
#include "moat/querylog/entry.hpp"

namespace moat::bench {

/// The wall clock in microseconds since the Unix epoch, as the query log stamps entries.
[[nodiscard]] std::int64_t unix_now_us();

/// Draws indexes in [0, n) with probability proportional to 1 / (i + 1): a few names (and
/// clients) take most queries, as in every household's log.
class Zipf {
public:
    explicit Zipf(std::size_t n);
    std::size_t draw(Rng& rng) const;

private:
    std::vector<double> cdf_;
};

/// Makes entries for `names` asked by `clients` devices (192.168.1.10 upwards).
class HouseholdEntries {
public:
    HouseholdEntries(const NameList& names, std::size_t clients, std::uint64_t seed);
    /// The next entry, stamped `time_us`.
    void next(std::int64_t time_us, querylog::Entry& out);

private:
    const NameList& names_;
    Rng rng_;
    Zipf popular_;
    Zipf devices_;
};

}  // namespace moat::bench
