// [[groups]] of the config → the engine's GroupOptions, with lists named by their stable ids
// (lists.hpp: list_id) so a list that fails to load does not shift another group's lists.
#pragma once

#include "moat/config/config.hpp"
#include "moat/engine/options.hpp"

namespace moat::app {

/// Fills `o.groups` and `o.default_group` from `c.groups`.
void add_groups(const config::Config& c, engine::EngineOptions& o);

}  // namespace moat::app
