#include "daemon.hpp"

#include <malloc.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>
#include <tl/expected.hpp>

#include "api_routes.hpp"
#include "capability_shedding.hpp"
#include "config_store.hpp"
#include "config_watcher.hpp"
#include "control_socket.hpp"
#include "embedded.hpp"
#include "list_refresher.hpp"
#include "lists.hpp"
#include "logging.hpp"
#include "metrics_page.hpp"
#include "moat/api/http_server.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/core/log.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/rate_limiter.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/address.hpp"
#include "moat/upstream/forwarder.hpp"
#include "neighbour_table.hpp"
#include "privileges.hpp"
#include "query_log.hpp"
#include "rest_api.hpp"
#include "socket_activation.hpp"
#include "systemd_notify.hpp"
#include "wiring.hpp"
#include "worker.hpp"

namespace moat::app {
namespace {

constexpr int kExitConfig = 78;       // EX_CONFIG
constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE
/// How often STATUS= is refreshed when no watchdog asks for more.
constexpr std::chrono::seconds kStatusInterval{10};

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
        log::warn("{}", p);
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

/// The text of the config file (empty when it cannot be read): to tell a hand edit from the
/// file the daemon already runs.
std::string file_text(const std::optional<std::filesystem::path>& file) {
    if (!file) {
        return {};
    }
    std::ifstream in(*file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

api::AuthOptions auth_options(const config::ApiConfig& c) {
    return {c.password_hash, c.token_hashes};
}

/// Where the API listens: as configured, but loopback only while no password is set.
std::vector<config::Endpoint> api_listen(const config::ApiConfig& c) {
    if (!c.password_hash.empty()) {
        return c.listen;
    }
    std::vector<config::Endpoint> out;
    for (const config::Endpoint& e : c.listen) {
        if (e.address.is_loopback()) {
            out.push_back(e);
        } else {
            log::warn(
                "api: no password set ([api] password_hash): listening on 127.0.0.1:{} "
                "instead of {}; set one with `dnsmoat password-hash`",
                e.port, e.to_text());
            const config::Endpoint local{IpAddress::v4_of(127, 0, 0, 1), e.port};
            if (std::find(out.begin(), out.end(), local) == out.end()) {
                out.push_back(local);
            }
        }
    }
    return out;
}

/// The server's options from the config, with the sockets systemd bound in its place.
server::ServerOptions server_options_with(const config::Config& c,
                                          const std::vector<ActivatedSocket>& activated) {
    server::ServerOptions o = server_options(c);
    for (const ActivatedSocket& a : activated) {
        o.inherited.push_back(a.socket);
    }
    return o;
}

/// The directories the daemon writes once it runs as its own user.
std::vector<std::filesystem::path> writable_dirs(const config::Config& c) {
    std::vector<std::filesystem::path> dirs;
    dirs.emplace_back(c.lists.state_dir);
    if (c.querylog.enabled) {
        dirs.push_back(std::filesystem::path(c.querylog.path).parent_path());
    }
    if (!c.server.control_socket.empty()) {
        dirs.push_back(std::filesystem::path(c.server.control_socket).parent_path());
    }
    return dirs;
}

class Daemon final : public RestBackend {
public:
    Daemon(Launch launch, const std::shared_ptr<Loaded>& loaded,
           std::vector<ActivatedSocket> activated)
        : launch_(std::move(launch)),
          config_(loaded->config),
          store_(launch_.config_file),
          loaded_text_(file_text(launch_.config_file)),
          publisher_(loaded->lists.snapshot ? loaded->lists.snapshot
                                            : std::make_shared<const filter::Snapshot>()),
          cache_(make_cache(clock_, config_)),
          forwarder_(io_, upstream_options(config_)),
          path_(std::make_shared<engine::Engine>(engine_options_of(config_),
                                                 std::move(loaded->zone), publisher_, cache_),
                forwarder_),
          server_(io_, server_options_with(config_, activated), path_),
          activated_(std::move(activated)),
          signals_(io_, SIGHUP, SIGTERM, SIGINT),
          drain_timer_(io_),
          status_timer_(io_),
          rate_limit_timer_(io_),
          refresher_(io_, [this] { recompile_lists(); }),
          control_(io_, [this](const std::string& line) { return control(line); }),
          rest_(*this, auth_options(config_.api)),
          watcher_(io_, [this] { file_changed(); }) {
        signals_.add(SIGUSR1);
    }

    ~Daemon() override {
        // Queries still in flight are answered (SERVFAIL) while the path and the listeners they
        // answer through exist: ~Forwarder would answer them too, but after both are gone. A
        // normal stop has cancelled them already (drain()); this covers an exception that
        // unwinds out of run(), which main() reports.
        forwarder_.cancel_all();
        refresher_.stop();
        compiles_.stop();
        api_work_.stop();
    }
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    int run() {
        if (auto started = server_.start(); !started) {
            log::error("cannot listen: {}", started.error());
            return kExitUnavailable;
        }
        log_listeners();
        if (config_.upstream.servers.empty()) {
            log::info("no upstream configured: forwarding to Quad9 (9.9.9.9, 149.112.112.112)");
        }
        wait_for_signal();
        start_api(config_.api);  // before the privilege drop: its port may be a low one too
        auto dropped = drop_privileges(config_.server.user, writable_dirs(config_));
        if (!dropped) {
            log::error("{}", dropped.error());
            return kExitUnavailable;
        }
        report(*dropped);
        // From here on the daemon runs unprivileged and writes files as its own user.
        query_log_ = QueryLog::start(config_.querylog, &stats_);
        path_.set_log(query_log_ ? &query_log_->queue() : nullptr);
        if (!config_.server.control_socket.empty()) {
            if (auto error = control_.open(config_.server.control_socket); !error.empty()) {
                log::warn("{}; `dnsmoat pause` will not reach this daemon", error);
            }
        }
        refresher_.configure(config_);
        rebuild_stats();
        if (launch_.config_file && !watcher_.watch(*launch_.config_file)) {
            log::info("config: cannot watch {} for edits; reload with SIGHUP",
                      launch_.config_file->string());
        }
        log::info("dnsmoat {} ready", version());
        notifier_.ready(status_line());
        tick_status();
        report_rate_limits();
        io_.run();
        log::info("dnsmoat stopped");
        return 0;
    }

    // RestBackend: what the REST API reads and steers.
    [[nodiscard]] const config::Config& config() const override { return config_; }
    [[nodiscard]] const ConfigStore& store() const override { return store_; }
    [[nodiscard]] const querylog::RollingStats& stats() const override { return stats_; }
    [[nodiscard]] server::QueryPath& path() override { return path_; }
    [[nodiscard]] engine::Pauses& pauses() override { return pauses_; }
    [[nodiscard]] const Clock& clock() const override { return clock_; }
    [[nodiscard]] cache::Cache* cache() override { return cache_.get(); }
    [[nodiscard]] const upstream::Forwarder& forwarder() const override { return forwarder_; }
    [[nodiscard]] std::size_t rules() const override {
        const auto snapshot = publisher_.current();
        return snapshot->name_rules() + snapshot->regex_rules();
    }
    void refresh_lists() override {
        log::info("lists: refreshing the downloaded lists now (API)");
        refresher_.refresh_all_now();
    }
    void reload(std::function<void(const std::string&)> done) override {
        next_done_.push_back(std::move(done));
        reload();
    }
    void offload(std::function<void()> job) override { api_work_.post(std::move(job)); }
    void post(std::function<void()> job) override { asio::post(io_, std::move(job)); }

private:
    void log_listeners() const {
        for (const ActivatedSocket& a : activated_) {
            log::info("listening on {} {}", a.description, handed_over_by());
        }
        const auto from_systemd = [this](server::ListenerKind kind) {
            return std::any_of(activated_.begin(), activated_.end(),
                               [kind](const ActivatedSocket& a) { return a.socket.kind == kind; });
        };
        if (!from_systemd(server::ListenerKind::dns)) {
            for (const auto& l : config_.server.listen) {
                log::info("listening on {} (udp and tcp)", l.to_text());
            }
        }
        if (!from_systemd(server::ListenerKind::dot)) {
            for (const auto& l : config_.server.dot) {
                log::info("listening on {} (dns over tls)", l.to_text());
            }
        }
        if (!from_systemd(server::ListenerKind::doh)) {
            for (const auto& l : config_.server.doh) {
                log::info("listening on {} (dns over https, {})", l.to_text(),
                          config_.server.doh_path);
            }
        }
        if (!from_systemd(server::ListenerKind::doh_plain)) {
            for (const auto& l : config_.server.doh_plain) {
                log::info("listening on {} (dns over plain http for a tls proxy, {})", l.to_text(),
                          config_.server.doh_path);
            }
        }
    }

    static void report(const PrivilegeDrop& dropped) {
        if (dropped.as_root) {
            log::warn("{}", dropped.summary);
        } else if (!dropped.summary.empty()) {
            log::info("{}", dropped.summary);
        }
        for (const std::string& w : dropped.warnings) {
            log::warn("{}", w);
        }
    }

    /// One line for `systemctl status`: what is loaded and what happened since the start.
    [[nodiscard]] std::string status_line() const {
        const auto& by_outcome = path_.metrics().by_outcome;
        std::uint64_t total = 0;
        for (const auto& counter : by_outcome) {
            total += counter.value();
        }
        const auto count = [&](engine::Outcome o) {
            return by_outcome[static_cast<std::size_t>(o)].value();
        };
        const std::uint64_t blocked =
            count(engine::Outcome::blocked) + count(engine::Outcome::refused);
        const std::uint64_t percent = total == 0 ? 0 : blocked * 100 / total;
        // A stale answer (serve-stale, cache.optimistic) came from the cache as much as a fresh
        // one.
        const std::uint64_t from_cache =
            count(engine::Outcome::cached) + count(engine::Outcome::stale);
        return fmt::format("{} rules; {} queries, {} blocked ({}%), {} from the cache", rules(),
                           total, blocked, percent, from_cache);
    }

    /// WATCHDOG=1 and a fresh STATUS= from the event loop itself, so a stuck loop is noticed.
    void tick_status() {
        if (!notifier_.enabled() || stopping_) {
            return;
        }
        notifier_.status(status_line());
        std::chrono::steady_clock::duration every = kStatusInterval;
        if (const auto watchdog = notifier_.watchdog_interval()) {
            notifier_.watchdog();
            every = std::min<std::chrono::steady_clock::duration>(*watchdog, every);
        }
        status_timer_.expires_after(every);
        status_timer_.async_wait([this](const std::error_code& ec) {
            if (!ec) {
                tick_status();
            }
        });
    }

    /// Every 10 s: the clients that went over the rate limit since, named once each time they
    /// go over (not per query, so a flood does not flood the log too).
    void report_rate_limits() {
        const engine::RateLimiter::Report report = rate_limiter_.take_report();
        if (report.limited_queries != 0) {
            std::string clients;
            for (const Cidr& c : report.newly_limited) {
                clients += (clients.empty() ? "" : ", ") +
                           (c.prefix_length == (c.address.v6 ? 128 : 32) ? c.address.to_text()
                                                                         : c.to_text());
            }
            if (report.more_clients != 0) {
                clients += fmt::format(" and {} more", report.more_clients);
            }
            const engine::RateLimitOptions& o = rate_limiter_.options();
            log::warn(
                "rate limit: {} queries over {} per second (burst {}) limited in the "
                "last {} s{}{}",
                report.limited_queries, o.queries_per_second, o.burst, kStatusInterval.count(),
                clients.empty() ? "" : "; now over: ", clients);
        }
        if (stopping_) {
            return;
        }
        rate_limit_timer_.expires_after(kStatusInterval);
        rate_limit_timer_.async_wait([this](const std::error_code& ec) {
            if (!ec) {
                report_rate_limits();
            }
        });
    }

    /// The statistics of the last day from the query log, once at start, on the API's worker:
    /// rows up to now (later ones reach the statistics through the log writer).
    void rebuild_stats() {
        if (!query_log_) {
            return;
        }
        const auto now =
            std::chrono::duration_cast<std::chrono::microseconds>(clock_.wall().time_since_epoch())
                .count();
        api_work_.post(
            [this, path = config_.querylog.path, privacy = config_.querylog.privacy, now] {
                replay_log(path, privacy, now);
                // Reading a day of a busy log leaves many megabytes free in this thread's malloc
                // arena, which glibc returns only from the arena's top: give every free page back.
                ::malloc_trim(0);
            });
    }

    /// rebuild_stats' work, on the API's worker; the database is closed when it returns.
    void replay_log(const std::string& path, config::LogPrivacy privacy, std::int64_t now) {
        auto db = querylog::Database::open(path, querylog::Database::Mode::read);
        if (!db) {
            return;
        }
        const std::int64_t day = querylog::RollingStats::kBucketUs *
                                 static_cast<std::int64_t>(querylog::RollingStats::kBuckets);
        const bool names =
            privacy == config::LogPrivacy::full || privacy == config::LogPrivacy::hide_clients;
        const bool clients =
            privacy == config::LogPrivacy::full || privacy == config::LogPrivacy::hide_domains;
        const auto started = std::chrono::steady_clock::now();
        auto groups = db->replay(now - day, now, querylog::RollingStats::kBucketUs,
                                 [&](const querylog::Database::Aggregate& a) {
                                     stats_.add(a.interval_start_us, a.outcome,
                                                names ? a.domain : std::string(),
                                                clients ? a.client : std::string(), a.count);
                                 });
        if (groups) {
            log::info("statistics: the last 24 h rebuilt from the query log in {} ms",
                      std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count());
        } else {
            log::warn("statistics: cannot read the query log: {}", groups.error());
        }
    }

    /// inotify saw the config file written: reload unless it says what runs already.
    void file_changed() {
        if (file_text(launch_.config_file) == loaded_text_ || reloading_) {
            if (reloading_) {
                reload_again_ = true;
            }
            return;
        }
        log::info("config: {} changed on disk", launch_.config_file->string());
        reload();
    }

    /// The engine's options with what only the daemon has: the clock and neighbour table.
    engine::EngineOptions engine_options_of(const config::Config& c) {
        engine::EngineOptions o = engine_options(c);
        o.clock = &clock_;
        o.neighbours = &neighbours_;
        o.pauses = &pauses_;
        rate_limiter_.configure(rate_limit_options(c));
        o.rate_limiter = &rate_limiter_;
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
        const std::vector<config::Endpoint> listen = api_listen(c);
        for (const config::Endpoint& e : listen) {
            o.listen.emplace_back(upstream::to_asio(e.address), e.port);
        }
        api_ = std::make_unique<api::HttpServer>(
            io_, o,
            [this](const http::Request& r, const api::Peer& peer, const api::Responder& later) {
                return api_route(r, peer, later, &rest_, [this] {
                    return metrics_text({path_, server_, cache_.get(), query_log_.get(),
                                         *publisher_.current(), forwarder_, config_});
                });
            });
        if (auto started = api_->start(); !started) {
            log::warn("api: cannot listen on {}; the dashboard and /metrics are off",
                      started.error());
            api_.reset();
            return;
        }
        for (const config::Endpoint& e : listen) {
            log::info("api: dashboard, REST API and /metrics on http://{}{}", e.to_text(),
                      c.password_hash.empty() ? " (no password set)" : "");
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
            log::info("blocking resumed for {}", who);
            return "ok: blocking resumed for " + who;
        }
        pauses_.pause(group, clock_.now() + std::chrono::seconds(seconds));
        log::info("blocking paused for {} for {} s", who, seconds);
        return "ok: blocking paused for " + who + " for " + std::to_string(seconds) + " s";
    }

    /// A renewed certificate (certbot, acme.sh) is picked up on SIGHUP, without a restart. The
    /// files named by the running config are read; a broken pair keeps the running one.
    void reload_certificate() {
        if (config_.server.dot.empty() && config_.server.doh.empty()) {
            return;
        }
        if (auto reloaded = server_.reload_tls(); !reloaded) {
            log::error("reload: keeping the running TLS certificate: {}", reloaded.error());
        } else {
            log::info("reload: TLS certificate {} read", config_.server.tls_certificate);
        }
    }

    void wait_for_signal() {
        signals_.async_wait([this](const std::error_code& ec, int signal) {
            if (ec) {
                return;
            }
            if (signal == SIGHUP) {
                reload_certificate();
                reload();
                wait_for_signal();
            } else if (signal == SIGUSR1) {
                log::info("lists: refreshing the downloaded lists now (SIGUSR1)");
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
        notifier_.reloading();
        running_done_ = std::move(next_done_);
        next_done_.clear();
        log::info("reload: reading {}", launch_.config_file ? launch_.config_file->string()
                                                            : std::string("embedded defaults"));
        // Lists compile aside (seconds for big lists); queries keep the running config meanwhile.
        compiles_.post([this] {
            std::string text = file_text(launch_.config_file);
            auto c = load_config(launch_);
            std::shared_ptr<Loaded> loaded;
            std::string error;
            if (c) {
                loaded = prepare(std::move(*c), !launch_.config_file.has_value());
            } else {
                error = c.error();
            }
            asio::post(io_, [this, loaded, error, text = std::move(text)] {
                if (loaded) {
                    apply(*loaded);
                    loaded_text_ = text;
                    refresher_.refresh_all_now();  // cheap for unchanged lists (conditional GET)
                } else {
                    log::error("reload failed, keeping the running configuration:\n{}", error);
                }
                for (const auto& done : running_done_) {
                    done(error);
                }
                running_done_.clear();
                reloading_ = false;
                notifier_.ready(status_line());
                if ((reload_again_ || !next_done_.empty()) && !stopping_) {
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
                    path_.engine()->refresh_snapshot();  // the old lists go now, not at a query
                    log::info("lists: now serving the new downloads");
                } else {
                    log::warn("lists: some lists could not be read; the running lists stay");
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
            log::warn("reload: some lists could not be read; the running lists stay");
        }
        if (c.cache != config_.cache) {
            cache_ = make_cache(clock_, c);
            log::info("reload: cache settings changed; the cache starts empty");
        }
        if (c.server != config_.server || c.tcp != config_.tcp) {
            log::warn("reload: [server] and [tcp] changes take effect at the next restart");
        }
        path_.set_engine(std::make_shared<engine::Engine>(
            engine_options_of(c), std::move(loaded.zone), publisher_, cache_));
        forwarder_.reconfigure(upstream_options(c));
        rest_.set_auth(auth_options(c.api));
        if (c.api.enabled != config_.api.enabled || api_listen(c.api) != api_listen(config_.api)) {
            start_api(c.api);
        }
        if (c.querylog != config_.querylog) {
            // The old writer stores what it has queued before the new one opens the file.
            path_.set_log(nullptr);
            query_log_.reset();
            query_log_ = QueryLog::start(c.querylog, &stats_);
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
        log::info("reload: applied");
    }

    void shutdown() {
        if (stopping_) {
            return;
        }
        stopping_ = true;
        notifier_.stopping();
        status_timer_.cancel();
        rate_limit_timer_.cancel();
        log::info("shutting down: answering {} queries in flight", path_.in_flight());
        signals_.cancel();
        control_.close();
        watcher_.stop();
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
    ConfigStore store_;
    std::string loaded_text_;  ///< the config file's text the running config came from
    CoarseClock clock_;        // read per query by the cache and the rate limiter (core/clock.hpp)
    engine::RateLimiter rate_limiter_;  // before path_: engine_options_of() configures it
    asio::io_context io_{1};
    NeighbourTable neighbours_{io_};
    bool neighbours_started_ = false;
    filter::SnapshotPublisher publisher_;
    std::shared_ptr<cache::Cache> cache_;
    upstream::Forwarder forwarder_;
    querylog::RollingStats stats_;         // before query_log_, whose writer feeds it
    std::unique_ptr<QueryLog> query_log_;  // before path_, which points into its queue
    server::QueryPath path_;
    server::Server server_;
    std::vector<ActivatedSocket> activated_;
    SystemdNotifier notifier_ = SystemdNotifier::from_environment();
    asio::signal_set signals_;
    asio::steady_timer drain_timer_;
    asio::steady_timer status_timer_;
    asio::steady_timer rate_limit_timer_;
    std::chrono::steady_clock::time_point drain_deadline_;
    std::uint64_t generation_ = 0;  ///< of the applied config, counted by apply()
    bool reloading_ = false;
    bool reload_again_ = false;
    /// Waiting for the running reload / for the next one (API changes made after it started).
    std::vector<std::function<void(const std::string&)>> running_done_;
    std::vector<std::function<void(const std::string&)>> next_done_;
    bool stopping_ = false;
    ListRefresher refresher_;
    engine::Pauses pauses_;
    ControlSocket control_;
    RestApi rest_;
    ConfigWatcher watcher_;
    std::unique_ptr<api::HttpServer> api_;
    Worker api_work_;  // password checks, log searches, the statistics' rebuild
    Worker compiles_;  // last: its thread stops before the members its jobs use
};

}  // namespace

int run_daemon(const Launch& launch, char** argv) {
    auto c = load_config(launch);
    if (!c) {
        setup_logging(config::LogLevel::info);
        log::error("invalid configuration:\n{}", c.error());
        return kExitConfig;
    }
    setup_logging(c->log.level);
    log::info(
        "dnsmoat {} starting with {}", version(),
        launch.config_file ? launch.config_file->string() : std::string("the embedded defaults"));
    std::signal(SIGPIPE, SIG_IGN);  // a client closing TCP early must not kill the daemon
    shed_capabilities_by_reexec(*c, argv);
    auto activated = sockets_from_systemd();
    if (!activated) {
        log::error("{}", activated.error());
        return kExitUnavailable;
    }
    auto loaded = prepare(std::move(*c), !launch.config_file.has_value());
    Daemon daemon(launch, loaded, std::move(*activated));
    return daemon.run();
}

}  // namespace moat::app
