// Per-client rate limiting: each client address (or the prefix it is counted by) has a token
// bucket, so one device looping on a name, or a flood, cannot take the resolver from the rest
// of the house.
//
// The bucket is kept as GCRA's "theoretical arrival time" (one instant per client): a query at
// `now` is admitted when the client's time is at most `burst - 1` intervals ahead of `now`, and
// moves it one interval (1 s / queries_per_second) further. That is a token bucket of `burst`
// tokens refilled at the rate, in 8 bytes and without floating point.
//
// Memory is fixed when constructed: a set-associative table of kClients buckets. A client that
// finds no bucket of its own takes the one in its set with the most tokens left (the least
// active), so a flood from ever new source addresses cannot grow the table or evict a busy
// client before the quiet ones; a spoofed flood with random sources is what the `truncate`
// action and a shorter prefix are for.
//
// Owned by the app, so buckets outlive the engines a reload replaces; used on the event loop's
// thread only, like Pauses.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "moat/core/clock.hpp"
#include "moat/core/ip.hpp"

namespace moat::engine {

/// What an over-limit query gets.
enum class RateLimitAction : std::uint8_t {
    drop,      ///< nothing: the client times out and retries later
    refused,   ///< REFUSED
    truncate,  ///< an empty answer with TC set: a real client asks again over TCP, which a
               ///< spoofed source cannot. Streams (TCP, DoT, DoH) are then not limited at all,
               ///< as in BIND's response rate limiting: their source is proven, and the
               ///< connection caps bound them.
};

struct RateLimitOptions {
    std::uint32_t queries_per_second = 0;  ///< per client; 0: no limit
    std::uint32_t burst = 1000;            ///< queries a client may send at once (at least 1)
    std::uint8_t ipv4_prefix = 32;         ///< clients are counted by this prefix of their address
    std::uint8_t ipv6_prefix = 128;
    RateLimitAction action = RateLimitAction::drop;
    std::vector<Cidr> exempt;  ///< never limited

    friend bool operator==(const RateLimitOptions&, const RateLimitOptions&) = default;
};

class RateLimiter {
public:
    static constexpr std::size_t kWays = 4;
    static constexpr std::size_t kSets = 1024;
    static constexpr std::size_t kClients = kWays * kSets;
    /// Clients named in one report at most; the rest are only counted.
    static constexpr std::size_t kReportedClients = 16;

    RateLimiter();

    /// New options. Buckets are kept when the prefixes stay the same (a reload that changes
    /// only the rate keeps who has used what); otherwise they start full.
    void configure(const RateLimitOptions& options);
    [[nodiscard]] const RateLimitOptions& options() const noexcept { return options_; }

    /// Whether queries from `address` are counted at all (the limit is on and the client is not
    /// exempt). Cheap: the caller reads the clock only when it is.
    [[nodiscard]] bool applies_to(const IpAddress& address) const noexcept;
    /// Takes one query from the client's bucket: false when it is over the limit.
    [[nodiscard]] bool admit(const IpAddress& address, Clock::time_point now) noexcept;

    /// What happened since the last report: the clients (their counted prefix) that went over
    /// the limit, and how many queries were limited. For the daemon's log.
    struct Report {
        std::vector<Cidr> newly_limited;
        std::size_t more_clients = 0;  ///< went over too, not named
        std::uint64_t limited_queries = 0;
    };
    [[nodiscard]] Report take_report();

private:
    struct Bucket {
        IpAddress key;
        bool used = false;
        bool limited = false;          ///< its last query was over the limit
        std::int64_t theoretical = 0;  ///< ns on the Clock; <= now: the bucket is full
    };

    [[nodiscard]] IpAddress counted_key(const IpAddress& address) const noexcept;
    [[nodiscard]] std::size_t set_of(const IpAddress& key) const noexcept;
    [[nodiscard]] Bucket& bucket_for(const IpAddress& key, std::int64_t now_ns) noexcept;
    void note_limited(Bucket& bucket);

    RateLimitOptions options_;
    std::int64_t interval_ns_ = 0;   ///< 1 s / queries_per_second
    std::int64_t tolerance_ns_ = 0;  ///< (burst - 1) intervals
    std::uint64_t seed_ = 0;         ///< per process, so nobody can aim addresses at one set
    std::vector<Bucket> buckets_;
    Report report_;
};

}  // namespace moat::engine
