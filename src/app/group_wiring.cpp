#include "group_wiring.hpp"

#include "lists.hpp"
#include "wiring.hpp"

namespace moat::app {
namespace {

/// Ids of the lists of `kind` named in `names`.
void ids_of(const config::Config& c, filter::ListKind kind, const std::vector<std::string>& names,
            std::vector<std::uint32_t>& out) {
    const auto& all = kind == filter::ListKind::block ? c.blocklists : c.allowlists;
    for (std::size_t i = 0; i < all.size(); ++i) {
        for (const std::string& name : names) {
            if (all[i].name == name) {
                out.push_back(list_id(c, kind, i));
            }
        }
    }
}

/// The group's chosen lists of `kind`, or every list of that kind.
void chosen(const config::Config& c, filter::ListKind kind,
            const std::optional<std::vector<std::string>>& names, std::vector<std::uint32_t>& out) {
    const auto& all = kind == filter::ListKind::block ? c.blocklists : c.allowlists;
    if (names) {
        ids_of(c, kind, *names, out);
        return;
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        out.push_back(list_id(c, kind, i));
    }
}

engine::GroupOptions group_options(const config::Config& c, const config::GroupConfig& g) {
    engine::GroupOptions o;
    o.name = g.name;
    o.clients = g.clients;
    o.macs = g.macs;
    o.every_list = !g.blocklists && !g.allowlists;
    chosen(c, filter::ListKind::block, g.blocklists, o.lists);
    chosen(c, filter::ListKind::allow, g.allowlists, o.lists);
    // [rules] apply to every group, whatever lists it picks.
    o.lists.push_back(rules_id(c, filter::ListKind::block));
    o.lists.push_back(rules_id(c, filter::ListKind::allow));
    if (g.blocking_mode) {
        o.blocking_mode = engine_mode(*g.blocking_mode);
    }
    o.filter_aaaa = g.filter_aaaa;
    for (const config::ScheduleWindow& w : g.schedule) {
        engine::ScheduleWindow window;
        ids_of(c, filter::ListKind::block, w.lists, window.lists);
        ids_of(c, filter::ListKind::allow, w.lists, window.lists);
        window.days = 0;
        for (const config::Weekday d : w.days) {
            window.days = static_cast<std::uint8_t>(window.days | (1U << static_cast<unsigned>(d)));
        }
        window.from_minute = w.from_minute;
        window.to_minute = w.to_minute;
        o.schedule.push_back(std::move(window));
    }
    return o;
}

}  // namespace

void add_groups(const config::Config& c, engine::EngineOptions& o) {
    o.default_group.name = "default";
    std::size_t own_upstreams = 0;
    for (const config::GroupConfig& g : c.groups) {
        engine::GroupOptions group = group_options(c, g);
        if (!g.upstreams.empty()) {  // the same order as group_routes()
            group.route = 1 + c.upstream.conditional.size() + own_upstreams;
            group.cache_partition = static_cast<std::uint8_t>(++own_upstreams);
        }
        if (g.name == "default") {
            o.default_group = std::move(group);
        } else {
            o.groups.push_back(std::move(group));
        }
    }
}

std::vector<std::vector<config::Endpoint>> group_routes(const config::Config& c) {
    std::vector<std::vector<config::Endpoint>> routes;
    for (const config::GroupConfig& g : c.groups) {
        if (!g.upstreams.empty()) {
            routes.push_back(g.upstreams);
        }
    }
    return routes;
}

}  // namespace moat::app
