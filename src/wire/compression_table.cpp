#include "moat/wire/compression_table.hpp"

#include <cstring>

#include "moat/core/ascii.hpp"
#include "moat/wire/types.hpp"

namespace moat::wire {

void CompressionTable::reset() noexcept {
    if (indexed_) {
        for (std::size_t n = 1; n < count_; ++n) {
            slots_[nodes_[n].slot] = 0;
        }
        indexed_ = false;
        slots_clear_ = true;
    }
    nodes_[0] = Node{0, 0, 0, 0};
    count_ = 1;
}

namespace {

std::uint64_t load64(const std::uint8_t* p) noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    return w;
}

std::uint32_t load32(const std::uint8_t* p) noexcept {
    std::uint32_t w = 0;
    std::memcpy(&w, p, 4);
    return w;
}

/// The label's octets as words without reading past it: short labels use overlapping loads
/// (as in fast short-string hashes), which together cover every octet.
template <typename Fn>
void for_each_word(const std::uint8_t* p, std::size_t n, Fn&& fn) noexcept {
    if (n >= 4 && n <= 8) {
        fn(load32(p) | (static_cast<std::uint64_t>(load32(p + n - 4)) << 32U));
    } else if (n > 8) {
        std::size_t i = 0;
        for (; i + 8 < n; i += 8) {
            fn(load64(p + i));
        }
        fn(load64(p + n - 8));
    } else if (n > 0) {
        fn((static_cast<std::uint64_t>(p[0]) << 16U) |
           (static_cast<std::uint64_t>(p[n / 2]) << 8U) | p[n - 1]);
    }
}

/// Same octets, exactly (the usual case: names repeat with the same case).
bool same_octets(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) noexcept {
    if (n <= 8) {
        bool same = true;
        std::uint64_t wa = 0;
        for_each_word(a, n, [&](std::uint64_t w) { wa = w; });
        for_each_word(b, n, [&](std::uint64_t w) { same = (w == wa); });
        return same;
    }
    return std::memcmp(a, b, n) == 0;
}

}  // namespace

std::uint32_t CompressionTable::hash(std::uint16_t parent, const std::uint8_t* label) noexcept {
    // Setting bit 0x20 of every octet folds ASCII case (and merges a few non-letters, which
    // only costs a rare extra comparison). One multiply per 8 octets.
    constexpr std::uint64_t kFold = 0x2020202020202020ULL;
    constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
    std::uint64_t h = (static_cast<std::uint64_t>(parent) << 8U | label[0]) * kMul;
    for_each_word(label + 1, label[0], [&](std::uint64_t w) { h = (h ^ (w | kFold)) * kMul; });
    return static_cast<std::uint32_t>(h >> 32U);
}

bool CompressionTable::holds(const Node& node, std::uint16_t parent, const std::uint8_t* label,
                             const std::uint8_t* out, std::uint16_t tag) noexcept {
    const std::size_t n = label[0];
    const std::uint8_t* written = out + node.offset;
    return node.hash == tag && node.parent == parent && written[0] == n &&
           (same_octets(written + 1, label + 1, n) || ascii_iequal(written + 1, label + 1, n));
}

std::uint16_t CompressionTable::find_hashed(std::uint16_t parent, const std::uint8_t* label,
                                            const std::uint8_t* out,
                                            std::uint32_t key_hash) const noexcept {
    const auto tag = static_cast<std::uint16_t>(key_hash >> 16U);
    if (!indexed_) {
        // Oldest first, as the probe sequence would meet them.
        for (std::size_t n = 1; n < count_; ++n) {
            if (holds(nodes_[n], parent, label, out, tag)) {
                return static_cast<std::uint16_t>(n);
            }
        }
        return kRoot;
    }
    for (std::size_t i = key_hash & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
        const std::uint16_t node_index = slots_[i];
        if (node_index == 0) {
            return kRoot;
        }
        if (holds(nodes_[node_index], parent, label, out, tag)) {
            return node_index;
        }
    }
}

std::uint16_t CompressionTable::add_hashed(std::uint16_t parent, std::uint16_t offset,
                                           std::uint32_t key_hash) noexcept {
    if (count_ >= kMaxNodes || offset > kMaxPointerOffset) {
        return kRoot;
    }
    const auto n = static_cast<std::uint16_t>(count_++);
    nodes_[n] = Node{parent, offset, static_cast<std::uint16_t>(key_hash & (kSlots - 1)),
                     static_cast<std::uint16_t>(key_hash >> 16U)};
    if (indexed_) {
        insert(n);
    } else if (count_ > kLinearNodes) {
        build_index();
    }
    return n;
}

void CompressionTable::insert(std::uint16_t n) noexcept {
    std::size_t i = nodes_[n].slot;
    while (slots_[i] != 0) {
        i = (i + 1) & (kSlots - 1);
    }
    nodes_[n].slot = static_cast<std::uint16_t>(i);
    slots_[i] = n;
}

void CompressionTable::build_index() noexcept {
    if (!slots_clear_) {
        slots_.fill(0);
    }
    // In the order they were added, so each lands where adding it to the index would have put it.
    for (std::size_t n = 1; n < count_; ++n) {
        insert(static_cast<std::uint16_t>(n));
    }
    indexed_ = true;
    slots_clear_ = false;
}

void CompressionTable::rollback(std::size_t count) noexcept {
    while (count_ > count) {
        --count_;
        if (indexed_) {
            slots_[nodes_[count_].slot] = 0;
        }
    }
}

}  // namespace moat::wire
