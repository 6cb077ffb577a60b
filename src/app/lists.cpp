#include "lists.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <ctime>
#include <fstream>

#include "embedded.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/lists/state_dir.hpp"

namespace moat::app {
namespace {

void report(const std::string& where, const filter::ListStats& s) {
    spdlog::info("list {}: {} entries from {} lines ({} invalid, {} unsupported)", where, s.entries,
                 s.lines, s.invalid, s.unsupported);
    for (const filter::InvalidLine& bad : s.first_invalid) {
        spdlog::warn("{}:{}: cannot parse \"{}\"", where, bad.line, bad.text);
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

/// [rules] deny and allow as two more lists (line N: the Nth rule), for every group.
void add_rules(const config::Config& config, filter::Compiler& compiler, CompiledLists& result) {
    for (const filter::ListKind kind : {filter::ListKind::block, filter::ListKind::allow}) {
        const bool block = kind == filter::ListKind::block;
        const auto& rules = block ? config.rules.deny : config.rules.allow;
        if (rules.empty()) {
            continue;
        }
        const char* name = block ? kDenyRulesName : kAllowRulesName;
        filter::ListSpec spec{rules_id(config, kind), name, kind, filter::ListFormat::auto_detect,
                              false};
        if (auto added = compiler.add_text(spec, rules_text(rules))) {
            report(name, compiler.stats(*added));
            result.sources.push_back({name, "", false});
        }
    }
}

}  // namespace

CompiledLists compile_lists(const config::Config& config, bool with_embedded) {
    CompiledLists result;
    filter::Compiler compiler;
    if (with_embedded) {
        filter::ListSpec spec{0, "built-in", filter::ListKind::block, filter::ListFormat::adblock,
                              false};
        if (auto added = compiler.add_text(spec, embedded_blocklist())) {
            report("built-in", compiler.stats(*added));
            result.sources.push_back({"built-in", "", true});
        }
    }
    auto add = [&](const config::ListConfig& l, filter::ListKind kind, std::uint32_t id) {
        if (!l.enabled) {
            return;
        }
        std::string path = l.path;
        if (!l.url.empty()) {
            const lists::StateDir dir(config.lists.state_dir);
            path = dir.copy_path(lists::StateDir::key_of(l.name, l.url)).string();
        }
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            if (l.url.empty()) {
                result.problems.push_back("list \"" + l.name + "\": cannot open " + path);
            } else {
                result.pending.push_back("list \"" + l.name + "\" (" + l.url +
                                         "): not downloaded yet; it is added once it is");
            }
            return;
        }
        filter::ListSpec spec{id, l.name, kind, list_format(l.format),
                              l.subdomains.value_or(false)};
        auto added = compiler.add_stream(spec, in);
        if (!added) {
            result.problems.push_back("list \"" + l.name + "\": too many lists");
            return;
        }
        report(l.url.empty() ? path : l.name + " (" + l.url + ")", compiler.stats(*added));
        result.sources.push_back({l.name, path, false});
    };
    for (std::size_t i = 0; i < config.blocklists.size(); ++i) {
        add(config.blocklists[i], filter::ListKind::block,
            list_id(config, filter::ListKind::block, i));
    }
    for (std::size_t i = 0; i < config.allowlists.size(); ++i) {
        add(config.allowlists[i], filter::ListKind::allow,
            list_id(config, filter::ListKind::allow, i));
    }
    add_rules(config, compiler, result);
    for (const std::string& p : result.problems) {
        spdlog::warn("{}", p);
    }
    for (const std::string& p : result.pending) {
        spdlog::info("{}", p);
    }
    auto built = std::move(compiler).build();
    if (built) {
        result.snapshot = *built;
        spdlog::info("lists: {} name rules and {} regex rules from {} lists ({} KiB)",
                     result.snapshot->name_rules(), result.snapshot->regex_rules(),
                     result.sources.size(), result.snapshot->memory_bytes() / 1024);
    } else {
        spdlog::error("lists: cannot build the blocklist snapshot");
    }
    return result;
}

}  // namespace moat::app
