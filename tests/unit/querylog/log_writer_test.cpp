// The writer's steps: the queue drained into the database in batches, each privacy level and
// exclusion, retention through prune(), and a database that fails (entries lost and counted, the
// writer still usable).
#include "moat/querylog/log_writer.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <vector>

#include "support/temp_dir.hpp"
#include "test_entries.hpp"

namespace moat::querylog {
namespace {

using test::entry;

constexpr std::int64_t kT0 = 1'790'000'000'000'000;

class LogWriterTest : public ::testing::Test {
protected:
    LogWriter make(LogOptions options) {
        options.path = path_;
        auto db = Database::open(path_, Database::Mode::write);
        EXPECT_TRUE(db) << (db ? "" : db.error());
        return {std::move(options), queue_, std::move(*db)};
    }
    std::vector<Row> rows() {
        auto reader = Database::open(path_, Database::Mode::read);
        EXPECT_TRUE(reader);
        Search all;
        all.limit = 1000;
        return reader->search(all)->rows;
    }
    void push_sample() {
        Entry blocked = entry(kT0 + 1, "ads.example.com", "blocked");
        blocked.list.assign("ads");
        blocked.line = 77;
        queue_.push(entry(kT0, "www.example.org"));
        queue_.push(blocked);
        queue_.push(entry(kT0 + 2, "printer.lan", "local", IpAddress::v4_of(10, 0, 0, 5)));
        queue_.push(entry(kT0 + 3, "telemetry.vendor.test"));
    }

    moat::test::TempDir dir_{"moat-querylog"};
    std::filesystem::path path_ = dir_.path() / "querylog.db";
    EntryQueue queue_{1024};
};

TEST_F(LogWriterTest, CollectsOftenAndWritesOnce) {
    LogWriter w = make({});
    // Three rounds of queries taken off the queue: the queue empties each time, nothing is
    // written until write().
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 1000; ++i) {
            const int n = round * 1000 + i;
            queue_.push(entry(kT0 + n, "n" + std::to_string(n) + ".test"));
        }
        EXPECT_EQ(w.collect(), 1000U);
        EXPECT_EQ(queue_.depth(), 0U);
    }
    EXPECT_EQ(w.pending(), 3000U);
    EXPECT_TRUE(rows().empty());
    const auto flushed = w.write();
    EXPECT_EQ(flushed.written, 3000U);
    EXPECT_EQ(flushed.skipped, 0U);
    EXPECT_TRUE(flushed.error.empty());
    EXPECT_EQ(w.pending(), 0U);
    EXPECT_EQ(rows().size(), 1000U);  // rows() reads one page of 1000
    EXPECT_EQ(rows().front().domain, "n2999.test");
    EXPECT_EQ(w.written_total(), 3000U);
    EXPECT_EQ(w.write().written, 0U);  // nothing pending: nothing written
}

TEST_F(LogWriterTest, HideDomainsKeepsClientsAndOutcomes) {
    LogOptions o;
    o.privacy = Privacy::hide_domains;
    LogWriter w = make(o);
    push_sample();
    EXPECT_EQ(w.flush().written, 4U);
    const auto r = rows();
    ASSERT_EQ(r.size(), 4U);
    for (const Row& row : r) {
        EXPECT_EQ(row.domain, "hidden");
        EXPECT_EQ(row.line, 0U);
    }
    EXPECT_EQ(r[2].outcome, "blocked");
    EXPECT_EQ(r[2].list, "ads");
    EXPECT_EQ(r[1].client, "10.0.0.5");
}

TEST_F(LogWriterTest, HideClientsKeepsDomains) {
    LogOptions o;
    o.privacy = Privacy::hide_clients;
    LogWriter w = make(o);
    push_sample();
    w.flush();
    for (const Row& row : rows()) {
        EXPECT_EQ(row.client, "0.0.0.0");
    }
    EXPECT_EQ(rows()[1].domain, "printer.lan");
}

TEST_F(LogWriterTest, AnonymousStoresNoRows) {
    LogOptions o;
    o.privacy = Privacy::anonymous;
    LogWriter w = make(o);
    push_sample();
    const auto flushed = w.flush();
    EXPECT_EQ(flushed.written, 0U);
    EXPECT_EQ(flushed.skipped, 4U);
    EXPECT_TRUE(rows().empty());
}

TEST_F(LogWriterTest, ExcludedDomainsAndClientsAreNotStored) {
    LogOptions o;
    o.exclude_domains = {"vendor.test", "example.com"};
    o.exclude_clients = {Cidr{IpAddress::v4_of(10, 0, 0, 0), 8}};
    LogWriter w = make(o);
    push_sample();
    queue_.push(entry(kT0 + 4, "notexample.com"));  // not under example.com
    const auto flushed = w.flush();
    EXPECT_EQ(flushed.skipped, 3U);
    const auto r = rows();
    ASSERT_EQ(r.size(), 2U);
    EXPECT_EQ(r[0].domain, "notexample.com");
    EXPECT_EQ(r[1].domain, "www.example.org");
}

TEST_F(LogWriterTest, PruneAppliesTheRetention) {
    LogOptions o;
    o.retention = std::chrono::hours{24};
    LogWriter w = make(o);
    constexpr std::int64_t kHour = 3'600'000'000;
    for (int h = 0; h < 48; ++h) {
        queue_.push(entry(kT0 + h * kHour, "h" + std::to_string(h) + ".test"));
    }
    w.flush();
    auto pruned = w.prune(kT0 + 47 * kHour);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(pruned->expired, 23U);  // hours 0..22 are more than 24 h before hour 47
    EXPECT_EQ(rows().size(), 25U);
    EXPECT_EQ(rows().back().domain, "h23.test");
}

TEST_F(LogWriterTest, TheFileStaysWithinItsSizeWhileRowsComeFasterThanPruneDeletesThem) {
    LogOptions o;
    o.max_bytes = std::uint64_t{1} << 20U;  // the smallest max_size the config takes
    LogWriter w = make(o);
    // A flood: batches of 4,000 rows, about 5 MiB in all, written back to back with no prune()
    // between them (the daemon calls it once a minute).
    constexpr int kBatches = 12;
    constexpr int kRows = 4000;
    std::size_t trimmed = 0;
    for (int b = 0; b < kBatches; ++b) {
        for (int i = 0; i < kRows; ++i) {
            const int n = b * kRows + i;
            ASSERT_TRUE(
                queue_.push(entry(kT0 + n, "host" + std::to_string(n % 64) + ".flood.test")));
            if (i % 512 == 511) {
                w.collect();  // the queue holds 1,024
            }
        }
        const auto flushed = w.flush();
        ASSERT_EQ(flushed.written, static_cast<std::size_t>(kRows));
        trimmed += flushed.trimmed;
        auto reader = Database::open(path_, Database::Mode::read);
        ASSERT_TRUE(reader);
        const auto used = reader->used_bytes();
        ASSERT_TRUE(used);
        EXPECT_LE(*used, o.max_bytes) << "after batch " << b;
    }
    EXPECT_GT(trimmed, 0U);
    // The oldest rows went, the newest stayed.
    auto reader = Database::open(path_, Database::Mode::read);
    ASSERT_TRUE(reader);
    const auto count = reader->row_count();
    ASSERT_TRUE(count);
    EXPECT_EQ(*count, static_cast<std::uint64_t>(kBatches) * kRows - trimmed);
    const auto r = rows();
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(r.front().time_us, kT0 + std::int64_t{kBatches} * kRows - 1);  // newest first
}

TEST_F(LogWriterTest, AFullDiskLosesTheBatchCountsItAndTheWriterGoesOn) {
    LogWriter w = make({});
    for (int i = 0; i < 1000; ++i) {
        ASSERT_TRUE(queue_.push(entry(kT0 + i, std::string(200, 'a' + static_cast<char>(i % 26)) +
                                                   std::to_string(i) + ".test")));
        if (i % 100 == 99) {
            w.collect();  // long names: the queue's ring holds fewer of them than its count
        }
    }
    // A file size limit makes every write past 64 KiB fail (EFBIG), as a full disk would, for
    // root too. SIGXFSZ would end the process: ignore it for the test.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction old {};
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old), 0);
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = rlim_t{64} * 1024;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto flushed = w.flush();
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
    ::sigaction(SIGXFSZ, &old, nullptr);
    EXPECT_EQ(flushed.written, 0U);
    EXPECT_EQ(flushed.lost, 1000U);
    EXPECT_FALSE(flushed.error.empty());
    EXPECT_EQ(w.lost_total(), 1000U);
    EXPECT_TRUE(rows().empty());  // the failed transaction left nothing half-written

    push_sample();  // room again: the same writer stores the next batch
    EXPECT_EQ(w.flush().written, 4U);
    EXPECT_EQ(rows().size(), 4U);
}

}  // namespace
}  // namespace moat::querylog
