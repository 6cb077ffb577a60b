#include "moat/filter/list_scan.hpp"

#include <re2/re2.h>

#include <array>

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

}  // namespace

void record_line(ListStats& stats, LineOutcome outcome, std::string_view line) {
    switch (outcome) {
        case LineOutcome::rules: break;
        case LineOutcome::comment: ++stats.comments; break;
        case LineOutcome::unsupported: ++stats.unsupported; break;
        case LineOutcome::invalid:
            ++stats.invalid;
            if (stats.first_invalid.size() < ListStats::kMaxReportedInvalid) {
                stats.first_invalid.push_back({stats.lines, std::string(line.substr(0, 200))});
            }
            break;
    }
}

ListStats scan_list(std::istream& in, ListFormat format, bool include_subdomains) {
    ListStats stats;
    CountingSink sink(stats);
    auto on_line = [&](std::string_view line) {
        ++stats.lines;
        record_line(stats, parse_line(line, format, include_subdomains, sink), line);
    };
    LineSplitter splitter;
    std::array<char, std::size_t{64} * 1024> chunk{};
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) {
            break;
        }
        splitter.feed(std::string_view(chunk.data(), got), on_line);
    }
    splitter.finish(on_line);
    return stats;
}

}  // namespace moat::filter
