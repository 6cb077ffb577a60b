#include "daemon.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <csignal>
#include <memory>
#include <sstream>
#include <tl/expected.hpp>

#include "api_routes.hpp"
#include "control_socket.hpp"
#include "embedded.hpp"
#include "list_refresher.hpp"
#include "lists.hpp"
#include "logging.hpp"
#include "metrics_page.hpp"
#include "moat/api/http_server.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/engine/engine.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/address.hpp"
#include "moat/upstream/forwarder.hpp"
#include "neighbour_table.hpp"
#include "query_log.hpp"
#include "wiring.hpp"
#include "worker.hpp"

namespace moat::app {
namespace {

constexpr int kExitConfig = 78;       // EX_CONFIG
constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE

/// Everything a (re)load produces before it touches the running daemon.
struct Loaded {
    config::Config config;
    CompiledLists lists;
    engine::LocalZone zone;
};

std::shared_ptr<Loaded> prepare(config::Config c, bool with_embedded) {
    auto l = std::make_shared<Loaded>();
    l->lists = compile_lists(c, with_embedded);
    std::vector<std::string> problems;
    l->zone = local_zone(c, problems);
    for (const std::string& p : problems) {
        spdlog::warn("{}", p);
    }
    l->config = std::move(c);
    return l;
}

std::shared_ptr<cache::Cache> make_cache(const Clock& clock, const config::Config& c) {
    if (c.cache.size == 0) {
        return nullptr;
    }
    return std::make_shared<cache::Cache>(clock, cache_options(c));
}

class Daemon {
public:
    Daemon(Launch launch, const std::shared_ptr<Loaded>& loaded)
        : launch_(std::move(launch)),
          config_(loaded->config),
          publisher_(loaded->lists.snapshot ? loaded->lists.snapshot
                                            : std::make_shared<const filter::Snapshot>()),
          cache_(make_cache(clock_, config_)),
          forwarder_(io_, upstream_options(config_)),
          query_log_(QueryLog::start(config_.querylog)),
          path_(std::make_shared<engine::Engine>(engine_options_of(config_),
                                                 std::move(loaded->zone), publisher_, cache_),
                forwarder_),
          server_(io_, server_options(config_), path_),
          signals_(io_, SIGHUP, SIGTERM, SIGINT),
          drain_timer_(io_),
          refresher_(io_, [this] { recompile_lists(); }),
          control_(io_, [this](const std::string& line) { return control(line); }) {
        signals_.add(SIGUSR1);
        path_.set_log(query_log_ ? &query_log_->queue() : nullptr);
    }

    ~Daemon() {
        refresher_.stop();
        compiles_.stop();
    }
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    int run() {
        if (auto started = server_.start(); !started) {
            spdlog::error("cannot listen: {}", started.error());
            return kExitUnavailable;
        }
        for (const auto& l : config_.server.listen) {
            spdlog::info("listening on {} (udp and tcp)", l.to_text());
        }
        if (config_.upstream.servers.empty()) {
            spdlog::info("no upstream configured: forwarding to Quad9 (9.9.9.9, 149.112.112.112)");
        }
        wait_for_signal();
        if (!config_.server.control_socket.empty()) {
            if (auto error = control_.open(config_.server.control_socket); !error.empty()) {
                spdlog::warn("{}; `dnsmoat pause` will not reach this daemon", error);
            }
        }
        refresher_.configure(config_);
        start_api(config_.api);
        spdlog::info("dnsmoat {} ready", version());
        io_.run();
        spdlog::info("dnsmoat stopped");
        return 0;
    }

private:
    /// The engine's options with what only the daemon has: the clock and neighbour table.
    engine::EngineOptions engine_options_of(const config::Config& c) {
        engine::EngineOptions o = engine_options(c);
        o.clock = &clock_;
        o.neighbours = &neighbours_;
        o.pauses = &pauses_;
        const bool macs = std::any_of(c.groups.begin(), c.groups.end(),
                                      [](const config::GroupConfig& g) { return !g.macs.empty(); });
        if (macs && !neighbours_started_) {
            neighbours_started_ = true;
            neighbours_.start();
        }
        return o;
    }

    /// The HTTP endpoint (/metrics, /health); a failure to bind is reported, DNS goes on.
    void start_api(const config::ApiConfig& c) {
        if (api_) {
            api_->stop();
            api_.reset();
        }
        if (!c.enabled) {
            return;
        }
        api::HttpServerOptions o;
        for (const config::Endpoint& e : c.listen) {
            o.listen.emplace_back(upstream::to_asio(e.address), e.port);
        }
        api_ = std::make_unique<api::HttpServer>(io_, o, [this](const http::Request& r) {
            return api_route(r, [this] {
                return metrics_text(
                    {path_, server_, cache_.get(), query_log_.get(), *publisher_.current()});
            });
        });
        if (auto started = api_->start(); !started) {
            spdlog::warn("api: cannot listen on {}; /metrics is off", started.error());
            api_.reset();
            return;
        }
        for (const config::Endpoint& e : c.listen) {
            spdlog::info("api: /metrics and /health on http://{}", e.to_text());
        }
    }

    /// A request line from the control socket (control_socket.hpp): pause or resume blocking.
    std::string control(const std::string& line) {
        std::istringstream in(line);
        std::string verb;
        std::string group;
        in >> verb;
        long long seconds = 0;
        if (verb == "pause" && !(in >> seconds && seconds >= 1 && seconds <= 86400)) {
            return "error: pause needs a number of seconds, 1..86400";
        }
        if (verb != "pause" && verb != "resume") {
            return "error: unknown request \"" + verb +
                   "\" (pause SECONDS [GROUP], resume [GROUP])";
        }
        in >> group;
        const bool known =
            group.empty() || group == "default" ||
            std::any_of(config_.groups.begin(), config_.groups.end(),
                        [&](const config::GroupConfig& g) { return g.name == group; });
        if (!known) {
            return "error: no group named \"" + group + "\"";
        }
        const std::string who = group.empty() ? "everyone" : "group " + group;
        if (verb == "resume") {
            pauses_.resume(group);
            spdlog::info("blocking resumed for {}", who);
            return "ok: blocking resumed for " + who;
        }
        pauses_.pause(group, clock_.now() + std::chrono::seconds(seconds));
        spdlog::info("blocking paused for {} for {} s", who, seconds);
        return "ok: blocking paused for " + who + " for " + std::to_string(seconds) + " s";
    }

    void wait_for_signal() {
        signals_.async_wait([this](const std::error_code& ec, int signal) {
            if (ec) {
                return;
            }
            if (signal == SIGHUP) {
                reload();
                wait_for_signal();
            } else if (signal == SIGUSR1) {
                spdlog::info("lists: refreshing the downloaded lists now (SIGUSR1)");
                refresher_.refresh_all_now();
                wait_for_signal();
            } else {
                shutdown();
            }
        });
    }

    void reload() {
        if (reloading_) {
            reload_again_ = true;  // one more after the running one, with the newest files
            return;
        }
        reloading_ = true;
        spdlog::info("reload: reading {}", launch_.config_file ? launch_.config_file->string()
                                                               : std::string("embedded defaults"));
        // Lists compile aside (seconds for big lists); queries keep the running config meanwhile.
        compiles_.post([this] {
            auto c = load_config(launch_);
            std::shared_ptr<Loaded> loaded;
            std::string error;
            if (c) {
                loaded = prepare(std::move(*c), !launch_.config_file.has_value());
            } else {
                error = c.error();
            }
            asio::post(io_, [this, loaded, error] {
                if (loaded) {
                    apply(*loaded);
                    refresher_.refresh_all_now();  // cheap for unchanged lists (conditional GET)
                } else {
                    spdlog::error("reload failed, keeping the running configuration:\n{}", error);
                }
                reloading_ = false;
                if (reload_again_ && !stopping_) {
                    reload_again_ = false;
                    reload();
                }
            });
        });
    }

    /// After downloads installed new copies: compiles the lists of the running config again.
    void recompile_lists() {
        compiles_.post([this, c = config_, generation = generation_] {
            auto lists =
                std::make_shared<CompiledLists>(compile_lists(c, !launch_.config_file.has_value()));
            asio::post(io_, [this, lists, generation] {
                if (stopping_ || generation != generation_) {
                    return;  // a reload since then compiled the new copies with its own config
                }
                if (lists->snapshot && lists->problems.empty()) {
                    publisher_.publish(lists->snapshot);
                    spdlog::info("lists: now serving the new downloads");
                } else {
                    spdlog::warn("lists: some lists could not be read; the running lists stay");
                }
            });
        });
    }

    void apply(Loaded& loaded) {
        const config::Config& c = loaded.config;
        ++generation_;
        if (loaded.lists.snapshot && loaded.lists.problems.empty()) {
            publisher_.publish(loaded.lists.snapshot);
        } else {
            spdlog::warn("reload: some lists could not be read; the running lists stay");
        }
        if (c.cache != config_.cache) {
            cache_ = make_cache(clock_, c);
            spdlog::info("reload: cache settings changed; the cache starts empty");
        }
        if (c.server != config_.server || c.tcp != config_.tcp) {
            spdlog::warn("reload: [server] and [tcp] changes take effect at the next restart");
        }
        path_.set_engine(std::make_shared<engine::Engine>(
            engine_options_of(c), std::move(loaded.zone), publisher_, cache_));
        forwarder_.reconfigure(upstream_options(c));
        if (c.api != config_.api) {
            start_api(c.api);
        }
        if (c.querylog != config_.querylog) {
            // The old writer stores what it has queued before the new one opens the file.
            path_.set_log(nullptr);
            query_log_.reset();
            query_log_ = QueryLog::start(c.querylog);
            path_.set_log(query_log_ ? &query_log_->queue() : nullptr);
        }
        set_log_level(c.log.level);
        // Everything but what needs a restart: the running config is what the daemon does.
        const config::ServerConfig server = config_.server;
        const config::TcpConfig tcp = config_.tcp;
        config_ = c;
        config_.server = server;
        config_.tcp = tcp;
        refresher_.configure(config_);
        spdlog::info("reload: applied");
    }

    void shutdown() {
        if (stopping_) {
            return;
        }
        stopping_ = true;
        spdlog::info("shutting down: answering {} queries in flight", path_.in_flight());
        signals_.cancel();
        control_.close();
        if (api_) {
            api_->stop();
        }
        refresher_.stop();
        neighbours_.stop();
        server_.stop_receiving();
        drain_deadline_ = std::chrono::steady_clock::now() + config_.upstream.total_timeout +
                          std::chrono::seconds(1);
        drain();
    }

    void drain() {
        if (server_.idle() || std::chrono::steady_clock::now() >= drain_deadline_) {
            forwarder_.cancel_all();
            io_.stop();
            return;
        }
        drain_timer_.expires_after(std::chrono::milliseconds(20));
        drain_timer_.async_wait([this](const std::error_code& ec) {
            if (!ec) {
                drain();
            }
        });
    }

    Launch launch_;
    config::Config config_;
    SystemClock clock_;
    asio::io_context io_{1};
    NeighbourTable neighbours_{io_};
    bool neighbours_started_ = false;
    filter::SnapshotPublisher publisher_;
    std::shared_ptr<cache::Cache> cache_;
    upstream::Forwarder forwarder_;
    std::unique_ptr<QueryLog> query_log_;  // before path_, which points into its queue
    server::QueryPath path_;
    server::Server server_;
    asio::signal_set signals_;
    asio::steady_timer drain_timer_;
    std::chrono::steady_clock::time_point drain_deadline_;
    std::uint64_t generation_ = 0;  ///< of the applied config, counted by apply()
    bool reloading_ = false;
    bool reload_again_ = false;
    bool stopping_ = false;
    ListRefresher refresher_;
    engine::Pauses pauses_;
    ControlSocket control_;
    std::unique_ptr<api::HttpServer> api_;
    Worker compiles_;  // last: its thread stops before the members its jobs use
};

}  // namespace

int run_daemon(const Launch& launch) {
    auto c = load_config(launch);
    if (!c) {
        setup_logging(config::LogLevel::info);
        spdlog::error("invalid configuration:\n{}", c.error());
        return kExitConfig;
    }
    setup_logging(c->log.level);
    spdlog::info(
        "dnsmoat {} starting with {}", version(),
        launch.config_file ? launch.config_file->string() : std::string("the embedded defaults"));
    std::signal(SIGPIPE, SIG_IGN);  // a client closing TCP early must not kill the daemon
    auto loaded = prepare(std::move(*c), !launch.config_file.has_value());
    Daemon daemon(launch, loaded);
    return daemon.run();
}

}  // namespace moat::app
