#include "rule_tables.hpp"

#include <re2/re2.h>

#include <iterator>
#include <memory>
#include <utility>

#include "moat/filter/list_scan.hpp"

namespace moat::filter {

void RuleTables::absorb(std::span<RuleTables* const> others) {
    std::vector<NameHashSet::Builder*> builders(others.size());
    const auto absorb_table = [&](NameHashSet::Builder& into,
                                  NameHashSet::Builder RuleTables::*table) {
        for (std::size_t i = 0; i < others.size(); ++i) {
            builders[i] = &(others[i]->*table);
        }
        into.absorb(builders);
    };
    absorb_table(block_exact, &RuleTables::block_exact);
    absorb_table(block_subtree, &RuleTables::block_subtree);
    absorb_table(allow_exact, &RuleTables::allow_exact);
    absorb_table(allow_subtree, &RuleTables::allow_subtree);
    for (RuleTables* other : others) {
        std::move(other->block_regex.begin(), other->block_regex.end(),
                  std::back_inserter(block_regex));
        std::move(other->allow_regex.begin(), other->allow_regex.end(),
                  std::back_inserter(allow_regex));
        other->block_regex.clear();
        other->allow_regex.clear();
    }
}

void TableSink::on_name(const NameRule& rule) {
    const bool allow = rule.exception || kind_ == ListKind::allow;
    if (rule.match == RuleMatch::exact) {
        (allow ? tables_.allow_exact : tables_.block_exact)
            .add(rule.hash, list_, rule.important, line_);
    } else {
        (allow ? tables_.allow_subtree : tables_.block_subtree)
            .add(rule.hash, list_, rule.important, line_);
    }
    ++stats_.entries;
}

bool TableSink::on_regex(const RegexRule& rule) {
    auto re = std::make_unique<re2::RE2>(re2::StringPiece(rule.pattern.data(), rule.pattern.size()),
                                         RegexMatcher::options());
    if (!re->ok()) {
        return false;
    }
    const bool allow = rule.exception || kind_ == ListKind::allow;
    (allow ? tables_.allow_regex : tables_.block_regex)
        .push_back({std::move(re), list_, line_, rule.important});
    ++stats_.entries;
    return true;
}

void parse_one_line(RuleTables& tables, ListStats& stats, const ListSpec& spec, std::size_t list,
                    std::uint64_t number, std::string_view line) {
    ++stats.lines;
    TableSink sink(tables, stats, spec.kind, list, number);
    record_line(stats, parse_line(line, spec.format, spec.entries_include_subdomains, sink), number,
                line);
}

void parse_lines(RuleTables& tables, ListStats& stats, const ListSpec& spec, std::size_t list,
                 std::uint64_t first_line, std::string_view text) {
    std::uint64_t number = first_line;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        if (nl == std::string_view::npos) {
            parse_one_line(tables, stats, spec, list, number, text);
            return;
        }
        parse_one_line(tables, stats, spec, list, number++, text.substr(0, nl));
        text.remove_prefix(nl + 1);
    }
}

}  // namespace moat::filter
