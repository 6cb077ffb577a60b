#include "lists.hpp"

#include <spdlog/spdlog.h>

#include <fstream>

#include "embedded.hpp"
#include "moat/filter/compiler.hpp"

namespace moat::app {
namespace {

filter::ListFormat format_of(config::ListFormat f) {
    switch (f) {
        case config::ListFormat::automatic: return filter::ListFormat::auto_detect;
        case config::ListFormat::hosts: return filter::ListFormat::hosts;
        case config::ListFormat::domains: return filter::ListFormat::domains;
        case config::ListFormat::adblock: return filter::ListFormat::adblock;
        case config::ListFormat::regex: return filter::ListFormat::regex;
    }
    return filter::ListFormat::auto_detect;
}

void report(const std::string& where, const filter::ListStats& s) {
    spdlog::info("list {}: {} entries from {} lines ({} invalid, {} unsupported)", where, s.entries,
                 s.lines, s.invalid, s.unsupported);
    for (const filter::InvalidLine& bad : s.first_invalid) {
        spdlog::warn("{}:{}: cannot parse \"{}\"", where, bad.line, bad.text);
    }
}

}  // namespace

CompiledLists compile_lists(const config::Config& config, bool with_embedded) {
    CompiledLists result;
    filter::Compiler compiler;
    std::uint32_t id = 0;
    if (with_embedded) {
        filter::ListSpec spec{id++, "built-in", filter::ListKind::block,
                              filter::ListFormat::adblock, false};
        if (auto added = compiler.add_text(spec, embedded_blocklist())) {
            report("built-in", compiler.stats(*added));
            result.sources.push_back({"built-in", "", true});
        }
    }
    auto add = [&](const config::ListConfig& l, filter::ListKind kind) {
        if (!l.enabled) {
            return;
        }
        if (l.path.empty()) {
            result.problems.push_back("list \"" + l.name + "\" (" + l.url +
                                      "): downloading lists is not supported yet; skipped");
            return;
        }
        std::ifstream in(l.path, std::ios::binary);
        if (!in) {
            result.problems.push_back("list \"" + l.name + "\": cannot open " + l.path);
            return;
        }
        filter::ListSpec spec{id++, l.name, kind, format_of(l.format),
                              l.subdomains.value_or(false)};
        auto added = compiler.add_stream(spec, in);
        if (!added) {
            result.problems.push_back("list \"" + l.name + "\": too many lists");
            return;
        }
        report(l.path, compiler.stats(*added));
        result.sources.push_back({l.name, l.path, false});
    };
    for (const auto& l : config.blocklists) {
        add(l, filter::ListKind::block);
    }
    for (const auto& l : config.allowlists) {
        add(l, filter::ListKind::allow);
    }
    for (const std::string& p : result.problems) {
        spdlog::warn("{}", p);
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
