#include "lists.hpp"

#include <array>
#include <ctime>
#include <fstream>
#include <functional>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "embedded.hpp"
#include "moat/core/log.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/lists/copy_check.hpp"
#include "moat/lists/parallel_load.hpp"
#include "moat/lists/state_dir.hpp"

namespace moat::app {
namespace {

void report(const std::string& where, const filter::ListStats& s) {
    log::info("list {}: {} entries from {} lines ({} invalid, {} unsupported)", where, s.entries,
              s.lines, s.invalid, s.unsupported);
    for (const filter::InvalidLine& bad : s.first_invalid) {
        log::warn("{}:{}: cannot parse \"{}\"", where, bad.line, bad.text);
    }
}

}  // namespace

filter::ListFormat list_format(config::ListFormat f) noexcept {
    switch (f) {
        case config::ListFormat::automatic: return filter::ListFormat::auto_detect;
        case config::ListFormat::hosts: return filter::ListFormat::hosts;
        case config::ListFormat::domains: return filter::ListFormat::domains;
        case config::ListFormat::adblock: return filter::ListFormat::adblock;
        case config::ListFormat::regex: return filter::ListFormat::regex;
    }
    return filter::ListFormat::auto_detect;
}

std::string local_time_text(std::int64_t unix_seconds) {
    if (unix_seconds == 0) {
        return "never";
    }
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    localtime_r(&t, &tm);
    std::array<char, 32> text{};
    return std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S", &tm) > 0 ? text.data()
                                                                                 : "?";
}

std::uint32_t list_id(const config::Config& config, filter::ListKind kind,
                      std::size_t index) noexcept {
    const std::size_t before = kind == filter::ListKind::block ? 0 : config.blocklists.size();
    return static_cast<std::uint32_t>(1 + before + index);
}

std::uint32_t rules_id(const config::Config& config, filter::ListKind kind) noexcept {
    const std::size_t lists = config.blocklists.size() + config.allowlists.size();
    return static_cast<std::uint32_t>(1 + lists + (kind == filter::ListKind::block ? 0 : 1));
}

std::string rules_text(const std::vector<std::string>& rules) {
    std::string text;
    for (const std::string& r : rules) {
        text += r;
        text += '\n';
    }
    return text;
}

namespace {

/// A list handed to the load: what to report of it once every line is parsed, and anything
/// to check against its counts then.
struct Loaded {
    std::size_t index = 0;
    std::string where;
    std::function<void(const filter::ListStats&)> then;
};

/// [rules] deny and allow as two more lists (line N: the Nth rule), for every group.
void add_rules(const config::Config& config, lists::ParallelLoad& load, CompiledLists& result,
               std::vector<Loaded>& loaded) {
    for (const filter::ListKind kind : {filter::ListKind::block, filter::ListKind::allow}) {
        const bool block = kind == filter::ListKind::block;
        const auto& rules = block ? config.rules.deny : config.rules.allow;
        if (rules.empty()) {
            continue;
        }
        const char* name = block ? kDenyRulesName : kAllowRulesName;
        filter::ListSpec spec{rules_id(config, kind), name, kind, filter::ListFormat::auto_detect,
                              false};
        if (auto added = load.add_text(spec, rules_text(rules))) {
            loaded.push_back({*added, name, {}});
            result.sources.push_back({name, "", false});
        }
    }
}

/// A configured list to compile: where it is read from, and its id and kind in the snapshot.
struct ListFile {
    const config::ListConfig& list;
    filter::ListKind kind;
    std::uint32_t id;
};

filter::ListSpec spec_of(const ListFile& f) {
    return {f.id, f.list.name, f.kind, list_format(f.list.format),
            f.list.subdomains.value_or(false)};
}

/// A local list: a list that cannot be read is a problem (a reload with problems keeps the
/// running lists).
void add_local(const ListFile& f, lists::ParallelLoad& load, CompiledLists& result,
               std::vector<Loaded>& loaded) {
    const std::string& path = f.list.path;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        result.problems.push_back("list \"" + f.list.name + "\": cannot open " + path);
        return;
    }
    auto added = load.add_stream(spec_of(f), in);
    if (!added) {
        result.problems.push_back("list \"" + f.list.name + "\": too many lists");
        return;
    }
    loaded.push_back({*added, path, {}});
    result.sources.push_back({f.list.name, path, false});
}

/// A downloaded list, from its last good copy. The copy is digested while it compiles and
/// compared with its status: a damaged copy (truncated, overwritten) is still served as far as it
/// reads, since that is the best there is, but said, and the next refresh downloads it whole.
void add_downloaded(const ListFile& f, const lists::StateDir& dir, lists::ParallelLoad& load,
                    CompiledLists& result, std::vector<Loaded>& loaded) {
    const std::string key = lists::StateDir::key_of(f.list.name, f.list.url);
    const std::string path = dir.copy_path(key).string();
    lists::DigestingReader reader(path);
    if (!reader.is_open()) {
        result.pending.push_back("list \"" + f.list.name + "\" (" + f.list.url +
                                 "): not downloaded yet; it is added once it is");
        return;
    }
    std::istream in(&reader);
    auto added = load.add_stream(spec_of(f), in);
    if (!added) {
        result.problems.push_back("list \"" + f.list.name + "\": too many lists");
        return;
    }
    result.sources.push_back({f.list.name, path, false});
    Loaded list{*added, f.list.name + " (" + f.list.url + ")", {}};
    const auto status = dir.read_status(key);
    if (status) {  // else nothing to compare with; the next refresh writes a status
        std::string damage = lists::copy_mismatch(*status, reader.finish());
        if (!damage.empty()) {
            list.then = [name = f.list.name, path, damage = std::move(damage),
                         recorded = status->entries](const filter::ListStats& stats) {
                log::warn(
                    "list {}: the copy {} does not match its status ({}; {} entries read, {} "
                    "recorded); serving what it holds until a refresh downloads the list whole",
                    name, path, damage, stats.entries, recorded);
            };
        }
    }
    loaded.push_back(std::move(list));
}

}  // namespace

CompiledLists compile_lists(const config::Config& config, bool with_embedded) {
    CompiledLists result;
    filter::Compiler compiler;
    std::vector<Loaded> loaded;
    // The lists are read here, one after another, and parsed on every core meanwhile.
    lists::ParallelLoad load(compiler);
    {
        if (with_embedded) {
            filter::ListSpec spec{0, "built-in", filter::ListKind::block,
                                  filter::ListFormat::adblock, false};
            if (auto added = load.add_text(spec, embedded_blocklist())) {
                loaded.push_back({*added, "built-in", {}});
                result.sources.push_back({"built-in", "", true});
            }
        }
        const lists::StateDir dir(config.lists.state_dir);
        auto add = [&](const config::ListConfig& l, filter::ListKind kind, std::uint32_t id) {
            if (!l.enabled) {
                return;
            }
            const ListFile f{l, kind, id};
            if (l.url.empty()) {
                add_local(f, load, result, loaded);
            } else {
                add_downloaded(f, dir, load, result, loaded);
            }
        };
        for (std::size_t i = 0; i < config.blocklists.size(); ++i) {
            add(config.blocklists[i], filter::ListKind::block,
                list_id(config, filter::ListKind::block, i));
        }
        for (std::size_t i = 0; i < config.allowlists.size(); ++i) {
            add(config.allowlists[i], filter::ListKind::allow,
                list_id(config, filter::ListKind::allow, i));
        }
        add_rules(config, load, result, loaded);
        load.finish();
    }
    for (const Loaded& l : loaded) {
        const filter::ListStats& stats = compiler.stats(l.index);
        report(l.where, stats);
        if (l.then) {
            l.then(stats);
        }
    }
    for (const std::string& p : result.problems) {
        log::warn("{}", p);
    }
    for (const std::string& p : result.pending) {
        log::info("{}", p);
    }
    auto built = load.build();  // the tables sorted on every core too
    if (built) {
        result.snapshot = *built;
        log::info("lists: {} name rules and {} regex rules from {} lists ({} KiB)",
                  result.snapshot->name_rules(), result.snapshot->regex_rules(),
                  result.sources.size(), result.snapshot->memory_bytes() / 1024);
    } else {
        log::error("lists: cannot build the blocklist snapshot");
    }
    return result;
}

}  // namespace moat::app
