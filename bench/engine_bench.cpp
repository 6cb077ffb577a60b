// dnsmoat-bench-engine: Google Benchmark of Engine::decide, query bytes to answer bytes, for each
// kind of query the daemon answers without waiting (cached, blocked, local) and for one that goes
// upstream (miss: decide() only). 100,000 listed names + 32 regexes; same inputs as
// `dnsmoat-bench pipeline`. Also LocalZone::find alone, which every query passes through, on a
// hosts file of 10 to 20,000 names (the daemon's local zone, with their reverse names).
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
#include "moat/engine/local_zone.hpp"
#include "moat/wire/name.hpp"
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
    moat::CoarseClock clock;  // the daemon's
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

/// LocalZone::find on a zone read from a hosts file of state.range(0) names, with their reverse
/// names, asked for its names (hit) or for names it does not hold (miss), in a shuffled order.
void local_zone_find(benchmark::State& state, bool hit) {
    const auto names = static_cast<std::size_t>(state.range(0));
    std::string hosts;
    for (std::size_t i = 0; i < names; ++i) {
        hosts += "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + " host" +
                 std::to_string(i) + ".example.lan\n";
    }
    moat::engine::LocalZone zone;
    (void)zone.add_hosts_text(hosts);
    zone.generate_reverse();
    const moat::bench::NameList unlisted = moat::bench::generate_unlisted(kQueries, kSeed);
    std::vector<moat::wire::Name> lookups;
    moat::bench::Rng rng(kSeed);
    for (std::size_t i = 0; i < kQueries; ++i) {
        const std::string text = hit ? "host" + std::to_string(rng.below(names)) + ".example.lan"
                                     : std::string(unlisted[i]);
        lookups.push_back(*moat::wire::Name::from_text(text));
    }
    std::size_t i = 0;
    std::size_t wrong = 0;
    for (auto _ : state) {
        const auto* records = zone.find(lookups[i].wire());
        wrong += (records != nullptr) != hit ? 1U : 0U;
        benchmark::DoNotOptimize(records);
        i = i + 1 == lookups.size() ? 0 : i + 1;
    }
    if (wrong != 0) {
        state.SkipWithError("a lookup found what it should not, or missed what it should find");
    }
}

}  // namespace

BENCHMARK_CAPTURE(local_zone_find, hit, true)->Arg(10)->Arg(1000)->Arg(20000);
BENCHMARK_CAPTURE(local_zone_find, miss, false)->Arg(10)->Arg(1000)->Arg(20000);
BENCHMARK_CAPTURE(decide, cached, Kind::cached, Outcome::cached);
BENCHMARK_CAPTURE(decide, blocked, Kind::blocked, Outcome::blocked);
BENCHMARK_CAPTURE(decide, local, Kind::local, Outcome::local);
BENCHMARK_CAPTURE(decide, miss, Kind::miss, Outcome::pending);

BENCHMARK_MAIN();
