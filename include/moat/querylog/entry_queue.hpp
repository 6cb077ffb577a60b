// A bounded, lock-free queue of log entries between one producer (the event loop's thread) and
// one consumer (the log writer's thread). push() never blocks and never allocates: when the queue
// is full the entry is dropped and counted, so a slow disk can only cost log lines, never DNS.
//
// Entries travel as variable-length records in a ring of bytes: a fixed header and then only the
// bytes of their texts. An Entry is 560 bytes because its texts are stored at their largest, while
// a typical record is about 100, so the ring is a fifth of a ring of Entry slots. The producer owns
// `head_` (bytes written) and `pushed_`, the consumer `tail_` and `popped_`; each side publishes
// its counters with release and reads the other's with acquire (the classic single-producer
// single-consumer ring). A record may wrap around the ring's end: it is copied in two parts.
//
// The consumer polls, which batches entries and costs the producer nothing, and the push that
// fills a quarter of the queue wakes it early, so a burst between two visits is not dropped. When
// there is nothing to poll for (no queries for a while) it may sleep until the next push instead,
// so an idle daemon does not wake at all: the first push into such a queue wakes it. Those two
// pushes are the only ones that cost the producer a system call.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "moat/core/raw_buffer.hpp"
#include "moat/querylog/entry.hpp"

namespace moat::querylog {

class EntryQueue {
public:
    /// Ring bytes per query of capacity: a record with a 40-character name and an upstream
    /// address takes about 110, so a full queue of long names holds fewer than `capacity()`.
    static constexpr std::size_t kBytesPerQuery = 128;

    /// At most `capacity` entries (rounded up to a power of two, at least 2) wait at once, in a
    /// ring of `capacity * kBytesPerQuery` bytes (at least two of the largest records).
    explicit EntryQueue(std::size_t capacity);

    /// Producer: copies `entry` in; false (and one more drop) when the queue is full.
    bool push(const Entry& entry) noexcept;

    /// Consumer: moves up to `max` entries to the end of `out`; returns how many.
    std::size_t pop(std::vector<Entry>& out, std::size_t max);

    /// Consumer: sleeps until `deadline`, wake_consumer(), or the push that fills a quarter of
    /// the queue. With `until_push`, also until the next push(), and not at all while an entry
    /// waits.
    void sleep_until(std::chrono::steady_clock::time_point deadline, bool until_push);
    /// Any thread: ends the consumer's sleep, or makes its next one return at once.
    void wake_consumer() noexcept;

    /// Entries waiting now (either thread; a moment's view).
    [[nodiscard]] std::size_t depth() const noexcept {
        const std::uint64_t popped = popped_.load(std::memory_order_acquire);
        return static_cast<std::size_t>(pushed_.load(std::memory_order_acquire) - popped);
    }
    /// The most entries that can wait at once.
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// The ring's size in bytes.
    [[nodiscard]] std::size_t ring_bytes() const noexcept { return ring_.size(); }
    /// Entries dropped because the queue was full, since the start.
    [[nodiscard]] std::uint64_t dropped() const noexcept {
        return dropped_.load(std::memory_order_relaxed);
    }
    /// The deepest the queue has been since the start, in entries.
    [[nodiscard]] std::uint64_t peak_depth() const noexcept {
        return peak_depth_.load(std::memory_order_relaxed);
    }

private:
    void copy_in(std::uint64_t at, const void* from, std::size_t size) noexcept;
    void copy_out(std::uint64_t at, void* to, std::size_t size) const noexcept;

    std::size_t capacity_;
    /// Not zeroed: a page of the ring costs memory only once a record reaches it.
    RawBuffer ring_;
    std::size_t mask_;  ///< the ring's size minus one (a power of two)
    alignas(64) std::atomic<std::uint64_t> head_{0};  ///< bytes written (producer)
    std::atomic<std::uint64_t> pushed_{0};            ///< entries written (producer)
    alignas(64) std::atomic<std::uint64_t> tail_{0};  ///< bytes read (consumer)
    std::atomic<std::uint64_t> popped_{0};            ///< entries read (consumer)
    alignas(64) std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> peak_depth_{0};
    /// The consumer sleeps until the next push (set and cleared by the consumer, taken by the
    /// producer that wakes it).
    std::atomic<bool> parked_{false};
    std::mutex sleep_mutex_;
    std::condition_variable sleep_cv_;
    bool woken_ = false;  ///< guarded by sleep_mutex_
};

}  // namespace moat::querylog
