// A bounded, lock-free queue of log entries between one producer (the event loop's thread) and
// one consumer (the log writer's thread). push() never blocks and never allocates: when the queue
// is full the entry is dropped and counted, so a slow disk can only cost log lines, never DNS.
//
// A ring of a power-of-two number of slots with two counters: the producer owns `head_`, the
// consumer `tail_`; each publishes its counter with release and reads the other's with acquire
// (the classic single-producer single-consumer ring). The slots are allocated once, up front.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "moat/querylog/entry.hpp"

namespace moat::querylog {

class EntryQueue {
public:
    /// At least `capacity` slots (rounded up to a power of two, at least 2).
    explicit EntryQueue(std::size_t capacity);

    /// Producer: copies `entry` in; false (and one more drop) when the queue is full.
    bool push(const Entry& entry) noexcept {
        const std::uint64_t head = head_.load(std::memory_order_relaxed);
        const std::uint64_t depth = head - tail_.load(std::memory_order_acquire);
        if (depth >= slots_.size()) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        slots_[head & mask_] = entry;
        head_.store(head + 1, std::memory_order_release);
        if (depth + 1 > peak_depth_.load(std::memory_order_relaxed)) {
            peak_depth_.store(depth + 1, std::memory_order_relaxed);
        }
        return true;
    }

    /// Consumer: moves up to `max` entries to the end of `out`; returns how many.
    std::size_t pop(std::vector<Entry>& out, std::size_t max);

    /// Entries waiting now (either thread; a moment's view).
    [[nodiscard]] std::size_t depth() const noexcept {
        return static_cast<std::size_t>(head_.load(std::memory_order_acquire) -
                                        tail_.load(std::memory_order_acquire));
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }
    /// Entries dropped because the queue was full, since the start.
    [[nodiscard]] std::uint64_t dropped() const noexcept {
        return dropped_.load(std::memory_order_relaxed);
    }
    /// The deepest the queue has been since the start.
    [[nodiscard]] std::uint64_t peak_depth() const noexcept {
        return peak_depth_.load(std::memory_order_relaxed);
    }

private:
    std::vector<Entry> slots_;
    std::uint64_t mask_;
    alignas(64) std::atomic<std::uint64_t> head_{0};  ///< next slot to fill (producer)
    alignas(64) std::atomic<std::uint64_t> tail_{0};  ///< next slot to read (consumer)
    alignas(64) std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> peak_depth_{0};
};

}  // namespace moat::querylog
