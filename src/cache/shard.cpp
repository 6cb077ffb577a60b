#include "shard.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "moat/core/bytes.hpp"
#include "moat/wire/types.hpp"

namespace moat::cache {

namespace {

/// Octets charged per entry beyond its bytes: the Entry itself plus the hash node and bucket
/// pointer of the map and the ring slot (an estimate of libstdc++'s layout).
constexpr std::size_t kEntryOverhead = sizeof(Entry) + 64;

}  // namespace

bool KeyRefEqual::operator()(const KeyRef& a, const KeyRef& b) const noexcept {
    return a.hash == b.hash && a.qtype == b.qtype && a.qclass == b.qclass &&
           a.dnssec_ok == b.dnssec_ok && a.partition == b.partition &&
           a.name_length == b.name_length && std::memcmp(a.name, b.name, a.name_length) == 0;
}

tl::expected<Hit, Errc> Shard::lookup(const CacheKey& key, std::uint16_t id,
                                      std::span<std::uint8_t> out, LookupMode mode,
                                      Clock::time_point now) noexcept {
    const KeyRef probe = KeyRef::of(key);
    auto result = table_.with_shared([&](const Table& table) -> tl::expected<Hit, Errc> {
        const auto found = table.map.find(probe);
        if (found == table.map.end()) {
            return tl::unexpected(Errc::miss);
        }
        return serve(*found->second, key, id, out, mode, now);
    });
    if (!result) {
        misses_.fetch_add(1, std::memory_order_relaxed);
    } else if (result->stale) {
        stale_hits_.fetch_add(1, std::memory_order_relaxed);
    } else {
        hits_.fetch_add(1, std::memory_order_relaxed);
    }
    return result;
}

tl::expected<Hit, Errc> Shard::serve(const Entry& entry, const CacheKey& key, std::uint16_t id,
                                     std::span<std::uint8_t> out, LookupMode mode,
                                     Clock::time_point now) const noexcept {
    // `now` was read before the lock, so an entry inserted since can look younger than zero.
    const Clock::duration age = std::max(now - entry.inserted, Clock::duration::zero());
    bool stale = false;
    if (age >= entry.lifetime) {
        if (mode != LookupMode::stale || dead(entry, now)) {
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
    return Hit{answer.size(), stale};
}

bool Shard::dead(const Entry& entry, Clock::time_point now) const noexcept {
    const Clock::duration age = now - entry.inserted;
    if (age < entry.lifetime) {
        return false;
    }
    return !options_.serve_stale ||
           age - entry.lifetime >= std::chrono::seconds(options_.max_stale_age);
}

tl::expected<void, Errc> Shard::insert(const CacheKey& key, PreparedAnswer&& prepared) {
    const Clock::time_point now = clock_.now();
    auto entry = std::make_unique<Entry>();
    const auto name = key.name();
    entry->name_length = static_cast<std::uint8_t>(name.size());
    const std::span<const std::uint16_t> offsets = prepared.ttl_offsets;
    entry->ttl_count = offsets.size();
    entry->storage.resize(name.size() + offsets.size_bytes() + prepared.bytes.size());
    std::uint8_t* out = entry->storage.data();
    std::memcpy(out, name.data(), name.size());
    out += name.size();
    if (!offsets.empty()) {
        std::memcpy(out, offsets.data(), offsets.size_bytes());
        out += offsets.size_bytes();
    }
    std::memcpy(out, prepared.bytes.data(), prepared.bytes.size());
    entry->key = KeyRef::of(key);
    entry->key.name = entry->storage.data();  // the entry's own copy, not the caller's key
    entry->inserted = now;
    entry->lifetime = std::chrono::seconds(prepared.lifetime);
    entry->charge = entry->storage.size() + kEntryOverhead;
    if (entry->charge > max_bytes_) {
        count_rejected();
        return tl::unexpected(Errc::too_large);
    }

    table_.with([&](Table& table) {
        // Everything that may throw (growing the ring, the map node) happens before the table
        // changes, or leaves it consistent: remove() never reallocates free_slots, whose
        // capacity follows the ring's.
        if (table.ring.size() == table.ring.capacity()) {
            table.ring.reserve(std::max<std::size_t>(16, table.ring.capacity() * 2));
        }
        table.free_slots.reserve(table.ring.capacity());
        if (const auto old = table.map.find(KeyRef::of(key)); old != table.map.end()) {
            remove(table, *old->second);
        }
        while (table.bytes + entry->charge > max_bytes_ && !table.map.empty()) {
            evict_one(table, now);
        }
        Entry* const stored = entry.get();
        table.map.emplace(stored->key, std::move(entry));
        if (table.free_slots.empty()) {
            stored->ring_index = table.ring.size();
            table.ring.push_back(stored);  // within the capacity reserved above
        } else {
            stored->ring_index = table.free_slots.back();
            table.free_slots.pop_back();
            table.ring[stored->ring_index] = stored;
        }
        table.bytes += stored->charge;
        publish_gauges(table);
    });
    inserts_.fetch_add(1, std::memory_order_relaxed);
    return {};
}

void Shard::remove(Table& table, Entry& entry) {
    table.ring[entry.ring_index] = nullptr;
    table.free_slots.push_back(entry.ring_index);
    table.bytes -= entry.charge;
    // Erasing destroys the entry and the name its key points at: find by a copy, erase by
    // iterator.
    const KeyRef key = entry.key;
    table.map.erase(table.map.find(key));
}

void Shard::evict_one(Table& table, Clock::time_point now) {
    // Terminates: one pass clears every reference bit, so the next one finds a victim.
    for (;;) {
        if (table.hand >= table.ring.size()) {
            table.hand = 0;
        }
        Entry* const candidate = table.ring[table.hand++];
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

void Shard::flush() noexcept {
    table_.with([&](Table& table) {
        table.map.clear();
        table.ring.clear();
        table.free_slots.clear();
        table.hand = 0;
        table.bytes = 0;
        publish_gauges(table);
    });
}

void Shard::publish_gauges(const Table& table) noexcept {
    entries_.store(table.map.size(), std::memory_order_relaxed);
    bytes_.store(table.bytes, std::memory_order_relaxed);
}

void Shard::add_to(Stats& stats) const noexcept {
    stats.hits += hits_.load(std::memory_order_relaxed);
    stats.stale_hits += stale_hits_.load(std::memory_order_relaxed);
    stats.misses += misses_.load(std::memory_order_relaxed);
    stats.inserts += inserts_.load(std::memory_order_relaxed);
    stats.rejected += rejected_.load(std::memory_order_relaxed);
    stats.evictions += evictions_.load(std::memory_order_relaxed);
    stats.entries += entries_.load(std::memory_order_relaxed);
    stats.bytes += bytes_.load(std::memory_order_relaxed);
}

}  // namespace moat::cache
