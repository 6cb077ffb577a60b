// Statistics (summary, history, top lists, upstreams, clients) from the in-memory rolling
// statistics, and the query log search, which reads the database on the worker thread.
#include <chrono>
#include <cstdlib>

#include "moat/config/values.hpp"
#include "moat/querylog/database.hpp"
#include "moat/wire/type_names.hpp"
#include "rest_api.hpp"
#include "unix_now.hpp"

namespace moat::app {
namespace {

using api::error_response;
using api::json_response;

nlohmann::json ranked_json(const std::vector<querylog::Ranked>& ranked) {
    nlohmann::json out = nlohmann::json::array();
    for (const querylog::Ranked& r : ranked) {
        out.push_back({{"name", r.name}, {"count", r.count}});
    }
    return out;
}

nlohmann::json row_json(const querylog::Row& r) {
    auto text_or_null = [](const std::string& s) {
        return s.empty() ? nlohmann::json() : nlohmann::json(s);
    };
    return {{"id", std::to_string(r.id)},
            {"time", static_cast<double>(r.time_us) / 1e6},
            {"client", r.client},
            {"name", r.domain},
            {"type", wire::type_name(r.qtype)},
            {"outcome", r.outcome},
            {"rcode", std::string(wire::rcode_name(r.rcode))},
            {"transport", r.transport},
            {"upstream", text_or_null(r.upstream)},
            {"latency_ms", static_cast<double>(r.latency_us) / 1000.0},
            {"ede", r.ede ? nlohmann::json(*r.ede) : nlohmann::json()},
            {"list", text_or_null(r.list)},
            {"line", r.line == 0 ? nlohmann::json() : nlohmann::json(r.line)},
            {"rule", text_or_null(r.pattern)}};
}

/// A whole number in [lo, hi] from a query parameter, or the reason it is not one.
std::optional<long long> number_param(const std::string& text, long long lo, long long hi) {
    if (text.empty() || text.size() > 19) {
        return std::nullopt;
    }
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
        return std::nullopt;
    }
    return v;
}

/// The log search a request asks for, or a 400 answer.
tl::expected<querylog::Search, http::Response> search_of(const api::Params& p) {
    querylog::Search s;
    s.domain = p.query_or("text");
    for (char& c : s.domain) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (s.domain.size() > 1 && s.domain.back() == '.') {
        s.domain.pop_back();
    }
    const std::string match = p.query_or("match", "substring");
    if (match == "substring") {
        s.match = querylog::DomainMatch::substring;
    } else if (match == "suffix") {
        s.match = querylog::DomainMatch::suffix;
    } else if (match == "exact") {
        s.match = querylog::DomainMatch::exact;
    } else {
        return tl::unexpected(error_response(400, "match must be substring, suffix or exact"));
    }
    s.client = p.query_or("client");
    s.outcome = p.query_or("outcome");
    if (const std::string type = p.query_or("type"); !type.empty()) {
        s.qtype = wire::type_from_name(type);
        if (!s.qtype) {
            return tl::unexpected(error_response(400, "type \"" + type + "\" is not a DNS type"));
        }
    }
    if (const std::string since = p.query_or("since"); !since.empty()) {
        if (const auto seconds = number_param(since, 0, 1LL << 40U)) {
            s.from_us = *seconds * 1'000'000;                    // Unix seconds
        } else if (auto back = config::parse_duration(since)) {  // or a span back: "1h"
            s.from_us = unix_now_us() -
                        std::chrono::duration_cast<std::chrono::microseconds>(*back).count();
        } else {
            return tl::unexpected(
                error_response(400, "since must be Unix seconds or a duration such as 1h"));
        }
    }
    if (const std::string before = p.query_or("before"); !before.empty()) {
        const auto cursor = number_param(before, 0, std::numeric_limits<long long>::max());
        if (!cursor) {
            return tl::unexpected(error_response(400, "before must be a `next` cursor"));
        }
        s.before = *cursor;
    }
    const auto limit = number_param(p.query_or("limit", "100"), 1, 1000);
    if (!limit) {
        return tl::unexpected(error_response(400, "limit must be 1..1000"));
    }
    s.limit = static_cast<std::size_t>(*limit);
    return s;
}

}  // namespace

void RestApi::add_stats_routes() {
    router_.add("GET", "/api/stats/summary", [this](const http::Request&, const Params&) {
        const querylog::Counts c = backend_.stats().totals(unix_now_us());
        const auto queries = static_cast<double>(c.queries);
        const auto answered = static_cast<double>(c.cached + c.forwarded);
        return json_response(
            200,
            {{"queries", c.queries},
             {"blocked", c.blocked},
             {"cached", c.cached},
             {"forwarded", c.forwarded},
             {"local", c.local},
             {"errors", c.errors},
             {"blocked_percent",
              c.queries == 0 ? 0.0 : 100.0 * static_cast<double>(c.blocked) / queries},
             {"cache_hit_ratio", answered == 0 ? 0.0 : static_cast<double>(c.cached) / answered},
             {"clients", backend_.stats().top(unix_now_us(), 1).distinct_clients},
             {"rules", backend_.rules()},
             {"query_log", backend_.config().querylog.enabled},
             {"period_seconds", 86400}});
    });

    router_.add("GET", "/api/stats/history", [this](const http::Request&, const Params&) {
        nlohmann::json buckets = nlohmann::json::array();
        for (const querylog::BucketCounts& b : backend_.stats().history(unix_now_us())) {
            buckets.push_back({{"time", b.start_us / 1'000'000},
                               {"queries", b.counts.queries},
                               {"blocked", b.counts.blocked},
                               {"cached", b.counts.cached}});
        }
        return json_response(200,
                             {{"interval_seconds", querylog::RollingStats::kBucketUs / 1'000'000},
                              {"buckets", buckets}});
    });

    router_.add("GET", "/api/stats/top", [this](const http::Request&, const Params& p) {
        const auto count = number_param(p.query_or("count", "10"), 1, 100);
        if (!count) {
            return error_response(400, "count must be 1..100");
        }
        const auto top = backend_.stats().top(unix_now_us(), static_cast<std::size_t>(*count));
        return json_response(200, {{"domains", ranked_json(top.domains)},
                                   {"blocked", ranked_json(top.blocked)},
                                   {"clients", ranked_json(top.clients)}});
    });

    router_.add("GET", "/api/upstreams", [this](const http::Request&, const Params&) {
        nlohmann::json servers = nlohmann::json::array();
        for (const upstream::ServerReport& s : backend_.forwarder().servers()) {
            servers.push_back(
                {{"address", s.address},
                 {"route", s.route},
                 {"queries", s.counts.sent},
                 {"answered", s.counts.answered},
                 {"errors", s.counts.errors},
                 {"timeouts", s.counts.timeouts},
                 {"hedged", s.counts.hedged},
                 {"rtt_ms", s.srtt.count() == 0
                                ? nlohmann::json()
                                : nlohmann::json(static_cast<double>(s.srtt.count()) / 1000.0)},
                 {"healthy", s.consecutive_failures < 3}});
        }
        return json_response(200, {{"servers", servers}});
    });
}

void RestApi::add_log_routes() {
    router_.add(
        "GET", "/api/querylog",
        [this](const http::Request&, const Params& p, const api::Peer&,
               const api::Responder& later) -> std::optional<http::Response> {
            const config::QueryLogConfig& c = backend_.config().querylog;
            if (!c.enabled) {
                return error_response(409, "the query log is off ([querylog] enabled)");
            }
            auto search = search_of(p);
            if (!search) {
                return search.error();
            }
            // Searches take up to tens of milliseconds over millions of rows: off the
            // event loop, on a connection of their own.
            backend_.offload([this, path = c.path, s = *search, later] {
                http::Response r;
                auto db = querylog::Database::open(path, querylog::Database::Mode::read);
                auto page =
                    db ? db->search(s)
                       : tl::expected<querylog::Page, std::string>(tl::unexpected(db.error()));
                if (!page) {
                    r = error_response(500, "query log: " + page.error());
                } else {
                    nlohmann::json entries = nlohmann::json::array();
                    for (const querylog::Row& row : page->rows) {
                        entries.push_back(row_json(row));
                    }
                    r = json_response(
                        200, {{"entries", entries},
                              {"next", page->next ? nlohmann::json(std::to_string(*page->next))
                                                  : nlohmann::json()}});
                }
                backend_.post([later, r = std::move(r)]() mutable { later(std::move(r)); });
            });
            return std::nullopt;
        });

    router_.add("GET", "/api/clients", [this](const http::Request&, const Params&) {
        const auto top = backend_.stats().top(unix_now_us(), 1000);
        nlohmann::json clients = nlohmann::json::array();
        engine::Engine& engine = *backend_.path().engine();
        for (const querylog::Ranked& r : top.clients) {
            const auto address = config::parse_ip(r.name);
            const std::string group =
                address ? engine.explain(wire::Name{}, engine::Client{*address, 0, {}}).group : "";
            clients.push_back({{"address", r.name}, {"group", group}, {"queries", r.count}});
        }
        return json_response(200, {{"clients", clients}});
    });
}

}  // namespace moat::app
