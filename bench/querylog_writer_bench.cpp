// dnsmoat-bench-querylog-writer: Google Benchmark of the query log's moving parts, the query path's
// push into the queue and the writer thread's work: a visit (taking entries off the queue, the
// privacy level, the dashboard's rolling statistics), a write (one SQLite transaction of the
// pending batch, then the size check), and the minute's prune when nothing is due. Entries are a
// household's (bench/harness/log_entries.hpp); the database is a real file in a fresh temporary
// directory, as the daemon's is, removed when each benchmark ends.
//
// The daemon's writer visits the queue once a second while queries come and writes once a
// minute (flush_interval): at 20 queries a second a visit takes 20 entries and a write 1,200.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "domains.hpp"
#include "log_entries.hpp"
#include "moat/querylog/database.hpp"
#include "moat/querylog/entry_queue.hpp"
#include "moat/querylog/log_writer.hpp"
#include "moat/querylog/rolling_stats.hpp"
#include "support/temp_dir.hpp"

namespace {

using moat::querylog::Database;
using moat::querylog::Entry;
using moat::querylog::EntryQueue;
using moat::querylog::LogOptions;
using moat::querylog::LogWriter;
using moat::querylog::RollingStats;

constexpr std::size_t kNames = 2'000;      // a household's day of distinct names
constexpr std::size_t kClients = 30;       // its devices
constexpr std::size_t kEntries = 4'096;    // entries made ahead, used round robin
constexpr std::size_t kQueueSize = 2'048;  // [querylog] queue_size
/// Entries pushed before the writer takes them, when a benchmark stages more: a quarter of the
/// queue, as the daemon's writer would be woken to take them.
constexpr std::size_t kStageStep = kQueueSize / 4;

/// The writer as the daemon wires it: its queue, a database file of its own, the statistics.
struct Log {
    Log() : directory("dnsmoat-bench-querylog-writer"), queue(kQueueSize) {
        LogOptions options;
        options.path = directory.path() / "querylog.db";
        auto database = Database::open(options.path, Database::Mode::write);
        if (!database) {
            throw std::runtime_error(database.error());
        }
        writer = std::make_unique<LogWriter>(options, queue, std::move(*database), &stats);
        const moat::bench::NameList names = moat::bench::generate_listed(kNames, 7);
        moat::bench::HouseholdEntries household(names, kClients, 42);
        entries.resize(kEntries);
        for (Entry& e : entries) {
            household.next(0, e);
        }
    }

    /// Pushes `n` entries stamped now, as the query path does.
    void push(std::size_t n) {
        const std::int64_t now = moat::bench::unix_now_us();
        for (std::size_t i = 0; i < n; ++i) {
            Entry& e = entries[next++ % entries.size()];
            e.time_us = now;
            if (!queue.push(e)) {
                throw std::logic_error("the queue is full: push fewer before taking");
            }
        }
    }

    /// Pushes `n` entries and lets the writer take them, a quarter of the queue at a time.
    void stage(std::size_t n) {
        while (n > 0) {
            const std::size_t step = std::min(n, kStageStep);
            push(step);
            writer->collect();
            n -= step;
        }
    }

    moat::test::TempDir directory;  // removed with the database when the benchmark ends
    EntryQueue queue;
    RollingStats stats;
    std::unique_ptr<LogWriter> writer;
    std::vector<Entry> entries;
    std::size_t next = 0;
};

/// The query path's push and the writer's pop, in batches of 64 as the writer takes them.
void queue_push_pop(benchmark::State& state) {
    Log log;
    std::vector<Entry> taken;
    taken.reserve(64);
    for (auto _ : state) {
        log.push(64);
        taken.clear();
        benchmark::DoNotOptimize(log.queue.pop(taken, 64));
    }
    state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(queue_push_pop);

/// A visit of the writer that finds N entries: pushed by the query path, taken off the queue,
/// the privacy level applied, the dashboard's statistics fed, kept in the pending batch. The
/// batch is written (untimed) when it grows large.
void writer_visit(benchmark::State& state) {
    Log log;
    const auto n = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        log.push(n);
        benchmark::DoNotOptimize(log.writer->collect());
        if (log.writer->pending() >= 20'000) {
            state.PauseTiming();
            (void)log.writer->write();
            state.ResumeTiming();
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(writer_visit)->Arg(1)->Arg(20)->Arg(500);

/// The dashboard's statistics fed one entry (what a visit does per entry after the privacy
/// level), all in one 10-minute bucket: argument 0, the household's names, mostly already
/// ranked; 1, a flood of distinct names, every one replacing the smallest of the 256 kept (as a
/// client walking a zone's names, or random names under one domain, would send).
void stats_add(benchmark::State& state) {
    const bool flood = state.range(0) == 1;
    // A flood's names recur only after kEntries others: long since replaced by then.
    const moat::bench::NameList names = moat::bench::generate_listed(flood ? kEntries : kNames, 7);
    moat::bench::HouseholdEntries household(names, kClients, 42);
    std::vector<Entry> entries(kEntries);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        household.next(moat::bench::unix_now_us(), entries[i]);
        if (flood) {
            entries[i].qname.assign(names[i]);
        }
    }
    RollingStats stats;
    std::size_t next = 0;
    for (auto _ : state) {
        stats.add(entries[next++ % entries.size()]);
    }
    state.SetItemsProcessed(state.iterations());
    const auto top = stats.top(moat::bench::unix_now_us(), 1);
    if (top.domains.empty()) {
        state.SkipWithError("no name was ranked");
    }
}
BENCHMARK(stats_add)->Arg(0)->Arg(1);

/// A write of N pending entries: one transaction, then the size check against max_size.
void writer_write(benchmark::State& state) {
    Log log;
    const auto n = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        log.stage(n);
        state.ResumeTiming();
        const LogWriter::Flushed flushed = log.writer->write();
        if (flushed.written != n) {
            state.SkipWithError(flushed.error.c_str());
            break;
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(writer_write)->Arg(1)->Arg(20)->Arg(1'200)->Arg(20'000)->Unit(benchmark::kMicrosecond);

/// The minute's prune of a log with nothing expired and under its size: what it costs to find
/// that out.
void writer_prune_nothing_due(benchmark::State& state) {
    Log log;
    log.stage(1'200);
    (void)log.writer->write();
    for (auto _ : state) {
        auto pruned = log.writer->prune(moat::bench::unix_now_us());
        if (!pruned || pruned->expired + pruned->oversize != 0) {
            state.SkipWithError("the prune deleted rows or failed");
            break;
        }
    }
}
BENCHMARK(writer_prune_nothing_due)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
