// What one random read in a table of a given size costs on this machine: once the table outgrows
// the CPU's caches, the floor under any lookup whose data is cold. The filter and cache suites
// print it beside their p95 targets, so a target below the floor reads as what it is (a lookup in
// a table of many megabytes needs at least one such read) rather than as a slow structure.
//
// The compile suite prints the other floor of a rebuild: what writing fresh pages costs. On a
// virtual machine the first write to a page can cost microseconds even after the kernel was
// asked to populate it, and a rebuild writes every page of its tables for the first time.
//
// Reads are measured as a walk of dependent loads (each address read from the last) over a random
// cycle of every cache line of the table, on huge pages where the kernel grants them, as the
// filter's finished tables are: no two loads overlap, so each costs a full trip to wherever the
// line is (memory, for a table larger than the caches) and the page walk that goes with it.
//
// The walk gives a mean; the targets are on a p95. So reads are also timed one at a time, each
// between the same counter reads as a suite's lookup (timer.hpp), and summarised as a suite's
// rows are: a p95 target below that read's p95 cannot be met by any lookup that reads the table
// once, on this machine.
#pragma once

#include <cstddef>
#include <string_view>

#include "report.hpp"
#include "samples.hpp"

namespace moat::bench {

/// Nanoseconds per dependent random read in a table of `bytes` (rounded up to 2 MiB), median of
/// three walks of `steps` reads each. The table is mapped, used and unmapped here.
[[nodiscard]] double dependent_read_ns(std::size_t bytes, std::size_t steps = 300'000);

/// `reads` random reads in a table of `bytes` (rounded up to 2 MiB), each timed on its own with
/// tick_begin()/tick_end() and summarised like a suite's row. The table is mapped, used and
/// unmapped here.
[[nodiscard]] Summary timed_read_summary(std::size_t bytes, std::size_t reads = 200'000);

/// Milliseconds to make `bytes` of fresh anonymous memory ready and write it, median of three:
/// the pages mapped and populated in one call by the filter builder's own functions
/// (filter::mapping), their first write, and a second write of the same pages.
struct WriteCosts {
    double populate_ms = 0;
    double first_write_ms = 0;
    double second_write_ms = 0;
};
[[nodiscard]] WriteCosts fresh_page_write_costs(std::size_t bytes);

/// Prints the floor for a structure of `bytes` and returns the timed reads' summary:
///   "floor: one random read in a table of 12.5 MiB (the filter structure's size) costs 144 ns
///    on this machine (a dependent walk); timed one at a time as a lookup is: p50 0.140 us,
///    p95 0.200 us"
Summary report_read_floor(Report& report, std::string_view suite, double bytes);
/// Prints what writing `bytes` of fresh pages costs (fresh_page_write_costs), for `what`.
void report_write_floor(Report& report, std::string_view what, std::size_t bytes);

}  // namespace moat::bench
