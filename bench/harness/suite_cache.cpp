// cache: the hit path a query takes, from query bytes to an answer in the caller's buffer:
// MessageView::parse + CacheKey::from_query + Cache::lookup (copy, ID stamped, TTLs aged), with
// the real CoarseClock the daemon uses (lookup reads it once). Half the queries hit one of
// min(N, 100,000) stored answers, half miss; percentiles of hits and misses apart.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "answers.hpp"
#include "memory.hpp"
#include "memory_floor.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/record.hpp"
#include "queries.hpp"
#include "suites.hpp"

namespace moat::bench {
namespace {

constexpr std::size_t kMaxEntries = 100'000;
constexpr std::size_t kMaxPool = std::size_t{1} << 16U;
constexpr double kHitP95LimitUs = 0.15;

/// Every fourth stored answer is for AAAA, the rest for A.
wire::RrType qtype_of(std::size_t i) noexcept {
    return i % 4 == 3 ? wire::RrType::aaaa : wire::RrType::a;
}

void fill(cache::Cache& cache, const NameList& names) {
    for (std::size_t i = 0; i < names.size(); ++i) {
        const wire::Name name = wire::Name::from_text(names[i]).value();
        const auto key = cache::CacheKey::make(name.view(), qtype_of(i), wire::RrClass::in, false);
        if (auto stored = cache.insert(key, make_answer(name, qtype_of(i), i)); !stored) {
            abort_run("cache", std::string("insert refused: ") + cache::reason(stored.error()));
        }
    }
}

struct CachePool {
    QueryPool queries;
    std::vector<std::uint8_t> hit;  ///< 1: a stored name with its stored type
};

/// Half the queries for stored (name, type) pairs, half for unlisted names; shuffled.
CachePool make_pool(const NameList& stored, std::size_t size, std::uint64_t seed) {
    const std::size_t hits = size / 2;
    const NameList missing = generate_unlisted(size - hits, seed ^ 0xCAC4EULL);
    Rng rng(seed ^ 0xCAC4E2ULL);
    std::vector<std::uint32_t> order(size);
    for (std::size_t i = 0; i < size; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    rng.shuffle(order);
    CachePool pool;
    for (const std::uint32_t i : order) {
        if (i < hits) {
            const std::size_t k = rng.below(stored.size());
            pool.queries.add(stored[k], qtype_of(k), rng);
        } else {
            pool.queries.add(missing[i - hits], wire::RrType::a, rng);
        }
        pool.hit.push_back(i < hits ? 1 : 0);
    }
    return pool;
}

/// The query path's cache step; true on a hit. `now` given: the overload a server uses to read
/// the clock once per batch.
bool lookup(cache::Cache& cache, std::span<const std::uint8_t> query, std::span<std::uint8_t> out,
            const Clock::time_point* now) noexcept {
    const auto view = wire::MessageView::parse(query);
    if (!view) {
        return false;
    }
    const auto key = cache::CacheKey::from_query(*view);
    if (!key) {
        return false;
    }
    const auto hit = now != nullptr ? cache.lookup(*key, view->header().id, out, *now)
                                    : cache.lookup(*key, view->header().id, out);
    return hit.has_value();
}

struct CacheFigures {
    Summary hit;
    Summary miss;
    std::size_t hits = 0;
    std::size_t expected_hits = 0;
    std::size_t wrong = 0;
};

CacheFigures time_lookups(cache::Cache& cache, const CachePool& pool, std::size_t iterations,
                          std::uint64_t seed, const Clock::time_point* now) {
    std::vector<std::uint8_t> out(wire::kMaxMessageSize);
    // As the daemon has them: each query in the receive buffer the kernel has just written.
    std::vector<std::uint8_t> received(wire::kMaxMessageSize);
    Rng rng(seed ^ 0x100CULL);
    const std::vector<std::uint32_t> order = visit_order(pool.queries.size(), iterations, rng);
    Samples hit(iterations);
    Samples miss(iterations);
    CacheFigures f;
    for (const std::uint32_t q : order) {
        const std::span<const std::uint8_t> stored = pool.queries[q];
        std::copy(stored.begin(), stored.end(), received.begin());
        const std::span<const std::uint8_t> query(received.data(), stored.size());
        const Ticks t0 = tick_begin();
        const bool found = lookup(cache, query, out, now);
        const Ticks t1 = tick_end();
        keep(out[0]);
        (found ? hit : miss).add(t1 - t0);
        f.hits += found ? 1U : 0U;
        f.expected_hits += pool.hit[q];
        f.wrong += found != (pool.hit[q] != 0) ? 1U : 0U;
    }
    f.hit = hit.summarize();
    f.miss = miss.summarize();
    return f;
}

}  // namespace

void run_cache(const Options& options, Report& report) {
    const std::size_t entries = std::min<std::size_t>(options.domains, kMaxEntries);
    const std::size_t pool_size = std::min<std::size_t>(options.iters, kMaxPool);
    report.title("cache", format("parse + CacheKey::from_query + Cache::lookup (CoarseClock), "
                                 "%zu stored answers (A, every 4th AAAA), %zu distinct "
                                 "mixed-case queries with EDNS, half hits",
                                 entries, pool_size));
    trim_heap();              // earlier suites' freed memory is not this suite's
    const CoarseClock clock;  // the daemon's
    cache::Options copts;
    copts.max_bytes = std::size_t{1} << 30U;  // no eviction: every stored answer stays
    auto cache = std::make_unique<cache::Cache>(clock, copts);
    CachePool pool;
    {
        NameList names = generate_listed(entries, options.seed ^ 0xCAC4E0ULL);
        fill(*cache, names);
        pool = make_pool(names, pool_size, options.seed);
    }  // names and answers freed before VmRSS is read
    const SettledMemory loaded = read_after_freeing();
    const cache::Stats filled = cache->stats();
    if (filled.entries != entries || filled.evictions != 0) {
        abort_run("cache", format("%llu entries (%llu evicted) after %zu inserts",
                                  static_cast<unsigned long long>(filled.entries),
                                  static_cast<unsigned long long>(filled.evictions), entries));
    }

    // Warm-up pass (page faults of the out buffer, branch history); not recorded.
    (void)time_lookups(*cache, pool, pool.queries.size(), options.seed + 1, nullptr);
    const CacheFigures f = time_lookups(*cache, pool, options.iters, options.seed, nullptr);
    const Clock::time_point now = clock.now();
    const CacheFigures g = time_lookups(*cache, pool, options.iters, options.seed, &now);
    report.table_header();
    report.row("hit", f.hit);
    report.row("miss", f.miss);
    report.row("hit, clock read by caller", g.hit);
    report.row("miss, clock read by caller", g.miss);
    report.line(format("sanity: hits %zu/%zu (expected %zu), wrong outcomes %zu", f.hits,
                       options.iters, f.expected_hits, f.wrong + g.wrong));
    if (f.hits == 0 || f.hits == options.iters || g.hits == 0) {
        abort_run("cache", "every lookup hit, or none did");
    }
    report.line(format(
        "memory: cache accounting %.1f MiB for %llu entries (%.0f B/entry); "
        "VmRSS with names and answers freed %s (%s after malloc_trim)",
        to_mib(static_cast<double>(filled.bytes)), static_cast<unsigned long long>(filled.entries),
        static_cast<double>(filled.bytes) / static_cast<double>(filled.entries),
        mib_text(loaded.raw.rss_mib).c_str(), mib_text(loaded.trimmed.rss_mib).c_str()));
    const Summary one_read = report_read_floor(report, "cache", static_cast<double>(filled.bytes));
    report.timing_target("cache", f.hit.p95_us <= kHitP95LimitUs,
                         format("hit p95 %.3f us <= %.2f us (one random read in a table of this "
                                "size: p95 %.3f us)",
                                f.hit.p95_us, kHitP95LimitUs, one_read.p95_us));
}

}  // namespace moat::bench
