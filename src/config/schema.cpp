// The schema: maps the document tree onto Config, section by section, validating every key.
// Each section reader asks its TableReader for the keys it knows, so the keys listed here are
// exactly the valid ones (unknown keys are reported by TableReader::finish()).
#include "schema.hpp"

#include <algorithm>
#include <set>

#include "table_reader.hpp"

namespace moat::config::detail {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using Sec = std::chrono::seconds;

constexpr Sec kDay{86400};

/// Calls `read(TableReader&)` on the table at `key` when present, then reports unknown keys.
template <class F>
void section(TableReader& parent, std::string_view key, F&& read) {
    const Node* node = parent.find(key);
    if (node == nullptr ||
        !expect_kind(parent.context(), *node, parent.path_of(key), Node::Kind::table)) {
        return;
    }
    TableReader table(parent.context(), *node, parent.path_of(key));
    read(table);
    table.finish();
}

void endpoints(TableReader& t, std::string_view key, std::vector<Endpoint>& out,
               std::uint16_t default_port, std::size_t min_items) {
    std::vector<Endpoint> list;
    if (t.array(key, min_items, [&](const Node& item, const std::string& path) {
            if (auto ep = read_endpoint(t.context(), item, path, default_port)) {
                list.push_back(*ep);
            }
        })) {
        out = std::move(list);
    }
}

void read_server(TableReader& t, ServerConfig& out) {
    endpoints(t, "listen", out.listen, 0, 1);
    t.string("control_socket", out.control_socket);
    t.string("user", out.user);
    endpoints(t, "dot", out.dot, 853, 0);
    endpoints(t, "doh", out.doh, 443, 0);
    endpoints(t, "doh_plain", out.doh_plain, 80, 0);
    if (t.string("doh_path", out.doh_path) && !out.doh_path.starts_with('/')) {
        t.context().error(Errc::bad_value, t.find("doh_path")->line, t.path_of("doh_path"),
                          "must start with '/' (like \"/dns-query\")");
    }
    t.string("tls_certificate", out.tls_certificate);
    t.string("tls_private_key", out.tls_private_key);
    t.array("proxy_protocol_from", 0, [&](const Node& n, const std::string& p) {
        if (auto c = read_cidr(t.context(), n, p)) {
            out.proxy_protocol_from.push_back(*c);
        }
    });
    if (!out.dot.empty() || !out.doh.empty()) {
        for (const std::string_view key : {"tls_certificate", "tls_private_key"}) {
            const std::string& value =
                key == "tls_certificate" ? out.tls_certificate : out.tls_private_key;
            if (value.empty()) {
                const Node* n = t.find(key);
                t.context().error(Errc::missing_key, n != nullptr ? n->line : t.line(),
                                  t.path_of(key),
                                  "is required when server.dot or server.doh is set");
            }
        }
    }
}

void read_upstream_servers(TableReader& t, UpstreamConfig& out) {
    std::vector<UpstreamServer> servers;
    const bool read = t.array("servers", 0, [&](const Node& item, const std::string& path) {
        if (!expect_kind(t.context(), item, path, Node::Kind::string, "a server string")) {
            return;
        }
        auto server = parse_upstream_server(item.text);
        if (!server) {
            t.context().error(Errc::bad_value, item.line, path, server.error());
            return;
        }
        servers.push_back(std::move(*server));
    });
    if (read) {
        out.servers = std::move(servers);
    }
}

/// A server given by name is resolved through the bootstrap servers, or the plain ones.
void check_bootstrap(TableReader& t, const UpstreamConfig& out) {
    const bool has_plain = std::any_of(out.servers.begin(), out.servers.end(), [](const auto& s) {
        return s.protocol == UpstreamProtocol::dns;
    });
    for (std::size_t i = 0; i < out.servers.size(); ++i) {
        if (!out.servers[i].address && out.bootstrap.empty() && !has_plain) {
            t.context().error(
                Errc::missing_key, t.find("servers")->line, t.path_of("bootstrap"),
                "is required to resolve " + out.servers[i].name +
                    " (plain DNS servers, e.g. [\"9.9.9.9\"]), or give its address: " +
                    "tls://ADDR#NAME");
            return;
        }
    }
}

void read_upstream(TableReader& t, UpstreamConfig& out) {
    read_upstream_servers(t, out);
    t.enumeration<UpstreamStrategy>("strategy", out.strategy,
                                    {{"failover", UpstreamStrategy::failover},
                                     {"fastest", UpstreamStrategy::fastest},
                                     {"hedge", UpstreamStrategy::hedge}});
    Duration hedge_delay{};
    if (t.duration("hedge_delay", hedge_delay, milliseconds{1}, Sec{60})) {
        out.hedge_delay = hedge_delay;
    }
    endpoints(t, "bootstrap", out.bootstrap, 53, 0);
    t.string("tls_ca_file", out.tls_ca_file);
    t.tables("tls_pins", [&](TableReader& p) {
        TlsPin pin;
        const bool named = p.string("name", pin.name);
        p.array("sha256", 1, [&](const Node& n, const std::string& path) {
            if (expect_kind(p.context(), n, path, Node::Kind::string, "a base64 SHA-256") &&
                n.text.size() == 44 && n.text.back() == '=') {
                pin.sha256.push_back(n.text);
            } else if (n.kind == Node::Kind::string) {
                p.context().error(Errc::bad_value, n.line, path,
                                  "is not a base64 SHA-256 (44 characters ending in '=', as "
                                  "`openssl ... | openssl dgst -sha256 -binary | base64` prints)");
            }
        });
        for (const std::string_view key : {"name", "sha256"}) {
            if (p.find(key) == nullptr && !(key == "name" && named)) {
                p.context().error(Errc::missing_key, p.line(), p.path_of(key),
                                  "is required in a TLS pin");
            }
        }
        out.tls_pins.push_back(std::move(pin));
    });
    if (t.find("servers") != nullptr) {
        check_bootstrap(t, out);
    }
    t.duration("timeout", out.timeout, milliseconds{10}, Sec{60});
    if (t.duration("total_timeout", out.total_timeout, milliseconds{10}, Sec{120}) &&
        out.total_timeout < out.timeout) {
        t.context().error(
            Errc::conflict, t.find("total_timeout")->line, t.path_of("total_timeout"),
            "must not be shorter than upstream.timeout (" + format_duration(out.timeout) + ")");
    }
    t.tables("conditional", [&](TableReader& c) {
        ConditionalForward fwd;
        const bool has_domains = c.array("domains", 1, [&](const Node& n, const std::string& p) {
            if (auto d = read_domain(c.context(), n, p)) {
                fwd.domains.push_back(*d);
            }
        });
        endpoints(c, "servers", fwd.servers, 53, 1);
        for (const std::string_view key : {"domains", "servers"}) {
            if ((key == "domains" ? !has_domains : fwd.servers.empty()) && c.find(key) == nullptr) {
                c.context().error(Errc::missing_key, c.line(), c.path_of(key),
                                  "is required in a conditional forwarding entry");
            }
        }
        out.conditional.push_back(std::move(fwd));
    });
}

void read_list(TableReader& t, ListConfig& out) {
    if (!t.string("name", out.name) && t.find("name") == nullptr) {
        t.context().error(Errc::missing_key, t.line(), t.path_of("name"),
                          "is required: every list needs a name");
    } else if (const Node* name = t.find("name");
               name->kind == Node::Kind::string && out.name.empty()) {
        t.context().error(Errc::bad_value, name->line, t.path_of("name"), "must not be empty");
    }
    const Node* path_node = t.find("path");
    const Node* url_node = t.find("url");
    t.string("path", out.path);
    t.string("url", out.url);
    if (path_node == nullptr && url_node == nullptr) {
        t.context().error(Errc::missing_key, t.line(), t.path(),
                          "needs a `path` (a local file) or a `url`");
    } else if (path_node != nullptr && url_node != nullptr) {
        t.context().error(Errc::conflict, url_node->line, t.path_of("url"),
                          "give either `path` or `url`, not both");
    } else if (path_node != nullptr && path_node->kind == Node::Kind::string && out.path.empty()) {
        t.context().error(Errc::bad_value, path_node->line, t.path_of("path"), "must not be empty");
    } else if (url_node != nullptr && url_node->kind == Node::Kind::string &&
               out.url.rfind("http://", 0) != 0 && out.url.rfind("https://", 0) != 0) {
        t.context().error(Errc::bad_value, url_node->line, t.path_of("url"),
                          "\"" + out.url + "\" is not an http:// or https:// URL");
    }
    t.duration("refresh", out.refresh, minutes{1}, hours{24 * 30});
    t.enumeration<ListFormat>("format", out.format,
                              {{"auto", ListFormat::automatic},
                               {"hosts", ListFormat::hosts},
                               {"domains", ListFormat::domains},
                               {"adblock", ListFormat::adblock},
                               {"regex", ListFormat::regex}});
    t.optional_boolean("subdomains", out.subdomains);
    t.boolean("enabled", out.enabled);
}

void read_lists(TableReader& t, std::string_view key, std::vector<ListConfig>& out) {
    std::set<std::string> names;
    t.tables(key, [&](TableReader& l) {
        ListConfig list;
        read_list(l, list);
        if (!list.name.empty() && !names.insert(list.name).second) {
            l.context().error(Errc::conflict, l.find("name")->line, l.path_of("name"),
                              "\"" + list.name + "\" names another list already");
        }
        out.push_back(std::move(list));
    });
}

void read_list_downloads(TableReader& t, ListsConfig& out) {
    if (t.string("state_dir", out.state_dir) && out.state_dir.empty()) {
        t.context().error(Errc::bad_value, t.find("state_dir")->line, t.path_of("state_dir"),
                          "must not be empty");
    }
    t.size("max_size", out.max_size, 1024, 1ULL << 30U);
    t.duration("connect_timeout", out.connect_timeout, milliseconds{100}, minutes{5});
    if (t.duration("timeout", out.timeout, Sec{1}, hours{1}) && out.timeout < out.connect_timeout) {
        t.context().error(Errc::conflict, t.find("timeout")->line, t.path_of("timeout"),
                          "must not be shorter than lists.connect_timeout (" +
                              format_duration(out.connect_timeout) + ")");
    }
    t.integer("max_shrink_percent", out.max_shrink_percent, 0, 100);
    t.string("ca_file", out.ca_file);
}

void read_blocking(TableReader& t, BlockingConfig& out) {
    t.enumeration<BlockingMode>("mode", out.mode, blocking_mode_names());
    if (t.ip("custom_ipv4", out.custom_ipv4) && out.custom_ipv4.v6) {
        t.context().error(Errc::bad_value, t.find("custom_ipv4")->line, t.path_of("custom_ipv4"),
                          "\"" + out.custom_ipv4.to_text() + "\" is not an IPv4 address");
    }
    if (t.ip("custom_ipv6", out.custom_ipv6) && !out.custom_ipv6.v6) {
        t.context().error(Errc::bad_value, t.find("custom_ipv6")->line, t.path_of("custom_ipv6"),
                          "\"" + out.custom_ipv6.to_text() + "\" is not an IPv6 address");
    }
    t.seconds("blocked_ttl", out.blocked_ttl, Sec{0}, kDay);
    t.boolean("cname_inspection", out.cname_inspection);
    t.boolean("ede_list_name", out.ede_list_name);
    t.boolean("block_icloud_private_relay", out.block_icloud_private_relay);
    t.boolean("rebind_protection", out.rebind_protection);
    t.array("rebind_allow", 0, [&](const Node& n, const std::string& p) {
        if (auto d = read_domain(t.context(), n, p)) {
            out.rebind_allow.push_back(*d);
        }
    });
}

void read_cache(TableReader& t, CacheConfig& out) {
    t.size("size", out.size, 0, 16ULL << 30U);
    t.seconds("min_ttl", out.min_ttl, Sec{0}, kDay);
    if (t.seconds("max_ttl", out.max_ttl, Sec{0}, kDay * 7) && out.max_ttl < out.min_ttl) {
        t.context().error(
            Errc::conflict, t.find("max_ttl")->line, t.path_of("max_ttl"),
            "must not be shorter than cache.min_ttl (" + format_duration(out.min_ttl) + ")");
    }
    t.boolean("negative", out.negative);
    t.seconds("negative_max_ttl", out.negative_max_ttl, Sec{0}, kDay);
    t.boolean("serve_stale", out.serve_stale);
    t.seconds("stale_ttl", out.stale_ttl, Sec{1}, hours{1});
    t.seconds("stale_max_age", out.stale_max_age, minutes{1}, kDay * 7);
    t.boolean("prefetch", out.prefetch);
    t.boolean("optimistic", out.optimistic);
}

/// A password or token hash: an Argon2id PHC string, checked for its shape here (the app's
/// verifier reads its parameters).
bool read_argon2_hash(TableReader& t, const Node& n, const std::string& path, std::string& out) {
    if (!expect_kind(t.context(), n, path, Node::Kind::string)) {
        return false;
    }
    if (!n.text.starts_with("$argon2id$") || n.text.size() > 512) {
        t.context().error(Errc::bad_value, n.line, path,
                          "is not an Argon2id hash (\"$argon2id$v=19$...\"); make one with "
                          "`dnsmoat password-hash`");
        return false;
    }
    out = n.text;
    return true;
}

void read_api(TableReader& t, ApiConfig& out) {
    t.boolean("enabled", out.enabled);
    std::vector<Endpoint> listen;
    if (t.array("listen", 1, [&](const Node& item, const std::string& path) {
            if (auto ep = read_endpoint(t.context(), item, path, 8053)) {
                listen.push_back(*ep);
            }
        })) {
        out.listen = std::move(listen);
    }
    if (const Node* n = t.find("password_hash");
        n != nullptr && !(n->kind == Node::Kind::string && n->text.empty())) {
        read_argon2_hash(t, *n, t.path_of("password_hash"), out.password_hash);
    }
    t.array("token_hashes", 0, [&](const Node& n, const std::string& p) {
        std::string hash;
        if (read_argon2_hash(t, n, p, hash)) {
            out.token_hashes.push_back(std::move(hash));
        }
    });
}

/// One rule of [rules]: list syntax is checked when the lists compile (a bad rule is reported
/// there, like a bad list line); here only what would break a list file.
void read_rules(TableReader& t, std::string_view key, std::vector<std::string>& out) {
    t.array(key, 0, [&](const Node& n, const std::string& p) {
        if (!expect_kind(t.context(), n, p, Node::Kind::string)) {
            return;
        }
        if (n.text.empty() || n.text.size() > 1024 ||
            n.text.find_first_of("\r\n") != std::string::npos) {
            t.context().error(Errc::bad_value, n.line, p,
                              "must be one rule: 1 to 1024 characters on one line");
            return;
        }
        out.push_back(n.text);
    });
}

void read_querylog(TableReader& t, QueryLogConfig& out) {
    t.boolean("enabled", out.enabled);
    if (t.string("path", out.path) && out.path.empty()) {
        t.context().error(Errc::bad_value, t.find("path")->line, t.path_of("path"),
                          "must not be empty (set enabled = false to keep no log)");
    }
    t.enumeration<LogPrivacy>("privacy", out.privacy,
                              {{"full", LogPrivacy::full},
                               {"hide_domains", LogPrivacy::hide_domains},
                               {"hide_clients", LogPrivacy::hide_clients},
                               {"anonymous", LogPrivacy::anonymous}});
    t.duration("retention", out.retention, hours{1}, kDay * 3650);
    t.size("max_size", out.max_size, 1ULL << 20U, 1ULL << 40U);
    t.array("exclude_domains", 0, [&](const Node& n, const std::string& p) {
        if (auto d = read_domain(t.context(), n, p)) {
            out.exclude_domains.push_back(*d);
        }
    });
    t.array("exclude_clients", 0, [&](const Node& n, const std::string& p) {
        if (auto c = read_cidr(t.context(), n, p)) {
            out.exclude_clients.push_back(*c);
        }
    });
    t.duration("flush_interval", out.flush_interval, milliseconds{100}, minutes{10});
    t.integer("queue_size", out.queue_size, 64, 1U << 20U);
}

/// An array of prefixes at `key`; `out` keeps its default when the key is absent.
void read_cidrs(TableReader& t, std::string_view key, std::size_t min_items,
                std::vector<Cidr>& out) {
    std::vector<Cidr> read;
    if (t.array(key, min_items, [&](const Node& n, const std::string& p) {
            if (auto c = read_cidr(t.context(), n, p)) {
                read.push_back(*c);
            }
        })) {
        out = std::move(read);
    }
}

void read_rate_limit(TableReader& t, RateLimitConfig& out) {
    t.integer("queries_per_second", out.queries_per_second, 0, 1000000);
    t.integer("burst", out.burst, 1, 1000000);
    t.integer("ipv4_prefix", out.ipv4_prefix, 8, 32);
    t.integer("ipv6_prefix", out.ipv6_prefix, 32, 128);
    t.enumeration<RateLimitAction>("action", out.action,
                                   {{"drop", RateLimitAction::drop},
                                    {"refused", RateLimitAction::refused},
                                    {"truncate", RateLimitAction::truncate}});
    read_cidrs(t, "exempt", 0, out.exempt);
}

}  // namespace

EnumNames<BlockingMode> blocking_mode_names() {
    // A static list: its array lives as long as the program, so the returned view stays valid.
    static const EnumNames<BlockingMode> kNames = {{"null", BlockingMode::null_ip},
                                                   {"nxdomain", BlockingMode::nxdomain},
                                                   {"refused", BlockingMode::refused},
                                                   {"custom", BlockingMode::custom}};
    return kNames;
}

tl::expected<Config, ConfigErrors> to_config(const Node& root, std::string_view file_name) {
    Context ctx(file_name);
    Config config = defaults();
    TableReader top(ctx, root, "");
    section(top, "server", [&](TableReader& t) { read_server(t, config.server); });
    section(top, "upstream", [&](TableReader& t) { read_upstream(t, config.upstream); });
    read_lists(top, "blocklists", config.blocklists);
    read_lists(top, "allowlists", config.allowlists);
    section(top, "lists", [&](TableReader& t) { read_list_downloads(t, config.lists); });
    section(top, "rules", [&](TableReader& t) {
        read_rules(t, "allow", config.rules.allow);
        read_rules(t, "deny", config.rules.deny);
    });
    read_groups(top, config);
    section(top, "blocking", [&](TableReader& t) { read_blocking(t, config.blocking); });
    section(top, "local", [&](TableReader& t) { read_local(t, config.local); });
    section(top, "cache", [&](TableReader& t) { read_cache(t, config.cache); });
    section(top, "access", [&](TableReader& t) {
        read_cidrs(t, "allow", 1, config.access.allow);
        t.boolean("minimal_any", config.access.minimal_any);
    });
    section(top, "rate_limit", [&](TableReader& t) { read_rate_limit(t, config.rate_limit); });
    section(top, "tcp", [&](TableReader& t) {
        t.duration("idle_timeout", config.tcp.idle_timeout, Sec{1}, minutes{10});
        t.integer("max_connections", config.tcp.max_connections, 1, 65535);
        t.integer("max_connections_per_client", config.tcp.max_connections_per_client, 1, 65535);
    });
    section(top, "edns", [&](TableReader& t) { t.boolean("strip_ecs", config.edns.strip_ecs); });
    section(top, "querylog", [&](TableReader& t) { read_querylog(t, config.querylog); });
    section(top, "api", [&](TableReader& t) { read_api(t, config.api); });
    section(top, "log", [&](TableReader& t) {
        t.enumeration<LogLevel>("level", config.log.level,
                                {{"trace", LogLevel::trace},
                                 {"debug", LogLevel::debug},
                                 {"info", LogLevel::info},
                                 {"warn", LogLevel::warn},
                                 {"error", LogLevel::error}});
    });
    top.finish();
    if (!ctx.ok()) {
        return tl::unexpected(ctx.take());
    }
    return config;
}

}  // namespace moat::config::detail
