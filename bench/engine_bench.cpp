// dnsmoat-bench-engine: Google Benchmark of Engine::decide, query bytes to answer bytes, for each
// kind of query the daemon answers without waiting (cached, blocked, local) and for one that goes
// upstream (miss: decide() only). 100,000 listed names + 32 regexes; same inputs as
// `dnsmoat-bench pipeline`.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "answers.hpp"
#include "blocklist.hpp"
#include "domains.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/engine.hpp"
#include "queries.hpp"

namespace {

using moat::bench::QueryPool;
using moat::engine::Outcome;

constexpr std::uint64_t kSeed = 42;
constexpr std::size_t kDomains = 100'000;
constexpr std::size_t kQueries = 2048;

enum class Kind : std::uint8_t { cached, blocked, local, miss };

struct World {
    World()
        : list(moat::bench::make_blocklist(kDomains, kQueries, kSeed)),
          publisher(list.snapshot),
          cache(std::make_shared<moat::cache::Cache>(clock)),
          engine(options(), moat::bench::make_local_zone(), publisher, cache) {}

    static moat::engine::EngineOptions options() {
        moat::engine::EngineOptions o;
        o.allowed_clients = {moat::Cidr{moat::IpAddress::v4_of(127, 0, 0, 0), 8}};
        return o;
    }

    moat::bench::Blocklist list;
    moat::filter::SnapshotPublisher publisher;
    moat::SystemClock clock;
    std::shared_ptr<moat::cache::Cache> cache;
    moat::engine::Engine engine;
    moat::engine::Client client{moat::IpAddress::v4_of(127, 0, 0, 1), 53000,
                                moat::engine::Transport::udp};
};

World& world() {
    static World w;
    return w;
}

QueryPool queries_of(Kind kind, World& w, std::vector<std::uint8_t>& out) {
    moat::bench::Rng rng(kSeed + static_cast<unsigned>(kind));
    QueryPool pool;
    const auto fresh =
        moat::bench::generate_unlisted(kQueries, kSeed + 10 + static_cast<unsigned>(kind));
    moat::bench::DomainGenerator gen(kSeed + 20);
    std::string name;
    for (std::size_t i = 0; i < kQueries; ++i) {
        switch (kind) {
            case Kind::cached:
            case Kind::miss: pool.add(fresh[i], moat::wire::RrType::a, rng); break;
            case Kind::blocked:
                moat::bench::blocked_query_name(w.list.sample[i % w.list.sample.size()], gen, name);
                pool.add(name, moat::wire::RrType::a, rng);
                break;
            case Kind::local:
                pool.add(moat::bench::kLocalNames[i % moat::bench::kLocalNames.size()],
                         moat::wire::RrType::a, rng);
                break;
        }
    }
    if (kind == Kind::cached) {  // answer each once through the upstream path
        moat::engine::Pending pending;
        for (std::size_t i = 0; i < pool.size(); ++i) {
            if (w.engine.decide(pool[i], w.client, out, pending).action ==
                moat::engine::Action::forward) {
                (void)w.engine.complete(
                    pending, moat::bench::upstream_reply(pending.upstream_query, i), out);
            }
        }
    }
    return pool;
}

void decide(benchmark::State& state, Kind kind, Outcome want) {
    World& w = world();
    std::vector<std::uint8_t> out(moat::wire::kMaxMessageSize);
    const QueryPool pool = queries_of(kind, w, out);
    moat::engine::Pending pending;
    std::size_t i = 0;
    std::size_t wrong = 0;
    for (auto _ : state) {
        const auto d = w.engine.decide(pool[i], w.client, out, pending);
        wrong += d.outcome != want ? 1U : 0U;
        benchmark::DoNotOptimize(d);
        i = i + 1 == pool.size() ? 0 : i + 1;
    }
    if (wrong != 0) {
        state.SkipWithError("a query got another outcome than its kind");
    }
}

}  // namespace

BENCHMARK_CAPTURE(decide, cached, Kind::cached, Outcome::cached);
BENCHMARK_CAPTURE(decide, blocked, Kind::blocked, Outcome::blocked);
BENCHMARK_CAPTURE(decide, local, Kind::local, Outcome::local);
BENCHMARK_CAPTURE(decide, miss, Kind::miss, Outcome::pending);

BENCHMARK_MAIN();
