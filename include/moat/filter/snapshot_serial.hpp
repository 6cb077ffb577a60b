// A number no other Snapshot of this process has had: what a cache entry records to say "the
// blocklist passed this name" (Cache::lookup_if_passed), valid for exactly that snapshot.
//
// Taken from one process-wide counter when a snapshot is made. A move hands the number on and
// gives the moved-from object a fresh one, so that no two live objects, and no snapshot made
// later, ever share a number: a cache entry's record can then never vouch for another snapshot's
// rules, however snapshots are built, moved and freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace moat::filter {

class SnapshotSerial {
public:
    SnapshotSerial() noexcept : value_(next()) {}
    SnapshotSerial(const SnapshotSerial&) = delete;
    SnapshotSerial& operator=(const SnapshotSerial&) = delete;
    SnapshotSerial(SnapshotSerial&& other) noexcept : value_(std::exchange(other.value_, next())) {}
    SnapshotSerial& operator=(SnapshotSerial&& other) noexcept {
        value_ = std::exchange(other.value_, next());
        return *this;
    }
    ~SnapshotSerial() = default;

    /// 1 for the first snapshot of the process, then counting up; never 0.
    [[nodiscard]] std::uint64_t value() const noexcept { return value_; }

private:
    static std::uint64_t next() noexcept {
        static std::atomic<std::uint64_t> last{0};
        return last.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    std::uint64_t value_;
};

}  // namespace moat::filter
