// Hands the current Snapshot to query threads and swaps in a new one after a rebuild.
//
// The snapshot pointer sits behind a reader-writer lock (moat::Guarded with std::shared_mutex,
// the design card's RwLock): current() holds the shared lock only to copy the shared_ptr, so
// queries never wait for a rebuild, which happens aside in a Compiler. publish() takes the
// exclusive lock for one pointer swap. A rebuild that fails is simply not published, so the old
// snapshot stays. A snapshot lives as long as the last reader holding it.
#pragma once

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
        return current_.with(
            [&](std::shared_ptr<const Snapshot>& s) { return std::exchange(s, std::move(next)); });
    }

private:
    Guarded<std::shared_ptr<const Snapshot>, std::shared_mutex> current_;
};

}  // namespace moat::filter
