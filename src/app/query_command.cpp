#include "query_command.hpp"

#include <fstream>
#include <iostream>

#include "embedded.hpp"
#include "lists.hpp"
#include "logging.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::app {
namespace {

/// Line `number` (1-based) of a list, for quoting the rule.
std::string line_of(const ListSource& source, std::uint32_t number) {
    if (number == 0) {
        return {};
    }
    std::string line;
    if (source.embedded) {
        std::string_view text = embedded_blocklist();
        for (std::uint32_t i = 1; i < number && !text.empty(); ++i) {
            const auto nl = text.find('\n');
            text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        }
        return std::string(text.substr(0, text.find('\n')));
    }
    std::ifstream in(source.path, std::ios::binary);
    for (std::uint32_t i = 0; i < number && std::getline(in, line); ++i) {
    }
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    return line;
}

}  // namespace

int run_query(const Launch& launch, const std::string& name) {
    auto loaded = load_config(launch);
    if (!loaded) {
        std::cerr << loaded.error() << "\n";
        return 78;
    }
    const config::Config& c = *loaded;
    setup_logging(config::LogLevel::warn);  // list problems only; the verdict goes to stdout
    const CompiledLists lists = compile_lists(c, !launch.config_file.has_value());
    if (!lists.snapshot) {
        std::cerr << "cannot compile the lists\n";
        return 1;
    }
    const filter::Verdict v = lists.snapshot->match_text(name);
    if (v.action == filter::Action::none) {
        std::cout << name << " is not blocked: no list mentions it\n";
        return 0;
    }
    const ListSource& source = lists.sources.at(v.list);
    const char* verb = v.action == filter::Action::blocked ? "blocked" : "allowed";
    std::cout << name << " is " << verb << " by list \"" << source.name << "\"";
    if (v.rule == filter::RuleType::regex) {
        std::cout << ", regex /" << lists.snapshot->regex_pattern(v) << "/";
    }
    if (v.line != 0) {
        std::cout << " (" << (source.embedded ? "built-in" : source.path) << ":" << v.line << ": "
                  << line_of(source, v.line) << ")";
    }
    if (v.rule == filter::RuleType::subtree) {
        std::cout << ", a rule for "
                  << (v.suffix == 0 ? "the name and its subdomains"
                                    : "a parent domain and its subdomains");
    }
    if (v.important) {
        std::cout << ", $important";
    }
    std::cout << "\n";
    return 0;
}

}  // namespace moat::app
