// The query log's SQLite database (Debian libsqlite3): schema, batched appends, pruning and
// search. docs/querylog.md describes the file for people who open it with the sqlite3 shell.
//
// Layout, chosen for an SD card and for searches that stay fast at tens of millions of rows:
//   queries(id, time, client, domain, qtype, outcome, rcode, transport, upstream, latency_us,
//           ede, list, line, pattern)
//   domains(id, name), clients(id, address), labels(id, text)
// Names, clients and short texts are stored once and referenced by number, so a row is about
// 40 bytes. The row id is the arrival time in microseconds shifted left by 10 bits (ties and a
// clock going backwards get the next free id), so id order is time order: a time range is an id
// range on the table itself, paging needs no separate time index, and the indexes on domain,
// client, outcome and qtype come out in time order for one value.
//
// WAL journal with synchronous=NORMAL: a killed process loses nothing that was committed and
// never leaves a corrupt file. One writer (the log writer thread); any number of readers, each
// with its own Database opened read-only. Not thread-safe: one Database per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tl/expected.hpp>

#include "moat/querylog/batch.hpp"
#include "moat/querylog/entry.hpp"
#include "moat/querylog/search.hpp"
#include "moat/querylog/summary.hpp"

namespace moat::querylog {

class Connection;  // src/querylog/sqlite.hpp

/// What one prune() step deleted.
struct Pruned {
    std::uint64_t expired = 0;   ///< rows past the retention
    std::uint64_t oversize = 0;  ///< oldest rows deleted to get under the size limit
};

class Database {
public:
    enum class Mode : std::uint8_t { write, read };

    /// Opens (and in write mode creates, with its directory) the database. The error names the
    /// file and says what failed.
    static tl::expected<Database, std::string> open(const std::filesystem::path& path, Mode mode);

    Database(Database&&) noexcept;
    Database& operator=(Database&&) noexcept;
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// Stores `entries` in one transaction (all or none).
    tl::expected<void, std::string> append(const Batch& entries);
    tl::expected<void, std::string> append(std::span<const Entry> entries);

    /// Deletes at most `batch` rows: first those older than `oldest_us`, then, while the pages in
    /// use exceed `max_bytes`, the oldest. Small steps keep each transaction short; call again
    /// while it deletes something.
    tl::expected<Pruned, std::string> prune(std::int64_t oldest_us, std::uint64_t max_bytes,
                                            std::uint64_t batch);
    /// Deletes names and clients no row refers to any more, and refreshes the planner's
    /// statistics. Minutes apart, not per batch.
    tl::expected<void, std::string> tidy();

    tl::expected<Page, std::string> search(const Search& search);
    /// Counts over a time range: by outcome, per interval, and the top names, blocked names and
    /// clients (src/querylog/summary.cpp).
    tl::expected<Summary, std::string> summary(const SummaryRequest& request);

    /// One group of rows of the same interval, outcome, name and client.
    struct Aggregate {
        std::int64_t interval_start_us = 0;
        std::string outcome;
        std::string domain;
        std::string client;
        std::uint64_t count = 0;
    };
    /// The rows of [from_us, to_us) grouped by interval (`interval_us` long, aligned to the
    /// epoch), outcome, name and client, handed to `sink` one group at a time: what the
    /// in-memory statistics are rebuilt from at start (rolling_stats.hpp). Returns the groups.
    /// Leaves this connection with a 1 MiB page cache (a reader's is 8 MiB): open one for it.
    tl::expected<std::uint64_t, std::string> replay(
        std::int64_t from_us, std::int64_t to_us, std::int64_t interval_us,
        const std::function<void(const Aggregate&)>& sink);

    /// Rows in the log.
    tl::expected<std::uint64_t, std::string> row_count();
    /// Bytes of the pages in use (the file minus its free pages; the WAL not included).
    tl::expected<std::uint64_t, std::string> used_bytes();

    /// The row id of an arrival time: ids of rows at or after `time_us` are at least this.
    [[nodiscard]] static std::int64_t id_of_time(std::int64_t time_us) noexcept;

private:
    class Writer;  // cached statements and name ids of the writing side
    explicit Database(std::unique_ptr<Connection> connection, Mode mode);

    std::unique_ptr<Connection> db_;
    std::unique_ptr<Writer> writer_;
    std::int64_t last_id_ = 0;
};

}  // namespace moat::querylog
