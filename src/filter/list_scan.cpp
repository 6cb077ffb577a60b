#include "moat/filter/list_scan.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <string>
#include <vector>

#include "regex_matcher.hpp"

namespace moat::filter {
namespace {

/// Counts rules the way the compiler's sink takes them, keeping none.
class CountingSink final : public RuleSink {
public:
    explicit CountingSink(ListStats& stats) : stats_(stats) {}

    void on_name(const NameRule& /*rule*/) override { ++stats_.entries; }

    bool on_regex(const RegexRule& rule) override {
        const re2::RE2 re(re2::StringPiece(rule.pattern.data(), rule.pattern.size()),
                          RegexMatcher::options());
        if (!re.ok()) {
            return false;
        }
        ++stats_.entries;
        return true;
    }

    void on_skipped() override { ++stats_.skipped; }

private:
    ListStats& stats_;
};

/// Keeps the invalid line if it is among the first kMaxReportedInvalid seen by number. Lines
/// usually come in order and the list just fills; a Compiler::Part may be given later runs of a
/// list first, and then a smaller number takes the place of the largest.
void remember_invalid(ListStats& stats, std::uint64_t number, std::string_view line) {
    std::vector<InvalidLine>& kept = stats.first_invalid;
    if (kept.size() < ListStats::kMaxReportedInvalid) {
        kept.push_back({number, std::string(line.substr(0, 200))});
        return;
    }
    const auto last = std::max_element(
        kept.begin(), kept.end(),
        [](const InvalidLine& a, const InvalidLine& b) { return a.line < b.line; });
    if (number < last->line) {
        *last = {number, std::string(line.substr(0, 200))};
    }
}

}  // namespace

void record_line(ListStats& stats, LineOutcome outcome, std::uint64_t number,
                 std::string_view line) {
    switch (outcome) {
        case LineOutcome::rules: break;
        case LineOutcome::comment: ++stats.comments; break;
        case LineOutcome::unsupported: ++stats.unsupported; break;
        case LineOutcome::invalid:
            ++stats.invalid;
            remember_invalid(stats, number, line);
            break;
    }
}

ListStats scan_list(std::istream& in, ListFormat format, bool include_subdomains) {
    ListStats stats;
    CountingSink sink(stats);
    auto on_line = [&](std::string_view line) {
        ++stats.lines;
        record_line(stats, parse_line(line, format, include_subdomains, sink), stats.lines, line);
    };
    LineSplitter splitter;
    read_chunks(in, [&](std::string_view chunk) { splitter.feed(chunk, on_line); });
    splitter.finish(on_line);
    return stats;
}

}  // namespace moat::filter
