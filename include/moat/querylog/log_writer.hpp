// The consuming side of the query log: takes entries off the queue (often, so the queue stays
// small), applies the privacy level and exclusions, gathers them in a compact Batch, writes each
// batch in one transaction (seldom, so the disk sees few writes), and keeps the database within
// its retention and size.
// It owns no thread: the app calls run_once() from the log's own thread (so this layer stays
// free of threads and of the real clock, and tests drive it step by step).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "moat/querylog/batch.hpp"
#include "moat/querylog/database.hpp"
#include "moat/querylog/entry_queue.hpp"
#include "moat/querylog/options.hpp"
#include "moat/querylog/rolling_stats.hpp"

namespace moat::querylog {

class LogWriter {
public:
    /// Rows deleted per pruning transaction.
    static constexpr std::uint64_t kPruneBatch = 5000;

    /// `stats`, when given, is fed every entry collect() takes, as the privacy level allows
    /// (names and clients it hides are counted, not ranked); it must outlive the writer.
    LogWriter(LogOptions options, EntryQueue& queue, Database database,
              RollingStats* stats = nullptr);

    struct Flushed {
        std::size_t written = 0;  ///< rows stored
        std::size_t skipped = 0;  ///< entries the privacy level or an exclusion kept out
        std::size_t lost = 0;     ///< entries lost to a database error
        std::size_t trimmed = 0;  ///< oldest rows deleted after it to keep within max_bytes
        std::string error;        ///< the database error, if any
    };
    /// Moves what waits in the queue into the pending batch; returns how many were taken (those
    /// the privacy level or an exclusion keep out are counted in the next write's `skipped`).
    std::size_t collect();
    /// Writes the pending batch in one transaction, then deletes the oldest rows while the
    /// file is over max_bytes, up to twice the rows written: the size limit holds as rows
    /// arrive, also under a flood, not only at the next prune().
    Flushed write();
    /// collect() then write().
    Flushed flush() {
        collect();
        return write();
    }
    /// Entries waiting in the pending batch.
    [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }

    /// Deletes expired and excess rows in small transactions, at most `max_steps` of them.
    /// `now_us`: the current time, microseconds since the Unix epoch.
    tl::expected<Pruned, std::string> prune(std::int64_t now_us, int max_steps = 20);

    /// Forgets names and clients no row refers to any more; refreshes the planner's statistics.
    tl::expected<void, std::string> tidy() { return database_.tidy(); }

    [[nodiscard]] const LogOptions& options() const noexcept { return options_; }
    /// Rows stored and entries lost since the start; any thread may read them.
    [[nodiscard]] std::uint64_t written_total() const noexcept {
        return written_total_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t lost_total() const noexcept {
        return lost_total_.load(std::memory_order_relaxed);
    }

private:
    void feed_stats(const Entry& stored);
    /// The size part of prune() after a write of `written` rows; returns the rows deleted.
    std::size_t trim_to_size(std::size_t written);

    LogOptions options_;
    EntryQueue& queue_;
    Database database_;
    RollingStats* stats_;
    /// Entries taken from the queue at a time: each is 560 bytes here, where the queue keeps
    /// about 100, so the batch stays small.
    static constexpr std::size_t kTakenPerPop = 64;
    std::vector<Entry> taken_;  ///< reused: what one pop takes
    Batch pending_;
    std::size_t skipped_ = 0;  ///< since the last write
    std::atomic<std::uint64_t> written_total_{0};
    std::atomic<std::uint64_t> lost_total_{0};
};

}  // namespace moat::querylog
