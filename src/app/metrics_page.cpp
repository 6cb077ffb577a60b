#include "metrics_page.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <ctime>
#include <fstream>
#include <sstream>

#include "embedded.hpp"
#include "moat/lists/state_dir.hpp"
#include "moat/metrics/text_writer.hpp"
#include "moat/wire/type_names.hpp"

namespace moat::app {
namespace {

using metrics::TextWriter;
using metrics::Type;

void queries(TextWriter& w, const server::QueryMetrics& m) {
    w.family("dnsmoat_queries_total", "Queries handled, by what happened to them.", Type::counter);
    for (std::size_t i = 0; i < engine::kOutcomeCount; ++i) {
        const auto outcome = static_cast<engine::Outcome>(i);
        if (outcome != engine::Outcome::pending) {
            w.sample("dnsmoat_queries_total", {{"outcome", engine::to_text(outcome)}},
                     m.by_outcome[i].value());
        }
    }
    w.family("dnsmoat_queries_by_type_total", "Queries by question type.", Type::counter);
    for (std::size_t i = 0; i <= server::QueryMetrics::kTypes.size(); ++i) {
        const std::string type = i < server::QueryMetrics::kTypes.size()
                                     ? wire::type_name(server::QueryMetrics::kTypes[i])
                                     : "other";
        w.sample("dnsmoat_queries_by_type_total", {{"qtype", type}}, m.by_type[i].value());
    }
    w.family("dnsmoat_responses_total", "Answers sent, by response code.", Type::counter);
    for (std::size_t i = 0; i < 16; ++i) {
        if (i <= 5 || m.by_rcode[i].value() != 0) {
            w.sample("dnsmoat_responses_total",
                     {{"rcode", std::string(wire::rcode_name(static_cast<std::uint8_t>(i)))}},
                     m.by_rcode[i].value());
        }
    }
    w.family("dnsmoat_queries_by_transport_total", "Queries by transport.", Type::counter);
    for (std::size_t t = 0; t < engine::kTransportCount; ++t) {
        const auto transport = static_cast<engine::Transport>(t);
        w.sample("dnsmoat_queries_by_transport_total",
                 {{"transport", std::string(engine::to_text(transport))}},
                 m.by_transport[t].value());
    }
    w.histogram("dnsmoat_query_duration_seconds",
                "Time from a query's arrival to its answer (upstream time included).", m.duration);
}

void gauges(TextWriter& w, const server::QueryPath& path, const server::Server& server) {
    w.family("dnsmoat_queries_in_flight", "Queries waiting for an upstream now.", Type::gauge);
    w.sample("dnsmoat_queries_in_flight", {}, path.metrics().in_flight.value());
    w.family("dnsmoat_queries_in_flight_peak", "Most queries waiting for an upstream at once.",
             Type::gauge);
    w.sample("dnsmoat_queries_in_flight_peak", {}, path.metrics().in_flight.peak());
    w.family("dnsmoat_tcp_connections", "TCP, DoT and DoH connections open now.", Type::gauge);
    w.sample("dnsmoat_tcp_connections", {}, server.tcp_connections_gauge().value());
    w.family("dnsmoat_tcp_connections_peak", "Most TCP, DoT and DoH connections open at once.",
             Type::gauge);
    w.sample("dnsmoat_tcp_connections_peak", {}, server.tcp_connections_gauge().peak());
}

void cache_metrics(TextWriter& w, const cache::Cache* cache) {
    const cache::Stats s = cache != nullptr ? cache->stats() : cache::Stats{};
    const std::array<std::tuple<const char*, const char*, Type, std::uint64_t>, 8> rows{{
        {"dnsmoat_cache_entries", "Answers in the cache now.", Type::gauge, s.entries},
        {"dnsmoat_cache_bytes", "Bytes the cache holds now.", Type::gauge, s.bytes},
        {"dnsmoat_cache_hits_total", "Answers served fresh from the cache.", Type::counter, s.hits},
        {"dnsmoat_cache_stale_hits_total",
         "Expired answers served (serve-stale, or at once with cache.optimistic).", Type::counter,
         s.stale_hits},
        {"dnsmoat_cache_misses_total", "Cache lookups that found nothing usable.", Type::counter,
         s.misses},
        {"dnsmoat_cache_inserts_total", "Answers stored.", Type::counter, s.inserts},
        {"dnsmoat_cache_evictions_total", "Answers removed to stay within the size.", Type::counter,
         s.evictions},
        {"dnsmoat_cache_prefetches_total",
         "Cached answers asked for again while served: near expiry (prefetch) or past it "
         "(cache.optimistic).",
         Type::counter, s.prefetches},
    }};
    for (const auto& [name, help, type, value] : rows) {
        w.family(name, help, type);
        w.sample(name, {}, value);
    }
}

void lists(TextWriter& w, const filter::Snapshot& snapshot) {
    w.family("dnsmoat_list_entries", "Rules each list gave when last compiled.", Type::gauge);
    for (const filter::ListInfo& l : snapshot.lists()) {
        w.sample("dnsmoat_list_entries",
                 {{"list", l.spec.name},
                  {"kind", l.spec.kind == filter::ListKind::allow ? "allow" : "block"}},
                 l.stats.entries);
    }
    w.family("dnsmoat_list_invalid_lines", "Lines each list had that could not be read.",
             Type::gauge);
    for (const filter::ListInfo& l : snapshot.lists()) {
        w.sample("dnsmoat_list_invalid_lines",
                 {{"list", l.spec.name},
                  {"kind", l.spec.kind == filter::ListKind::allow ? "allow" : "block"}},
                 l.stats.invalid);
    }
    w.family("dnsmoat_filter_rules", "Distinct rules being matched now.", Type::gauge);
    w.sample("dnsmoat_filter_rules", {{"type", "name"}},
             static_cast<std::uint64_t>(snapshot.name_rules()));
    w.sample("dnsmoat_filter_rules", {{"type", "regex"}},
             static_cast<std::uint64_t>(snapshot.regex_rules()));
}

void upstreams(TextWriter& w, const upstream::Forwarder& forwarder) {
    const std::vector<upstream::ServerReport> servers = forwarder.servers();
    auto each = [&](std::string_view name, std::string_view help, Type type, auto value) {
        w.family(name, help, type);
        for (const upstream::ServerReport& s : servers) {
            w.sample(name, {{"server", s.address}, {"route", std::to_string(s.route)}}, value(s));
        }
    };
    using R = upstream::ServerReport;
    each("dnsmoat_upstream_queries_total",
         "Queries sent to each upstream server (route 0: "
         "[upstream] servers, then conditional forwards, then group upstreams).",
         Type::counter, [](const R& s) { return s.counts.sent; });
    each("dnsmoat_upstream_answers_total", "Usable answers from each upstream server.",
         Type::counter, [](const R& s) { return s.counts.answered; });
    each("dnsmoat_upstream_errors_total",
         "Error answers, send and TCP failures of each upstream server.", Type::counter,
         [](const R& s) { return s.counts.errors; });
    each("dnsmoat_upstream_timeouts_total", "Attempts each upstream server did not answer in time.",
         Type::counter, [](const R& s) { return s.counts.timeouts; });
    each("dnsmoat_upstream_hedged_total",
         "Times each upstream server was slower than the hedge delay, so the next one was asked "
         "too.",
         Type::counter, [](const R& s) { return s.counts.hedged; });
    each("dnsmoat_upstream_rtt_seconds",
         "Smoothed round-trip time of each upstream server (0: not measured yet).", Type::gauge,
         [](const R& s) { return static_cast<double>(s.srtt.count()) / 1e6; });

    // Counts of the forwarder as a whole: what belongs to no one server.
    const upstream::Stats& all = forwarder.stats();
    auto total = [&](std::string_view name, std::string_view help,
                     const std::atomic<std::uint64_t>& value) {
        w.family(name, help, Type::counter);
        w.sample(name, {}, value.load(std::memory_order_relaxed));
    };
    total("dnsmoat_upstream_ignored_replies_total",
          "Datagrams and answers dropped as not ours: from the wrong address or port, with the "
          "wrong ID or question, or unparsable (forgeries and junk).",
          all.ignored);
    total("dnsmoat_upstream_coalesced_total",
          "Queries that joined an identical query already waiting for an upstream.", all.coalesced);
    total("dnsmoat_upstream_tcp_retries_total", "Truncated UDP answers asked again over TCP.",
          all.tcp_retries);
    total("dnsmoat_upstream_overloaded_total",
          "Queries failed at once because too many were waiting for upstreams.", all.overloaded);
}

/// How each downloaded list's refreshes went, from the status files the refresher keeps.
void list_downloads(TextWriter& w, const config::Config& c) {
    struct Row {
        std::string name;
        const char* kind;
        lists::ListStatus status;
    };
    std::vector<Row> rows;
    const lists::StateDir dir(c.lists.state_dir);
    for (const auto* kind : {&c.blocklists, &c.allowlists}) {
        for (const config::ListConfig& l : *kind) {
            if (!l.url.empty()) {
                rows.push_back({l.name, kind == &c.blocklists ? "block" : "allow",
                                dir.read_status(lists::StateDir::key_of(l.name, l.url))
                                    .value_or(lists::ListStatus{})});
            }
        }
    }
    auto each = [&](std::string_view name, std::string_view help, auto value) {
        w.family(name, help, Type::gauge);
        for (const Row& r : rows) {
            w.sample(name, {{"list", r.name}, {"kind", r.kind}}, value(r.status));
        }
    };
    each("dnsmoat_list_last_success_timestamp_seconds",
         "When each downloaded list was last fetched (or found unchanged); 0: never.",
         [](const lists::ListStatus& s) { return static_cast<double>(s.last_success); });
    each("dnsmoat_list_last_refresh_ok", "1 when the last refresh of each list succeeded.",
         [](const lists::ListStatus& s) {
             return std::uint64_t{s.last_attempt != 0 && s.last_error.empty() ? 1U : 0U};
         });
    each("dnsmoat_list_refresh_failures", "Failed or rejected refreshes in a row of each list.",
         [](const lists::ListStatus& s) { return std::uint64_t{s.failures}; });
}

void query_log(TextWriter& w, const QueryLog* log) {
    if (log == nullptr) {
        return;
    }
    const auto& q = log->queue();
    const std::array<std::tuple<const char*, const char*, Type, std::uint64_t>, 6> rows{{
        {"dnsmoat_querylog_queue_depth", "Queries waiting for the log writer now.", Type::gauge,
         q.depth()},
        {"dnsmoat_querylog_queue_depth_peak", "Deepest the log writer's queue has been.",
         Type::gauge, q.peak_depth()},
        {"dnsmoat_querylog_queue_capacity", "Queries the log writer's queue holds.", Type::gauge,
         q.capacity()},
        {"dnsmoat_querylog_dropped_total", "Queries not logged because the queue was full.",
         Type::counter, q.dropped()},
        {"dnsmoat_querylog_written_total", "Rows written to the query log.", Type::counter,
         log->writer().written_total()},
        {"dnsmoat_querylog_lost_total", "Queries not logged because a write failed.", Type::counter,
         log->writer().lost_total()},
    }};
    for (const auto& [name, help, type, value] : rows) {
        w.family(name, help, type);
        w.sample(name, {}, value);
    }
}

/// The standard process metrics of Prometheus clients, from /proc/self.
void process(TextWriter& w) {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // Fields after the command name (which may hold spaces) start after the last ')'.
    std::istringstream in(text.substr(text.rfind(')') + 2));
    std::array<std::string, 24> f;
    for (auto& field : f) {
        in >> field;
    }
    const auto ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const auto page = static_cast<double>(sysconf(_SC_PAGESIZE));
    // utime, stime, starttime and rss are fields 14, 15, 22 and 24 of stat(5); f[0] is field 3.
    const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    const double rss = std::stod(f[21]) * page;
    // Seconds since boot from the clock /proc/uptime reads, without /proc/uptime itself, which
    // the unit's ProcSubset=pid hides.
    timespec boot{};
    ::clock_gettime(CLOCK_BOOTTIME, &boot);
    const double uptime =
        static_cast<double>(boot.tv_sec) + static_cast<double>(boot.tv_nsec) / 1e9;
    const double started_ago = uptime - std::stod(f[19]) / ticks;
    const auto now = static_cast<double>(std::time(nullptr));
    w.family("process_cpu_seconds_total", "CPU time used, user and system.", Type::counter);
    w.sample("process_cpu_seconds_total", {}, cpu);
    w.family("process_resident_memory_bytes", "Resident memory.", Type::gauge);
    w.sample("process_resident_memory_bytes", {}, rss);
    w.family("process_start_time_seconds", "Start time, seconds since the Unix epoch.",
             Type::gauge);
    w.sample("process_start_time_seconds", {}, now - started_ago);
}

}  // namespace

std::string metrics_text(const MetricsSources& s) {
    TextWriter w;
    w.family("dnsmoat_build_info", "The running version (always 1).", Type::gauge);
    w.sample("dnsmoat_build_info", {{"version", version()}}, std::uint64_t{1});
    queries(w, s.path.metrics());
    gauges(w, s.path, s.server);
    cache_metrics(w, s.cache);
    lists(w, s.snapshot);
    list_downloads(w, s.config);
    upstreams(w, s.forwarder);
    query_log(w, s.query_log);
    process(w);
    return std::move(w).text();
}

}  // namespace moat::app
