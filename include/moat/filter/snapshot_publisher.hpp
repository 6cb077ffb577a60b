// Hands the current Snapshot to query threads and swaps in a new one after a rebuild.
//
// The snapshot pointer sits behind a reader-writer lock (moat::Guarded with std::shared_mutex,
// the design card's RwLock): current() holds the shared lock only to copy the shared_ptr, so
// queries never wait for a rebuild, which happens aside in a Compiler. publish() takes the
// exclusive lock for one pointer swap. A rebuild that fails is simply not published, so the old
// snapshot stays. A snapshot lives as long as the last reader holding it.
//
// A query thread reads through a SnapshotReader instead: it keeps the snapshot it took and
// takes the lock again only when the publisher's version says a newer one is out, so a query
// costs one atomic load rather than the lock's two read-modify-writes and the pointer's two.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <utility>

#include "moat/core/guarded.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::filter {

class SnapshotPublisher {
public:
    /// Starts with an empty snapshot (matches nothing).
    SnapshotPublisher() : current_(std::in_place, std::make_shared<const Snapshot>()) {}
    explicit SnapshotPublisher(std::shared_ptr<const Snapshot> initial)
        : current_(std::in_place, std::move(initial)) {}

    /// The snapshot to match against; stays valid while the caller holds it.
    [[nodiscard]] std::shared_ptr<const Snapshot> current() const {
        return current_.with_shared([](const std::shared_ptr<const Snapshot>& s) { return s; });
    }

    /// Replaces the current snapshot (null is ignored) and returns the previous one, so the
    /// caller can release it outside the lock.
    std::shared_ptr<const Snapshot> publish(std::shared_ptr<const Snapshot> next) {
        if (!next) {
            return nullptr;
        }
        return current_.with([&](std::shared_ptr<const Snapshot>& s) {
            auto previous = std::exchange(s, std::move(next));
            // Inside the lock: a reader that sees this version and then takes the lock gets
            // this snapshot or a newer one.
            version_.fetch_add(1, std::memory_order_release);
            return previous;
        });
    }

    /// How many snapshots have been published: a reader compares it to the one it took.
    [[nodiscard]] std::uint64_t version() const noexcept {
        return version_.load(std::memory_order_acquire);
    }

private:
    Guarded<std::shared_ptr<const Snapshot>, std::shared_mutex> current_;
    std::atomic<std::uint64_t> version_{0};
};

/// One thread's view of a publisher: the snapshot it took last, kept until a newer one is
/// published. Not thread-safe: one reader per thread (an Engine has its own).
class SnapshotReader {
public:
    /// `publisher` must outlive the reader.
    explicit SnapshotReader(const SnapshotPublisher& publisher) noexcept : publisher_(publisher) {}

    /// The newest snapshot. The reference stays valid until the next call on this reader, which
    /// may let the previous snapshot go.
    [[nodiscard]] const std::shared_ptr<const Snapshot>& current() {
        const std::uint64_t version = publisher_.version();
        if (held_ == nullptr || version != version_) {
            held_ = publisher_.current();
            version_ = version;
        }
        return held_;
    }

private:
    const SnapshotPublisher& publisher_;
    std::shared_ptr<const Snapshot> held_;
    std::uint64_t version_ = 0;
};

}  // namespace moat::filter
