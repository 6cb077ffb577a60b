// The config mapped onto each module's own options (modules never see config::Config).
#pragma once

#include <string>
#include <vector>

#include "moat/cache/options.hpp"
#include "moat/config/config.hpp"
#include "moat/engine/local_zone.hpp"
#include "moat/engine/options.hpp"
#include "moat/engine/rate_limiter.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/options.hpp"

namespace moat::app {

/// Used when the config names no upstream server: Quad9's filtered-free, DNSSEC-validating
/// resolvers, as AdGuard Home defaults to a public resolver rather than to nothing.
[[nodiscard]] std::vector<config::UpstreamServer> fallback_upstreams();

/// Without the clock and neighbour table, which the daemon owns and adds.
[[nodiscard]] engine::EngineOptions engine_options(const config::Config& c);
[[nodiscard]] engine::BlockingMode engine_mode(config::BlockingMode mode) noexcept;
[[nodiscard]] engine::RateLimitOptions rate_limit_options(const config::Config& c);
[[nodiscard]] upstream::Options upstream_options(const config::Config& c);
[[nodiscard]] server::ServerOptions server_options(const config::Config& c);
[[nodiscard]] cache::Options cache_options(const config::Config& c);
/// The local records and hosts file; `problems` gets the hosts file's bad lines (file:line).
[[nodiscard]] engine::LocalZone local_zone(const config::Config& c,
                                           std::vector<std::string>& problems);

}  // namespace moat::app
