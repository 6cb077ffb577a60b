// Steering the running daemon: blocking on, off and paused; explain a name; flush the cache;
// and the config backup (a tar of the config file, the local hosts file and the lists' status,
// like Pi-hole's Teleporter) with its restore.

#include <ctime>
#include <fstream>
#include <sstream>

#include "moat/api/tar_archive.hpp"
#include "moat/config/values.hpp"
#include "moat/core/log.hpp"
#include "moat/lists/state_dir.hpp"
#include "moat/wire/name.hpp"
#include "rest_api.hpp"

namespace moat::app {
namespace {

using api::error_response;
using api::json_response;
using api::read_tar;
using api::TarFile;
using api::write_tar;

constexpr long long kMaxPauseSeconds = 86400LL * 365;

std::string read_small_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

void RestApi::add_control_routes() {
    auto blocking_state = [this] {
        nlohmann::json groups = nlohmann::json::object();
        std::vector<std::string> names{"default"};
        for (const config::GroupConfig& g : backend_.config().groups) {
            if (g.name != "default") {
                names.push_back(g.name);
            }
        }
        for (const std::string& name : names) {
            const nlohmann::json until =
                unix_time_of(backend_.clock(), backend_.pauses().until(name));
            if (!until.is_null()) {
                groups[name] = until;
            }
        }
        const nlohmann::json everyone = unix_time_of(backend_.clock(), backend_.pauses().until(""));
        return json_response(
            200, {{"enabled", everyone.is_null()}, {"paused_until", everyone}, {"groups", groups}});
    };

    router_.add("GET", "/api/blocking",
                [blocking_state](const http::Request&, const Params&) { return blocking_state(); });

    router_.add(
        "POST", "/api/blocking", [this, blocking_state](const http::Request& r, const Params&) {
            std::optional<http::Response> bad;
            nlohmann::json body = api::body_object(r, bad);
            if (bad) {
                return *bad;
            }
            if (!body.contains("enabled") || !body["enabled"].is_boolean()) {
                return error_response(
                    400, R"(send {"enabled": false, "seconds": 300} or {"enabled": true})");
            }
            const std::string group = body.value("group", std::string());
            const auto& groups = backend_.config().groups;
            const bool known =
                group.empty() || group == "default" ||
                std::any_of(groups.begin(), groups.end(),
                            [&](const config::GroupConfig& g) { return g.name == group; });
            if (!known) {
                return error_response(404, "no group named \"" + group + "\"");
            }
            const std::string who = group.empty() ? "everyone" : "group " + group;
            if (body["enabled"].get<bool>()) {
                backend_.pauses().resume(group);
                log::info("api: blocking resumed for {}", who);
                return blocking_state();
            }
            long long seconds = kMaxPauseSeconds;  // no duration: off until turned back on
            if (body.contains("seconds")) {
                if (!body["seconds"].is_number_integer() || body["seconds"].get<long long>() < 1 ||
                    body["seconds"].get<long long>() > kMaxPauseSeconds) {
                    return error_response(400, "seconds must be a whole number, 1..31536000");
                }
                seconds = body["seconds"].get<long long>();
            }
            backend_.pauses().pause(group, backend_.clock().now() + std::chrono::seconds(seconds));
            log::info("api: blocking paused for {} for {} s", who, seconds);
            return blocking_state();
        });

    router_.add(
        "GET", "/api/explain",
        [this](const http::Request&, const Params& p, const api::Peer& peer,
               const api::Responder&) -> std::optional<http::Response> {
            auto name = wire::Name::from_text(p.query_or("name"));
            if (!name || p.query_or("name").empty()) {
                return error_response(400, "name must be a domain name");
            }
            const wire::Name lower = wire::Name::from_view_lower(name->view());
            IpAddress client;
            if (const std::string text = p.query_or("client"); !text.empty()) {
                auto ip = config::parse_ip(text);
                if (!ip) {
                    return error_response(400, "client: " + ip.error());
                }
                client = *ip;
            } else if (auto ip = config::parse_ip(peer.address.to_string())) {
                client = *ip;  // by default: the one asking
            }
            const engine::Explanation e =
                backend_.path().engine()->explain(lower, engine::Client{client, 0, {}});
            std::string text = lower.to_text();
            if (text.size() > 1 && text.back() == '.') {
                text.pop_back();
            }
            nlohmann::json out = {{"name", text},       {"client", client.to_text()},
                                  {"group", e.group},   {"local", e.local},
                                  {"paused", e.paused}, {"verdict", "none"},
                                  {"list", nullptr},    {"line", nullptr},
                                  {"rule", nullptr}};
            const filter::Verdict& v = e.verdict;
            if (v.action != filter::Action::none && e.snapshot) {
                out["verdict"] = v.action == filter::Action::blocked ? "blocked" : "allowed";
                out["list"] = e.snapshot->lists()[v.list].spec.name;
                out["line"] = v.line == 0 ? nlohmann::json() : nlohmann::json(v.line);
                if (v.rule == filter::RuleType::regex) {
                    out["rule"] = "/" + std::string(e.snapshot->regex_pattern(v)) + "/";
                } else {
                    // The rule's name is the query with `suffix` labels dropped.
                    std::string rule = text;
                    for (unsigned i = 0; i < v.suffix; ++i) {
                        rule = rule.substr(rule.find('.') + 1);
                    }
                    out["rule"] = v.rule == filter::RuleType::subtree ? "||" + rule + "^" : rule;
                }
            }
            return json_response(200, out);
        });

    router_.add("POST", "/api/cache/flush", [this](const http::Request&, const Params&) {
        cache::Cache* cache = backend_.cache();
        if (cache == nullptr) {
            return json_response(200, {{"flushed", 0}});
        }
        const std::uint64_t entries = cache->stats().entries;
        cache->flush();
        log::info("api: cache flushed ({} entries)", entries);
        return json_response(200, {{"flushed", entries}});
    });
}

void RestApi::add_backup_routes() {
    router_.add(
        "GET", "/api/config/backup", [this](const http::Request&, const Params&) -> http::Response {
            auto text = backend_.store().read_text();
            if (!text) {
                return error_response(text.error().status, text.error().error);
            }
            const config::Config& c = backend_.config();
            const std::string ext = backend_.store().file()->extension().string();
            std::vector<TarFile> files{{"config" + ext, *text}};
            if (!c.local.hosts_file.empty()) {
                files.push_back({"hosts", read_small_file(c.local.hosts_file)});
            }
            const lists::StateDir dir(c.lists.state_dir);
            for (const auto* kind : {&c.blocklists, &c.allowlists}) {
                for (const config::ListConfig& l : *kind) {
                    if (l.url.empty()) {
                        continue;
                    }
                    const auto path = dir.status_path(lists::StateDir::key_of(l.name, l.url));
                    std::error_code ec;
                    if (std::filesystem::exists(path, ec)) {
                        files.push_back(
                            {"lists/" + path.filename().string(), read_small_file(path.string())});
                    }
                }
            }
            const std::time_t now = std::time(nullptr);
            std::tm tm{};
            localtime_r(&now, &tm);
            std::array<char, 32> date{};
            std::strftime(date.data(), date.size(), "%Y%m%d-%H%M%S", &tm);
            http::Response r;
            r.header("Content-Type", "application/x-tar");
            r.header("Content-Disposition", std::string("attachment; filename=\"dnsmoat-backup-") +
                                                date.data() + ".tar\"");
            r.body = write_tar(files, now);
            return r;
        });

    router_.add(
        "POST", "/api/config/restore",
        [this](const http::Request& r, const Params&, const api::Peer&,
               const api::Responder& later) -> std::optional<http::Response> {
            if (!backend_.store().writable()) {
                return error_response(409,
                                      "dnsmoat runs on its embedded defaults: start it "
                                      "with --config FILE to restore a backup");
            }
            auto files = read_tar(r.body);
            if (!files) {
                return error_response(400, "not a dnsmoat backup: " + files.error());
            }
            const TarFile* config_file = nullptr;
            const TarFile* hosts = nullptr;
            for (const TarFile& f : *files) {
                if (f.name == "config.toml" || f.name == "config.json") {
                    config_file = &f;
                } else if (f.name == "hosts") {
                    hosts = &f;
                }
            }
            if (config_file == nullptr) {
                return error_response(400,
                                      "not a dnsmoat backup: no config.toml or config.json in it");
            }
            // The backup may come from a daemon whose file had the other syntax.
            const config::Syntax from =
                config_file->name.ends_with(".json") ? config::Syntax::json : config::Syntax::toml;
            const config::Syntax to = *config::syntax_of(*backend_.store().file());
            std::string text = config_file->content;
            auto restored = config::parse(text, from, "backup/" + config_file->name);
            if (!restored) {
                return error_response(400, "the backup's config does not load:\n" +
                                               config::to_string(restored.error()));
            }
            if (from != to) {
                auto doc = config::read_document(text, from);
                text = config::render_document(*doc, to);
            }
            // The hosts file is written only where the running config already keeps it:
            // a backup never chooses which file on this machine gets overwritten.
            const std::string& hosts_path = backend_.config().local.hosts_file;
            if (hosts != nullptr && !hosts_path.empty() &&
                restored->local.hosts_file == hosts_path) {
                if (auto w = config::write_file_atomically(hosts_path, hosts->content, true); !w) {
                    return error_response(500, w.error());
                }
            }
            if (auto replaced = backend_.store().replace(text); !replaced) {
                return error_response(replaced.error().status, replaced.error().error);
            }
            log::info("api: config restored from a backup");
            backend_.reload([later](const std::string& error) {
                later(error.empty()
                          ? json_response(200, {{"restored", true}})
                          : error_response(500, "restored, but it did not load: " + error));
            });
            return std::nullopt;
        });
}

}  // namespace moat::app
