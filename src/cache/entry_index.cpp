#include "entry_index.hpp"

#include <utility>

#include "shard.hpp"

namespace moat::cache {

namespace {

constexpr std::size_t kFirstCapacity = 64;
/// Grow when an insert would fill more than three quarters of the slots: linear probing stays
/// short (about 2.5 slots for a hit, 8 for a miss, at that load) and a slot line holds four.
constexpr bool over_load(std::size_t entries, std::size_t capacity) noexcept {
    return entries * 4 > capacity * 3;
}

}  // namespace

Entry* EntryIndex::find(const KeyRef& key) const noexcept {
    // Past slots of an equal hash but another key: 64-bit hashes of distinct keys rarely meet.
    return probe(key.hash, [&key](const Entry& entry) {
        // The answer lies a line or two past the header: asked for now, its reads overlap the
        // header's, which the compare below waits for, instead of following it (a hit's answer
        // is read next; the engine has usually asked already, through Shard::prefetch_entry).
        const auto* const bytes = reinterpret_cast<const std::uint8_t*>(&entry);
        __builtin_prefetch(bytes + kCacheLine);
        __builtin_prefetch(bytes + 2 * kCacheLine);
        return KeyRefEqual{}(entry.key, key);
    });
}

const std::uint8_t* EntryIndex::candidate(std::uint64_t hash) const noexcept {
    // The first slot of the hash, without reading the entry (that read is what is prefetched).
    return reinterpret_cast<const std::uint8_t*>(probe(hash, [](const Entry&) { return true; }));
}

void EntryIndex::reserve_one_more() {
    if (!slots_.empty() && !over_load(size_ + 1, slots_.size())) {
        return;
    }
    std::vector<Slot> old(slots_.empty() ? kFirstCapacity : slots_.size() * 2);  // may throw
    std::swap(old, slots_);
    for (const Slot& slot : old) {
        if (slot.entry != nullptr) {
            place(slot.entry);
        }
    }
}

void EntryIndex::insert(Entry* entry) noexcept {
    place(entry);
    ++size_;
}

void EntryIndex::place(Entry* entry) noexcept {
    std::size_t i = entry->key.hash & mask();
    while (slots_[i].entry != nullptr) {
        i = (i + 1) & mask();
    }
    slots_[i] = Slot{entry->key.hash, entry};
}

void EntryIndex::erase(const Entry* entry) noexcept {
    std::size_t hole = entry->key.hash & mask();
    while (slots_[hole].entry != entry) {
        hole = (hole + 1) & mask();
    }
    // Backward shift: a later slot of the same run moves into the hole unless its home lies
    // after the hole (cyclically), where a lookup would no longer pass the hole to reach it.
    for (std::size_t next = (hole + 1) & mask(); slots_[next].entry != nullptr;
         next = (next + 1) & mask()) {
        const std::size_t home = slots_[next].hash & mask();
        if (((next - home) & mask()) >= ((next - hole) & mask())) {
            slots_[hole] = slots_[next];
            hole = next;
        }
    }
    slots_[hole] = Slot{};
    --size_;
}

void EntryIndex::clear() noexcept {
    for (Slot& slot : slots_) {
        slot = Slot{};
    }
    size_ = 0;
}

}  // namespace moat::cache
