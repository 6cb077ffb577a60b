// The rules a compile collects before it builds a snapshot: the builders of the four name tables
// and the regex rules, block and allow. The Compiler has one set; so has each Compiler::Part, and
// merging a part appends its set to the compiler's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"
#include "moat/filter/name_hash_set.hpp"
#include "regex_matcher.hpp"

namespace moat::filter {

struct RuleTables {
    explicit RuleTables(bool keep_lines)
        : block_exact(keep_lines),
          block_subtree(keep_lines),
          allow_exact(keep_lines),
          allow_subtree(keep_lines) {}

    /// Appends the rules of `others` and empties them. Throws std::bad_alloc.
    void absorb(std::span<RuleTables* const> others);

    NameHashSet::Builder block_exact;
    NameHashSet::Builder block_subtree;
    NameHashSet::Builder allow_exact;
    NameHashSet::Builder allow_subtree;
    /// In the order they were parsed; build() sorts them by list and line.
    std::vector<RegexMatcher::Rule> block_regex;
    std::vector<RegexMatcher::Rule> allow_regex;
};

/// Collects the rules of one line into a RuleTables and counts them in its list's stats.
class TableSink final : public RuleSink {
public:
    TableSink(RuleTables& tables, ListStats& stats, ListKind kind, std::size_t list,
              std::uint64_t line) noexcept
        : tables_(tables),
          stats_(stats),
          kind_(kind),
          list_(static_cast<std::uint16_t>(list)),
          line_(static_cast<std::uint32_t>(line)) {}

    void on_name(const NameRule& rule) override;
    bool on_regex(const RegexRule& rule) override;
    void on_skipped() override { ++stats_.skipped; }

private:
    RuleTables& tables_;
    ListStats& stats_;
    ListKind kind_;
    std::uint16_t list_;
    std::uint32_t line_;
};

/// Parses one line, line `number` of list `list`, into `tables` and `stats`.
void parse_one_line(RuleTables& tables, ListStats& stats, const ListSpec& spec, std::size_t list,
                    std::uint64_t number, std::string_view line);

/// Parses the lines of `text` (split at '\n'; a last line without one is a line too) as lines
/// `first_line`, `first_line` + 1, ... of list `list`, into `tables` and `stats`.
void parse_lines(RuleTables& tables, ListStats& stats, const ListSpec& spec, std::size_t list,
                 std::uint64_t first_line, std::string_view text);

}  // namespace moat::filter
