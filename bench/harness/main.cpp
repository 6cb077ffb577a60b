// dnsmoat-bench: the in-process benchmark harness. Runs the suites (suites.hpp) in a fixed
// order with generated inputs from one seed, prints per-operation percentiles, sanity counters
// and memory, judges each suite's targets and repeats them in a final summary.
//
// Exit status: 0 done (targets may have failed), 1 --assert and a target failed, 2 bad
// arguments (nothing measured), 3 a sanity check failed (figures would be meaningless).
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "options.hpp"
#include "report.hpp"
#include "suites.hpp"
#include "timer.hpp"

namespace {

void print_help() {
    std::printf(
        "%.*s\n\n"
        "Suites (default all, run in this order):\n"
        "  wire      parse/validate/build of the wire fixtures (figures only)\n"
        "  filter    Snapshot::match over --domains names + 32 regexes; memory per domain\n"
        "            --scaling: also 10k/100k/1M/4M names (filter suite only)\n"
        "  cache     query bytes -> CacheKey -> Cache::lookup, hits and misses\n"
        "  compile   list lines per second through the Compiler; rebuild peak memory\n"
        "  pipeline  Engine::decide for cached/blocked/local/miss queries; allocations\n\n"
        "  --domains=N  names in the generated lists (default 1000000)\n"
        "  --iters=N    timed operations per row (default 200000)\n"
        "  --seed=N     seed of all generated input (default 42)\n"
        "  --assert     exit 1 when a target fails\n"
        "  --smoke      20,000 domains and iterations (unless given), timing targets not judged:\n"
        "               the CI check that every suite runs\n",
        static_cast<int>(moat::bench::kUsage.size()), moat::bench::kUsage.data());
}

}  // namespace

int main(int argc, char** argv) {
#ifndef NDEBUG
    std::printf("WARNING: debug build; figures are not representative\n");
    std::fflush(stdout);
#endif
    using namespace moat::bench;
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    const auto options = parse_options(args);
    if (!options) {
        std::fprintf(stderr, "%.*s\nerror: %s\n", static_cast<int>(kUsage.size()), kUsage.data(),
                     options.error().c_str());
        return 2;
    }
    if (options->help) {
        print_help();
        return 0;
    }
    const TimerInfo& t = calibrate_timer();
    std::printf("dnsmoat-bench: suite %.*s, %llu domains, %llu iterations, seed %llu\n",
                static_cast<int>(suite_name(options->suite).size()),
                suite_name(options->suite).data(),
                static_cast<unsigned long long>(options->domains),
                static_cast<unsigned long long>(options->iters),
                static_cast<unsigned long long>(options->seed));
    std::printf(
        "timer: %s, %.4f ns/tick, resolution %.1f ns, overhead %.1f ns per interval (median of "
        "10000, subtracted from every sample)\n",
        t.source, t.ns_per_tick, t.resolution_ns(), t.overhead_ns());
    Report report;
    report.set_smoke(options->smoke);
    try {
        if (options->runs(Suite::wire)) {
            run_wire(*options, report);
        }
        if (options->runs(Suite::filter)) {
            run_filter(*options, report);
        }
        if (options->runs(Suite::cache)) {
            run_cache(*options, report);
        }
        if (options->runs(Suite::compile)) {
            run_compile(*options, report);
        }
        if (options->runs(Suite::pipeline)) {
            run_pipeline(*options, report);
        }
    } catch (const std::exception& e) {
        abort_run("harness", e.what());
    }
    report.print_summary();
    return options->assert_targets && report.any_failed() ? 1 : 0;
}
