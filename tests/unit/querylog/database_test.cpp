// The query log's SQLite database: rows round-trip, ids follow arrival even when the clock steps
// back, every search filter and plan (exact, suffix, substring over few and many names), paging
// without gaps or repeats, retention and the size limit, the version stamp, read-only opening.
#include "moat/querylog/database.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "moat/querylog/options.hpp"
#include "support/temp_dir.hpp"
#include "test_entries.hpp"

namespace moat::querylog {
namespace {

using test::entry;

constexpr std::int64_t kT0 = 1'790'000'000'000'000;  // 2026-09, in microseconds

class DatabaseTest : public ::testing::Test {
protected:
    Database open_write() {
        auto db = Database::open(path_, Database::Mode::write);
        EXPECT_TRUE(db.has_value()) << (db ? "" : db.error());
        return std::move(*db);
    }
    Page search(Database& db, const Search& s) {
        auto page = db.search(s);
        EXPECT_TRUE(page.has_value()) << (page ? "" : page.error());
        return page ? std::move(*page) : Page{};
    }
    static std::vector<std::string> names(const Page& page) {
        std::vector<std::string> out;
        for (const Row& r : page.rows) {
            out.push_back(r.domain);
        }
        return out;
    }

    moat::test::TempDir dir_{"moat-querylog"};
    std::filesystem::path path_ = dir_.path() / "sub" / "querylog.db";
};

TEST_F(DatabaseTest, RowsRoundTripNewestFirst) {
    Database db = open_write();
    Entry blocked = entry(kT0 + 2, "ads.example.com", "blocked");
    blocked.list.assign("ads list");
    blocked.line = 1234;
    blocked.ede = 15;
    blocked.rcode = 3;
    blocked.transport = "tcp";
    Entry forwarded =
        entry(kT0 + 1, "www.example.org", "forwarded",
              IpAddress{{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, true}, 28);
    forwarded.upstream.assign("127.0.0.53:5300");
    forwarded.latency_us = 4321;
    Entry regex = entry(kT0 + 3, "tracker.example.net", "blocked");
    regex.list.assign("regex list");
    regex.pattern.assign("^tracker\\.");
    const std::vector<Entry> batch{forwarded, blocked, regex};
    ASSERT_TRUE(db.append(batch));

    const Page page = search(db, {});
    ASSERT_EQ(page.rows.size(), 3U);
    EXPECT_FALSE(page.next);
    EXPECT_EQ(names(page), (std::vector<std::string>{"tracker.example.net", "ads.example.com",
                                                     "www.example.org"}));
    const Row& b = page.rows[1];
    EXPECT_EQ(b.time_us, kT0 + 2);
    EXPECT_EQ(b.client, "192.168.1.20");
    EXPECT_EQ(b.outcome, "blocked");
    EXPECT_EQ(b.rcode, 3);
    EXPECT_EQ(b.transport, "tcp");
    EXPECT_EQ(b.list, "ads list");
    EXPECT_EQ(b.line, 1234U);
    ASSERT_TRUE(b.ede.has_value());
    EXPECT_EQ(*b.ede, 15);
    EXPECT_EQ(b.upstream, "");
    const Row& f = page.rows[2];
    EXPECT_EQ(f.client, "fd00::7");
    EXPECT_EQ(f.qtype, 28);
    EXPECT_EQ(f.upstream, "127.0.0.53:5300");
    EXPECT_EQ(f.latency_us, 4321U);
    EXPECT_FALSE(f.ede.has_value());
    EXPECT_EQ(f.list, "");
    EXPECT_EQ(page.rows[0].pattern, "^tracker\\.");
}

TEST_F(DatabaseTest, TextsOfEveryLengthRoundTrip) {
    Database db = open_write();
    std::string name;  // 253 characters: the longest name in text
    for (int i = 0; i < 3; ++i) {
        name += std::string(63, static_cast<char>('a' + i)) + ".";
    }
    name += std::string(61, 'd');
    ASSERT_EQ(name.size(), 253U);
    Entry e = entry(kT0, name, "blocked");
    e.list.assign(std::string(63, 'l'));
    e.pattern.assign(std::string(127, 'p'));
    e.upstream.assign("[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
    Batch batch;
    batch.add(entry(kT0 - 1, "."));  // the root, and empty texts around a long one
    batch.add(e);
    batch.add(entry(kT0 + 1, "x"));
    ASSERT_TRUE(db.append(batch));
    const Page page = search(db, {});
    ASSERT_EQ(page.rows.size(), 3U);
    EXPECT_EQ(page.rows[0].domain, "x");
    EXPECT_EQ(page.rows[1].domain, name);
    EXPECT_EQ(page.rows[1].list, std::string(63, 'l'));
    EXPECT_EQ(page.rows[1].pattern, std::string(127, 'p'));
    EXPECT_EQ(page.rows[1].upstream, "[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
    EXPECT_EQ(page.rows[2].domain, ".");
    EXPECT_EQ(page.rows[2].list, "");
}

TEST_F(DatabaseTest, IdsFollowArrivalEvenWhenTheClockStepsBack) {
    Database db = open_write();
    const std::vector<Entry> batch{entry(kT0 + 10, "a.test"), entry(kT0 + 10, "b.test"),
                                   entry(kT0 - 5'000'000, "c.test")};
    ASSERT_TRUE(db.append(batch));
    const Page page = search(db, {});
    EXPECT_EQ(names(page), (std::vector<std::string>{"c.test", "b.test", "a.test"}));
    EXPECT_GT(page.rows[0].id, page.rows[1].id);
    EXPECT_EQ(page.rows[0].time_us, kT0 - 5'000'000);  // the time shown is the one given
}

TEST_F(DatabaseTest, IdsContinueAfterReopening) {
    {
        Database db = open_write();
        ASSERT_TRUE(db.append(std::vector<Entry>{entry(kT0 + 50, "first.test")}));
    }
    Database db = open_write();
    ASSERT_TRUE(db.append(std::vector<Entry>{entry(kT0 + 50, "second.test")}));
    EXPECT_EQ(names(search(db, {})), (std::vector<std::string>{"second.test", "first.test"}));
}

TEST_F(DatabaseTest, FiltersNarrowTheRows) {
    Database db = open_write();
    const IpAddress phone = IpAddress::v4_of(192, 168, 1, 30);
    const std::vector<Entry> batch{
        entry(kT0 + 1, "example.com"),
        entry(kT0 + 2, "www.example.com", "cached", phone),
        entry(kT0 + 3, "notexample.com", "blocked"),
        entry(kT0 + 4, "mail.example.com", "blocked", phone, 28),
        entry(kT0 + 5, "other.org", "forwarded", phone, 16),
    };
    ASSERT_TRUE(db.append(batch));

    Search s;
    s.domain = "example.com";
    s.match = DomainMatch::suffix;
    EXPECT_EQ(names(search(db, s)),
              (std::vector<std::string>{"mail.example.com", "www.example.com", "example.com"}));
    s.match = DomainMatch::exact;
    EXPECT_EQ(names(search(db, s)), (std::vector<std::string>{"example.com"}));
    s.match = DomainMatch::substring;
    s.domain = "example";
    EXPECT_EQ(search(db, s).rows.size(), 4U);

    Search by_client;
    by_client.client = "192.168.1.30";
    EXPECT_EQ(names(search(db, by_client)),
              (std::vector<std::string>{"other.org", "mail.example.com", "www.example.com"}));
    Search by_outcome;
    by_outcome.outcome = "blocked";
    EXPECT_EQ(names(search(db, by_outcome)),
              (std::vector<std::string>{"mail.example.com", "notexample.com"}));
    Search by_type;
    by_type.qtype = 28;
    EXPECT_EQ(names(search(db, by_type)), (std::vector<std::string>{"mail.example.com"}));
    Search combined;
    combined.client = "192.168.1.30";
    combined.outcome = "blocked";
    combined.domain = "example.com";
    combined.match = DomainMatch::suffix;
    EXPECT_EQ(names(search(db, combined)), (std::vector<std::string>{"mail.example.com"}));
    Search range;
    range.from_us = kT0 + 2;
    range.to_us = kT0 + 4;
    EXPECT_EQ(names(search(db, range)),
              (std::vector<std::string>{"notexample.com", "www.example.com"}));

    Search unknown;
    unknown.client = "10.9.9.9";
    EXPECT_TRUE(search(db, unknown).rows.empty());
    unknown = {};
    unknown.outcome = "no-such-outcome";
    EXPECT_TRUE(search(db, unknown).rows.empty());
    unknown = {};
    unknown.domain = "absent.test";
    unknown.match = DomainMatch::exact;
    EXPECT_TRUE(search(db, unknown).rows.empty());
}

/// Pages through `s` and returns every row id, checking pages are full until the last.
std::vector<std::int64_t> all_pages(Database& db, Search s) {
    std::vector<std::int64_t> ids;
    for (int pages = 0; pages < 1000; ++pages) {
        auto page = db.search(s);
        EXPECT_TRUE(page.has_value());
        for (const Row& r : page->rows) {
            ids.push_back(r.id);
        }
        if (!page->next) {
            break;
        }
        EXPECT_EQ(page->rows.size(), s.limit);
        s.before = page->next;
    }
    return ids;
}

TEST_F(DatabaseTest, PagesCoverEveryRowOnceInOrder) {
    Database db = open_write();
    std::vector<Entry> batch;
    batch.reserve(250);
    for (int i = 0; i < 250; ++i) {
        // 100 distinct names containing "ads" (more than a per-name plan takes), and others.
        batch.push_back(entry(kT0 + i, i % 2 == 0 ? "ads" + std::to_string(i % 200) + ".test"
                                                  : "site" + std::to_string(i) + ".test"));
    }
    ASSERT_TRUE(db.append(batch));

    Search everything;
    everything.limit = 40;
    const auto ids = all_pages(db, everything);
    ASSERT_EQ(ids.size(), 250U);
    EXPECT_TRUE(std::is_sorted(ids.rbegin(), ids.rend()));
    EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), 250U);

    Search many_names;  // 100 names match: the table walk
    many_names.domain = "ads";
    many_names.limit = 30;
    const auto many = all_pages(db, many_names);
    EXPECT_EQ(many.size(), 125U);
    EXPECT_TRUE(std::is_sorted(many.rbegin(), many.rend()));

    Search few_names;  // 11 names match ("ads1.test", "ads10".."ads19"... ): one run per name
    few_names.domain = "ads1";
    few_names.limit = 7;
    const auto few = all_pages(db, few_names);
    std::size_t expected = 0;
    for (const Entry& e : batch) {
        expected += e.qname.view().find("ads1") != std::string_view::npos ? 1U : 0U;
    }
    EXPECT_EQ(few.size(), expected);
    EXPECT_TRUE(std::is_sorted(few.rbegin(), few.rend()));
    EXPECT_EQ(std::set<std::int64_t>(few.begin(), few.end()).size(), expected);
}

/// Every plan against a plain filter over the entries: random rows, random searches of every
/// kind (single filters, combinations, time ranges, texts matching few or many names), paged.
TEST_F(DatabaseTest, EveryPlanAgreesWithAPlainFilter) {
    Database db = open_write();
    std::mt19937_64 gen(2026);  // fixed seed: the same rows and searches every run
    const auto below = [&gen](std::uint64_t n) { return gen() % n; };
    std::vector<Entry> entries;
    const std::vector<const char*> outcomes{"forwarded", "cached", "blocked", "servfail"};
    for (int i = 0; i < 3000; ++i) {
        const auto client = IpAddress::v4_of(10, 0, 0, static_cast<std::uint8_t>(below(5)));
        const std::string name =
            "n" + std::to_string(below(150)) + (below(2) == 0 ? ".ads.test" : ".example.org");
        entries.push_back(entry(kT0 + std::int64_t{i} * 1000, name, outcomes[below(4)], client,
                                below(3) == 0 ? 28 : 1));
    }
    ASSERT_TRUE(db.append(entries));

    for (int trial = 0; trial < 200; ++trial) {
        Search s;
        s.limit = 1 + below(60);
        if (below(2) == 0) {
            s.client = "10.0.0." + std::to_string(below(6));  // 10.0.0.5: never seen
        }
        if (below(2) == 0) {
            s.outcome = outcomes[below(4)];
        }
        if (below(3) == 0) {
            s.qtype = below(2) == 0 ? 1 : 28;
        }
        switch (below(5)) {
            case 0: s.domain = "n1"; break;   // substring of many names
            case 1: s.domain = "n14"; break;  // substring of a few names
            case 2:
                s.domain = "ads.test";
                s.match = DomainMatch::suffix;
                break;  // many
            case 3:
                s.domain = "n7.example.org";
                s.match = DomainMatch::exact;
                break;
            default: break;
        }
        if (below(3) == 0) {
            s.from_us = kT0 + static_cast<std::int64_t>(below(3000)) * 1000;
            s.to_us = *s.from_us + static_cast<std::int64_t>(below(1500)) * 1000;
        }
        std::vector<std::int64_t> expected;
        for (std::size_t k = entries.size(); k-- > 0;) {  // newest first, as search() pages
            const Entry& e = entries[k];
            const std::string_view name = e.qname.view();
            const bool ok =
                (s.client.empty() || e.client.to_text() == s.client) &&
                (s.outcome.empty() || s.outcome == e.outcome) &&
                (!s.qtype || *s.qtype == e.qtype) &&
                (s.domain.empty() ||
                 (s.match == DomainMatch::exact    ? name == s.domain
                  : s.match == DomainMatch::suffix ? in_domain(name, s.domain)
                                                   : name.find(s.domain) != std::string::npos)) &&
                (!s.from_us || e.time_us >= *s.from_us) && (!s.to_us || e.time_us < *s.to_us);
            if (ok) {
                expected.push_back(e.time_us);
            }
        }
        std::vector<std::int64_t> got;
        for (const std::int64_t id : all_pages(db, s)) {
            got.push_back(id >> 10U);  // ids are arrival times shifted (times here are unique)
        }
        ASSERT_EQ(got, expected) << "trial " << trial << ": client=" << s.client
                                 << " outcome=" << s.outcome << " domain=" << s.domain;
    }
}

TEST_F(DatabaseTest, SummaryCountsOutcomesIntervalsAndRankings) {
    Database db = open_write();
    constexpr std::int64_t kTen = 600'000'000;  // ten minutes
    const IpAddress laptop = IpAddress::v4_of(192, 168, 1, 20);
    const IpAddress phone = IpAddress::v4_of(192, 168, 1, 30);
    const std::vector<Entry> batch{
        entry(kT0 - 1, "before.test"),  // before the range
        entry(kT0, "a.test", "forwarded", laptop),
        entry(kT0 + 1, "a.test", "forwarded", laptop),
        entry(kT0 + 2, "a.test", "forwarded", phone),
        entry(kT0 + 3, "ads.test", "blocked", phone),
        entry(kT0 + kTen, "ads.test", "blocked", phone),
        entry(kT0 + kTen + 1, "ads.test", "blocked", laptop),
        entry(kT0 + kTen + 2, "track.test", "blocked", phone),
        entry(kT0 + kTen + 3, "a.test", "cached", phone),
        entry(kT0 + 3 * kTen, "after.test"),  // after the range
    };
    ASSERT_TRUE(db.append(batch));
    SummaryRequest request;
    request.from_us = kT0;
    request.to_us = kT0 + 3 * kTen;
    request.interval_us = kTen;
    request.top = 2;
    auto s = db.summary(request);
    ASSERT_TRUE(s) << s.error();
    EXPECT_EQ(s->total, 8U);
    EXPECT_EQ(s->by_outcome, (std::map<std::string, std::uint64_t>{
                                 {"blocked", 4}, {"cached", 1}, {"forwarded", 3}}));
    ASSERT_EQ(s->intervals.size(), 3U);
    EXPECT_EQ(s->intervals[0].start_us, kT0);
    EXPECT_EQ(s->intervals[0].by_outcome,
              (std::map<std::string, std::uint64_t>{{"blocked", 1}, {"forwarded", 3}}));
    EXPECT_EQ(s->intervals[1].by_outcome,
              (std::map<std::string, std::uint64_t>{{"blocked", 3}, {"cached", 1}}));
    EXPECT_TRUE(s->intervals[2].by_outcome.empty());
    EXPECT_EQ(s->top_domains, (std::vector<Ranked>{{"a.test", 4}, {"ads.test", 3}}));
    EXPECT_EQ(s->top_blocked, (std::vector<Ranked>{{"ads.test", 3}, {"track.test", 1}}));
    EXPECT_EQ(s->top_clients, (std::vector<Ranked>{{"192.168.1.30", 5}, {"192.168.1.20", 3}}));

    request.interval_us = 1'000'000;
    request.to_us = kT0 + 20'000 * 1'000'000LL;
    auto refused = db.summary(request);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().find("10,000 intervals"), std::string::npos);
}

TEST_F(DatabaseTest, PruneDeletesExpiredRowsInBatches) {
    Database db = open_write();
    std::vector<Entry> batch;
    batch.reserve(120);
    for (int i = 0; i < 120; ++i) {
        batch.push_back(
            entry(kT0 + std::int64_t{i} * 1'000'000, "n" + std::to_string(i) + ".test"));
    }
    ASSERT_TRUE(db.append(batch));
    auto pruned = db.prune(kT0 + std::int64_t{100} * 1'000'000, 1ULL << 40U, 50);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(pruned->expired, 50U);
    pruned = db.prune(kT0 + std::int64_t{100} * 1'000'000, 1ULL << 40U, 50);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(pruned->expired, 50U);
    pruned = db.prune(kT0 + std::int64_t{100} * 1'000'000, 1ULL << 40U, 50);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(pruned->expired, 0U);
    EXPECT_EQ(*db.row_count(), 20U);
    const Page page = search(db, {});
    EXPECT_EQ(page.rows.back().domain, "n100.test");
}

/// Pages of the database as a reader sees it (the file and its WAL together).
std::int64_t page_count(const std::filesystem::path& path) {
    sqlite3* raw = nullptr;
    sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(raw, "PRAGMA page_count", -1, &stmt, nullptr);
    const std::int64_t n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    sqlite3_close(raw);
    return n;
}

TEST_F(DatabaseTest, PruneKeepsThePagesInUseUnderTheLimit) {
    Database db = open_write();
    for (int b = 0; b < 20; ++b) {
        std::vector<Entry> batch;
        for (int i = 0; i < 1000; ++i) {
            const int n = b * 1000 + i;
            batch.push_back(entry(kT0 + n, "host" + std::to_string(n % 3000) + ".example.test"));
        }
        ASSERT_TRUE(db.append(batch));
    }
    const std::uint64_t full = *db.used_bytes();
    const std::uint64_t limit = full / 2;
    for (int step = 0; step < 100 && *db.used_bytes() > limit; ++step) {
        ASSERT_TRUE(db.prune(0, limit, 1000));
    }
    EXPECT_LE(*db.used_bytes(), limit);
    const std::uint64_t rows = *db.row_count();
    EXPECT_GT(rows, 0U);
    EXPECT_LT(rows, 20000U);
    // The newest rows are the ones kept.
    EXPECT_EQ(search(db, {}).rows.front().time_us, kT0 + 19999);
    // Freed pages are reused: writing a batch again does not add pages to the file.
    const std::int64_t pages = page_count(path_);
    std::vector<Entry> batch;
    batch.reserve(1000);
    for (int i = 0; i < 1000; ++i) {
        batch.push_back(entry(kT0 + 20000 + i, "host" + std::to_string(i) + ".example.test"));
    }
    ASSERT_TRUE(db.append(batch));
    EXPECT_EQ(page_count(path_), pages);
}

TEST_F(DatabaseTest, TidyForgetsNamesNoRowUses) {
    Database db = open_write();
    ASSERT_TRUE(db.append(std::vector<Entry>{entry(kT0, "old.test"), entry(kT0 + 5, "new.test")}));
    ASSERT_TRUE(db.prune(kT0 + 1, 1ULL << 40U, 100));
    ASSERT_TRUE(db.tidy());
    Search s;
    s.domain = "old.test";
    s.match = DomainMatch::exact;
    EXPECT_TRUE(search(db, s).rows.empty());
    // A name forgotten and seen again gets a fresh id and is found.
    ASSERT_TRUE(db.append(std::vector<Entry>{entry(kT0 + 9, "old.test")}));
    EXPECT_EQ(search(db, s).rows.size(), 1U);
}

TEST_F(DatabaseTest, ReadOnlyOpeningReadsAndNeverWrites) {
    {
        Database db = open_write();
        ASSERT_TRUE(db.append(std::vector<Entry>{entry(kT0, "seen.test")}));
    }
    auto reader = Database::open(path_, Database::Mode::read);
    ASSERT_TRUE(reader) << reader.error();
    EXPECT_EQ(reader->search({})->rows.size(), 1U);
    const auto refused = reader->append(std::vector<Entry>{entry(kT0 + 1, "x.test")});
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().find("read-only"), std::string::npos);

    auto missing = Database::open(dir_.path() / "absent.db", Database::Mode::read);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().find("absent.db"), std::string::npos);
}

TEST_F(DatabaseTest, AFileFromANewerVersionIsLeftAlone) {
    { open_write(); }
    {
        auto db = Database::open(path_, Database::Mode::write);
        ASSERT_TRUE(db);
    }
    // Stamp a future version with the sqlite3 API through a second writer connection.
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(raw);
    }
    auto db = Database::open(path_, Database::Mode::write);
    ASSERT_FALSE(db);
    EXPECT_NE(db.error().find("newer dnsmoat"), std::string::npos) << db.error();
}

TEST_F(DatabaseTest, AFileThatIsNotALogIsRefused) {
    std::filesystem::create_directories(path_.parent_path());
    { std::ofstream(path_) << "not a database at all, just some text that is long enough\n"; }
    auto db = Database::open(path_, Database::Mode::write);
    ASSERT_FALSE(db);
    EXPECT_NE(db.error().find(path_.string()), std::string::npos) << db.error();
}

}  // namespace
}  // namespace moat::querylog
