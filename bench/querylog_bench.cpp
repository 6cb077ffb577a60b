// dnsmoat-bench-querylog: the query log at household scale. Fills a database with N rows shaped
// like a month of a busy home (Zipf-popular names, a few dozen clients, realistic outcomes and
// types) through the writer's own append path, then times the first page of the searches the
// dashboard and `dnsmoat log` make.
//
//   dnsmoat-bench-querylog [--rows=N] [--db=PATH] [--keep] [--assert]
//
// --keep reuses a database at PATH that already has N rows (filling 10 million takes a while).
// --assert exits 1 when a search's median is 100 ms or more (the target of docs/querylog.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "domains.hpp"
#include "log_entries.hpp"
#include "moat/querylog/database.hpp"

namespace {

using moat::querylog::Database;
using moat::querylog::DomainMatch;
using moat::querylog::Entry;
using moat::querylog::Search;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kNames = 200'000;
constexpr std::size_t kClients = 30;
constexpr std::int64_t kMonthUs = 30LL * 86'400 * 1'000'000;

struct Options {
    std::size_t rows = 10'000'000;
    std::filesystem::path db = std::filesystem::temp_directory_path() / "moat-querylog-bench.db";
    bool keep = false;
    bool check = false;
};

/// Fills the database; returns rows per second of the append path.
double fill(Database& db, const Options& o, const moat::bench::NameList& names) {
    moat::bench::HouseholdEntries household(names, kClients, 42);
    const std::int64_t start = moat::bench::unix_now_us() - kMonthUs;
    std::vector<Entry> batch;
    batch.reserve(5000);
    const auto began = Clock::now();
    Entry e;
    for (std::size_t i = 0; i < o.rows; ++i) {
        household.next(start + static_cast<std::int64_t>(static_cast<double>(i) *
                                                         static_cast<double>(kMonthUs) /
                                                         static_cast<double>(o.rows)),
                       e);
        batch.push_back(e);
        if (batch.size() == batch.capacity() || i + 1 == o.rows) {
            if (auto ok = db.append(batch); !ok) {
                std::fprintf(stderr, "append: %s\n", ok.error().c_str());
                std::exit(1);
            }
            batch.clear();
        }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
    return static_cast<double>(o.rows) / seconds;
}

struct Case {
    std::string what;
    Search search;
};

std::vector<Case> cases(const moat::bench::NameList& names) {
    const std::string top(names[0]);        // the most popular name
    const std::string rare(names[50'000]);  // about 16 queries a month
    std::vector<Case> c;
    auto add = [&](std::string what, auto&& set) {
        Search s;
        s.limit = 100;
        set(s);
        c.push_back({std::move(what), s});
    };
    add("newest page, no filter", [](Search&) {});
    add("domain exact, most popular", [&](Search& s) {
        s.domain = top;
        s.match = DomainMatch::exact;
    });
    add("domain exact, rare", [&](Search& s) {
        s.domain = rare;
        s.match = DomainMatch::exact;
    });
    add("domain suffix \"co.uk\" (many names)", [](Search& s) {
        s.domain = "co.uk";
        s.match = DomainMatch::suffix;
    });
    add("domain suffix, one rare name", [&](Search& s) {
        s.domain = rare;
        s.match = DomainMatch::suffix;
    });
    add("domain substring \"ab\" (many names)", [](Search& s) { s.domain = "ab"; });
    add("domain substring, a few rare names", [&](Search& s) { s.domain = rare.substr(0, 7); });
    add("domain substring with no match", [](Search& s) { s.domain = "zzqqzzqq"; });
    add("client, most active", [](Search& s) { s.client = "192.168.1.10"; });
    add("client, least active", [](Search& s) { s.client = "192.168.1.39"; });
    add("outcome blocked", [](Search& s) { s.outcome = "blocked"; });
    add("outcome servfail (0.5%)", [](Search& s) { s.outcome = "servfail"; });
    add("type TXT (0.5%)", [](Search& s) { s.qtype = 16; });
    add("type with no rows (CAA)", [](Search& s) { s.qtype = 257; });
    add("last hour", [](Search& s) { s.from_us = moat::bench::unix_now_us() - 3'600'000'000LL; });
    add("one hour two weeks ago", [](Search& s) {
        s.from_us = moat::bench::unix_now_us() - 14LL * 86'400'000'000;
        s.to_us = *s.from_us + 3'600'000'000LL;
    });
    add("least active client + TXT", [](Search& s) {
        s.client = "192.168.1.39";
        s.qtype = 16;
    });
    add("client + blocked + substring", [](Search& s) {
        s.client = "192.168.1.12";
        s.outcome = "blocked";
        s.domain = "ab";
    });
    return c;
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a.starts_with("--rows=")) {
            o.rows = std::strtoull(argv[i] + 7, nullptr, 10);
        } else if (a.starts_with("--db=")) {
            o.db = std::string(a.substr(5));
        } else if (a == "--keep") {
            o.keep = true;
        } else if (a == "--assert") {
            o.check = true;
        } else {
            std::fprintf(stderr,
                         "usage: dnsmoat-bench-querylog [--rows=N] [--db=PATH] [--keep] "
                         "[--assert]\n");
            return false;
        }
    }
    return o.rows > 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        return 2;
    }
    const moat::bench::NameList names = moat::bench::generate_listed(kNames, 7);
    bool reuse = false;
    if (o.keep && std::filesystem::exists(o.db)) {
        auto db = Database::open(o.db, Database::Mode::read);
        reuse = db && db->row_count() && *db->row_count() == o.rows;
    }
    if (!reuse) {
        for (const char* suffix : {"", "-wal", "-shm"}) {
            std::filesystem::remove(o.db.string() + suffix);
        }
        auto db = Database::open(o.db, Database::Mode::write);
        if (!db) {
            std::fprintf(stderr, "%s\n", db.error().c_str());
            return 1;
        }
        const double rate = fill(*db, o, names);
        if (auto tidied = db->tidy(); !tidied) {  // the planner statistics the writer keeps
            std::fprintf(stderr, "%s\n", tidied.error().c_str());
        }
        std::printf("filled %zu rows at %.0f rows/s (batches of 5000, one transaction each)\n",
                    o.rows, rate);
    }
    std::printf(
        "database: %.1f MiB for %zu rows (%.0f bytes a row)\n",
        static_cast<double>(std::filesystem::file_size(o.db)) / (1U << 20U), o.rows,
        static_cast<double>(std::filesystem::file_size(o.db)) / static_cast<double>(o.rows));

    auto db = Database::open(o.db, Database::Mode::read);
    if (!db) {
        std::fprintf(stderr, "%s\n", db.error().c_str());
        return 1;
    }
    std::printf(
        "\n| search (first page of 100) | rows | median ms | max ms |\n|---|---|---|---|\n");
    bool ok = true;
    constexpr int kRuns = 7;
    for (const Case& c : cases(names)) {
        std::vector<double> ms;
        std::size_t found = 0;
        for (int run = 0; run < kRuns; ++run) {
            const auto t0 = Clock::now();
            auto page = db->search(c.search);
            ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            if (!page) {
                std::fprintf(stderr, "%s: %s\n", c.what.c_str(), page.error().c_str());
                return 1;
            }
            found = page->rows.size();
        }
        std::sort(ms.begin(), ms.end());
        const double median = ms[kRuns / 2];
        ok = ok && median < 100.0;
        std::printf("| %s | %zu | %.2f | %.2f |\n", c.what.c_str(), found, median, ms.back());
    }
    if (o.check) {
        std::printf("\n%s: every search's median under 100 ms\n", ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }
    return 0;
}
