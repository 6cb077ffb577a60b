#include "moat/cache/cache.hpp"

#include <algorithm>
#include <bit>
#include <utility>

#include "prepared_answer.hpp"
#include "shard.hpp"

namespace moat::cache {

namespace {

constexpr std::size_t kMaxShards = 256;

Options corrected(Options options) noexcept {
    options.shards = std::bit_ceil(std::clamp<std::size_t>(options.shards, 1, kMaxShards));
    options.max_ttl = std::max(options.max_ttl, options.min_ttl);
    return options;
}

/// Per thread and reused: preparing takes nothing from the heap once its vectors have grown.
PreparedAnswer& prepared_of_this_thread() {
    thread_local PreparedAnswer prepared;
    return prepared;
}

}  // namespace

Cache::Cache(const Clock& clock, const Options& options)
    : clock_(clock), options_(corrected(options)) {
    const std::size_t count = options_.shards;
    shard_shift_ = 64U - static_cast<unsigned>(std::countr_zero(count));
    shards_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        shards_.push_back(std::make_unique<Shard>(clock, options_, options_.max_bytes / count));
    }
}

Cache::~Cache() = default;

tl::expected<Hit, Errc> Cache::lookup(const CacheKey& key, std::uint16_t id,
                                      std::span<std::uint8_t> out, LookupMode mode) noexcept {
    return shard_for(key.hash()).lookup(key, id, out, mode, clock_.now());
}

tl::expected<Hit, Errc> Cache::lookup(const CacheKey& key, std::uint16_t id,
                                      std::span<std::uint8_t> out, Clock::time_point now,
                                      LookupMode mode) noexcept {
    return shard_for(key.hash()).lookup(key, id, out, mode, now);
}

tl::expected<Hit, Errc> Cache::lookup_if_passed(const CacheKey& key, std::uint16_t id,
                                                std::span<std::uint8_t> out, LookupMode mode,
                                                std::uint32_t mark) noexcept {
    if (mark == 0) {
        return tl::unexpected(Errc::unchecked);  // no snapshot vouches with 0
    }
    return shard_for(key.hash()).lookup(key, id, out, mode, clock_.now(), mark, true);
}

tl::expected<Hit, Errc> Cache::lookup_noting_pass(const CacheKey& key, std::uint16_t id,
                                                  std::span<std::uint8_t> out, LookupMode mode,
                                                  std::uint32_t mark) noexcept {
    return shard_for(key.hash()).lookup(key, id, out, mode, clock_.now(), mark, false);
}

void Cache::prefetch(const CacheKey& key) const noexcept {
    shard_for(key.hash()).prefetch(key.hash());
}

bool Cache::prefetch_entry(const CacheKey& key) const noexcept {
    return shard_for(key.hash()).prefetch_entry(key.hash());
}

void Cache::note_miss(const CacheKey& key) noexcept { shard_for(key.hash()).note_miss(); }

tl::expected<void, Errc> Cache::insert(const CacheKey& key, std::span<const std::uint8_t> answer) {
    Shard& shard = shard_for(key.hash());
    PreparedAnswer& prepared = prepared_of_this_thread();
    if (auto ok = prepare_answer(key, answer, options_, prepared); !ok) {
        shard.count_rejected();
        return tl::unexpected(ok.error());
    }
    return shard.insert(key, prepared);
}

tl::expected<void, Errc> Cache::insert(const CacheKey& key, std::span<const std::uint8_t> answer,
                                       const RecordWalk& walk) {
    Shard& shard = shard_for(key.hash());
    PreparedAnswer& prepared = prepared_of_this_thread();
    if (auto ok = prepare_walked_answer(key, answer, walk, options_, prepared); !ok) {
        shard.count_rejected();
        return tl::unexpected(ok.error());
    }
    return shard.insert(key, prepared);
}

void Cache::erase(const CacheKey& key) noexcept { shard_for(key.hash()).erase(key); }

void Cache::flush() noexcept {
    for (const auto& shard : shards_) {
        shard->flush();
    }
}

Stats Cache::stats() const noexcept {
    Stats stats;
    for (const auto& shard : shards_) {
        shard->add_to(stats);
    }
    return stats;
}

}  // namespace moat::cache
