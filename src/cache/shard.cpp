#include "shard.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <utility>

#include "moat/core/bytes.hpp"
#include "moat/wire/types.hpp"

namespace moat::cache {

namespace {

/// Octets charged per entry beyond its block (the header, the stored bytes and the rounding up
/// to the block's size class): the allocator's own header (16), about 1.6 index slots at the
/// table's load (16 each), the ring slot and a free-slot number (8 each).
constexpr std::size_t kEntryOverhead = 16 + 26 + 16;

/// Writes the key, the TTL offsets and the answer into a new entry's storage.
void fill(Entry& entry, const CacheKey& key, const PreparedAnswer& prepared,
          Clock::time_point now) noexcept {
    const auto name = key.name();
    const std::span<const std::uint16_t> offsets = prepared.ttl_offsets;
    entry.name_length = static_cast<std::uint8_t>(name.size());
    entry.ttl_count = static_cast<std::uint16_t>(offsets.size());
    std::uint8_t* out = entry.storage();
    std::memcpy(out, name.data(), name.size());
    out += name.size();
    if (!offsets.empty()) {
        std::memcpy(out, offsets.data(), offsets.size_bytes());
        out += offsets.size_bytes();
    }
    std::memcpy(out, prepared.bytes.data(), prepared.bytes.size());
    entry.key = KeyRef::of(key);
    entry.key.name = entry.storage();  // the entry's own copy, not the caller's key
    entry.inserted = now;
    entry.lifetime = std::chrono::seconds(prepared.lifetime);
}

}  // namespace

void Entry::Free::operator()(Entry* entry) const noexcept {
    entry->~Entry();
    ::operator delete(entry);
}

Entry::Owner Entry::make(void* block, std::size_t storage_size) noexcept {
    Owner entry(new (block) Entry());
    entry->storage_size = static_cast<std::uint32_t>(storage_size);
    return entry;
}

bool KeyRefEqual::operator()(const KeyRef& a, const KeyRef& b) const noexcept {
    return a.hash == b.hash && a.qtype == b.qtype && a.qclass == b.qclass &&
           a.dnssec_ok == b.dnssec_ok && a.partition == b.partition &&
           a.name_length == b.name_length && std::memcmp(a.name, b.name, a.name_length) == 0;
}

tl::expected<Hit, Errc> Shard::lookup(const CacheKey& key, std::uint16_t id,
                                      std::span<std::uint8_t> out, LookupMode mode,
                                      Clock::time_point now, std::uint32_t passed,
                                      bool required) noexcept {
    const KeyRef probe = KeyRef::of(key);
    auto result = table_.with_shared([&](const Table& table) -> tl::expected<Hit, Errc> {
        const Entry* const found = table.index.find(probe);
        if (found == nullptr) {
            return tl::unexpected(Errc::miss);
        }
        if (required && found->passed_under.load(std::memory_order_relaxed) != passed) {
            return tl::unexpected(Errc::unchecked);
        }
        auto hit = serve(*found, key, id, out, mode, now);
        // Written only when it changes: later hits, on other threads too, keep the line shared.
        if (hit && passed != 0 && found->passed_under.load(std::memory_order_relaxed) != passed) {
            found->passed_under.store(passed, std::memory_order_relaxed);
        }
        return hit;
    });
    if (!result) {
        if (result.error() != Errc::unchecked) {
            misses_.fetch_add(1, std::memory_order_relaxed);
        }
    } else {
        (result->stale ? stale_hits_ : hits_).fetch_add(1, std::memory_order_relaxed);
        if (result->refresh) {
            prefetches_.fetch_add(1, std::memory_order_relaxed);
        }
    }
    return result;
}

bool Shard::prefetch_entry(std::uint64_t hash) const noexcept {
    return table_.with_shared([&](const Table& table) {
        const std::uint8_t* const entry = table.index.candidate(hash);
        if (entry != nullptr) {
            // The header, the name after it and the start of the answer: a hit reads all three.
            __builtin_prefetch(entry);
            __builtin_prefetch(entry + kCacheLine);
            __builtin_prefetch(entry + 2 * kCacheLine);
        }
        return entry != nullptr;
    });
}

tl::expected<Hit, Errc> Shard::serve(const Entry& entry, const CacheKey& key, std::uint16_t id,
                                     std::span<std::uint8_t> out, LookupMode mode,
                                     Clock::time_point now) const noexcept {
    // `now` was read before the lock, so an entry inserted since can look younger than zero.
    const Clock::duration age = std::max(now - entry.inserted, Clock::duration::zero());
    bool stale = false;
    if (age >= entry.lifetime) {
        if (!serves_expired(mode) || dead(entry, now)) {
            return tl::unexpected(Errc::miss);
        }
        stale = true;
    }
    const std::span<const std::uint8_t> answer = entry.answer();
    if (out.size() < answer.size()) {
        return tl::unexpected(Errc::no_space);
    }
    std::uint8_t* const p = out.data();
    std::memcpy(p, answer.data(), answer.size());
    store_u16(p, id);
    // The stored question is uncompressed at offset 12 and equals the key's name but for case.
    if (const auto echo = key.echo_name(); echo.size() == entry.name_length) {
        std::memcpy(p + wire::kHeaderSize, echo.data(), echo.size());
    }
    // Every stored TTL is at least the lifetime, which exceeds the whole seconds elapsed.
    const auto elapsed =
        static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(age).count());
    const std::uint8_t* offsets = entry.ttl_offsets();
    for (std::size_t i = 0; i < entry.ttl_count; ++i) {
        std::uint16_t offset = 0;
        std::memcpy(&offset, offsets + i * sizeof(offset), sizeof(offset));
        std::uint8_t* const ttl = p + offset;
        store_u32(ttl, stale ? options_.stale_ttl : load_u32(ttl) - elapsed);
    }
    if (!entry.referenced.load(std::memory_order_relaxed)) {
        entry.referenced.store(true, std::memory_order_relaxed);
    }
    // The stale mode never asks: it is the engine's after every upstream failed, which sends no
    // refresh, so a claim there would be lost and the entry would go unrefreshed.
    bool refresh = false;
    if (mode != LookupMode::stale) {
        refresh = stale ? claims_stale_refresh(entry, age) : claims_refresh(entry, age);
    }
    return Hit{answer.size(), stale, refresh};
}

namespace {

/// 1 + `age` in whole seconds: the mark Entry::refresh_asked keeps (0 is "never asked").
std::uint32_t ask_mark(Clock::duration age) noexcept {
    return static_cast<std::uint32_t>(
               std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
           1;
}

}  // namespace

bool Shard::claims_refresh(const Entry& entry, Clock::duration age) const noexcept {
    // unbound's rule: within the last tenth of the lifetime the answer had when stored.
    if (!options_.prefetch || (entry.lifetime - age) * 10 > entry.lifetime) {
        return false;
    }
    // A load first: the many hits after the claim read a shared line instead of writing it.
    std::uint32_t unasked = 0;
    return entry.refresh_asked.load(std::memory_order_relaxed) == 0 &&
           entry.refresh_asked.compare_exchange_strong(unasked, ask_mark(age),
                                                       std::memory_order_relaxed);
}

bool Shard::claims_stale_refresh(const Entry& entry, Clock::duration age) const noexcept {
    // A refresh that failed (SERVFAIL, a timeout) left the entry as it was: ask again once the
    // stale answers given meanwhile have run out, RFC 8767 §5's wait before the next try, and
    // no sooner, so that a dead upstream is not asked once per query.
    const std::uint32_t mark = ask_mark(age);
    std::uint32_t last = entry.refresh_asked.load(std::memory_order_relaxed);
    // A hit that read the clock later may have asked first (`mark < last`): that ask stands.
    if (last != 0 && (mark < last || mark - last < options_.stale_ttl)) {
        return false;
    }
    return entry.refresh_asked.compare_exchange_strong(last, mark, std::memory_order_relaxed);
}

bool Shard::serves_expired(LookupMode mode) const noexcept {
    switch (mode) {
        case LookupMode::fresh: return false;
        case LookupMode::stale: return keeps_expired();
        case LookupMode::optimistic: return options_.optimistic;
    }
    return false;
}

bool Shard::dead(const Entry& entry, Clock::time_point now) const noexcept {
    const Clock::duration age = now - entry.inserted;
    if (age < entry.lifetime) {
        return false;
    }
    return !keeps_expired() || age - entry.lifetime >= std::chrono::seconds(options_.max_stale_age);
}

tl::expected<void, Errc> Shard::insert(const CacheKey& key, const PreparedAnswer& prepared) {
    const Clock::time_point now = clock_.now();
    const auto name = key.name();
    const std::span<const std::uint16_t> offsets = prepared.ttl_offsets;
    const std::size_t storage_size = name.size() + offsets.size_bytes() + prepared.bytes.size();
    const std::size_t block_size = Entry::block_size(storage_size);
    if (block_size + kEntryOverhead > max_bytes_) {
        count_rejected();
        return tl::unexpected(Errc::too_large);
    }

    table_.with([&](Table& table) {
        // Everything that may throw (the entry's block, growing the ring, the free list, the
        // index) happens before the table changes: remove() and insert() below allocate nothing.
        // The block comes first, while the recycler still holds what the last insert evicted.
        Entry::Owner entry = Entry::make(table.recycler.take(block_size), storage_size);
        fill(*entry, key, prepared, now);
        entry->charge = static_cast<std::uint32_t>(block_size + kEntryOverhead);
        if (table.ring.size() == table.ring.capacity()) {
            table.ring.reserve(std::max<std::size_t>(16, table.ring.capacity() * 2));
        }
        table.free_slots.reserve(table.ring.capacity());
        table.index.reserve_one_more();
        if (Entry* const old = table.index.find(entry->key); old != nullptr) {
            remove(table, *old);
        }
        while (table.bytes + entry->charge > max_bytes_ && table.index.size() != 0) {
            evict_one(table, now);
        }
        Entry* const stored = entry.get();
        table.index.insert(stored);
        if (table.free_slots.empty()) {
            stored->ring_index = static_cast<std::uint32_t>(table.ring.size());
            table.ring.push_back(std::move(entry));  // within the capacity reserved above
        } else {
            stored->ring_index = static_cast<std::uint32_t>(table.free_slots.back());
            table.free_slots.pop_back();
            table.ring[stored->ring_index] = std::move(entry);
        }
        table.bytes += stored->charge;
        publish_gauges(table);
    });
    inserts_.fetch_add(1, std::memory_order_relaxed);
    return {};
}

void Shard::remove(Table& table, Entry& entry) noexcept {
    table.index.erase(&entry);
    table.free_slots.push_back(entry.ring_index);  // within the capacity reserved by insert
    table.bytes -= entry.charge;
    // Last: the entry ends here and its block is parked for the next insert (or freed).
    Entry* const gone = table.ring[entry.ring_index].release();
    const std::size_t block_size = Entry::block_size(gone->storage_size);
    gone->~Entry();
    table.recycler.give(gone, block_size);
}

void Shard::evict_one(Table& table, Clock::time_point now) {
    // Terminates: one pass clears every reference bit, so the next one finds a victim.
    for (;;) {
        if (table.hand >= table.ring.size()) {
            table.hand = 0;
        }
        Entry* const candidate = table.ring[table.hand++].get();
        if (candidate == nullptr) {
            continue;
        }
        if (dead(*candidate, now) ||
            !candidate->referenced.exchange(false, std::memory_order_relaxed)) {
            remove(table, *candidate);
            evictions_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
}

void Shard::erase(const CacheKey& key) noexcept {
    table_.with([&](Table& table) {
        if (Entry* const found = table.index.find(KeyRef::of(key)); found != nullptr) {
            remove(table, *found);
            publish_gauges(table);
        }
    });
}

void Shard::flush() noexcept {
    table_.with([&](Table& table) {
        table.index.clear();
        table.ring.clear();
        table.free_slots.clear();
        table.hand = 0;
        table.bytes = 0;
        table.recycler.release_all();
        publish_gauges(table);
    });
}

void Shard::publish_gauges(const Table& table) noexcept {
    entries_.store(table.index.size(), std::memory_order_relaxed);
    bytes_.store(table.bytes, std::memory_order_relaxed);
    slots_hint_.store(table.index.slots_address(), std::memory_order_relaxed);
    slot_mask_hint_.store(table.index.slot_mask(), std::memory_order_relaxed);
}

void Shard::add_to(Stats& stats) const noexcept {
    stats.hits += hits_.load(std::memory_order_relaxed);
    stats.stale_hits += stale_hits_.load(std::memory_order_relaxed);
    stats.prefetches += prefetches_.load(std::memory_order_relaxed);
    stats.misses += misses_.load(std::memory_order_relaxed);
    stats.inserts += inserts_.load(std::memory_order_relaxed);
    stats.rejected += rejected_.load(std::memory_order_relaxed);
    stats.evictions += evictions_.load(std::memory_order_relaxed);
    stats.entries += entries_.load(std::memory_order_relaxed);
    stats.bytes += bytes_.load(std::memory_order_relaxed);
}

}  // namespace moat::cache
