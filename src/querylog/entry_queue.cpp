#include "moat/querylog/entry_queue.hpp"

#include <bit>

namespace moat::querylog {

EntryQueue::EntryQueue(std::size_t capacity)
    : slots_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity)), mask_(slots_.size() - 1) {}

std::size_t EntryQueue::pop(std::vector<Entry>& out, std::size_t max) {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(head - tail, max));
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(slots_[(tail + i) & mask_]);
    }
    tail_.store(tail + n, std::memory_order_release);
    return n;
}

}  // namespace moat::querylog
