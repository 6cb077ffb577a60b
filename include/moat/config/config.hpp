// The configuration of dnsmoat as a tree of plain structs, with the documented defaults as
// member initialisers (docs/configuration.md describes every field; config/dnsmoat.toml is the
// commented example).
//
// A Config returned by the loader is fully validated: addresses, ports, names, ranges and enums
// are checked, so the app maps it onto each module's Options without checking again. Modules
// never see this type (docs/ARCHITECTURE.md, rule 4). Everything is owned by value.
//
// Room for later issues: [server] `dot` and `doh` are reserved for encrypted DNS and rejected
// today.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "moat/config/values.hpp"
#include "moat/core/mac.hpp"

namespace moat::config {

/// [server]: where dnsmoat listens for plain DNS (UDP and TCP on each address).
struct ServerConfig {
    /// At least one; IPv4 "ADDR:PORT" or "[IPv6]:PORT". Port 53 is for the packaged service.
    std::vector<Endpoint> listen{
        Endpoint{IpAddress::v4_of(127, 0, 0, 1), 5353},
        Endpoint{IpAddress{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, true}, 5353},
    };
    /// Unix socket for `dnsmoat pause` / `resume`; "" turns it off. Mode 0660.
    std::string control_socket = "/run/dnsmoat/control.sock";
    /// DNS over TLS (RFC 7858) listeners; port defaults to 853. Need the two TLS files.
    std::vector<Endpoint> dot;
    /// DNS over HTTPS (RFC 8484) listeners; port defaults to 443. Need the two TLS files.
    std::vector<Endpoint> doh;
    /// DoH over plain HTTP, for a reverse proxy that terminates TLS; port defaults to 80.
    std::vector<Endpoint> doh_plain;
    std::string doh_path = "/dns-query";  ///< starts with '/'
    /// Started as root (outside systemd), the daemon binds its sockets and then runs as this
    /// user; "" keeps running as root. Not used when started as another user.
    std::string user = "dnsmoat";
    /// PEM certificate chain and private key of the DoT and DoH listeners (re-read on SIGHUP).
    std::string tls_certificate;
    std::string tls_private_key;
    /// Sources whose TCP, DoT and DoH connections start with a PROXY protocol v2 header.
    std::vector<Cidr> proxy_protocol_from;

    friend bool operator==(const ServerConfig&, const ServerConfig&) = default;
};

enum class UpstreamStrategy : std::uint8_t {
    failover,  ///< in order, skipping the unhealthy
    fastest,   ///< lowest smoothed RTT, with occasional probes of the others
    hedge,     ///< in order, the next one also asked once hedge_delay passes without an answer
};

enum class UpstreamProtocol : std::uint8_t {
    dns,    ///< plain DNS, UDP with TCP for truncated answers
    tls,    ///< DNS over TLS (RFC 7858)
    https,  ///< DNS over HTTPS (RFC 8484), HTTP/2
};

/// One entry of upstream.servers: "ADDR[:PORT]", "tls://ADDR[:PORT]#NAME", "tls://NAME[:PORT]",
/// "https://HOST[:PORT]/PATH" (HOST a name or an address) or "https://ADDR[:PORT]/PATH#NAME".
struct UpstreamServer {
    UpstreamProtocol protocol = UpstreamProtocol::dns;
    /// Absent when the server is given by name: resolved through upstream.bootstrap.
    std::optional<IpAddress> address;
    std::uint16_t port = 53;
    std::string name;  ///< TLS and HTTPS: the name its certificate must carry (and SNI)
    std::string path;  ///< HTTPS: the URL path, "/dns-query" by default
    std::string text;  ///< as written, for logs and metrics

    friend bool operator==(const UpstreamServer&, const UpstreamServer&) = default;
};

/// Reads an upstream.servers entry; the error says what is wrong with it.
tl::expected<UpstreamServer, std::string> parse_upstream_server(std::string_view text);

/// [[upstream.tls_pins]]: the certificate of the encrypted upstreams named `name` must carry one
/// of these public keys (SHA-256 of the SubjectPublicKeyInfo, base64, as HPKP and curl write).
struct TlsPin {
    std::string name;
    std::vector<std::string> sha256;

    friend bool operator==(const TlsPin&, const TlsPin&) = default;
};

/// [[upstream.conditional]]: queries for `domains` (and their subdomains) go to `servers`.
struct ConditionalForward {
    std::vector<std::string> domains;  ///< at least one; lower-case, no trailing dot
    std::vector<Endpoint> servers;     ///< at least one; port defaults to 53

    friend bool operator==(const ConditionalForward&, const ConditionalForward&) = default;
};

/// [upstream]: where cache misses are forwarded.
struct UpstreamConfig {
    /// Port defaults to 53 (853 for tls://, 443 for https://). Empty by default: the example
    /// config names public resolvers, and with none configured the app decides the fallback
    /// (see docs/configuration.md).
    std::vector<UpstreamServer> servers;
    UpstreamStrategy strategy = UpstreamStrategy::failover;
    Duration timeout{2000};        ///< per attempt on one server, 10ms..60s
    Duration total_timeout{5000};  ///< whole query before SERVFAIL, >= timeout, up to 120s
    /// hedge: how long before the next server is asked too; absent: the server's p90 RTT.
    std::optional<Duration> hedge_delay;
    /// Plain DNS servers that resolve the names of encrypted upstreams (never the system's
    /// resolver, which may be dnsmoat itself). Empty: the plain servers of `servers`.
    std::vector<Endpoint> bootstrap;
    /// PEM file of the CAs encrypted upstreams are verified against; "" for the system store.
    std::string tls_ca_file;
    std::vector<TlsPin> tls_pins;
    std::vector<ConditionalForward> conditional;

    friend bool operator==(const UpstreamConfig&, const UpstreamConfig&) = default;
};

enum class ListFormat : std::uint8_t { automatic, hosts, domains, adblock, regex };

/// [[blocklists]] / [[allowlists]]: one list source. Exactly one of `path` and `url`.
struct ListConfig {
    std::string name;  ///< required, unique among lists of the same kind
    std::string path;  ///< a local file (relative paths: to the working directory)
    std::string url;   ///< http(s):// source, downloaded into ListsConfig::state_dir
    Duration refresh{std::chrono::hours{24}};  ///< for `url` lists: 1m..30d
    ListFormat format = ListFormat::automatic;
    /// Override of the format's exact-vs-subdomain semantics; unset: the format decides
    /// (hosts and plain domains: exact; AdBlock `||` and `*.name`: name and subdomains).
    std::optional<bool> subdomains;
    bool enabled = true;

    friend bool operator==(const ListConfig&, const ListConfig&) = default;
};

/// [lists]: how `url` lists are downloaded and kept.
struct ListsConfig {
    /// Where the last good copy of each downloaded list and its status are kept.
    std::string state_dir = "/var/lib/dnsmoat/lists";
    std::uint64_t max_size = 64ULL << 20U;  ///< bytes one download may have, 1KiB..1GiB
    Duration connect_timeout{10000};        ///< 100ms..5m
    Duration timeout{120000};               ///< whole download, 1s..1h, >= connect_timeout
    /// A download with fewer entries than (100 - this)% of the last good copy is rejected;
    /// 0..100, 100 turns the check off.
    std::uint32_t max_shrink_percent = 50;
    /// Extra CA certificates (PEM) trusted for list servers, besides the system store.
    std::string ca_file;

    friend bool operator==(const ListsConfig&, const ListsConfig&) = default;
};

enum class BlockingMode : std::uint8_t {
    null_ip,   ///< "null": 0.0.0.0 / :: for A/AAAA, NODATA for other types
    nxdomain,  ///< "nxdomain"
    refused,   ///< "refused"
    custom,    ///< "custom": custom_ipv4 / custom_ipv6 for A/AAAA, NODATA for other types
};

/// [blocking]: the answer to a blocked name.
struct BlockingConfig {
    BlockingMode mode = BlockingMode::null_ip;
    IpAddress custom_ipv4 = IpAddress::v4_of(0, 0, 0, 0);  ///< must be IPv4
    IpAddress custom_ipv6{{}, true};                       ///< must be IPv6; default ::
    std::chrono::seconds blocked_ttl{2};                   ///< TTL of blocked answers, 0s..1d
    bool cname_inspection = true;  ///< block answers whose CNAME chain leads to a blocked name
    bool ede_list_name = true;     ///< the list's name as EXTRA-TEXT of EDE 15
    bool block_icloud_private_relay = true;  ///< NXDOMAIN for mask(-h2).icloud.com
    bool rebind_protection = false;          ///< refuse internal addresses for public names
    std::vector<std::string> rebind_allow;   ///< domains exempt (lower-case, no trailing dot)

    friend bool operator==(const BlockingConfig&, const BlockingConfig&) = default;
};

enum class RecordType : std::uint8_t { a, aaaa, cname, ptr, txt };

/// One local record, answered authoritatively.
struct LocalRecord {
    std::string name;  ///< lower-case, no trailing dot
    RecordType type = RecordType::a;
    /// Validated per type: an IPv4 / IPv6 address (canonical text), a domain name (lower-case,
    /// no trailing dot) or TXT text (at most 4000 bytes; the engine splits it into strings).
    std::string value;

    friend bool operator==(const LocalRecord&, const LocalRecord&) = default;
};

/// [local]: names answered from the config rather than upstream.
struct LocalConfig {
    std::vector<LocalRecord> records;  ///< in file order
    std::string hosts_file;            ///< optional hosts-format file; empty: none
    std::chrono::seconds ttl{300};     ///< TTL of local answers, 0s..1d

    friend bool operator==(const LocalConfig&, const LocalConfig&) = default;
};

/// [cache]
struct CacheConfig {
    std::uint64_t size = 32ULL * 1024 * 1024;              ///< bytes, 0 (cache off) .. 16 GiB
    std::chrono::seconds min_ttl{0};                       ///< clamp of answer TTLs, 0s..1d
    std::chrono::seconds max_ttl{std::chrono::hours{24}};  ///< clamp, >= min_ttl, up to 7d
    bool negative = true;                                  ///< cache NXDOMAIN/NODATA per RFC 2308
    std::chrono::seconds negative_max_ttl{3600};           ///< cap of negative TTLs, 0s..1d
    bool serve_stale = false;                              ///< RFC 8767, when every upstream fails
    std::chrono::seconds stale_ttl{30};                    ///< TTL of a stale answer, 1s..1h
    std::chrono::seconds stale_max_age{std::chrono::hours{24}};  ///< how long past expiry, 1m..7d
    bool prefetch = true;     ///< renew an answer asked for in the last tenth of its TTL
    bool optimistic = false;  ///< answer expired entries at once (stale_ttl) and renew them

    friend bool operator==(const CacheConfig&, const CacheConfig&) = default;
};

enum class Weekday : std::uint8_t { mon, tue, wed, thu, fri, sat, sun };

/// [rules]: single rules added by hand or from the dashboard, in list syntax ("example.com",
/// "||example.com^", "/regex/"), applied to every group after its lists.
struct RulesConfig {
    std::vector<std::string> allow;
    std::vector<std::string> deny;

    friend bool operator==(const RulesConfig&, const RulesConfig&) = default;
};

/// [[groups.schedule]]: `lists` of the group count only inside this window, local time.
struct ScheduleWindow {
    std::vector<std::string> lists;  ///< names among the group's lists, at least one
    std::vector<Weekday> days;       ///< the day a window starts on; all seven by default
    std::uint32_t from_minute = 0;   ///< minutes after midnight, 0..1439
    std::uint32_t to_minute = 0;     ///< `to` <= `from`: the window ends the next day

    friend bool operator==(const ScheduleWindow&, const ScheduleWindow&) = default;
};

/// [[groups]]: a set of clients with their own lists and blocking. The group named "default"
/// (implicit when absent) holds every client no other group claims.
struct GroupConfig {
    std::string name;              ///< required, unique
    std::vector<Cidr> clients;     ///< addresses and prefixes; required except for "default"
    std::vector<MacAddress> macs;  ///< clients by hardware address (kernel neighbour table)
    /// Names of [[blocklists]] / [[allowlists]]; unset: every list of that kind.
    std::optional<std::vector<std::string>> blocklists;
    std::optional<std::vector<std::string>> allowlists;
    std::optional<BlockingMode> blocking_mode;  ///< unset: [blocking] mode
    bool filter_aaaa = false;  ///< AAAA queries get an empty answer (networks with broken IPv6)
    /// This group's own upstream resolvers (port defaults to 53); empty: [upstream] servers.
    std::vector<Endpoint> upstreams;
    std::vector<ScheduleWindow> schedule;

    friend bool operator==(const GroupConfig&, const GroupConfig&) = default;
};

/// The default `access.allow`: loopback, RFC 1918, CGNAT, IPv6 ULA and link-local.
[[nodiscard]] std::vector<Cidr> default_allowed_clients();

/// [access]: clients outside every prefix get REFUSED.
struct AccessConfig {
    std::vector<Cidr> allow = default_allowed_clients();
    /// ANY over UDP answered with one HINFO record (RFC 8482) instead of forwarded.
    bool minimal_any = true;

    friend bool operator==(const AccessConfig&, const AccessConfig&) = default;
};

/// The default `rate_limit.exempt`: loopback (this machine's own tools and benchmarks).
[[nodiscard]] std::vector<Cidr> default_rate_limit_exempt();

enum class RateLimitAction : std::uint8_t { drop, refused, truncate };

/// [rate_limit]: a token bucket per client address (or prefix).
struct RateLimitConfig {
    std::uint32_t queries_per_second = 100;  ///< 0..1000000; 0 turns the limit off
    std::uint32_t burst = 1000;              ///< 1..1000000
    std::uint32_t ipv4_prefix = 32;          ///< 8..32
    std::uint32_t ipv6_prefix = 128;         ///< 32..128
    RateLimitAction action = RateLimitAction::drop;
    std::vector<Cidr> exempt = default_rate_limit_exempt();

    friend bool operator==(const RateLimitConfig&, const RateLimitConfig&) = default;
};

/// [tcp] (RFC 7766); also the caps of DoT and DoH connections.
struct TcpConfig {
    Duration idle_timeout{10000};                   ///< 1s..10m
    std::uint32_t max_connections = 256;            ///< 1..65535
    std::uint32_t max_connections_per_client = 32;  ///< 1..65535

    friend bool operator==(const TcpConfig&, const TcpConfig&) = default;
};

/// [edns]
struct EdnsConfig {
    bool strip_ecs = true;  ///< remove EDNS Client Subnet before forwarding (privacy)

    friend bool operator==(const EdnsConfig&, const EdnsConfig&) = default;
};

enum class LogPrivacy : std::uint8_t { full, hide_domains, hide_clients, anonymous };

/// [querylog]: the SQLite log of every query (docs/querylog.md).
struct QueryLogConfig {
    bool enabled = true;
    std::string path = "/var/lib/dnsmoat/querylog.db";
    /// What a row keeps: "full", "hide_domains", "hide_clients", or "anonymous" (no rows).
    LogPrivacy privacy = LogPrivacy::full;
    Duration retention{std::chrono::hours{24 * 90}};  ///< 1h..3650d
    std::uint64_t max_size = 256ULL << 20U;           ///< bytes of rows and indexes, 1MiB..1TiB
    std::vector<std::string> exclude_domains;         ///< never logged, with subdomains; lower case
    std::vector<Cidr> exclude_clients;                ///< never logged
    /// How often the gathered queries are written, in one transaction, 100ms..10m. Long: few
    /// writes to an SD card; a crash loses at most this much of the log.
    Duration flush_interval{std::chrono::minutes{1}};
    /// Queries held at most between the writer's visits (every 100 ms), 64..1048576; the queue
    /// takes 128 bytes for each (querylog/entry_queue.hpp), so very long names fit fewer.
    std::uint32_t queue_size = 2048;

    friend bool operator==(const QueryLogConfig&, const QueryLogConfig&) = default;
};

/// [api]: the HTTP endpoint of the dashboard, the REST API, /metrics and /health (docs/api.md).
struct ApiConfig {
    bool enabled = true;
    /// Port defaults to 8053. An address other than loopback is used only when a password is
    /// set; without one the app listens on 127.0.0.1 instead (and says so).
    std::vector<Endpoint> listen{Endpoint{IpAddress::v4_of(127, 0, 0, 1), 8053}};
    /// The dashboard's password as an Argon2id PHC string ("$argon2id$v=19$..."), made by
    /// `dnsmoat password`; empty: no login (loopback only).
    std::string password_hash;
    /// Argon2id hashes of the API tokens scripts send as "Authorization: Bearer TOKEN".
    std::vector<std::string> token_hashes;

    friend bool operator==(const ApiConfig&, const ApiConfig&) = default;
};

enum class LogLevel : std::uint8_t { trace, debug, info, warn, error };

/// [log]
struct LogConfig {
    LogLevel level = LogLevel::info;

    friend bool operator==(const LogConfig&, const LogConfig&) = default;
};

struct Config {
    ServerConfig server;
    UpstreamConfig upstream;
    std::vector<ListConfig> blocklists;
    std::vector<ListConfig> allowlists;
    ListsConfig lists;
    RulesConfig rules;
    std::vector<GroupConfig>
        groups;  ///< in file order: a client belongs to the first that names it
    BlockingConfig blocking;
    LocalConfig local;
    CacheConfig cache;
    AccessConfig access;
    RateLimitConfig rate_limit;
    TcpConfig tcp;
    EdnsConfig edns;
    QueryLogConfig querylog;
    ApiConfig api;
    LogConfig log;

    friend bool operator==(const Config&, const Config&) = default;
};

/// The embedded defaults: what the daemon runs on when no config file exists.
[[nodiscard]] Config defaults();

/// Text of enum values as written in a config file ("failover", "null", "adblock", "AAAA").
[[nodiscard]] const char* to_text(UpstreamStrategy v) noexcept;
[[nodiscard]] const char* to_text(ListFormat v) noexcept;
[[nodiscard]] const char* to_text(BlockingMode v) noexcept;
[[nodiscard]] const char* to_text(RecordType v) noexcept;
[[nodiscard]] const char* to_text(LogLevel v) noexcept;
[[nodiscard]] const char* to_text(LogPrivacy v) noexcept;

}  // namespace moat::config
