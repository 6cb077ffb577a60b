// dnsmoat-bench-metrics: Google Benchmark of the metrics module: the latency histogram every
// answered query updates (a search of its bucket bounds; a counter is one load and store of a
// word, too little to time) and the /metrics page's text for a scrape, in the shape of the daemon's
// page (43 families: 23 counters, 19 gauges and the query duration histogram, about 90 lines of
// samples and 9 KiB).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <string>

#include "moat/metrics/instruments.hpp"
#include "moat/metrics/text_writer.hpp"

namespace {

using moat::metrics::Type;

void histogram_observe(benchmark::State& state) {
    moat::metrics::LatencyHistogram histogram;
    std::uint32_t us = 0;
    for (auto _ : state) {
        histogram.observe(us);
        us = (us + 97) % 50'000;  // across the buckets, as answers from cache and upstream do
        benchmark::ClobberMemory();
    }
}
BENCHMARK(histogram_observe);

/// A page of the daemon's shape: the outcomes' counter with its 11 samples, 22 more counters and
/// 19 gauges of one or two samples, and the query duration histogram.
std::string daemon_shaped_page(const moat::metrics::LatencyHistogram& durations) {
    static constexpr std::array<const char*, 11> kOutcomes{
        "forwarded", "cached", "stale",    "blocked", "local",       "refused",
        "formerr",   "notimp", "servfail", "dropped", "rate_limited"};
    moat::metrics::TextWriter w;
    w.family("dnsmoat_queries_total", "Queries handled, by what happened to them.", Type::counter);
    std::uint64_t value = 1'234'567;
    for (const char* outcome : kOutcomes) {
        w.sample("dnsmoat_queries_total", {{"outcome", outcome}}, value++);
    }
    for (int i = 0; i < 41; ++i) {
        const std::string name = "dnsmoat_family_" + std::to_string(i) + (i < 22 ? "_total" : "");
        w.family(name, "What this family counts, in one sentence of help text.",
                 i < 22 ? Type::counter : Type::gauge);
        w.sample(name, {{"upstream", "127.0.0.1:5301"}}, value++);
        if (i % 2 == 0) {
            w.sample(name, {{"upstream", "[::1]:5302"}}, static_cast<double>(value++) / 3.0);
        }
    }
    w.histogram("dnsmoat_query_duration_seconds", "Time from a query's arrival to its answer.",
                durations);
    return std::move(w).text();
}

void metrics_page(benchmark::State& state) {
    moat::metrics::LatencyHistogram durations;
    for (std::uint32_t us = 0; us < 50'000; us += 7) {
        durations.observe(us);
    }
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string text = daemon_shaped_page(durations);
        bytes = text.size();
        benchmark::DoNotOptimize(text.data());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(metrics_page)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
