#include "moat/filter/compiler.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "moat/filter/list_scan.hpp"
#include "regex_matcher.hpp"
#include "rule_tables.hpp"

namespace moat::filter {
namespace {

/// Adds a part's counts of one list to the compiler's.
void add_stats(ListStats& to, ListStats&& from) {
    to.lines += from.lines;
    to.entries += from.entries;
    to.comments += from.comments;
    to.skipped += from.skipped;
    to.unsupported += from.unsupported;
    to.invalid += from.invalid;
    // Each side kept its own first invalid lines, so the first of the whole list are among them.
    std::move(from.first_invalid.begin(), from.first_invalid.end(),
              std::back_inserter(to.first_invalid));
    std::stable_sort(to.first_invalid.begin(), to.first_invalid.end(),
                     [](const InvalidLine& a, const InvalidLine& b) { return a.line < b.line; });
    if (to.first_invalid.size() > ListStats::kMaxReportedInvalid) {
        to.first_invalid.resize(ListStats::kMaxReportedInvalid);
    }
}

/// The matcher of a kind's regex rules, in the order of their lists and lines, however the
/// lines were spread over parts.
std::unique_ptr<RegexMatcher> matcher_of(std::vector<RegexMatcher::Rule>& rules) {
    std::stable_sort(rules.begin(), rules.end(),
                     [](const RegexMatcher::Rule& a, const RegexMatcher::Rule& b) {
                         return a.list != b.list ? a.list < b.list : a.line < b.line;
                     });
    auto matcher = std::make_unique<RegexMatcher>();
    for (RegexMatcher::Rule& r : rules) {
        matcher->add(std::move(r));
    }
    rules.clear();
    return matcher;
}

}  // namespace

Compiler::Compiler(CompileOptions options)
    : options_(options), tables_(std::make_unique<RuleTables>(options.keep_line_numbers)) {}
Compiler::Compiler(Compiler&&) noexcept = default;
Compiler& Compiler::operator=(Compiler&&) noexcept = default;
Compiler::~Compiler() = default;

Compiler::Part::Part(bool keep_line_numbers)
    : tables_(std::make_unique<RuleTables>(keep_line_numbers)) {}
Compiler::Part::Part(Part&&) noexcept = default;
Compiler::Part& Compiler::Part::operator=(Part&&) noexcept = default;
Compiler::Part::~Part() = default;

void Compiler::Part::parse(std::size_t list, const ListSpec& spec, std::uint64_t first_line,
                           std::string_view text) {
    if (stats_.size() <= list) {
        stats_.resize(list + 1);
    }
    parse_lines(*tables_, stats_[list], spec, list, first_line, text);
}

tl::expected<std::size_t, Errc> Compiler::open_list(ListSpec spec) {
    if (lists_.size() >= kMaxLists) {
        return tl::unexpected(Errc::too_many_lists);
    }
    lists_.push_back({{std::move(spec), {}}, {}, true});
    return lists_.size() - 1;
}

void Compiler::parse(std::size_t list, std::string_view line) {
    ListInfo& info = lists_[list].info;
    parse_one_line(*tables_, info.stats, info.spec, list, info.stats.lines + 1, line);
}

tl::expected<void, Errc> Compiler::feed(std::size_t list, std::string_view bytes) {
    if (list >= lists_.size() || !lists_[list].open) {
        return tl::unexpected(Errc::bad_list);
    }
    lists_[list].lines.feed(bytes, [&](std::string_view line) { parse(list, line); });
    return {};
}

tl::expected<void, Errc> Compiler::close_list(std::size_t list) {
    if (list >= lists_.size() || !lists_[list].open) {
        return tl::unexpected(Errc::bad_list);
    }
    lists_[list].lines.finish([&](std::string_view line) { parse(list, line); });
    lists_[list].open = false;
    return {};
}

tl::expected<std::size_t, Errc> Compiler::add_text(ListSpec spec, std::string_view text) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    (void)feed(*list, text);
    (void)close_list(*list);
    return list;
}

tl::expected<std::size_t, Errc> Compiler::add_stream(ListSpec spec, std::istream& in) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    read_chunks(in, [&](std::string_view chunk) { (void)feed(*list, chunk); });
    (void)close_list(*list);
    return list;
}

Compiler::Part Compiler::part() const { return Part(options_.keep_line_numbers); }

tl::expected<void, Errc> Compiler::merge(std::vector<Part> parts) {
    std::vector<RuleTables*> tables;
    for (Part& part : parts) {
        if (part.stats_.size() > lists_.size()) {
            return tl::unexpected(Errc::bad_list);
        }
        tables.push_back(part.tables_.get());
    }
    tables_->absorb(tables);
    for (Part& part : parts) {
        for (std::size_t i = 0; i < part.stats_.size(); ++i) {
            add_stats(lists_[i].info.stats, std::move(part.stats_[i]));
        }
        part.stats_.clear();
    }
    return {};
}

const ListStats& Compiler::stats(std::size_t list) const noexcept {
    return lists_[list].info.stats;
}

tl::expected<std::shared_ptr<const Snapshot>, Errc> Compiler::build() && {
    InlineRunner one_after_another;
    return std::move(*this).build(one_after_another);
}

tl::expected<std::shared_ptr<const Snapshot>, Errc> Compiler::build(TaskRunner& runner) && {
    for (std::size_t i = 0; i < lists_.size(); ++i) {
        if (lists_[i].open) {
            (void)close_list(i);
        }
    }
    RuleTables& t = *tables_;
    constexpr std::size_t kMaxEntries = 0xFFFFFFF0;  // table indexes are 32-bit
    for (const auto* b : {&t.block_exact, &t.block_subtree, &t.allow_exact, &t.allow_subtree}) {
        if (b->size() > kMaxEntries) {
            return tl::unexpected(Errc::too_many_rules);
        }
    }
    auto block_regex = matcher_of(t.block_regex);
    auto allow_regex = matcher_of(t.allow_regex);
    if (!block_regex->compile() || !allow_regex->compile()) {
        return tl::unexpected(Errc::regex_set);
    }
    auto snap = std::make_shared<Snapshot>();
    snap->sets_ = ListSets(lists_.size());
    // Each table in the builder's three steps, every table at each step before the next: the
    // sort's first pass over each table, a thread each; the rest of the sort in pieces of every
    // table, shared by all the threads; the packing, a thread each. One table (one large list)
    // keeps every thread busy for the middle step instead of one for all three. Each builder
    // frees its columns as its table fills, so tables built at once need no more memory than one
    // after another. The largest first: with fewer threads than tables, the small ones follow on
    // whichever thread is free.
    std::array<std::pair<NameHashSet::Builder*, NameHashSet*>, 4> tables{{
        {&t.block_exact, &snap->block_exact_},
        {&t.block_subtree, &snap->block_subtree_},
        {&t.allow_exact, &snap->allow_exact_},
        {&t.allow_subtree, &snap->allow_subtree_},
    }};
    std::stable_sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) {
        return a.first->size() > b.first->size();
    });
    std::vector<std::function<void()>> tasks;
    for (const auto& table : tables) {
        if (table.first->size() > 0) {
            tasks.emplace_back([builder = table.first] { builder->spread(); });
        }
    }
    runner.run_all(tasks);
    tasks.clear();
    for (const auto& table : tables) {
        for (std::size_t i = 0; i < table.first->pieces(); ++i) {
            tasks.emplace_back(
                [&sets = snap->sets_, builder = table.first, i] { builder->sort_piece(i, sets); });
        }
    }
    runner.run_all(tasks);
    tasks.clear();
    for (const auto& [builder, set] : tables) {
        if (builder->size() > 0) {
            tasks.emplace_back([builder = builder, set = set] { *set = builder->finish(); });
        }
    }
    runner.run_all(tasks);
    snap->sets_.finish();
    snap->block_regex_ = std::move(block_regex);
    snap->allow_regex_ = std::move(allow_regex);
    snap->lists_.reserve(lists_.size());
    for (OpenList& l : lists_) {
        snap->lists_.push_back(std::move(l.info));
    }
    lists_.clear();
    return std::shared_ptr<const Snapshot>(std::move(snap));
}

}  // namespace moat::filter
