// filter: Snapshot::match() on wire-form query names against N listed names (subdomains
// included) and 32 regex rules no query matches, half the queries blocked; the structure's own
// memory and the process's VmRSS once the list text is freed. With --scaling, the same lookup at
// 10k / 100k / 1M / 4M names.
#include <array>
#include <string>

#include "blocklist.hpp"
#include "memory.hpp"
#include "memory_floor.hpp"
#include "moat/wire/name.hpp"
#include "queries.hpp"
#include "suites.hpp"

namespace moat::bench {
namespace {

constexpr std::size_t kMaxPool = std::size_t{1} << 16U;
constexpr std::size_t kTargetDomains = 1'000'000;
constexpr double kP95LimitUs = 0.15;
constexpr double kRssLimitMib = 24;
constexpr double kStructureLimitMib = 16;

/// Query names in visiting order, with what each should get.
struct FilterPool {
    NamePool names;
    std::vector<std::uint8_t> blocked;  ///< 1: a listed name or below one
};

/// Half blocked (a sampled listed name or a label below it), half unlisted, shuffled.
FilterPool make_pool(const NameList& sample, std::size_t size, std::uint64_t seed) {
    const std::size_t blocked = sample.size();
    const NameList unlisted = generate_unlisted(size - blocked, seed ^ 0xB10CC3DULL);
    std::vector<std::uint32_t> order(size);
    for (std::size_t i = 0; i < size; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    DomainGenerator gen(seed ^ 0x9E3779B9ULL);
    gen.rng().shuffle(order);
    FilterPool pool;
    pool.blocked.reserve(size);
    std::string name;
    for (const std::uint32_t i : order) {
        if (i < blocked) {
            blocked_query_name(sample[i], gen, name);
            pool.names.add(name, gen.rng());
        } else {
            pool.names.add(unlisted[i - blocked], gen.rng());
        }
        pool.blocked.push_back(i < blocked ? 1 : 0);
    }
    pool.names.finish();
    return pool;
}

struct LookupFigures {
    Summary all;
    Summary blocked;
    Summary unblocked;
    std::size_t blocked_count = 0;
    std::size_t expected_blocked = 0;
    std::size_t wrong = 0;  ///< verdicts other than the pool says
};

LookupFigures time_lookups(const filter::Snapshot& snapshot, const FilterPool& pool,
                           std::size_t iterations, std::uint64_t seed) {
    Rng rng(seed ^ 0x0DE4ULL);
    const std::vector<std::uint32_t> order = visit_order(pool.names.size(), iterations, rng);
    for (std::size_t i = 0; i < pool.names.size(); ++i) {  // warm-up: RE2's DFA cache, TLB
        keep(snapshot.match(pool.names[i]).action);
    }
    Samples all(iterations);
    Samples blocked(iterations);
    Samples unblocked(iterations);
    LookupFigures f;
    for (const std::uint32_t q : order) {
        // As the daemon has it: the name in the datagram the kernel has just written.
        const wire::Name received = wire::Name::from_view(pool.names[q]);
        const wire::NameView name = received.view();
        const Ticks t0 = tick_begin();
        const filter::Verdict v = snapshot.match(name);
        const Ticks t1 = tick_end();
        keep(v.action);
        all.add(t1 - t0);
        const bool is_blocked = v.action == filter::Action::blocked;
        (pool.blocked[q] != 0 ? blocked : unblocked).add(t1 - t0);
        f.blocked_count += is_blocked ? 1U : 0U;
        f.expected_blocked += pool.blocked[q];
        f.wrong += is_blocked != (pool.blocked[q] != 0) ? 1U : 0U;
    }
    f.all = all.summarize();
    f.blocked = blocked.summarize();
    f.unblocked = unblocked.summarize();
    return f;
}

void check_sanity(const LookupFigures& f, std::size_t iterations, Report& report) {
    report.line(format("sanity: blocked %zu/%zu (expected %zu), wrong verdicts %zu",
                       f.blocked_count, iterations, f.expected_blocked, f.wrong));
    if (f.blocked_count == 0 || f.blocked_count == iterations) {
        abort_run("filter", "the snapshot blocked none or all of the queries");
    }
}

void memory_target(Report& report, bool judged, double value, double limit, const char* what) {
    const std::string text = format("%s %.1f MiB <= %.0f MiB", what, value, limit);
    if (judged) {
        report.target("filter", value <= limit, text);
    } else {
        report.info("filter", text + " (judged only at --domains=1000000)");
    }
}

void run_scaling(const Options& options, Report& report) {
    static constexpr std::array<std::size_t, 4> kSizes = {10'000, 100'000, 1'000'000, 4'000'000};
    report.title("filter --scaling",
                 format("match() cost and memory by list size, %llu lookups each",
                        static_cast<unsigned long long>(options.iters)));
    // The last two columns: one random read in a table of the structure's size, timed alone
    // (memory_floor.hpp), which grows with the table however the lookup is written.
    report.line(format("%10s %9s %9s %9s %14s %10s %10s %11s %11s", "domains", "p50 us", "p95 us",
                       "p99 us", "structure MiB", "B/domain", "compile s", "read p50", "read p95"));
    const std::size_t pool_size = std::min<std::size_t>(options.iters, kMaxPool);
    for (const std::size_t domains : kSizes) {
        const Blocklist bl = make_blocklist(domains, pool_size / 2, options.seed);
        const FilterPool pool = make_pool(bl.sample, pool_size, options.seed);
        const LookupFigures f = time_lookups(*bl.snapshot, pool, options.iters, options.seed);
        if (f.blocked_count == 0 || f.wrong != 0) {
            abort_run("filter", format("scaling at %zu domains: %zu blocked, %zu wrong verdicts",
                                       domains, f.blocked_count, f.wrong));
        }
        const auto bytes = static_cast<double>(bl.snapshot->memory_bytes());
        const Summary one_read = timed_read_summary(static_cast<std::size_t>(bytes));
        report.line(format("%10zu %9.3f %9.3f %9.3f %14.1f %10.1f %10.2f %11.3f %11.3f", domains,
                           f.all.p50_us, f.all.p95_us, f.all.p99_us, to_mib(bytes),
                           bytes / static_cast<double>(domains), bl.compile_seconds,
                           one_read.p50_us, one_read.p95_us));
    }
}

}  // namespace

void run_filter(const Options& options, Report& report) {
    const auto domains = static_cast<std::size_t>(options.domains);
    const std::size_t pool_size = std::min<std::size_t>(options.iters, kMaxPool);
    report.title("filter", format("Snapshot::match over %zu listed names (domains list, "
                                  "subdomains included) + %zu never-matching regexes; %zu "
                                  "distinct mixed-case queries, half blocked",
                                  domains, kNeverRegexes, pool_size));
    trim_heap();  // earlier suites' freed memory is not this suite's
    const ProcessMemory before = read_process_memory();
    Blocklist bl = make_blocklist(domains, pool_size / 2, options.seed);
    // Read before the query pool exists: the process holds the snapshot and the 1/2-pool sample.
    const SettledMemory loaded = read_after_freeing();
    const FilterPool pool = make_pool(bl.sample, pool_size, options.seed);
    bl.sample.release();

    const LookupFigures f = time_lookups(*bl.snapshot, pool, options.iters, options.seed);
    report.table_header();
    report.row("match (all)", f.all);
    report.row("match (blocked queries)", f.blocked);
    report.row("match (unblocked queries)", f.unblocked);
    check_sanity(f, options.iters, report);

    const auto bytes = static_cast<double>(bl.snapshot->memory_bytes());
    report.line(
        format("memory: structure %.1f MiB (%.1f B/domain, %zu name rules, %zu regex "
               "rules); compile %.2f s",
               to_mib(bytes), bytes / static_cast<double>(domains), bl.snapshot->name_rules(),
               bl.snapshot->regex_rules(), bl.compile_seconds));
    report.line(
        format("memory: VmRSS before load %s; after load, list text freed: %s as the "
               "allocator left it, %s after malloc_trim",
               mib_text(before.rss_mib).c_str(), mib_text(loaded.raw.rss_mib).c_str(),
               mib_text(loaded.trimmed.rss_mib).c_str()));

    const Summary one_read = report_read_floor(report, "filter", bytes);
    report.timing_target("filter", f.all.p95_us <= kP95LimitUs,
                         format("p95 %.3f us <= %.2f us (one random read in a table of this "
                                "size: p95 %.3f us)",
                                f.all.p95_us, kP95LimitUs, one_read.p95_us));
    const bool judged = domains == kTargetDomains;
    if (loaded.raw.rss_mib) {
        memory_target(report, judged, *loaded.raw.rss_mib, kRssLimitMib, "VmRSS after load");
    } else {
        report.info("filter", "VmRSS after load n/a");
    }
    memory_target(report, judged, to_mib(bytes), kStructureLimitMib, "structure");

    if (options.scaling) {
        bl = Blocklist{};  // free this snapshot before the 4M one
        run_scaling(options, report);
    }
}

}  // namespace moat::bench
