// A small, fixed engine for the fuzz targets that run whole queries (fuzz_pipeline,
// fuzz_tcp_framing), so both fuzz the engine the daemon runs rather than an empty one: a
// blocklist snapshot made of every list format (hosts, domains, AdBlock with an exception and
// $important, Pi-hole regex, an allowlist), local records with generated PTRs, a client group
// with its own lists, schedule, blocking mode, AAAA filter, cache partition and a pause, two
// conditional routes, rebinding protection, ECS passed through, serve-stale and a rate limit of
// one query a second (answered with TC, so a limited query is still answered).
//
// The snapshot and the local zone are built once per process (they never change). Each input
// gets its own World (clock at zero, empty cache, new engine), so a crash reproduces from its
// input alone. Everything is made from constants, so a failure here is a bug in this file.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz_check.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/core/ip.hpp"
#include "moat/engine/client.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/local_zone.hpp"
#include "moat/engine/options.hpp"
#include "moat/engine/pauses.hpp"
#include "moat/engine/rate_limiter.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/wire/name.hpp"

namespace moat::fuzz {

/// A client of each kind the engine tells apart.
inline engine::Client default_group_client(engine::Transport t) {
    return {IpAddress::v4_of(192, 168, 1, 50), 53000, t};
}
inline engine::Client kids_group_client(engine::Transport t) {
    return {IpAddress::v4_of(10, 1, 2, 3), 53001, t};
}
inline engine::Client refused_client(engine::Transport t) {
    return {IpAddress::v4_of(203, 0, 113, 9), 53002, t};
}
/// ::ffff:192.168.1.51, as a dual-stack socket reports an IPv4 client.
inline engine::Client mapped_client(engine::Transport t) {
    IpAddress ip{{}, true};
    ip.bytes[10] = 0xFF;
    ip.bytes[11] = 0xFF;
    ip.bytes[12] = 192;
    ip.bytes[13] = 168;
    ip.bytes[14] = 1;
    ip.bytes[15] = 51;
    return {ip, 53003, t};
}

inline wire::Name fixed_name(std::string_view text) {
    auto name = wire::Name::from_text(text);
    MOAT_FUZZ_CHECK(name.has_value(), std::string(text));
    return *name;
}

/// List ids of the fixed snapshot.
enum FixedList : std::uint32_t { hosts = 1, adblock, regex, domains, allow };

inline std::shared_ptr<const filter::Snapshot> fixed_snapshot() {
    using filter::ListFormat;
    using filter::ListKind;
    filter::Compiler c;
    const auto add = [&](FixedList id, std::string_view name, ListKind kind, ListFormat format,
                         bool subdomains, std::string_view text) {
        MOAT_FUZZ_CHECK(c.add_text({id, std::string(name), kind, format, subdomains}, text));
    };
    add(hosts, "ads.hosts", ListKind::block, ListFormat::hosts, false,
        "# comment\n0.0.0.0 ads.example\n127.0.0.1 tracker.test metrics.tracker.test\n"
        "::1 localhost\n");
    add(adblock, "filters.adblock", ListKind::block, ListFormat::adblock, false,
        "[Adblock Plus]\n! comment\n||doubleclick.test^\n@@||ok.doubleclick.test^\n"
        "||bad.test^$important\n@@||bad.test^\n");
    add(regex, "pihole.regex", ListKind::block, ListFormat::regex, false,
        "^telemetry[0-9]*\\.\n(^|\\.)evil\\.(test|example)$\n");
    add(domains, "onlydomains.txt", ListKind::block, ListFormat::domains, true,
        "cname-target.test\nblocked.test\n");
    add(allow, "allow.txt", ListKind::allow, ListFormat::auto_detect, false,
        "allowed.blocked.test\n");
    auto built = std::move(c).build();
    MOAT_FUZZ_CHECK(built.has_value());
    return *built;
}

inline engine::LocalZone fixed_local_zone() {
    engine::LocalZone zone;
    MOAT_FUZZ_CHECK(zone.add_hosts_text("192.168.1.10 nas.lan nas\nfd00::10 nas.lan\n").empty());
    zone.add_name_record(fixed_name("www.lan"), wire::RrType::cname, fixed_name("nas.lan"));
    zone.add_address(fixed_name("router.home.arpa"), IpAddress::v4_of(192, 168, 1, 1));
    // Longer than one TXT string (255 octets), so it is split.
    zone.add_txt(fixed_name("txt.lan"), std::string(300, 't'));
    zone.generate_reverse();
    return zone;
}

/// Blocking paused for the kids group during the first hour of the (fake) clock.
inline const engine::Pauses& fixed_pauses() {
    static const engine::Pauses kPauses = [] {
        engine::Pauses p;
        p.pause("kids", Clock::time_point(std::chrono::hours(1)));
        return p;
    }();
    return kPauses;
}

/// One query a second per client, a burst of one; over it, an empty answer with TC (UDP only).
/// One limiter per process (its 4,096 buckets cost more to allocate than the rest of a World),
/// emptied for each input: configure() starts every bucket full when the prefixes change.
inline engine::RateLimiter& fresh_rate_limiter() {
    static engine::RateLimiter limiter;
    engine::RateLimitOptions fixed;
    fixed.queries_per_second = 1;
    fixed.burst = 1;
    fixed.action = engine::RateLimitAction::truncate;
    engine::RateLimitOptions other_prefix = fixed;
    other_prefix.ipv4_prefix = 24;
    limiter.configure(other_prefix);
    limiter.configure(fixed);
    return limiter;
}

inline engine::EngineOptions fixed_options(const Clock& clock, engine::RateLimiter& limiter) {
    engine::EngineOptions o;
    o.allowed_clients = {{IpAddress::v4_of(192, 168, 0, 0), 16},
                         {IpAddress::v4_of(10, 0, 0, 0), 8}};
    o.conditional = {{{fixed_name("corp.example")}}, {{fixed_name("10.in-addr.arpa")}}};
    o.strip_ecs = false;  // the client's ECS is copied into the upstream query
    o.rebind_protection = true;
    o.rebind_allowed = {fixed_name("home.arpa")};
    engine::GroupOptions kids;
    kids.name = "kids";
    kids.clients = {{IpAddress::v4_of(10, 0, 0, 0), 8}};
    kids.every_list = false;
    kids.lists = {hosts, adblock, regex};
    kids.schedule = {{.lists = {regex}, .days = 0x7F, .from_minute = 60, .to_minute = 120}};
    kids.blocking_mode = engine::BlockingMode::nxdomain;
    kids.cache_partition = 1;
    kids.filter_aaaa = true;
    o.groups = {kids};
    o.default_group.name = "default";
    o.clock = &clock;
    o.pauses = &fixed_pauses();
    o.rate_limiter = &limiter;
    return o;
}

/// The engine of one input, with its own clock and cache and an emptied rate limiter.
struct World {
    /// `optimistic`: the cache answers expired entries at once (cache.optimistic).
    explicit World(const filter::SnapshotPublisher& snapshots, bool optimistic = false)
        : cache(std::make_shared<cache::Cache>(clock, cache_options(optimistic))),
          engine(fixed_options(clock, fresh_rate_limiter()), local_zone(), snapshots, cache) {}

    static cache::Options cache_options(bool optimistic) {
        cache::Options o;
        o.shards = 1;
        o.max_bytes = std::size_t{256} << 10U;  // small enough for eviction to happen
        o.serve_stale = true;
        o.optimistic = optimistic;
        return o;
    }
    static const engine::LocalZone& local_zone() {
        static const engine::LocalZone kZone = fixed_local_zone();
        return kZone;
    }

    ManualClock clock;
    std::shared_ptr<cache::Cache> cache;
    engine::Engine engine;
};

}  // namespace moat::fuzz
