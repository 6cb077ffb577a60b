#include "moat/querylog/log_writer.hpp"

#include <chrono>
#include <span>

namespace moat::querylog {

LogWriter::LogWriter(LogOptions options, EntryQueue& queue, Database database)
    : options_(std::move(options)), queue_(queue), database_(std::move(database)) {}

LogWriter::Flushed LogWriter::flush(std::size_t batch) {
    Flushed result;
    while (true) {
        batch_.clear();
        if (queue_.pop(batch_, batch) == 0) {
            break;
        }
        // Privacy and exclusions are applied here, off the query path.
        std::size_t kept = 0;
        for (Entry& e : batch_) {
            if (apply_privacy(options_, e)) {
                batch_[kept++] = e;
            }
        }
        result.skipped += batch_.size() - kept;
        auto stored = database_.append(std::span<const Entry>(batch_.data(), kept));
        if (stored) {
            result.written += kept;
        } else {
            result.lost += kept;
            result.error = stored.error();
        }
    }
    written_total_ += result.written;
    lost_total_ += result.lost;
    return result;
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
