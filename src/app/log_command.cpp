#include "log_command.hpp"

#include <array>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "launch.hpp"
#include "moat/config/values.hpp"
#include "moat/querylog/database.hpp"
#include "moat/wire/type_names.hpp"
#include "privileges.hpp"
#include "unix_now.hpp"

namespace moat::app {
namespace {

std::string local_time(std::int64_t time_us) {
    const std::time_t seconds = time_us / 1'000'000;
    std::tm tm{};
    localtime_r(&seconds, &tm);
    std::array<char, 32> text{};
    const std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S", &tm);
    std::array<char, 8> millis{};
    std::snprintf(millis.data(), millis.size(), ".%03d", static_cast<int>((time_us / 1000) % 1000));
    return std::string(text.data(), n) + millis.data();
}

/// Why the answer was what it was, in a few words.
std::string detail(const querylog::Row& r) {
    std::string out;
    if (!r.list.empty()) {
        out = r.list + (r.line != 0 ? ":" + std::to_string(r.line) : "");
        if (!r.pattern.empty()) {
            out += " /" + r.pattern + "/";
        }
    }
    if (!r.upstream.empty()) {
        out += (out.empty() ? "" : " ") + std::string("via ") + r.upstream;
    }
    return out;
}

nlohmann::json to_json(const querylog::Row& r) {
    nlohmann::json j = {{"id", r.id},
                        {"time_us", r.time_us},
                        {"client", r.client},
                        {"domain", r.domain},
                        {"type", wire::type_name(r.qtype)},
                        {"outcome", r.outcome},
                        {"rcode", r.rcode},
                        {"transport", r.transport},
                        {"latency_us", r.latency_us}};
    j["upstream"] = r.upstream.empty() ? nlohmann::json() : nlohmann::json(r.upstream);
    j["ede"] = r.ede ? nlohmann::json(*r.ede) : nlohmann::json();
    j["list"] = r.list.empty() ? nlohmann::json() : nlohmann::json(r.list);
    j["line"] = r.line == 0 ? nlohmann::json() : nlohmann::json(r.line);
    j["pattern"] = r.pattern.empty() ? nlohmann::json() : nlohmann::json(r.pattern);
    return j;
}

/// The Search for `q`, or the message of the first bad argument.
tl::expected<querylog::Search, std::string> search_of(const LogQuery& q) {
    querylog::Search s;
    s.domain = q.domain;
    for (char& c : s.domain) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!s.domain.empty() && s.domain.size() > 1 && s.domain.back() == '.') {
        s.domain.pop_back();
    }
    if (q.match == "substring") {
        s.match = querylog::DomainMatch::substring;
    } else if (q.match == "suffix") {
        s.match = querylog::DomainMatch::suffix;
    } else if (q.match == "exact") {
        s.match = querylog::DomainMatch::exact;
    } else {
        return tl::unexpected("--match: \"" + q.match + "\" is not substring, suffix or exact");
    }
    s.client = q.client;
    s.outcome = q.outcome;
    if (!q.type.empty()) {
        s.qtype = wire::type_from_name(q.type);
        if (!s.qtype) {
            return tl::unexpected("--type: \"" + q.type + "\" is not a DNS type");
        }
    }
    if (!q.since.empty()) {
        auto back = config::parse_duration(q.since);
        if (!back) {
            return tl::unexpected("--since: " + back.error());
        }
        const auto now = unix_now_us();
        s.from_us = now - std::chrono::duration_cast<std::chrono::microseconds>(*back).count();
    }
    if (q.limit < 1 || q.limit > 1000) {
        return tl::unexpected("--limit: " + std::to_string(q.limit) + " is out of range (1..1000)");
    }
    s.limit = q.limit;
    s.before = q.before;
    return s;
}

void print_table(const querylog::Page& page) {
    for (const querylog::Row& r : page.rows) {
        std::cout << local_time(r.time_us) << "  " << r.client << "  " << wire::type_name(r.qtype)
                  << "  " << r.domain << "  " << r.outcome;
        if (const std::string d = detail(r); !d.empty()) {
            std::cout << "  " << d;
        }
        std::cout << "  " << r.latency_us / 1000.0 << " ms\n";
    }
    if (page.next) {
        std::cout << "(more: --before " << *page.next << ")\n";
    }
}

}  // namespace

int run_log(const Launch& launch, const LogQuery& query) {
    auto c = load_config(launch);
    if (!c) {
        std::cerr << c.error() << "\n";
        return 78;
    }
    auto search = search_of(query);
    if (!search) {
        std::cerr << "dnsmoat log: " << search.error() << "\n";
        return 2;
    }
    if (!become_owner_of(c->querylog.path)) {
        std::cerr << "dnsmoat log: cannot switch to the owner of " << c->querylog.path << "\n";
        return 1;
    }
    auto db = querylog::Database::open(c->querylog.path, querylog::Database::Mode::read);
    if (!db) {
        std::cerr << "dnsmoat log: " << db.error() << "\n";
        return 1;
    }
    auto page = db->search(*search);
    if (!page) {
        std::cerr << "dnsmoat log: " << page.error() << "\n";
        return 1;
    }
    if (query.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const querylog::Row& r : page->rows) {
            rows.push_back(to_json(r));
        }
        nlohmann::json out = {{"rows", rows}};
        out["next"] = page->next ? nlohmann::json(*page->next) : nlohmann::json();
        std::cout << out.dump(2) << "\n";
    } else {
        print_table(*page);
    }
    return 0;
}

}  // namespace moat::app
