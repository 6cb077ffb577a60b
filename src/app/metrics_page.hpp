// The /metrics page: every counter and gauge of the running daemon in the Prometheus text
// format (docs/api.md lists them), gathered from the parts that keep them when it is scraped.
#pragma once

#include <string>

#include "moat/cache/cache.hpp"
#include "moat/filter/snapshot.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/forwarder.hpp"
#include "query_log.hpp"

namespace moat::app {

struct MetricsSources {
    const server::QueryPath& path;
    const server::Server& server;
    const cache::Cache* cache;  ///< null: caching off
    const QueryLog* query_log;  ///< null: no log
    const filter::Snapshot& snapshot;
    const upstream::Forwarder& forwarder;
    const config::Config& config;  ///< the downloaded lists, whose status files are read
};

[[nodiscard]] std::string metrics_text(const MetricsSources& s);

}  // namespace moat::app
