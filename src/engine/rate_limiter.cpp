#include "moat/engine/rate_limiter.hpp"

#include <algorithm>
#include <cstring>
#include <random>

namespace moat::engine {
namespace {

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;

/// The address with every bit beyond `prefix` cleared.
IpAddress masked(const IpAddress& address, std::uint8_t prefix) noexcept {
    IpAddress out = address;
    const std::size_t bits = address.v6 ? 128 : 32;
    for (std::size_t bit = std::min<std::size_t>(prefix, bits); bit < bits; ++bit) {
        out.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80U >> (bit % 8)));
    }
    return out;
}

/// A 64-bit mix (the finaliser of MurmurHash3): every input bit moves every output bit.
std::uint64_t mix(std::uint64_t x) noexcept {
    x ^= x >> 33U;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33U;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33U;
    return x;
}

}  // namespace

RateLimiter::RateLimiter() : seed_(std::random_device{}()), buckets_(kClients) {
    report_.newly_limited.reserve(kReportedClients);  // no allocation on the query path
}

void RateLimiter::configure(const RateLimitOptions& options) {
    const bool same_keys =
        options.ipv4_prefix == options_.ipv4_prefix && options.ipv6_prefix == options_.ipv6_prefix;
    options_ = options;
    options_.burst = std::max<std::uint32_t>(options_.burst, 1);
    options_.ipv4_prefix = std::min<std::uint8_t>(options_.ipv4_prefix, 32);
    options_.ipv6_prefix = std::min<std::uint8_t>(options_.ipv6_prefix, 128);
    if (options_.queries_per_second != 0) {
        interval_ns_ = std::max<std::int64_t>(kNanosPerSecond / options_.queries_per_second, 1);
        tolerance_ns_ = interval_ns_ * (static_cast<std::int64_t>(options_.burst) - 1);
    }
    if (!same_keys) {
        std::fill(buckets_.begin(), buckets_.end(), Bucket{});
    }
}

bool RateLimiter::applies_to(const IpAddress& address) const noexcept {
    if (options_.queries_per_second == 0) {
        return false;
    }
    const IpAddress plain = address.unmapped();
    return std::none_of(options_.exempt.begin(), options_.exempt.end(),
                        [&](const Cidr& c) { return c.contains(plain); });
}

IpAddress RateLimiter::counted_key(const IpAddress& address) const noexcept {
    const IpAddress plain = address.unmapped();
    return masked(plain, plain.v6 ? options_.ipv6_prefix : options_.ipv4_prefix);
}

std::size_t RateLimiter::set_of(const IpAddress& key) const noexcept {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    std::memcpy(&high, key.bytes.data(), sizeof high);
    std::memcpy(&low, key.bytes.data() + sizeof high, sizeof low);
    const std::uint64_t h = mix(high ^ seed_ ^ (key.v6 ? 1U : 0U)) ^ mix(low + seed_);
    return static_cast<std::size_t>(h % kSets);
}

RateLimiter::Bucket& RateLimiter::bucket_for(const IpAddress& key, std::int64_t now_ns) noexcept {
    Bucket* const set = buckets_.data() + set_of(key) * kWays;
    Bucket* victim = nullptr;  // an empty bucket, else the one with the most tokens left
    for (std::size_t way = 0; way < kWays; ++way) {
        Bucket& b = set[way];
        if (b.used && b.key == key) {
            return b;
        }
        const bool better =
            victim == nullptr || (victim->used && (!b.used || b.theoretical < victim->theoretical));
        if (better) {
            victim = &b;
        }
    }
    *victim = Bucket{key, true, false, now_ns};  // a new client starts with a full bucket
    return *victim;
}

bool RateLimiter::admit(const IpAddress& address, Clock::time_point now) noexcept {
    const std::int64_t now_ns = now.time_since_epoch().count();
    Bucket& b = bucket_for(counted_key(address), now_ns);
    const std::int64_t theoretical = std::max(b.theoretical, now_ns);
    if (theoretical - now_ns > tolerance_ns_) {
        note_limited(b);
        return false;
    }
    b.theoretical = theoretical + interval_ns_;
    b.limited = false;
    return true;
}

void RateLimiter::note_limited(Bucket& bucket) {
    ++report_.limited_queries;
    if (bucket.limited) {
        return;
    }
    bucket.limited = true;
    if (report_.newly_limited.size() < kReportedClients) {
        const std::uint8_t prefix = bucket.key.v6 ? options_.ipv6_prefix : options_.ipv4_prefix;
        report_.newly_limited.push_back(Cidr{bucket.key, prefix});
    } else {
        ++report_.more_clients;
    }
}

RateLimiter::Report RateLimiter::take_report() {
    Report out = std::move(report_);
    report_ = Report{};
    report_.newly_limited.reserve(kReportedClients);
    return out;
}

}  // namespace moat::engine
