#include "moat/querylog/entry_queue.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace moat::querylog {
namespace {

// A record is an entry's fields (EntryFields) and then the bytes of its texts.
static_assert(std::is_trivially_copyable_v<EntryFields>);
constexpr std::size_t kLargestRecord = sizeof(EntryFields) + 253 + 47 + 63 + 127;

std::size_t ring_size_for(std::size_t capacity) {
    return std::bit_ceil(std::max(capacity * EntryQueue::kBytesPerQuery, 2 * kLargestRecord));
}

}  // namespace

EntryQueue::EntryQueue(std::size_t capacity)
    : capacity_(std::bit_ceil(std::max(capacity, std::size_t{2}))),
      ring_(ring_size_for(capacity_)),
      mask_(ring_.size() - 1) {}

void EntryQueue::copy_in(std::uint64_t at, const void* from, std::size_t size) noexcept {
    const std::size_t offset = at & mask_;
    const std::size_t first = std::min(size, ring_.size() - offset);
    std::memcpy(ring_.data() + offset, from, first);
    std::memcpy(ring_.data(), static_cast<const std::uint8_t*>(from) + first, size - first);
}

void EntryQueue::copy_out(std::uint64_t at, void* to, std::size_t size) const noexcept {
    const std::size_t offset = at & mask_;
    const std::size_t first = std::min(size, ring_.size() - offset);
    std::memcpy(to, ring_.data() + offset, first);
    std::memcpy(static_cast<std::uint8_t*>(to) + first, ring_.data(), size - first);
}

bool EntryQueue::push(const Entry& entry) noexcept {
    const EntryFields fields = EntryFields::of(entry);
    const std::size_t size = sizeof fields + fields.text_bytes();

    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t pushed = pushed_.load(std::memory_order_relaxed);
    const std::uint64_t depth = pushed - popped_.load(std::memory_order_acquire);
    if (depth >= capacity_ || head + size - tail_.load(std::memory_order_acquire) > ring_.size()) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    std::uint64_t at = head;
    copy_in(at, &fields, sizeof fields);
    at += sizeof fields;
    for (const std::string_view text : texts_of(entry)) {
        copy_in(at, text.data(), text.size());
        at += text.size();
    }
    // The count first: a reader that sees a record counted as popped also sees it pushed.
    pushed_.store(pushed + 1, std::memory_order_release);
    // Sequentially consistent with the consumer's parking in sleep_until(): either it sees this
    // record and stays awake, or this sees it parked and wakes it (a store-then-load on each
    // side, which release and acquire alone would let both miss).
    head_.store(at, std::memory_order_seq_cst);
    if (depth + 1 > peak_depth_.load(std::memory_order_relaxed)) {
        peak_depth_.store(depth + 1, std::memory_order_relaxed);
    }
    if (depth + 1 == std::max<std::size_t>(capacity_ / 4, 1) ||
        (parked_.load(std::memory_order_seq_cst) && parked_.exchange(false))) {
        wake_consumer();
    }
    return true;
}

void EntryQueue::sleep_until(std::chrono::steady_clock::time_point deadline, bool until_push) {
    std::unique_lock lock(sleep_mutex_);
    if (until_push) {
        parked_.store(true, std::memory_order_seq_cst);
        // The lock is held from here into the wait, so a push's wake-up cannot fall between.
        if (head_.load(std::memory_order_seq_cst) != tail_.load(std::memory_order_relaxed)) {
            woken_ = true;
        }
    }
    sleep_cv_.wait_until(lock, deadline, [this] { return woken_; });
    woken_ = false;
    parked_.store(false, std::memory_order_relaxed);
}

void EntryQueue::wake_consumer() noexcept {
    {
        const std::lock_guard lock(sleep_mutex_);
        woken_ = true;
    }
    sleep_cv_.notify_one();
}

std::size_t EntryQueue::pop(std::vector<Entry>& out, std::size_t max) {
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::size_t n = 0;
    // Not zeroed: each text is read back only as far as it was copied in.
    std::array<char, 256> text;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    for (; n < max && tail < head; ++n) {
        EntryFields fields{};
        copy_out(tail, &fields, sizeof fields);
        tail += sizeof fields;
        Entry& entry = out.emplace_back();
        fields.restore(entry);
        const auto read_text = [&](std::uint8_t length) {
            copy_out(tail, text.data(), length);
            tail += length;
            return std::string_view(text.data(), length);
        };
        entry.qname.assign(read_text(fields.lengths[0]));
        entry.upstream.assign(read_text(fields.lengths[1]));
        entry.list.assign(read_text(fields.lengths[2]));
        entry.pattern.assign(read_text(fields.lengths[3]));
    }
    // The bytes first: a producer that sees the count fall also sees the room it left.
    tail_.store(tail, std::memory_order_release);
    popped_.store(popped_.load(std::memory_order_relaxed) + n, std::memory_order_release);
    return n;
}

}  // namespace moat::querylog
