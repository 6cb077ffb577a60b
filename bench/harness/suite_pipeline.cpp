// pipeline: Engine::decide() from query bytes to answer bytes on one thread, the daemon's whole
// per-query path minus the sockets: ACL, EDNS, local records, the N-name snapshot (with its 32
// regexes), the cache (CoarseClock, the daemon's). Four kinds of query, interleaved at random and
// timed apart:
//   cached   answered from the cache (warmed by decide -> forward, complete with a synthesised
//            upstream reply)
//   blocked  a listed name or below one
//   local    a name of the local zone
//   miss     none of these: decide() returns Action::forward (only decide() is timed)
// Then heap allocations per query for the answers known at once, counted by the replaced
// operator new (alloc_counter.cpp), outside the timed loop.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "answers.hpp"
#include "blocklist.hpp"
#include "memory.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/engine.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/record.hpp"
#include "queries.hpp"
#include "suites.hpp"

namespace moat::bench {
namespace {

using engine::Action;
using engine::Outcome;

constexpr std::size_t kMaxPool = std::size_t{1} << 14U;  ///< distinct queries per kind
constexpr double kP50LimitUs = 0.5;

enum Kind : std::uint8_t { cached, blocked, local, miss, kind_count };
constexpr std::array<const char*, kind_count> kKindNames = {"cached", "blocked", "local", "miss"};
constexpr std::array<Outcome, kind_count> kExpected = {Outcome::cached, Outcome::blocked,
                                                       Outcome::local, Outcome::pending};

struct Pools {
    std::array<QueryPool, kind_count> kind;
};

Pools make_pools(const NameList& sample, std::size_t per_kind, std::uint64_t seed) {
    Pools p;
    DomainGenerator gen(seed ^ 0x919E11EULL);
    // Cached and miss names: unlisted (never blocked), distinct from each other.
    const NameList unlisted = generate_unlisted(2 * per_kind, seed ^ 0x919E12ULL);
    std::string name;
    for (std::size_t i = 0; i < per_kind; ++i) {
        p.kind[cached].add(unlisted[i], wire::RrType::a, gen.rng());
        p.kind[miss].add(unlisted[per_kind + i], wire::RrType::a, gen.rng());
        blocked_query_name(sample[i], gen, name);
        p.kind[blocked].add(name, wire::RrType::a, gen.rng());
        p.kind[local].add(kLocalNames[i % kLocalNames.size()], wire::RrType::a, gen.rng());
    }
    return p;
}

/// Every cached-kind query once through decide -> forward -> complete.
void warm_cache(engine::Engine& e, const QueryPool& queries, const engine::Client& client,
                std::span<std::uint8_t> out) {
    engine::Pending pending;
    std::size_t stored = 0;
    for (std::size_t i = 0; i < queries.size(); ++i) {
        const engine::Decision d = e.decide(queries[i], client, out, pending);
        if (d.action != Action::forward) {
            continue;
        }
        const auto reply = upstream_reply(pending.upstream_query, i);
        stored += e.complete(pending, reply, out).outcome == Outcome::forwarded ? 1U : 0U;
    }
    if (stored == 0) {
        abort_run("pipeline", "no upstream reply was accepted: the cache stays empty");
    }
}

struct KindFigures {
    Summary summary;
    std::size_t expected = 0;  ///< iterations with the expected outcome
    std::size_t total = 0;
};

std::array<KindFigures, kind_count> time_decides(engine::Engine& e, const Pools& pools,
                                                 const engine::Client& client,
                                                 std::size_t iterations, std::uint64_t seed) {
    // Kinds interleaved at random: `iterations` of each, in one shuffled sequence.
    std::vector<std::uint32_t> order(iterations * kind_count);
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    Rng rng(seed ^ 0xDEC1DEULL);
    rng.shuffle(order);
    std::vector<std::uint8_t> out(wire::kMaxMessageSize);
    // As the daemon has them: each query in the receive buffer the kernel has just written, not
    // read cold from a pool of megabytes (which cost every kind 0.1 µs of a cache miss).
    std::vector<std::uint8_t> received(wire::kMaxMessageSize);
    engine::Pending pending;
    std::array<Samples, kind_count> samples = {Samples(iterations), Samples(iterations),
                                               Samples(iterations), Samples(iterations)};
    std::array<KindFigures, kind_count> f{};
    for (const std::uint32_t o : order) {
        const std::size_t kind = o % kind_count;
        const QueryPool& pool = pools.kind[kind];
        const std::span<const std::uint8_t> stored = pool[(o / kind_count) % pool.size()];
        std::copy(stored.begin(), stored.end(), received.begin());
        const std::span<const std::uint8_t> query(received.data(), stored.size());
        const Ticks t0 = tick_begin();
        const engine::Decision d = e.decide(query, client, out, pending);
        const Ticks t1 = tick_end();
        keep(out[0]);
        samples[kind].add(t1 - t0);
        f[kind].expected += d.outcome == kExpected[kind] ? 1U : 0U;
        ++f[kind].total;
    }
    for (std::size_t k = 0; k < kind_count; ++k) {
        f[k].summary = samples[k].summarize();
    }
    return f;
}

/// Heap allocations per decide() over each query of a pool once (after the timed loop: warm).
double allocations_per_query(engine::Engine& e, const QueryPool& pool, const engine::Client& client,
                             std::span<std::uint8_t> out) {
    {  // A counter that silently stopped counting would report 0 for everything.
        AllocationCounter control;
        keep(std::make_unique<std::size_t>(pool.size()).get() != nullptr);
        if (control.stop() == 0) {
            abort_run("pipeline", "the allocation counter did not see an allocation on purpose");
        }
    }
    engine::Pending pending;
    AllocationCounter counter;
    for (std::size_t i = 0; i < pool.size(); ++i) {
        keep(e.decide(pool[i], client, out, pending).size);
    }
    return static_cast<double>(counter.stop()) / static_cast<double>(pool.size());
}

/// One row per kind, and the count of expected outcomes (a kind with none aborts the run).
void report_kinds(const std::array<KindFigures, kind_count>& f, Report& report) {
    report.table_header();
    std::string sanity = "sanity (expected outcome):";
    for (std::size_t k = 0; k < kind_count; ++k) {
        report.row(std::string("decide ") + kKindNames[k], f[k].summary);
        sanity += format(" %s %zu/%zu", kKindNames[k], f[k].expected, f[k].total);
    }
    report.line(sanity);
    for (std::size_t k = 0; k < kind_count; ++k) {
        if (f[k].expected == 0) {
            abort_run("pipeline", std::string("no ") + kKindNames[k] +
                                      " query got its expected outcome (" +
                                      engine::to_text(kExpected[k]) + ")");
        }
    }
}

}  // namespace

void run_pipeline(const Options& options, Report& report) {
    const auto domains = static_cast<std::size_t>(options.domains);
    const std::size_t per_kind = std::min<std::size_t>(options.iters, kMaxPool);
    report.title(
        "pipeline",
        format("Engine::decide, query bytes to answer bytes, one thread; %zu listed "
               "names + %zu regexes, CoarseClock cache, %llu iterations per kind over "
               "%zu distinct mixed-case queries with EDNS",
               domains, kNeverRegexes, static_cast<unsigned long long>(options.iters), per_kind));
    trim_heap();  // earlier suites' freed memory is not this suite's
    Blocklist bl = make_blocklist(domains, per_kind, options.seed);
    const filter::SnapshotPublisher publisher(bl.snapshot);
    const CoarseClock clock;  // the daemon's
    cache::Options copts;
    copts.max_bytes = std::size_t{256} << 20U;
    auto cache = std::make_shared<cache::Cache>(clock, copts);
    engine::EngineOptions eo;
    eo.allowed_clients = {Cidr{IpAddress::v4_of(127, 0, 0, 0), 8}};
    engine::Engine e(eo, make_local_zone(), publisher, cache);
    const engine::Client client{IpAddress::v4_of(127, 0, 0, 1), 53000, engine::Transport::udp};

    const Pools pools = make_pools(bl.sample, per_kind, options.seed);
    bl.sample.release();
    std::vector<std::uint8_t> out(wire::kMaxMessageSize);
    warm_cache(e, pools.kind[cached], client, out);
    const SettledMemory loaded = read_after_freeing();

    const auto f =
        time_decides(e, pools, client, static_cast<std::size_t>(options.iters), options.seed);
    report_kinds(f, report);
    std::array<double, 3> allocs{};
    for (std::size_t k = 0; k < allocs.size(); ++k) {
        allocs[k] = allocations_per_query(e, pools.kind[k], client, out);
    }
    report.line(format("allocations per query: cached %g blocked %g local %g", allocs[cached],
                       allocs[blocked], allocs[local]));
    const cache::Stats cs = cache->stats();
    report.line(
        format("memory: snapshot %.1f MiB, cache accounting %.1f MiB (%llu entries), "
               "VmRSS %s (%s after malloc_trim)",
               to_mib(static_cast<double>(bl.snapshot->memory_bytes())),
               to_mib(static_cast<double>(cs.bytes)), static_cast<unsigned long long>(cs.entries),
               mib_text(loaded.raw.rss_mib).c_str(), mib_text(loaded.trimmed.rss_mib).c_str()));
    report.timing_target(
        "pipeline", f[cached].summary.p50_us <= kP50LimitUs,
        format("cached p50 %.3f us <= %.1f us", f[cached].summary.p50_us, kP50LimitUs));
    report.timing_target(
        "pipeline", f[blocked].summary.p50_us <= kP50LimitUs,
        format("blocked p50 %.3f us <= %.1f us", f[blocked].summary.p50_us, kP50LimitUs));
    for (std::size_t k = 0; k < allocs.size(); ++k) {
        report.target("pipeline", allocs[k] == 0,
                      format("%s allocations per query %g == 0", kKindNames[k], allocs[k]));
    }
}

}  // namespace moat::bench
