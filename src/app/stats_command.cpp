#include "stats_command.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "launch.hpp"
#include "moat/config/values.hpp"
#include "moat/querylog/database.hpp"
#include "privileges.hpp"
#include "unix_now.hpp"

namespace moat::app {
namespace {

/// "11-30 14:00": an interval's start, local time.
std::string interval_start(std::int64_t time_us) {
    const std::time_t seconds = time_us / 1'000'000;
    std::tm tm{};
    localtime_r(&seconds, &tm);
    std::array<char, 32> text{};
    const std::size_t n = std::strftime(text.data(), text.size(), "%m-%d %H:%M", &tm);
    return {text.data(), n};
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    std::array<char, 16> text{};
    std::snprintf(
        text.data(), text.size(), "%.1f%%",
        whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return text.data();
}

nlohmann::json ranked(const std::vector<querylog::Ranked>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const querylog::Ranked& r : list) {
        out.push_back({{"name", r.name}, {"count", r.count}});
    }
    return out;
}

nlohmann::json to_json(const querylog::Summary& s) {
    nlohmann::json intervals = nlohmann::json::array();
    for (const querylog::Interval& i : s.intervals) {
        intervals.push_back({{"start_us", i.start_us}, {"by_outcome", i.by_outcome}});
    }
    return {{"from_us", s.from_us},
            {"to_us", s.to_us},
            {"total", s.total},
            {"by_outcome", s.by_outcome},
            {"intervals", intervals},
            {"top_domains", ranked(s.top_domains)},
            {"top_blocked", ranked(s.top_blocked)},
            {"top_clients", ranked(s.top_clients)}};
}

void print_ranking(const char* title, const std::vector<querylog::Ranked>& list) {
    std::cout << "\n" << title << ":\n";
    if (list.empty()) {
        std::cout << "  (none)\n";
    }
    for (const querylog::Ranked& r : list) {
        std::cout << "  " << r.count << "  " << r.name << "\n";
    }
}

void print(const querylog::Summary& s, const std::string& since) {
    std::cout << "Last " << since << ": " << s.total << " queries\n";
    for (const auto& [outcome, n] : s.by_outcome) {
        std::cout << "  " << outcome << "  " << n << "  " << percent(n, s.total) << "\n";
    }
    std::cout << "\nPer interval (queries, blocked):\n";
    for (const querylog::Interval& i : s.intervals) {
        std::uint64_t total = 0;
        for (const auto& [outcome, n] : i.by_outcome) {
            total += n;
        }
        const auto blocked = i.by_outcome.find("blocked");
        const std::uint64_t b = blocked == i.by_outcome.end() ? 0 : blocked->second;
        std::cout << "  " << interval_start(i.start_us) << "  " << total << "  "
                  << percent(b, total) << "\n";
    }
    print_ranking("Top domains", s.top_domains);
    print_ranking("Top blocked", s.top_blocked);
    print_ranking("Top clients", s.top_clients);
}

}  // namespace

int run_stats(const Launch& launch, const StatsQuery& query) {
    auto c = load_config(launch);
    if (!c) {
        std::cerr << c.error() << "\n";
        return 78;
    }
    auto since = config::parse_duration(query.since);
    auto interval = config::parse_duration(query.interval);
    if (!since || !interval) {
        std::cerr << "dnsmoat stats: "
                  << (since ? "--interval: " + interval.error() : "--since: " + since.error())
                  << "\n";
        return 2;
    }
    if (query.top < 1 || query.top > 100) {
        std::cerr << "dnsmoat stats: --top: " << query.top << " is out of range (1..100)\n";
        return 2;
    }
    const std::int64_t to = unix_now_us();
    querylog::SummaryRequest request;
    request.from_us = to - std::chrono::duration_cast<std::chrono::microseconds>(*since).count();
    request.to_us = to;
    request.interval_us = std::chrono::duration_cast<std::chrono::microseconds>(*interval).count();
    // Intervals on round times (an hour's lines start on the hour, in UTC): the first one may
    // reach back a little before --since.
    if (request.interval_us > 0) {
        request.from_us -= request.from_us % request.interval_us;
    }
    request.top = query.top;
    if (!become_owner_of(c->querylog.path)) {
        std::cerr << "dnsmoat stats: cannot switch to the owner of " << c->querylog.path << "\n";
        return 1;
    }
    auto db = querylog::Database::open(c->querylog.path, querylog::Database::Mode::read);
    if (!db) {
        std::cerr << "dnsmoat stats: " << db.error() << "\n";
        return 1;
    }
    auto summary = db->summary(request);
    if (!summary) {
        std::cerr << "dnsmoat stats: " << summary.error() << "\n";
        return 1;
    }
    if (query.json) {
        std::cout << to_json(*summary).dump(2) << "\n";
    } else {
        print(*summary, query.since);
    }
    return 0;
}

}  // namespace moat::app
