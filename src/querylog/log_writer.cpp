#include "moat/querylog/log_writer.hpp"

#include <algorithm>
#include <chrono>
#include <span>

namespace moat::querylog {

LogWriter::LogWriter(LogOptions options, EntryQueue& queue, Database database, RollingStats* stats)
    : options_(std::move(options)), queue_(queue), database_(std::move(database)), stats_(stats) {}

void LogWriter::feed_stats(const Entry& stored) {
    const bool hide_domain = options_.privacy == Privacy::hide_domains;
    const bool hide_client = options_.privacy == Privacy::hide_clients;
    stats_->add_now(stored.time_us, stored.outcome, hide_domain ? "" : stored.qname.view(),
                    hide_client ? std::string() : stored.client.to_text());
}

std::size_t LogWriter::collect() {
    std::size_t taken = 0;
    while (true) {
        taken_.clear();
        const std::size_t n = queue_.pop(taken_, kTakenPerPop);
        if (n == 0) {
            return taken;
        }
        taken += n;
        // Privacy and exclusions are applied here, off the query path.
        for (Entry& e : taken_) {
            if (apply_privacy(options_, e)) {
                pending_.add(e);
                if (stats_ != nullptr) {
                    feed_stats(e);
                }
            } else {
                ++skipped_;
                if (stats_ != nullptr && options_.privacy == Privacy::anonymous) {
                    stats_->count(e);  // anonymous: nothing stored, but the counts go on
                }
            }
        }
    }
}

LogWriter::Flushed LogWriter::write() {
    Flushed result;
    result.skipped = skipped_;
    skipped_ = 0;
    if (!pending_.empty()) {
        if (auto stored = database_.append(pending_); stored) {
            result.written = pending_.size();
            result.trimmed = trim_to_size(result.written);
        } else {
            result.lost = pending_.size();
            result.error = stored.error();
        }
        pending_.clear();
    }
    written_total_.fetch_add(result.written, std::memory_order_relaxed);
    lost_total_.fetch_add(result.lost, std::memory_order_relaxed);
    return result;
}

std::size_t LogWriter::trim_to_size(std::size_t written) {
    // The minute's prune() deletes at most 20 steps of kPruneBatch rows; under a flood a batch
    // of 20,000 rows is written every half second, and the file grew past max_size without end.
    // Twice the rows written: the file shrinks back after a flood, and one write never becomes
    // an unbounded deletion. (Rows older than the retention wait for prune(): time 0 here.)
    const std::size_t budget = 2 * written;
    std::size_t trimmed = 0;
    while (trimmed < budget) {
        const std::uint64_t step = std::min<std::uint64_t>(kPruneBatch, budget - trimmed);
        auto pruned = database_.prune(0, options_.max_bytes, step);
        // A failure here costs no entry (they are stored); prune() reports it within a minute.
        if (!pruned || pruned->oversize == 0) {
            break;
        }
        trimmed += pruned->oversize;
    }
    return trimmed;
}

tl::expected<Pruned, std::string> LogWriter::prune(std::int64_t now_us, int max_steps) {
    const std::int64_t oldest =
        now_us - std::chrono::duration_cast<std::chrono::microseconds>(options_.retention).count();
    Pruned total;
    for (int step = 0; step < max_steps; ++step) {
        auto pruned = database_.prune(oldest, options_.max_bytes, kPruneBatch);
        if (!pruned) {
            return pruned;
        }
        total.expired += pruned->expired;
        total.oversize += pruned->oversize;
        if (pruned->expired + pruned->oversize < kPruneBatch) {
            break;
        }
    }
    return total;
}

}  // namespace moat::querylog
