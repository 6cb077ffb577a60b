#include "moat/querylog/entry_queue.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace moat::querylog {
namespace {

/// What a record starts with: the entry's fixed fields and its texts' lengths. The texts follow
/// in the order of `lengths`: name, upstream, list, pattern.
struct RecordHeader {
    std::int64_t time_us;
    const char* outcome;
    const char* transport;
    IpAddress client;
    std::uint32_t latency_us;
    std::uint32_t line;
    std::uint16_t qtype;
    std::uint16_t ede;
    std::uint8_t rcode;
    std::array<std::uint8_t, 4> lengths;
};
static_assert(std::is_trivially_copyable_v<RecordHeader>);

constexpr std::size_t kLargestRecord = sizeof(RecordHeader) + 253 + 47 + 63 + 127;

std::size_t ring_size_for(std::size_t capacity) {
    return std::bit_ceil(std::max(capacity * EntryQueue::kBytesPerQuery, 2 * kLargestRecord));
}

std::size_t record_size(const RecordHeader& header) {
    std::size_t size = sizeof(RecordHeader);
    for (const std::uint8_t length : header.lengths) {
        size += length;
    }
    return size;
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
    const std::array<std::string_view, 4> texts{entry.qname.view(), entry.upstream.view(),
                                                entry.list.view(), entry.pattern.view()};
    RecordHeader header{
        entry.time_us, entry.outcome, entry.transport, entry.client, entry.latency_us,
        entry.line,    entry.qtype,   entry.ede,       entry.rcode,  {}};
    for (std::size_t i = 0; i < texts.size(); ++i) {
        header.lengths.at(i) = static_cast<std::uint8_t>(texts.at(i).size());
    }
    const std::size_t size = record_size(header);

    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t pushed = pushed_.load(std::memory_order_relaxed);
    const std::uint64_t depth = pushed - popped_.load(std::memory_order_acquire);
    if (depth >= capacity_ || head + size - tail_.load(std::memory_order_acquire) > ring_.size()) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    std::uint64_t at = head;
    copy_in(at, &header, sizeof header);
    at += sizeof header;
    for (const std::string_view text : texts) {
        copy_in(at, text.data(), text.size());
        at += text.size();
    }
    // The count first: a reader that sees a record counted as popped also sees it pushed.
    pushed_.store(pushed + 1, std::memory_order_release);
    head_.store(at, std::memory_order_release);
    if (depth + 1 > peak_depth_.load(std::memory_order_relaxed)) {
        peak_depth_.store(depth + 1, std::memory_order_relaxed);
    }
    return true;
}

std::size_t EntryQueue::pop(std::vector<Entry>& out, std::size_t max) {
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::size_t n = 0;
    std::array<char, 256> text{};
    for (; n < max && tail < head; ++n) {
        RecordHeader header{};
        copy_out(tail, &header, sizeof header);
        tail += sizeof header;
        Entry& entry = out.emplace_back();
        entry.time_us = header.time_us;
        entry.outcome = header.outcome;
        entry.transport = header.transport;
        entry.client = header.client;
        entry.latency_us = header.latency_us;
        entry.line = header.line;
        entry.qtype = header.qtype;
        entry.ede = header.ede;
        entry.rcode = header.rcode;
        const auto read_text = [&](std::uint8_t length) {
            copy_out(tail, text.data(), length);
            tail += length;
            return std::string_view(text.data(), length);
        };
        entry.qname.assign(read_text(header.lengths[0]));
        entry.upstream.assign(read_text(header.lengths[1]));
        entry.list.assign(read_text(header.lengths[2]));
        entry.pattern.assign(read_text(header.lengths[3]));
    }
    // The bytes first: a producer that sees the count fall also sees the room it left.
    tail_.store(tail, std::memory_order_release);
    popped_.store(popped_.load(std::memory_order_relaxed) + n, std::memory_order_release);
    return n;
}

}  // namespace moat::querylog
