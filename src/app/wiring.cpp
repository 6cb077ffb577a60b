#include "wiring.hpp"

#include <fstream>
#include <sstream>

#include "group_wiring.hpp"
#include "moat/config/values.hpp"
#include "moat/wire/name.hpp"

namespace moat::app {
namespace {

std::uint32_t seconds(std::chrono::seconds s) { return static_cast<std::uint32_t>(s.count()); }

upstream::ServerAddress server_of(const config::Endpoint& e) {
    upstream::ServerAddress a;
    a.address = e.address;
    a.port = e.port;
    return a;
}

upstream::ServerAddress server_of(const config::UpstreamServer& s,
                                  const std::vector<config::TlsPin>& pins) {
    upstream::ServerAddress a;
    a.address = s.address.value_or(IpAddress{});
    a.resolve = !s.address.has_value();
    a.port = s.port;
    a.name = s.name;
    a.path = s.path;
    switch (s.protocol) {
        case config::UpstreamProtocol::dns: a.protocol = upstream::Protocol::udp; break;
        case config::UpstreamProtocol::tls: a.protocol = upstream::Protocol::tls; break;
        case config::UpstreamProtocol::https: a.protocol = upstream::Protocol::https; break;
    }
    if (a.protocol != upstream::Protocol::udp) {
        a.text = s.text;
        for (const config::TlsPin& p : pins) {
            if (p.name == s.name) {
                a.pins.insert(a.pins.end(), p.sha256.begin(), p.sha256.end());
            }
        }
    }
    return a;
}

}  // namespace

engine::BlockingMode engine_mode(config::BlockingMode mode) noexcept {
    switch (mode) {
        case config::BlockingMode::null_ip: return engine::BlockingMode::null_ip;
        case config::BlockingMode::nxdomain: return engine::BlockingMode::nxdomain;
        case config::BlockingMode::refused: return engine::BlockingMode::refused;
        case config::BlockingMode::custom: return engine::BlockingMode::custom;
    }
    return engine::BlockingMode::null_ip;
}

std::vector<config::UpstreamServer> fallback_upstreams() {
    std::vector<config::UpstreamServer> servers(2);
    servers[0].address = IpAddress::v4_of(9, 9, 9, 9);
    servers[1].address = IpAddress::v4_of(149, 112, 112, 112);
    return servers;
}

engine::EngineOptions engine_options(const config::Config& c) {
    engine::EngineOptions o;
    o.allowed_clients = c.access.allow;
    o.blocking.mode = engine_mode(c.blocking.mode);
    o.blocking.custom_ipv4 = c.blocking.custom_ipv4;
    o.blocking.custom_ipv6 = c.blocking.custom_ipv6;
    o.blocking.ttl = seconds(c.blocking.blocked_ttl);
    o.blocking.cname_inspection = c.blocking.cname_inspection;
    o.blocking.ede_list_name = c.blocking.ede_list_name;
    o.block_icloud_private_relay = c.blocking.block_icloud_private_relay;
    o.rebind_protection = c.blocking.rebind_protection;
    for (const std::string& d : c.blocking.rebind_allow) {
        if (auto name = wire::Name::from_text(d)) {
            o.rebind_allowed.push_back(*name);
        }
    }
    for (const config::ConditionalForward& f : c.upstream.conditional) {
        engine::ConditionalRoute route;
        for (const std::string& d : f.domains) {
            if (auto name = wire::Name::from_text(d)) {
                route.domains.push_back(wire::Name::from_view_lower(name->view()));
            }
        }
        o.conditional.push_back(std::move(route));
    }
    o.strip_ecs = c.edns.strip_ecs;
    o.minimal_any = c.access.minimal_any;
    o.local_ttl = seconds(c.local.ttl);
    add_groups(c, o);
    return o;
}

upstream::Options upstream_options(const config::Config& c) {
    upstream::Options o;
    upstream::Route main;
    const auto servers = c.upstream.servers.empty() ? fallback_upstreams() : c.upstream.servers;
    for (const config::UpstreamServer& e : servers) {
        main.servers.push_back(server_of(e, c.upstream.tls_pins));
    }
    o.routes.push_back(std::move(main));
    for (const config::ConditionalForward& f : c.upstream.conditional) {
        upstream::Route r;
        for (const config::Endpoint& e : f.servers) {
            r.servers.push_back(server_of(e));
        }
        o.routes.push_back(std::move(r));
    }
    for (const auto& servers_of_group : group_routes(c)) {
        upstream::Route r;
        for (const config::Endpoint& e : servers_of_group) {
            r.servers.push_back(server_of(e));
        }
        o.routes.push_back(std::move(r));
    }
    switch (c.upstream.strategy) {
        case config::UpstreamStrategy::failover: o.strategy = upstream::Strategy::failover; break;
        case config::UpstreamStrategy::fastest: o.strategy = upstream::Strategy::fastest; break;
        case config::UpstreamStrategy::hedge: o.strategy = upstream::Strategy::hedge; break;
    }
    o.timeout = c.upstream.timeout;
    o.total_timeout = c.upstream.total_timeout;
    o.hedge_delay = c.upstream.hedge_delay;
    for (const config::Endpoint& e : c.upstream.bootstrap) {
        o.bootstrap.push_back(server_of(e));
    }
    if (o.bootstrap.empty()) {  // the plain servers resolve the names of the encrypted ones
        for (const upstream::ServerAddress& a : o.routes[0].servers) {
            if (a.protocol == upstream::Protocol::udp) {
                o.bootstrap.push_back(a);
            }
        }
    }
    o.tls_ca_file = c.upstream.tls_ca_file;
    return o;
}

engine::RateLimitOptions rate_limit_options(const config::Config& c) {
    const config::RateLimitConfig& r = c.rate_limit;
    engine::RateLimitOptions o;
    o.queries_per_second = r.queries_per_second;
    o.burst = r.burst;
    o.ipv4_prefix = static_cast<std::uint8_t>(r.ipv4_prefix);  // 8..32 by the schema
    o.ipv6_prefix = static_cast<std::uint8_t>(r.ipv6_prefix);  // 32..128
    switch (r.action) {
        case config::RateLimitAction::drop: o.action = engine::RateLimitAction::drop; break;
        case config::RateLimitAction::refused: o.action = engine::RateLimitAction::refused; break;
        case config::RateLimitAction::truncate: o.action = engine::RateLimitAction::truncate; break;
    }
    o.exempt = r.exempt;
    return o;
}

server::ServerOptions server_options(const config::Config& c) {
    server::ServerOptions o;
    const auto addresses = [](const std::vector<config::Endpoint>& from) {
        std::vector<server::ListenAddress> to;
        to.reserve(from.size());
        for (const config::Endpoint& e : from) {
            to.push_back({e.address, e.port});
        }
        return to;
    };
    o.listen = addresses(c.server.listen);
    o.tcp_idle_timeout = c.tcp.idle_timeout;
    o.tcp_max_connections = c.tcp.max_connections;
    o.tcp_max_connections_per_client = c.tcp.max_connections_per_client;
    o.dot = addresses(c.server.dot);
    o.doh = addresses(c.server.doh);
    o.doh_plain = addresses(c.server.doh_plain);
    o.doh_path = c.server.doh_path;
    o.tls_certificate = c.server.tls_certificate;
    o.tls_private_key = c.server.tls_private_key;
    o.proxy_protocol_from = c.server.proxy_protocol_from;
    return o;
}

cache::Options cache_options(const config::Config& c) {
    cache::Options o;
    o.max_bytes = static_cast<std::size_t>(c.cache.size);
    o.min_ttl = seconds(c.cache.min_ttl);
    o.max_ttl = seconds(c.cache.max_ttl);
    o.max_negative_ttl = c.cache.negative ? seconds(c.cache.negative_max_ttl) : 0;
    o.serve_stale = c.cache.serve_stale;
    o.stale_ttl = seconds(c.cache.stale_ttl);
    o.max_stale_age = seconds(c.cache.stale_max_age);
    o.prefetch = c.cache.prefetch;
    o.optimistic = c.cache.optimistic;
    return o;
}

engine::LocalZone local_zone(const config::Config& c, std::vector<std::string>& problems) {
    engine::LocalZone zone;
    for (const config::LocalRecord& r : c.local.records) {
        auto name = wire::Name::from_text(r.name);
        if (!name) {
            continue;  // the config loader validated every name; nothing to do here
        }
        switch (r.type) {
            case config::RecordType::a:
            case config::RecordType::aaaa:
                if (auto ip = config::parse_ip(r.value)) {
                    zone.add_address(*name, *ip);
                }
                break;
            case config::RecordType::cname:
            case config::RecordType::ptr:
                if (auto target = wire::Name::from_text(r.value)) {
                    zone.add_name_record(*name,
                                         r.type == config::RecordType::cname ? wire::RrType::cname
                                                                             : wire::RrType::ptr,
                                         *target);
                }
                break;
            case config::RecordType::txt: zone.add_txt(*name, r.value); break;
        }
    }
    if (!c.local.hosts_file.empty()) {
        std::ifstream in(c.local.hosts_file, std::ios::binary);
        if (!in) {
            problems.push_back("local.hosts_file: cannot open " + c.local.hosts_file);
        } else {
            std::ostringstream text;
            text << in.rdbuf();
            for (const auto& bad : zone.add_hosts_text(text.str())) {
                problems.push_back(c.local.hosts_file + ":" + std::to_string(bad.line) + ": " +
                                   bad.reason);
            }
        }
    }
    zone.generate_reverse();
    return zone;
}

}  // namespace moat::app
