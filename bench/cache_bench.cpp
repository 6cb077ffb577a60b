// dnsmoat-bench-cache: Google Benchmark of the answer cache: the hit and the miss of a query as
// the engine does them (parse the query, make the key, look up with the ID stamped and TTLs
// aged), with 1,000 and 100,000 answers stored. Same inputs as `dnsmoat-bench cache`.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "answers.hpp"
#include "domains.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/message_view.hpp"
#include "queries.hpp"

namespace {

using moat::bench::QueryPool;
using moat::bench::Rng;

constexpr std::uint64_t kSeed = 42;

void lookup(benchmark::State& state, bool hits) {
    const auto entries = static_cast<std::size_t>(state.range(0));
    const moat::CoarseClock clock;  // the daemon's
    moat::cache::Options options;
    options.max_bytes = std::size_t{1} << 30U;
    moat::cache::Cache cache(clock, options);
    const auto stored = moat::bench::generate_listed(entries, kSeed);
    for (std::size_t i = 0; i < stored.size(); ++i) {
        const auto name = moat::wire::Name::from_text(stored[i]).value();
        const auto key = moat::cache::CacheKey::make(name.view(), moat::wire::RrType::a,
                                                     moat::wire::RrClass::in, false);
        (void)cache.insert(key, moat::bench::make_answer(name, moat::wire::RrType::a, i));
    }
    Rng rng(kSeed + 1);
    QueryPool queries;
    const auto absent = moat::bench::generate_unlisted(4096, kSeed + 2);
    for (std::size_t i = 0; i < 4096; ++i) {
        queries.add(hits ? stored[rng.below(stored.size())] : absent[i], moat::wire::RrType::a,
                    rng);
    }
    std::vector<std::uint8_t> out(moat::wire::kMaxMessageSize);
    std::size_t i = 0;
    std::size_t found = 0;
    for (auto _ : state) {
        const auto view = moat::wire::MessageView::parse(queries[i]);
        const auto key = moat::cache::CacheKey::from_query(*view);
        const auto hit = cache.lookup(*key, view->header().id, out);
        found += hit.has_value() ? 1U : 0U;
        benchmark::DoNotOptimize(hit);
        i = i + 1 == queries.size() ? 0 : i + 1;
    }
    if (found != (hits ? static_cast<std::size_t>(state.iterations()) : 0U)) {
        state.SkipWithError("hits and misses are not what the inputs say");
    }
}

}  // namespace

BENCHMARK_CAPTURE(lookup, hit, true)->Arg(1'000)->Arg(100'000);
BENCHMARK_CAPTURE(lookup, miss, false)->Arg(1'000)->Arg(100'000);

BENCHMARK_MAIN();
