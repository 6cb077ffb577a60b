// Keeps the `url` lists fresh: downloads each when it is due (at start when it has no copy,
// then every `refresh` with jitter, sooner again after a failure), through the list fetcher
// child process (fetch_process.hpp) started from the download worker, and tells the daemon when
// a round installed a new copy so it recompiles.
//
// Runs on the event loop; only the downloads leave it. The schedule comes from the lists'
// statuses: their files in the state directory, so a restart does not download lists that are
// still fresh, or the newer ones held in memory while the disk refuses to store them
// (StateDir::hold_status), so a full or read-only disk still backs off after a failure instead of
// starting a fetcher again at once.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lists.hpp"
#include "moat/config/config.hpp"
#include "moat/lists/fetch_process.hpp"
#include "moat/lists/refresh.hpp"
#include "worker.hpp"

namespace moat::app {

class ListRefresher {
public:
    /// `on_updated` runs on the event loop after a round that installed at least one new copy.
    ListRefresher(asio::io_context& io, std::function<void()> on_updated);
    ~ListRefresher();
    ListRefresher(const ListRefresher&) = delete;
    ListRefresher& operator=(const ListRefresher&) = delete;

    /// Takes the `url` lists and [lists] settings of `config` and schedules them.
    void configure(const config::Config& config);
    /// Every list is due now (SIGHUP): a conditional GET costs little for unchanged lists.
    void refresh_all_now();
    /// Abandons running downloads and stops scheduling.
    void stop();

private:
    struct Scheduled {
        lists::ListSource source;
        std::string key;
        std::int64_t due = 0;  ///< Unix seconds
    };

    void arm();
    void start_round();
    void finish_round(const std::vector<lists::RefreshOutcome>& outcomes,
                      const std::vector<std::string>& keys);

    asio::io_context& io_;
    asio::steady_timer timer_;
    std::function<void()> on_updated_;
    std::vector<Scheduled> lists_;
    lists::RefreshPolicy policy_;
    std::string state_dir_;
    std::uint64_t seed_;
    bool round_running_ = false;
    bool stopped_ = false;
    std::atomic<bool> cancel_{false};
    /// Lives while queued jobs may post back; checked on the loop before touching `this`.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    Worker downloads_;  // last: its thread stops first, before the members it uses go
};

}  // namespace moat::app
