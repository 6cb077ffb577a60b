#include "query_log.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "moat/core/log.hpp"
#include "unix_now.hpp"

namespace moat::app {
namespace {

using std::chrono::steady_clock;

// The writer's visits while queries come: often enough that the dashboard's counters (fed as
// entries are taken off the queue) stay current, seldom enough that a household's trickle of
// queries wakes it once a second rather than ten times. A queue a quarter full wakes it sooner
// (EntryQueue), so a burst does not overflow it between visits. flush_interval, when shorter,
// is the interval instead.
constexpr auto kPoll = std::chrono::seconds(1);
// After a visit that found the queue a quarter full, the next comes this soon (a burst).
constexpr auto kBusyPoll = std::chrono::milliseconds(5);
// A batch this large is written before its interval is up (a burst; about 100 bytes an entry).
constexpr std::size_t kMaxPending = 20'000;
constexpr auto kPruneEvery = std::chrono::minutes(1);
constexpr auto kTidyEvery = std::chrono::hours(1);
constexpr auto kWarnEvery = std::chrono::minutes(1);
constexpr int kWriterNice = 10;

querylog::Privacy privacy_of(config::LogPrivacy p) {
    switch (p) {
        case config::LogPrivacy::full: return querylog::Privacy::full;
        case config::LogPrivacy::hide_domains: return querylog::Privacy::hide_domains;
        case config::LogPrivacy::hide_clients: return querylog::Privacy::hide_clients;
        case config::LogPrivacy::anonymous: return querylog::Privacy::anonymous;
    }
    return querylog::Privacy::full;
}

}  // namespace

querylog::LogOptions log_options(const config::QueryLogConfig& config) {
    querylog::LogOptions o;
    o.path = config.path;
    o.privacy = privacy_of(config.privacy);
    o.retention = std::chrono::duration_cast<std::chrono::seconds>(config.retention);
    o.max_bytes = config.max_size;
    o.exclude_domains = config.exclude_domains;
    o.exclude_clients = config.exclude_clients;
    return o;
}

std::unique_ptr<QueryLog> QueryLog::start(const config::QueryLogConfig& config,
                                          querylog::RollingStats* stats) {
    if (!config.enabled) {
        log::info("query log: off ([querylog] enabled = false)");
        return nullptr;
    }
    auto database = querylog::Database::open(config.path, querylog::Database::Mode::write);
    if (!database) {
        log::warn("query log: off: {}", database.error());
        return nullptr;
    }
    log::info("query log: {} (privacy {}, {} days, at most {} MiB)", config.path,
              config::to_text(config.privacy),
              std::chrono::duration_cast<std::chrono::hours>(config.retention).count() / 24,
              config.max_size >> 20U);
    return std::unique_ptr<QueryLog>(new QueryLog(config, std::move(*database), stats));
}

QueryLog::QueryLog(const config::QueryLogConfig& config, querylog::Database database,
                   querylog::RollingStats* stats)
    : config_(config),
      queue_(config.queue_size),
      writer_(log_options(config), queue_, std::move(database), stats),
      thread_([this] { run(); }) {}

QueryLog::~QueryLog() {
    stopping_.store(true);
    queue_.wake_consumer();
    thread_.join();
}

void QueryLog::run() {
    // The log is best effort: when the machine is busy, DNS gets the CPU first (a thread's nice
    // value is its own on Linux). Failing to lower it changes nothing else.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWriterNice);
    auto last_flush = steady_clock::now();
    // The first prune runs at once: a retention shortened while stopped applies at start.
    auto last_prune = steady_clock::now() - kPruneEvery;
    auto last_tidy = steady_clock::now();
    const auto poll = std::min<steady_clock::duration>(kPoll, config_.flush_interval);
    steady_clock::duration wait = poll;
    bool idle = false;
    while (!stopping_.load()) {
        if (!idle) {
            queue_.sleep_until(steady_clock::now() + wait, false);
        } else {
            // A visit found nothing: polling would only wake an idle daemon, so the writer sleeps
            // until the next query, or the next chore: the pending batch's write, the prune.
            auto chore = std::min(last_prune + kPruneEvery, last_tidy + kTidyEvery);
            if (writer_.pending() > 0) {
                chore = std::min(chore, last_flush + config_.flush_interval);
            }
            queue_.sleep_until(chore, true);
        }
        const auto now = steady_clock::now();
        // Taken off the queue every visit (it stays small), written once per interval.
        const std::size_t collected = writer_.collect();
        wait = collected >= queue_.capacity() / 4 ? kBusyPoll : poll;
        idle = collected == 0;
        if (writer_.pending() >= kMaxPending || now - last_flush >= config_.flush_interval) {
            flush();
            last_flush = now;
        }
        if (now - last_prune >= kPruneEvery) {
            if (auto pruned = writer_.prune(unix_now_us()); !pruned) {
                log::warn("query log: pruning failed: {}", pruned.error());
            } else if (pruned->expired + pruned->oversize > 0) {
                log::debug("query log: deleted {} expired and {} rows over the size limit",
                           pruned->expired, pruned->oversize);
            }
            last_prune = now;
        }
        if (now - last_tidy >= kTidyEvery) {
            if (auto tidied = writer_.tidy(); !tidied) {
                log::warn("query log: tidying failed: {}", tidied.error());
            }
            last_tidy = now;
        }
    }
    flush();
}

void QueryLog::flush() {
    const auto flushed = writer_.flush();
    const std::uint64_t drops = queue_.dropped();
    const auto now = steady_clock::now();
    if ((!flushed.error.empty() || drops != warned_drops_) && now - last_warning_ >= kWarnEvery) {
        last_warning_ = now;
        if (!flushed.error.empty()) {
            log::warn("query log: {} queries not stored: {} (DNS is not affected)",
                      writer_.lost_total(), flushed.error);
        }
        if (drops != warned_drops_) {
            log::warn(
                "query log: {} queries dropped because the queue was full (raise "
                "[querylog] queue_size or lower flush_interval)",
                drops);
            warned_drops_ = drops;
        }
    }
}

}  // namespace moat::app
