// What the engine did with each query, counted. Plain counters: the engine runs on one thread;
// readers on other threads get relaxed, possibly slightly stale values.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace moat::engine {

enum class Outcome : std::uint8_t {
    forwarded,     ///< answered by an upstream
    cached,        ///< answered from the cache
    stale,         ///< an expired cache entry: every upstream failed, or cache.optimistic
    blocked,       ///< a blocklist rule matched
    local,         ///< local records, localhost, private reverse zones
    refused,       ///< access control, or a blocking mode of "refused" (counted as blocked)
    formerr,       ///< malformed query answered FORMERR (or BADVERS)
    notimp,        ///< opcode or query type we do not serve
    servfail,      ///< every upstream failed
    dropped,       ///< not answered at all
    rate_limited,  ///< over the client's rate limit (dropped, REFUSED or TC by its action)
    pending,       ///< sent upstream, not finished yet (the decision of decide())
};
inline constexpr std::size_t kOutcomeCount = 12;

[[nodiscard]] const char* to_text(Outcome outcome) noexcept;

class Stats {
public:
    void add(Outcome outcome) noexcept {
        counts_[static_cast<std::size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t get(Outcome outcome) const noexcept {
        return counts_[static_cast<std::size_t>(outcome)].load(std::memory_order_relaxed);
    }

private:
    std::array<std::atomic<std::uint64_t>, kOutcomeCount> counts_{};
};

}  // namespace moat::engine
