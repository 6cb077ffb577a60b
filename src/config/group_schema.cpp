// [[groups]]: client groups with their own lists, blocking mode, AAAA filtering and schedules.
// Read after the lists, so the list names a group gives are checked against them.
#include <algorithm>
#include <set>

#include "schema.hpp"
#include "table_reader.hpp"

namespace moat::config::detail {
namespace {

/// "HH:MM" (00:00..23:59) as minutes after midnight.
std::optional<std::uint32_t> read_clock(TableReader& t, std::string_view key) {
    const Node* node = t.find(key);
    if (node == nullptr) {
        t.context().error(Errc::missing_key, t.line(), t.path_of(key),
                          "is required: a time of day like \"21:30\"");
        return std::nullopt;
    }
    if (!expect_kind(t.context(), *node, t.path_of(key), Node::Kind::string,
                     "a time of day like \"21:30\"")) {
        return std::nullopt;
    }
    const std::string& s = node->text;
    const auto digit = [&](std::size_t i) { return s[i] >= '0' && s[i] <= '9'; };
    if (s.size() == 5 && digit(0) && digit(1) && s[2] == ':' && digit(3) && digit(4)) {
        const auto hour = static_cast<std::uint32_t>((s[0] - '0') * 10 + (s[1] - '0'));
        const auto minute = static_cast<std::uint32_t>((s[3] - '0') * 10 + (s[4] - '0'));
        if (hour < 24 && minute < 60) {
            return hour * 60 + minute;
        }
    }
    t.context().error(Errc::bad_value, node->line, t.path_of(key),
                      "\"" + s + "\" is not a time of day (HH:MM, 00:00..23:59)");
    return std::nullopt;
}

/// `clients`: IP addresses, CIDR prefixes and MAC addresses.
void read_clients(TableReader& t, GroupConfig& g) {
    t.array("clients", 1, [&](const Node& n, const std::string& path) {
        if (n.kind == Node::Kind::string) {
            if (auto mac = MacAddress::parse(n.text)) {
                g.macs.push_back(*mac);
                return;
            }
        }
        if (auto cidr = read_cidr(t.context(), n, path)) {
            g.clients.push_back(*cidr);
        }
    });
}

/// `key`: names of lists of `lists`; unset when absent.
void read_list_names(TableReader& t, std::string_view key, const std::vector<ListConfig>& lists,
                     std::optional<std::vector<std::string>>& out) {
    std::vector<std::string> names;
    const bool present = t.array(key, 0, [&](const Node& n, const std::string& path) {
        if (!expect_kind(t.context(), n, path, Node::Kind::string, "a list name")) {
            return;
        }
        const bool known = std::any_of(lists.begin(), lists.end(),
                                       [&](const ListConfig& l) { return l.name == n.text; });
        if (!known) {
            t.context().error(
                Errc::bad_value, n.line, path,
                "\"" + n.text + "\" is not the name of one of the [[" + std::string(key) + "]]");
            return;
        }
        names.push_back(n.text);
    });
    if (present) {
        out = std::move(names);
    }
}

/// The names of the lists the group uses: its own choice, else every list of the kind.
std::set<std::string> lists_of(const GroupConfig& g, const Config& c) {
    std::set<std::string> names;
    const auto add = [&](const std::optional<std::vector<std::string>>& chosen,
                         const std::vector<ListConfig>& all) {
        if (chosen) {
            names.insert(chosen->begin(), chosen->end());
        } else {
            for (const ListConfig& l : all) {
                names.insert(l.name);
            }
        }
    };
    add(g.blocklists, c.blocklists);
    add(g.allowlists, c.allowlists);
    return names;
}

void read_window(TableReader& w, const std::set<std::string>& group_lists, ScheduleWindow& out) {
    const bool has_lists = w.array("lists", 1, [&](const Node& n, const std::string& path) {
        if (!expect_kind(w.context(), n, path, Node::Kind::string, "a list name")) {
            return;
        }
        if (group_lists.count(n.text) == 0) {
            w.context().error(Errc::bad_value, n.line, path,
                              "\"" + n.text + "\" is not one of this group's lists");
            return;
        }
        out.lists.push_back(n.text);
    });
    if (!has_lists && w.find("lists") == nullptr) {
        w.context().error(Errc::missing_key, w.line(), w.path_of("lists"),
                          "is required: the lists this window switches on");
    }
    const EnumNames<Weekday> days = {
        {"mon", Weekday::mon}, {"tue", Weekday::tue}, {"wed", Weekday::wed}, {"thu", Weekday::thu},
        {"fri", Weekday::fri}, {"sat", Weekday::sat}, {"sun", Weekday::sun}};
    const bool has_days = w.array("days", 1, [&](const Node& n, const std::string& path) {
        if (!expect_kind(w.context(), n, path, Node::Kind::string, "a day like \"mon\"")) {
            return;
        }
        for (const auto& [name, day] : days) {
            if (n.text == name) {
                out.days.push_back(day);
                return;
            }
        }
        w.context().error(Errc::bad_value, n.line, path,
                          "\"" + n.text + "\" is not a day (mon, tue, wed, thu, fri, sat, sun)");
    });
    if (!has_days) {
        for (const auto& entry : days) {
            out.days.push_back(entry.second);
        }
    }
    const auto from = read_clock(w, "from");
    const auto to = read_clock(w, "to");
    if (from && to) {
        out.from_minute = *from;
        out.to_minute = *to;
        if (*from == *to) {
            w.context().error(Errc::conflict, w.find("to")->line, w.path_of("to"),
                              "equals `from`: the window would be empty");
        }
    }
}

void read_group(TableReader& t, const Config& config, GroupConfig& g) {
    if (!t.string("name", g.name) && t.find("name") == nullptr) {
        t.context().error(Errc::missing_key, t.line(), t.path_of("name"),
                          "is required: every group needs a name");
    }
    const bool is_default = g.name == "default";
    read_clients(t, g);
    if (!is_default && t.find("clients") == nullptr) {
        t.context().error(Errc::missing_key, t.line(), t.path_of("clients"),
                          "is required: the addresses, prefixes or MAC addresses of the group");
    } else if (is_default && (!g.clients.empty() || !g.macs.empty())) {
        t.context().error(Errc::conflict, t.find("clients")->line, t.path_of("clients"),
                          "the default group holds every client no other group names; it takes "
                          "no `clients`");
    }
    read_list_names(t, "blocklists", config.blocklists, g.blocklists);
    read_list_names(t, "allowlists", config.allowlists, g.allowlists);
    BlockingMode mode{};
    if (t.enumeration<BlockingMode>("blocking_mode", mode, blocking_mode_names())) {
        g.blocking_mode = mode;
    }
    t.boolean("filter_aaaa", g.filter_aaaa);
    t.array("upstreams", 1, [&](const Node& n, const std::string& path) {
        if (auto ep = read_endpoint(t.context(), n, path, 53)) {
            g.upstreams.push_back(*ep);
        }
    });
    const std::set<std::string> group_lists = lists_of(g, config);
    t.tables("schedule", [&](TableReader& w) {
        ScheduleWindow window;
        read_window(w, group_lists, window);
        g.schedule.push_back(std::move(window));
    });
}

}  // namespace

void read_groups(TableReader& top, Config& config) {
    std::set<std::string> names;
    top.tables("groups", [&](TableReader& t) {
        GroupConfig g;
        read_group(t, config, g);
        if (!g.name.empty() && !names.insert(g.name).second) {
            t.context().error(Errc::conflict, t.find("name")->line, t.path_of("name"),
                              "\"" + g.name + "\" names another group already");
        }
        config.groups.push_back(std::move(g));
    });
    constexpr std::size_t kMaxGroupUpstreams = 250;  // each is a cache partition of 8 bits
    const auto own = std::count_if(config.groups.begin(), config.groups.end(),
                                   [](const GroupConfig& g) { return !g.upstreams.empty(); });
    if (static_cast<std::size_t>(own) > kMaxGroupUpstreams) {
        top.context().error(Errc::bad_value, top.find("groups")->line, top.path_of("groups"),
                            "at most 250 groups may have their own upstreams");
    }
}

}  // namespace moat::config::detail
