// The daemon's query log: the queue the event loop pushes into, and the thread that empties it
// into a compact pending batch every second (every 5 ms while queries come fast enough to fill a
// quarter of it, at once when it is a quarter full, and at the next query after a visit that found
// none), writes that batch to SQLite in one transaction every [querylog] flush_interval (sooner
// past 20,000 entries), prunes the log to its retention and size every minute, and tidies it
// every hour.
//
// A log that cannot be opened or written never stops DNS: the daemon starts without it (and says
// why), and a failing write loses that batch (counted, warned about at most once a minute).
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "moat/config/config.hpp"
#include "moat/querylog/entry_queue.hpp"
#include "moat/querylog/log_writer.hpp"

namespace moat::app {

class QueryLog {
public:
    /// Opens the database and starts the writer thread, which also feeds `stats` (if given; it
    /// must outlive the log); null (after a warning) when the log is off or its database cannot
    /// be opened.
    static std::unique_ptr<QueryLog> start(const config::QueryLogConfig& config,
                                           querylog::RollingStats* stats = nullptr);

    /// Writes what is queued, then stops the thread.
    ~QueryLog();
    QueryLog(const QueryLog&) = delete;
    QueryLog& operator=(const QueryLog&) = delete;
    QueryLog(QueryLog&&) = delete;
    QueryLog& operator=(QueryLog&&) = delete;

    [[nodiscard]] querylog::EntryQueue& queue() noexcept { return queue_; }
    [[nodiscard]] const querylog::EntryQueue& queue() const noexcept { return queue_; }
    [[nodiscard]] const querylog::LogWriter& writer() const noexcept { return writer_; }
    [[nodiscard]] const config::QueryLogConfig& config() const noexcept { return config_; }

private:
    QueryLog(const config::QueryLogConfig& config, querylog::Database database,
             querylog::RollingStats* stats);
    void run();
    void flush();

    config::QueryLogConfig config_;
    querylog::EntryQueue queue_;
    querylog::LogWriter writer_;
    std::atomic<bool> stopping_{false};
    std::chrono::steady_clock::time_point last_warning_{};
    std::uint64_t warned_drops_ = 0;
    std::thread thread_;  // last: started after everything it uses
};

/// The query log's module options from the config.
[[nodiscard]] querylog::LogOptions log_options(const config::QueryLogConfig& config);

}  // namespace moat::app
