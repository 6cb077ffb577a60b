// The benchmark suites, run by main() in this order. Each prints its own section of the report
// and judges its targets; each builds its inputs itself and frees them before returning, so the
// suites do not disturb each other's memory figures.
//
//   wire      parse / validate / build of the three wire fixtures (figures only)
//   filter    Snapshot::match over N listed names + 32 regexes; memory per domain
//   cache     CacheKey + Cache::lookup, hits and misses apart
//   compile   lines per second of list text through the Compiler, and its peak memory
//   pipeline  Engine::decide from query bytes to answer bytes, per kind of answer
#pragma once

#include "options.hpp"
#include "report.hpp"

namespace moat::bench {

void run_wire(const Options& options, Report& report);
void run_filter(const Options& options, Report& report);
void run_cache(const Options& options, Report& report);
void run_compile(const Options& options, Report& report);
void run_pipeline(const Options& options, Report& report);

}  // namespace moat::bench
