#include "moat/filter/name_hash_set.hpp"

namespace moat::filter {

NameHashSet::NameHashSet(std::vector<Entry>& entries, bool keep_lines) {
    if (entries.empty()) {
        return;
    }
    // 0.8 load: short linear probes at about 10 bytes of payload per slot.
    capacity_ = static_cast<std::uint32_t>(entries.size() + entries.size() / 4 + 1);
    keys_.assign(capacity_, 0);
    lists_.assign(capacity_, 0);
    flags_.assign(capacity_, 0);
    if (keep_lines) {
        lines_.assign(capacity_, 0);
    }
    for (const Entry& e : entries) {
        std::uint32_t slot = home(e.hash, capacity_);
        while (keys_[slot] != 0 && keys_[slot] != e.hash) {
            if (++slot == capacity_) {
                slot = 0;
            }
        }
        if (keys_[slot] == e.hash) {
            flags_[slot] |= e.flags;
            continue;
        }
        keys_[slot] = e.hash;
        lists_[slot] = e.list;
        flags_[slot] = e.flags;
        if (keep_lines) {
            lines_[slot] = e.line;
        }
        ++size_;
    }
}

std::size_t NameHashSet::memory_bytes() const noexcept {
    return keys_.capacity() * sizeof(std::uint64_t) + lists_.capacity() * sizeof(std::uint16_t) +
           flags_.capacity() + lines_.capacity() * sizeof(std::uint32_t);
}

}  // namespace moat::filter
