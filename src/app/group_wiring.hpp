// [[groups]] of the config → the engine's GroupOptions, with lists named by their stable ids
// (lists.hpp: list_id) so a list that fails to load does not shift another group's lists.
#pragma once

#include "moat/config/config.hpp"
#include "moat/engine/options.hpp"

namespace moat::app {

/// Fills `o.groups` and `o.default_group` from `c.groups`. A group with its own upstreams gets
/// the route after the conditional ones, in the order of group_routes(), and a cache partition.
void add_groups(const config::Config& c, engine::EngineOptions& o);

/// The upstream servers of the groups that have their own, in route order.
[[nodiscard]] std::vector<std::vector<config::Endpoint>> group_routes(const config::Config& c);

}  // namespace moat::app
