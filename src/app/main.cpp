// dnsmoat: the command line. `run` serves DNS, `check-config` validates a file, `query` explains
// the lists' verdict on a name, `lists` shows the lists' state, `log` searches the query log,
// `stats` summarises it, `pause` / `resume` steer a running daemon, `password-hash` and
// `api-token` make the API's secrets, `--version` prints the version.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "daemon.hpp"
#include "embedded.hpp"
#include "lists_command.hpp"
#include "log_command.hpp"
#include "moat/config/loader.hpp"
#include "moat/lists/fetch_process.hpp"
#include "pause_command.hpp"
#include "query_command.hpp"
#include "secret_commands.hpp"
#include "stats_command.hpp"

namespace {

constexpr const char* kDefaultConfig = "/etc/dnsmoat/dnsmoat.toml";

/// The flags that add lists to the config's: for every command that compiles the lists.
void add_list_flags(CLI::App& cmd, moat::app::Overrides& o) {
    cmd.add_option("--blocklist", o.blocklists, "Add a blocklist file (format detected)")
        ->type_name("FILE");
    cmd.add_option("--allowlist", o.allowlists, "Add an allowlist file")->type_name("FILE");
}

/// Every override of the config: for the commands that run or check a daemon.
void add_override_flags(CLI::App& cmd, moat::app::Overrides& o) {
    cmd.add_option("--listen", o.listen, "Listen on ADDR:PORT ([ADDR]:PORT for IPv6); repeatable")
        ->type_name("ADDR:PORT");
    cmd.add_option("--upstream", o.upstreams,
                   "Forward to ADDR[:PORT], tls://ADDR#NAME or https://HOST/PATH; repeatable")
        ->type_name("ADDR:PORT");
    add_list_flags(cmd, o);
    cmd.add_option("--log-level", o.log_level, "trace, debug, info, warn or error")
        ->type_name("LEVEL");
}

/// --config given: it must exist. Not given: the default path if it exists, else the defaults.
std::optional<std::filesystem::path> config_to_use(const std::string& given) {
    if (!given.empty()) {
        return std::filesystem::path(given);
    }
    std::error_code ec;
    if (std::filesystem::exists(kDefaultConfig, ec)) {
        return std::filesystem::path(kDefaultConfig);
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        // There may be one we cannot see (the packaged /etc/dnsmoat is root:dnsmoat 0770):
        // reading it reports why, rather than silently running on the embedded defaults.
        return std::filesystem::path(kDefaultConfig);
    }
    return std::nullopt;
}

}  // namespace

namespace {

int run_main(int argc, char** argv) {
    CLI::App app{"dnsmoat: a network-wide DNS sinkhole"};
    app.require_subcommand(0, 1);
    bool show_version = false;
    app.add_flag("--version", show_version, "Print the version and exit");

    moat::app::Launch launch;
    std::string config_path;

    CLI::App* run = app.add_subcommand("run", "Serve DNS (the daemon)");
    run->add_option("-c,--config", config_path,
                    std::string("Config file (.toml or .json); default ") + kDefaultConfig +
                        " if it exists, else the embedded defaults")
        ->type_name("FILE");
    add_override_flags(*run, launch.overrides);

    std::string check_path;
    CLI::App* check = app.add_subcommand("check-config", "Validate a config file and exit");
    check->add_option("file", check_path, "The file to check")->required()->type_name("FILE");

    std::string query_name;
    CLI::App* query = app.add_subcommand("query", "Show which list and rule block or allow NAME");
    query->add_option("name", query_name, "A domain name")->required();
    query->add_option("-c,--config", config_path, "Config file whose lists to use")
        ->type_name("FILE");
    // Only the list flags: a verdict involves no listener, upstream or log.
    add_list_flags(*query, launch.overrides);

    bool lists_json = false;
    CLI::App* lists = app.add_subcommand(
        "lists",
        "Show each list: entries, invalid lines, and the downloads' last success and error");
    lists->add_option("-c,--config", config_path, "Config file whose lists to show")
        ->type_name("FILE");
    lists->add_flag("--json", lists_json, "Print JSON");

    moat::app::LogQuery log_query;
    std::int64_t log_before = 0;
    CLI::App* log = app.add_subcommand("log", "Search the query log, newest first");
    log->add_option("domain", log_query.domain, "Names containing this text (see --match)");
    log->add_option("--match", log_query.match, "substring (default), suffix or exact")
        ->type_name("HOW");
    log->add_option("--client", log_query.client, "Only this client address")->type_name("ADDR");
    log->add_option("--outcome", log_query.outcome,
                    "forwarded, cached, blocked, local, refused, servfail, ...")
        ->type_name("OUTCOME");
    log->add_option("--type", log_query.type, "Only this query type (A, AAAA, HTTPS, TYPE65)")
        ->type_name("TYPE");
    log->add_option("--since", log_query.since, "Only the last DURATION (15m, 2h, 7d)")
        ->type_name("DURATION");
    log->add_option("-n,--limit", log_query.limit, "Rows per page, 1..1000 (default 50)");
    CLI::Option* before =
        log->add_option("--before", log_before, "The next page: the id a page ends with")
            ->type_name("ID");
    log->add_option("-c,--config", config_path, "Config file naming the log's database")
        ->type_name("FILE");
    log->add_flag("--json", log_query.json, "Print JSON");

    moat::app::StatsQuery stats_query;
    CLI::App* stats = app.add_subcommand(
        "stats", "Summarise the query log: outcomes, history, top names, blocked names, clients");
    stats->add_option("--since", stats_query.since, "The period, back from now (default 24h)")
        ->type_name("DURATION");
    stats->add_option("--interval", stats_query.interval, "One history line per (default 1h)")
        ->type_name("DURATION");
    stats->add_option("--top", stats_query.top, "Entries per ranking, 1..100 (default 10)");
    stats->add_option("-c,--config", config_path, "Config file naming the log's database")
        ->type_name("FILE");
    stats->add_flag("--json", stats_query.json, "Print JSON");

    std::string pause_for;
    std::string pause_group;
    std::string control_path;
    CLI::App* pause = app.add_subcommand(
        "pause", "Pause blocking for DURATION (5m, 1h, ...), for everyone or a group");
    pause->add_option("duration", pause_for, "How long, up to 1 day")->required();
    CLI::App* resume = app.add_subcommand("resume", "End a pause of blocking now");
    for (CLI::App* cmd : {pause, resume}) {
        cmd->add_option("-g,--group", pause_group, "Only this client group")->type_name("NAME");
        cmd->add_option("-c,--config", config_path, "Config file naming the control socket")
            ->type_name("FILE");
        cmd->add_option("--socket", control_path, "The daemon's control socket")->type_name("PATH");
    }

    std::string secret_config;
    CLI::App* password_hash = app.add_subcommand(
        "password-hash",
        "Hash a dashboard password read from stdin (Argon2id) for [api] password_hash");
    CLI::App* api_token =
        app.add_subcommand("api-token", "Make an API token for scripts and print it with its hash");
    for (CLI::App* cmd : {password_hash, api_token}) {
        cmd->add_option("-c,--config", secret_config, "Also write the hash into this config file")
            ->type_name("FILE");
    }

    // The daemon's list fetcher (moat/lists/fetch_process.hpp); not for people, so not in --help.
    CLI::App* fetch = app.add_subcommand("fetch-lists", "");
    fetch->group("");

    CLI11_PARSE(app, argc, argv);

    if (show_version) {
        std::cout << "dnsmoat " << moat::app::version() << "\n";
        return 0;
    }
    if (*fetch) {
        return moat::lists::serve_fetch_request(std::cin, std::cout);
    }
    if (*check) {
        auto loaded = moat::config::load_file(check_path);
        if (!loaded) {
            std::cerr << moat::config::to_string(loaded.error()) << "\n";
            return 78;
        }
        std::cout << check_path << ": ok\n";
        return 0;
    }
    if (*password_hash || *api_token) {
        std::optional<std::filesystem::path> file;
        if (!secret_config.empty()) {
            file = secret_config;
        }
        return *password_hash ? moat::app::run_password_hash(file) : moat::app::run_api_token(file);
    }
    launch.config_file = config_to_use(config_path);
    if (*query) {
        return moat::app::run_query(launch, query_name);
    }
    if (*lists) {
        return moat::app::run_lists(launch, lists_json);
    }
    if (*log) {
        if (before->count() > 0) {
            log_query.before = log_before;
        }
        return moat::app::run_log(launch, log_query);
    }
    if (*stats) {
        return moat::app::run_stats(launch, stats_query);
    }
    if (*pause || *resume) {
        return moat::app::run_pause(launch, control_path, *pause ? pause_for : "", pause_group);
    }
    if (*run) {
        return moat::app::run_daemon(launch, argv);
    }
    std::cout << app.help();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // A fixed mmap threshold: every large block (a snapshot's tables, a list's blocks) is mapped
    // on its own and returned to the system when freed. glibc's default raises the threshold
    // after the first such free, so the next snapshot's tables would come from the heap and
    // stay in the process after a reload (RSS creeping up with every list refresh).
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);  // NOLINT(concurrency-mt-unsafe): before any thread
    try {
        return run_main(argc, argv);
    } catch (const std::exception& e) {  // e.g. out of memory while loading huge lists
        std::cerr << "dnsmoat: " << e.what() << "\n";
        return 70;  // EX_SOFTWARE
    }
}
