// The REST API (docs/api.md, docs/openapi.yaml): sign-in, statistics, the query log, lists,
// rules, local records, groups and clients, blocking and pauses, explain, the cache, and the
// config backup. Runs on the event loop; slow work (password checks, log searches, backups) goes
// to a worker thread and answers later, so DNS never waits on the dashboard.
//
// Changes are written to the config file (config_store.hpp) and answered once the daemon has
// reloaded it, so a 200 means "in effect now".
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config_store.hpp"
#include "moat/api/auth.hpp"
#include "moat/api/router.hpp"
#include "moat/cache/cache.hpp"
#include "moat/config/config.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/pauses.hpp"
#include "moat/querylog/rolling_stats.hpp"
#include "moat/server/query_path.hpp"
#include "moat/upstream/forwarder.hpp"

namespace moat::app {

/// What the API reads and steers in the running daemon (implemented by it).
class RestBackend {
public:
    virtual ~RestBackend() = default;
    [[nodiscard]] virtual const config::Config& config() const = 0;
    [[nodiscard]] virtual const ConfigStore& store() const = 0;
    [[nodiscard]] virtual const querylog::RollingStats& stats() const = 0;
    [[nodiscard]] virtual server::QueryPath& path() = 0;
    [[nodiscard]] virtual engine::Pauses& pauses() = 0;
    [[nodiscard]] virtual const Clock& clock() const = 0;
    [[nodiscard]] virtual cache::Cache* cache() = 0;  ///< null: caching off
    [[nodiscard]] virtual const upstream::Forwarder& forwarder() const = 0;
    /// Entries in the compiled lists now.
    [[nodiscard]] virtual std::size_t rules() const = 0;
    virtual void refresh_lists() = 0;
    /// Reloads the config file as SIGHUP does; `done` runs on the event loop once the new config
    /// is applied (empty text) or refused (its errors).
    virtual void reload(std::function<void(const std::string& error)> done) = 0;
    /// Runs `job` on the API's worker thread (jobs post their results back with post()).
    virtual void offload(std::function<void()> job) = 0;
    virtual void post(std::function<void()> job) = 0;
};

/// The Unix time of a steady-clock instant; null when it is not in the future (pauses).
[[nodiscard]] inline nlohmann::json unix_time_of(const Clock& clock, Clock::time_point when) {
    const Clock::time_point now = clock.now();
    if (when <= now) {
        return nullptr;
    }
    const auto wall =
        clock.wall() + std::chrono::duration_cast<std::chrono::system_clock::duration>(when - now);
    return std::chrono::duration_cast<std::chrono::seconds>(wall.time_since_epoch()).count();
}

/// Lives as long as the daemon (work it hands to the worker thread comes back to it).
class RestApi {
public:
    RestApi(RestBackend& backend, api::AuthOptions auth);

    /// A request whose path starts with /api/.
    std::optional<http::Response> handle(const http::Request& request, const api::Peer& peer,
                                         const api::Responder& later);

    /// New password or tokens (a reload): sessions end when the password changes.
    void set_auth(api::AuthOptions auth);

private:
    using Params = api::Params;
    void add_auth_routes();
    void add_stats_routes();    // rest_stats.cpp
    void add_log_routes();      // rest_stats.cpp
    void add_list_routes();     // rest_settings.cpp
    void add_record_routes();   // rest_settings.cpp
    void add_control_routes();  // rest_control.cpp
    void add_backup_routes();   // rest_control.cpp

    /// Writes `change` to the config file, reloads, and answers `success` (or the failure).
    std::optional<http::Response> change_config(const ConfigStore::Change& change,
                                                const api::Responder& later, int success_status,
                                                nlohmann::json success_body);

    /// The request once its Bearer token (not seen before) checks out on the worker.
    std::optional<http::Response> check_token_then_route(const http::Request& request,
                                                         const std::string& token,
                                                         const api::Peer& peer,
                                                         const api::Responder& later);
    /// The route's answer; a body field of the wrong JSON type is the client's 400.
    std::optional<http::Response> route(const http::Request& request, const api::Peer& peer,
                                        const api::Responder& later);

    RestBackend& backend_;
    api::Authenticator auth_;
    api::Router router_;
    std::size_t token_checks_ = 0;  ///< on the worker now
};

}  // namespace moat::app
