// dnsmoat-bench-filter: Google Benchmark of the filter. Snapshot::match at list sizes from 10k to
// 1M names (blocked and unblocked queries apart), a list name's normalisation, and list
// compilation in lines per second. The inputs are the harness's (bench/harness: generated names,
// 32 never-matching regexes), so the figures line up with `dnsmoat-bench filter` and `compile`.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blocklist.hpp"
#include "domains.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/filter/line_parser.hpp"
#include "queries.hpp"

namespace {

using moat::bench::Blocklist;
using moat::bench::NamePool;
using moat::bench::Rng;

constexpr std::uint64_t kSeed = 42;
constexpr std::size_t kQueries = 4096;

/// One snapshot and its query pools per size, built on first use (lists take a while).
struct Inputs {
    Blocklist list;
    NamePool blocked;
    NamePool unblocked;
};

const Inputs& inputs_for(std::size_t domains) {
    static std::map<std::size_t, std::unique_ptr<Inputs>> cache;
    auto& slot = cache[domains];
    if (!slot) {
        slot = std::make_unique<Inputs>();
        slot->list = moat::bench::make_blocklist(domains, kQueries, kSeed);
        Rng rng(kSeed + 1);
        moat::bench::DomainGenerator gen(kSeed + 2);
        std::string name;
        for (std::size_t i = 0; i < slot->list.sample.size(); ++i) {
            moat::bench::blocked_query_name(slot->list.sample[i], gen, name);
            slot->blocked.add(name, rng);
        }
        const auto unlisted = moat::bench::generate_unlisted(kQueries, kSeed + 3);
        for (std::size_t i = 0; i < unlisted.size(); ++i) {
            slot->unblocked.add(unlisted[i], rng);
        }
        slot->blocked.finish();
        slot->unblocked.finish();
    }
    return *slot;
}

void match(benchmark::State& state, bool blocked) {
    const Inputs& in = inputs_for(static_cast<std::size_t>(state.range(0)));
    const NamePool& pool = blocked ? in.blocked : in.unblocked;
    const auto want = blocked ? moat::filter::Action::blocked : moat::filter::Action::none;
    std::size_t i = 0;
    std::size_t wrong = 0;
    for (auto _ : state) {
        const auto v = in.list.snapshot->match(pool[i]);
        wrong += v.action != want ? 1U : 0U;
        benchmark::DoNotOptimize(v);
        i = i + 1 == pool.size() ? 0 : i + 1;
    }
    if (wrong != 0) {
        state.SkipWithError("a query got the wrong verdict");
    }
    state.counters["bytes_per_name"] =
        static_cast<double>(in.list.snapshot->memory_bytes()) / static_cast<double>(state.range(0));
}

void compile(benchmark::State& state) {
    const auto names =
        moat::bench::generate_listed(static_cast<std::size_t>(state.range(0)), kSeed);
    const std::string_view text = names.text();
    for (auto _ : state) {
        moat::filter::Compiler c;
        const auto list = c.open_list({.id = 1, .name = "bench"});
        for (std::size_t at = 0; at < text.size(); at += moat::bench::kFeedChunk) {
            (void)c.feed(*list, text.substr(at, moat::bench::kFeedChunk));
        }
        (void)c.close_list(*list);
        auto snapshot = std::move(c).build();
        benchmark::DoNotOptimize(snapshot);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

/// normalize_name() alone over every line of a generated list: the check, lower-casing and hash
/// each list name gets while compiling.
void normalize(benchmark::State& state) {
    const auto names =
        moat::bench::generate_listed(static_cast<std::size_t>(state.range(0)), kSeed);
    std::vector<std::string_view> lines;
    for (std::string_view rest = names.text(); !rest.empty();) {
        const std::size_t end = rest.find('\n');
        lines.push_back(rest.substr(0, end));
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    }
    std::array<char, 256> buf{};
    std::size_t invalid = 0;
    for (auto _ : state) {
        for (const std::string_view line : lines) {
            const auto name = moat::filter::normalize_name(line, buf);
            invalid += name ? 0U : 1U;
            benchmark::DoNotOptimize(name);
        }
    }
    if (invalid != 0) {
        state.SkipWithError("a generated name failed the check");
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
}

}  // namespace

BENCHMARK_CAPTURE(match, blocked, true)->Arg(10'000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_CAPTURE(match, unblocked, false)->Arg(10'000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK(normalize)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(compile)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
