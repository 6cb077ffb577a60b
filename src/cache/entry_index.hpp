// The shard's hash index: an open-addressing table of (hash, entry) slots with linear probing.
// Private to the cache module.
//
// Why not std::unordered_map: a hit there reads the bucket array, then the node, then the entry
// it points at, three dependent cache misses before the answer. Here the probe reads slots that
// sit four to a cache line and carry the full 64-bit hash, so a hit touches one slot line and
// then the entry itself. Deletion shifts the following slots back (no tombstones), so probe
// lengths never grow with churn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moat::cache {

/// The line size an entry's prefetches step by (x86-64's and the Cortex-A76's alike).
inline constexpr std::size_t kCacheLine = 64;

struct Entry;
struct KeyRef;

class EntryIndex {
public:
    /// The entry stored under `key`, or null.
    [[nodiscard]] Entry* find(const KeyRef& key) const noexcept;
    /// The address of the first entry whose slot holds `hash`, or null: find() without the key
    /// compare, so without reading the entry (for a prefetch; another key may share the hash).
    [[nodiscard]] const std::uint8_t* candidate(std::uint64_t hash) const noexcept;
    /// Makes room for one more entry; may throw std::bad_alloc, after which the index is as it
    /// was. insert() after it cannot fail.
    void reserve_one_more();
    /// Adds `entry`, whose key must not be present; reserve_one_more() must have been called.
    void insert(Entry* entry) noexcept;
    /// Removes `entry`, which must be present.
    void erase(const Entry* entry) noexcept;
    /// Forgets every entry (they are owned elsewhere); the slots are kept.
    void clear() noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    struct Slot {
        std::uint64_t hash = 0;
        Entry* entry = nullptr;  ///< null: free
    };

public:
    /// For prefetch hints: slot i of a hash is at slots_address() + (hash & slot_mask()) *
    /// kSlotBytes (null when there are no slots yet).
    static constexpr std::size_t kSlotBytes = sizeof(Slot);
    [[nodiscard]] const std::uint8_t* slots_address() const noexcept {
        return slots_.empty() ? nullptr : reinterpret_cast<const std::uint8_t*>(slots_.data());
    }
    [[nodiscard]] std::size_t slot_mask() const noexcept { return slots_.empty() ? 0 : mask(); }

private:
    [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
    /// The probe find() and candidate() share: the first entry along `hash`'s run whose slot
    /// holds `hash` and which `accept` takes, or null at the run's end.
    template <typename Accept>
    [[nodiscard]] Entry* probe(std::uint64_t hash, Accept accept) const noexcept {
        if (slots_.empty()) {
            return nullptr;
        }
        // Terminates: the table is at most three quarters full, so the run ends at a free slot.
        for (std::size_t i = hash & mask();; i = (i + 1) & mask()) {
            const Slot& slot = slots_[i];
            if (slot.entry == nullptr || (slot.hash == hash && accept(*slot.entry))) {
                return slot.entry;
            }
        }
    }
    void place(Entry* entry) noexcept;

    std::vector<Slot> slots_;  ///< a power of two in size, or empty
    std::size_t size_ = 0;
};

}  // namespace moat::cache
