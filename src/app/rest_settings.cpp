// What the dashboard's lists, rules, local records and groups pages change: each change is an
// edit of the config file's tree (config_store.hpp), checked by the real config loader before it
// is written, so the API accepts exactly what a hand-written file may say.
#include <algorithm>
#include <fstream>

#include "lists.hpp"
#include "moat/config/loader.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/lists/state_dir.hpp"
#include "rest_api.hpp"

namespace moat::app {
namespace {

using api::error_response;
using api::json_response;
using config::Document;

/// "block" → "blocklists", "allow" → "allowlists"; empty for anything else.
std::string lists_key(const std::string& kind) {
    return kind == "block" ? "blocklists" : kind == "allow" ? "allowlists" : "";
}

nlohmann::json list_json(const config::ListConfig& l, const config::ListsConfig& downloads) {
    nlohmann::json out = {{"name", l.name},
                          {"url", l.url.empty() ? nlohmann::json() : nlohmann::json(l.url)},
                          {"path", l.path.empty() ? nlohmann::json() : nlohmann::json(l.path)},
                          {"enabled", l.enabled},
                          {"entries", nullptr},
                          {"invalid", nullptr},
                          {"bytes", nullptr},
                          {"last_success", nullptr},
                          {"last_error", nullptr},
                          {"failures", 0}};
    if (l.url.empty()) {
        return out;
    }
    const lists::StateDir dir(downloads.state_dir);
    if (auto s = dir.read_status(lists::StateDir::key_of(l.name, l.url))) {
        out["entries"] = s->entries;
        out["invalid"] = s->invalid;
        out["bytes"] = s->bytes;
        out["last_success"] =
            s->last_success == 0 ? nlohmann::json() : nlohmann::json(s->last_success);
        out["last_error"] =
            s->last_error.empty() ? nlohmann::json() : nlohmann::json(s->last_error);
        out["failures"] = s->failures;
    }
    return out;
}

/// The entries the compiled snapshot holds per configured list name (local files, and the
/// downloaded ones as they were compiled).
void add_compiled_counts(nlohmann::json& lists, const filter::Snapshot& snapshot,
                         filter::ListKind kind) {
    for (nlohmann::json& l : lists) {
        for (const filter::ListInfo& info : snapshot.lists()) {
            if (info.spec.kind == kind && info.spec.name == l["name"].get<std::string>()) {
                l["entries"] = info.stats.entries;
                l["invalid"] = info.stats.invalid;
            }
        }
    }
}

/// `rule` is one rule a list line may hold (checked by compiling it), else why not.
std::optional<std::string> rule_problem(const std::string& rule) {
    if (rule.empty() || rule.size() > 1024 || rule.find_first_of("\r\n") != std::string::npos) {
        return "a rule is one line of 1 to 1024 characters";
    }
    filter::Compiler compiler;
    auto added = compiler.add_text(
        {0, "rule", filter::ListKind::block, filter::ListFormat::auto_detect, false}, rule);
    if (!added || compiler.stats(*added).entries != 1 || compiler.stats(*added).invalid != 0) {
        return "\"" + rule + "\" is not a rule (use example.com, ||example.com^ or /regex/)";
    }
    return std::nullopt;
}

/// The canonical form of a local record (as the config loader stores it), or its error.
tl::expected<config::LocalRecord, std::string> canonical_record(const nlohmann::json& record) {
    nlohmann::json doc = {{"local", {{"records", nlohmann::json::array({record})}}}};
    auto c = config::parse(doc.dump(), config::Syntax::json, "record");
    if (!c) {
        std::string error = c.error().front().message;
        return tl::unexpected(c.error().front().path + ": " + error);
    }
    return c->local.records.front();
}

/// Every record of the file's [local] records with where it sits: index into the array form,
/// or key (and index in its value array, or -1 for a single string) of the table form.
struct RecordPlace {
    config::LocalRecord record;
    std::string key;
    long index = -1;
};

std::vector<RecordPlace> records_in(const Document& doc) {
    std::vector<RecordPlace> out;
    if (!doc.contains("local") || !doc["local"].contains("records")) {
        return out;
    }
    const Document& records = doc["local"]["records"];
    auto add = [&](const nlohmann::json& r, std::string key, long index) {
        if (auto c = canonical_record(r)) {
            out.push_back({*c, std::move(key), index});
        }
    };
    auto split = [](const std::string& name, const std::string& text) {
        const std::size_t space = text.find(' ');
        return nlohmann::json{{"name", name},
                              {"type", text.substr(0, space)},
                              {"value", space == std::string::npos ? "" : text.substr(space + 1)}};
    };
    if (records.is_array()) {
        for (std::size_t i = 0; i < records.size(); ++i) {
            add(nlohmann::json::parse(records[i].dump()), "", static_cast<long>(i));
        }
    } else if (records.is_object()) {
        for (const auto& [name, value] : records.items()) {
            if (value.is_string()) {
                add(split(name, value.get<std::string>()), name, -1);
            } else if (value.is_array()) {
                for (std::size_t i = 0; i < value.size(); ++i) {
                    if (value[i].is_string()) {
                        add(split(name, value[i].get<std::string>()), name, static_cast<long>(i));
                    }
                }
            }
        }
    }
    return out;
}

}  // namespace

void RestApi::add_list_routes() {
    router_.add("GET", "/api/lists", [this](const http::Request&, const Params&) {
        const config::Config& c = backend_.config();
        nlohmann::json block = nlohmann::json::array();
        nlohmann::json allow = nlohmann::json::array();
        for (const auto& l : c.blocklists) {
            block.push_back(list_json(l, c.lists));
        }
        for (const auto& l : c.allowlists) {
            allow.push_back(list_json(l, c.lists));
        }
        const auto snapshot = backend_.path().engine()->snapshots().current();
        add_compiled_counts(block, *snapshot, filter::ListKind::block);
        add_compiled_counts(allow, *snapshot, filter::ListKind::allow);
        return json_response(200, {{"blocklists", block}, {"allowlists", allow}});
    });

    router_.add(
        "POST", "/api/lists",
        [this](const http::Request& r, const Params&, const api::Peer&,
               const api::Responder& later) -> std::optional<http::Response> {
            std::optional<http::Response> bad;
            nlohmann::json body = api::body_object(r, bad);
            if (bad) {
                return bad;
            }
            const std::string key = lists_key(body.value("kind", std::string()));
            if (key.empty()) {
                return error_response(400, R"(kind must be "block" or "allow")");
            }
            nlohmann::json entry = nlohmann::json::object();
            for (const char* field : {"name", "url", "path", "enabled", "format"}) {
                if (body.contains(field)) {
                    entry[field] = body[field];
                }
            }
            return change_config(
                [key, entry](Document& doc) -> std::optional<EditFailure> {
                    Document& lists = doc[key];
                    if (lists.is_null()) {
                        lists = Document::array();
                    }
                    for (const Document& l : lists) {
                        if (l.value("name", std::string()) == entry.value("name", std::string())) {
                            return EditFailure{409, "a list of that kind and name exists"};
                        }
                    }
                    lists.push_back(Document::parse(entry.dump()));
                    return std::nullopt;
                },
                later, 201, entry);
        });

    auto find_list = [](const std::string& kind, const std::string& name,
                        const std::function<void(Document & lists, std::size_t i)>& act) {
        return [kind, name, act](Document& doc) -> std::optional<EditFailure> {
            const std::string key = lists_key(kind);
            if (key.empty()) {
                return EditFailure{404, R"(kind must be "block" or "allow")"};
            }
            if (doc.contains(key) && doc[key].is_array()) {
                for (std::size_t i = 0; i < doc[key].size(); ++i) {
                    if (doc[key][i].value("name", std::string()) == name) {
                        act(doc[key], i);
                        return std::nullopt;
                    }
                }
            }
            return EditFailure{404, "no " + kind + "list named \"" + name + "\""};
        };
    };

    router_.add("PATCH", "/api/lists/{kind}/{name}",
                [this, find_list](const http::Request& r, const Params& p, const api::Peer&,
                                  const api::Responder& later) -> std::optional<http::Response> {
                    std::optional<http::Response> bad;
                    nlohmann::json body = api::body_object(r, bad);
                    if (bad) {
                        return bad;
                    }
                    if (!body.contains("enabled") || !body["enabled"].is_boolean()) {
                        return error_response(400, "send {\"enabled\": true or false}");
                    }
                    const bool enabled = body["enabled"].get<bool>();
                    return change_config(find_list(p.path.at("kind"), p.path.at("name"),
                                                   [enabled](Document& lists, std::size_t i) {
                                                       lists[i]["enabled"] = enabled;
                                                   }),
                                         later, 200, {{"enabled", enabled}});
                });

    router_.add("DELETE", "/api/lists/{kind}/{name}",
                [this, find_list](const http::Request&, const Params& p, const api::Peer&,
                                  const api::Responder& later) -> std::optional<http::Response> {
                    return change_config(
                        find_list(p.path.at("kind"), p.path.at("name"),
                                  [](Document& lists, std::size_t i) { lists.erase(i); }),
                        later, 204, {});
                });

    router_.add("POST", "/api/lists/refresh", [this](const http::Request&, const Params&) {
        backend_.refresh_lists();
        return json_response(202, {{"refreshing", true}});
    });

    router_.add("GET", "/api/rules", [this](const http::Request&, const Params&) {
        return json_response(200, {{"allow", backend_.config().rules.allow},
                                   {"deny", backend_.config().rules.deny}});
    });

    for (const std::string kind : {"allow", "deny"}) {
        router_.add("POST", "/api/rules/" + kind,
                    [this, kind](const http::Request& r, const Params&, const api::Peer&,
                                 const api::Responder& later) -> std::optional<http::Response> {
                        std::optional<http::Response> bad;
                        nlohmann::json body = api::body_object(r, bad);
                        if (bad) {
                            return bad;
                        }
                        if (!body.contains("rule") || !body["rule"].is_string()) {
                            return error_response(400, R"(send {"rule": "example.com"})");
                        }
                        const std::string rule = body["rule"].get<std::string>();
                        if (auto problem = rule_problem(rule)) {
                            return error_response(400, *problem);
                        }
                        const std::string other = kind == "allow" ? "deny" : "allow";
                        return change_config(
                            [kind, other, rule](Document& doc) -> std::optional<EditFailure> {
                                Document& rules = doc["rules"];
                                if (rules.is_null()) {
                                    rules = Document::object();
                                }
                                // Blocking a name that was allowed (or the reverse) moves it.
                                if (rules.contains(other)) {
                                    Document& o = rules[other];
                                    for (std::size_t i = o.size(); i-- > 0;) {
                                        if (o[i] == rule) {
                                            o.erase(i);
                                        }
                                    }
                                }
                                Document& list = rules[kind];
                                if (list.is_null()) {
                                    list = Document::array();
                                }
                                for (const Document& existing : list) {
                                    if (existing == rule) {
                                        return EditFailure{409, "the rule is there already"};
                                    }
                                }
                                list.push_back(rule);
                                return std::nullopt;
                            },
                            later, 201, {{"rule", rule}});
                    });
        router_.add("DELETE", "/api/rules/" + kind,
                    [this, kind](const http::Request& r, const Params&, const api::Peer&,
                                 const api::Responder& later) -> std::optional<http::Response> {
                        std::optional<http::Response> bad;
                        nlohmann::json body = api::body_object(r, bad);
                        if (bad) {
                            return bad;
                        }
                        const std::string rule = body.value("rule", std::string());
                        return change_config(
                            [kind, rule](Document& doc) -> std::optional<EditFailure> {
                                if (doc.contains("rules") && doc["rules"].contains(kind)) {
                                    Document& list = doc["rules"][kind];
                                    for (std::size_t i = 0; i < list.size(); ++i) {
                                        if (list[i] == rule) {
                                            list.erase(i);
                                            return std::nullopt;
                                        }
                                    }
                                }
                                std::string error = "no ";
                                error.append(kind).append(" rule \"").append(rule).append("\"");
                                return EditFailure{404, error};
                            },
                            later, 204, {});
                    });
    }
}

void RestApi::add_record_routes() {
    router_.add("GET", "/api/local", [this](const http::Request&, const Params&) {
        nlohmann::json records = nlohmann::json::array();
        for (const config::LocalRecord& r : backend_.config().local.records) {
            records.push_back(
                {{"name", r.name}, {"type", config::to_text(r.type)}, {"value", r.value}});
        }
        return json_response(200, {{"records", records}});
    });

    router_.add("POST", "/api/local",
                [this](const http::Request& r, const Params&, const api::Peer&,
                       const api::Responder& later) -> std::optional<http::Response> {
                    std::optional<http::Response> bad;
                    nlohmann::json body = api::body_object(r, bad);
                    if (bad) {
                        return bad;
                    }
                    nlohmann::json record = {{"name", body.value("name", std::string())},
                                             {"type", body.value("type", std::string())},
                                             {"value", body.value("value", std::string())}};
                    auto canonical = canonical_record(record);
                    if (!canonical) {
                        return error_response(400, canonical.error());
                    }
                    const config::LocalRecord c = *canonical;
                    return change_config(
                        [c](Document& doc) -> std::optional<EditFailure> {
                            for (const RecordPlace& place : records_in(doc)) {
                                if (place.record == c) {
                                    return EditFailure{409, "that record exists"};
                                }
                            }
                            Document& records = doc["local"]["records"];
                            const std::string text =
                                std::string(config::to_text(c.type)) + " " + c.value;
                            if (records.is_null()) {
                                records = Document::array();
                            }
                            if (records.is_array()) {
                                records.push_back({{"name", c.name},
                                                   {"type", config::to_text(c.type)},
                                                   {"value", c.value}});
                            } else if (!records.contains(c.name)) {
                                records[c.name] = text;
                            } else if (records[c.name].is_string()) {
                                records[c.name] = Document::array({records[c.name], text});
                            } else {
                                records[c.name].push_back(text);
                            }
                            return std::nullopt;
                        },
                        later, 201,
                        {{"name", c.name}, {"type", config::to_text(c.type)}, {"value", c.value}});
                });

    router_.add("DELETE", "/api/local",
                [this](const http::Request& r, const Params&, const api::Peer&,
                       const api::Responder& later) -> std::optional<http::Response> {
                    std::optional<http::Response> bad;
                    nlohmann::json body = api::body_object(r, bad);
                    if (bad) {
                        return bad;
                    }
                    auto canonical =
                        canonical_record({{"name", body.value("name", std::string())},
                                          {"type", body.value("type", std::string())},
                                          {"value", body.value("value", std::string())}});
                    if (!canonical) {
                        return error_response(400, canonical.error());
                    }
                    const config::LocalRecord c = *canonical;
                    return change_config(
                        [c](Document& doc) -> std::optional<EditFailure> {
                            for (const RecordPlace& place : records_in(doc)) {
                                if (!(place.record == c)) {
                                    continue;
                                }
                                Document& records = doc["local"]["records"];
                                if (place.key.empty()) {
                                    records.erase(static_cast<std::size_t>(place.index));
                                } else if (place.index < 0) {
                                    records.erase(place.key);
                                } else {
                                    records[place.key].erase(static_cast<std::size_t>(place.index));
                                    if (records[place.key].empty()) {
                                        records.erase(place.key);
                                    }
                                }
                                return std::nullopt;
                            }
                            return EditFailure{404, "no such record"};
                        },
                        later, 204, {});
                });

    router_.add("PUT", "/api/groups/{name}",
                [this](const http::Request& r, const Params& p, const api::Peer&,
                       const api::Responder& later) -> std::optional<http::Response> {
                    std::optional<http::Response> bad;
                    nlohmann::json body = api::body_object(r, bad);
                    if (bad) {
                        return bad;
                    }
                    const std::string name = p.path.at("name");
                    // Only the fields the dashboard edits; the loader checks every value.
                    nlohmann::json fields = nlohmann::json::object();
                    for (const char* key : {"clients", "macs", "blocklists", "allowlists",
                                            "blocking_mode", "filter_aaaa"}) {
                        if (body.contains(key)) {
                            fields[key] = body[key];
                        }
                    }
                    const bool exists = std::any_of(
                        backend_.config().groups.begin(), backend_.config().groups.end(),
                        [&](const config::GroupConfig& g) { return g.name == name; });
                    return change_config(
                        [name, fields](Document& doc) -> std::optional<EditFailure> {
                            Document& groups = doc["groups"];
                            if (groups.is_null()) {
                                groups = Document::array();
                            }
                            Document* group = nullptr;
                            for (Document& g : groups) {
                                if (g.value("name", std::string()) == name) {
                                    group = &g;
                                }
                            }
                            if (group == nullptr) {
                                groups.push_back({{"name", name}});
                                group = &groups.back();
                            }
                            for (const auto& [key, value] : fields.items()) {
                                if (value.is_null()) {
                                    group->erase(key);  // unset: every list, the global mode
                                } else {
                                    (*group)[key] = Document::parse(value.dump());
                                }
                            }
                            return std::nullopt;
                        },
                        later, exists ? 200 : 201, {{"name", name}});
                });

    router_.add("DELETE", "/api/groups/{name}",
                [this](const http::Request&, const Params& p, const api::Peer&,
                       const api::Responder& later) -> std::optional<http::Response> {
                    const std::string name = p.path.at("name");
                    return change_config(
                        [name](Document& doc) -> std::optional<EditFailure> {
                            if (doc.contains("groups") && doc["groups"].is_array()) {
                                Document& groups = doc["groups"];
                                for (std::size_t i = 0; i < groups.size(); ++i) {
                                    if (groups[i].value("name", std::string()) == name) {
                                        groups.erase(i);
                                        return std::nullopt;
                                    }
                                }
                            }
                            return EditFailure{404, "no group named \"" + name + "\""};
                        },
                        later, 204, {});
                });

    // A group's own settings (null: it follows [blocking] mode / takes every list), so that an
    // edit in the dashboard does not pin what the group inherited.
    router_.add("GET", "/api/groups", [this](const http::Request&, const Params&) {
        const config::Config& c = backend_.config();
        auto paused_until = [&](const std::string& group) {
            return unix_time_of(backend_.clock(), backend_.pauses().until(group));
        };
        nlohmann::json groups = nlohmann::json::array();
        bool has_default = false;
        for (const config::GroupConfig& g : c.groups) {
            has_default = has_default || g.name == "default";
            nlohmann::json clients = nlohmann::json::array();
            for (const config::Cidr& cidr : g.clients) {
                clients.push_back(cidr.to_text());
            }
            nlohmann::json macs = nlohmann::json::array();
            for (const MacAddress& m : g.macs) {
                macs.push_back(m.to_text());
            }
            groups.push_back(
                {{"name", g.name},
                 {"clients", clients},
                 {"macs", macs},
                 {"blocklists", g.blocklists ? nlohmann::json(*g.blocklists) : nlohmann::json()},
                 {"allowlists", g.allowlists ? nlohmann::json(*g.allowlists) : nlohmann::json()},
                 {"blocking_mode", g.blocking_mode
                                       ? nlohmann::json(config::to_text(*g.blocking_mode))
                                       : nlohmann::json()},
                 {"filter_aaaa", g.filter_aaaa},
                 {"paused_until", paused_until(g.name)}});
        }
        if (!has_default) {
            groups.push_back({{"name", "default"},
                              {"clients", nlohmann::json::array()},
                              {"macs", nlohmann::json::array()},
                              {"blocklists", nullptr},
                              {"allowlists", nullptr},
                              {"blocking_mode", nullptr},
                              {"filter_aaaa", false},
                              {"paused_until", paused_until("default")}});
        }
        return json_response(200, {{"groups", groups}});
    });
}

}  // namespace moat::app
