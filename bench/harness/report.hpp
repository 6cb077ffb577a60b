// What the suites print: a title per suite, a table of timed rows, free lines (sanity counters,
// memory), and target checks, which are printed where they are judged and again in the final
// summary:
//
//   PASS  filter p95 0.093 us <= 0.15 us
//   FAIL  compile 8.1M lines/s >= 10M lines/s
//   INFO  filter structure 1.6 MiB (judged only at --domains=1000000)
//
// A sanity counter that should never be zero (no blocked query at all, no cache hit) means the
// harness or the code under test is broken and every figure is meaningless: abort_run() stops
// the process with exit code 3 instead of printing them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "samples.hpp"

namespace moat::bench {

/// printf into a std::string.
[[nodiscard]] std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

class Report {
public:
    /// "== name: what is measured"
    void title(std::string_view suite, std::string_view what);
    /// The column header of timed rows.
    void table_header();
    /// One timed row: label, ops, p50/p95/p99/max in microseconds, ops/s.
    void row(std::string_view label, const Summary& s);
    /// An indented free line.
    void line(std::string_view text);

    /// A judged target, printed "PASS  <suite> <text>"; `text` says value, comparison and limit.
    void target(std::string_view suite, bool passed, std::string_view text);
    /// A target shown but not judged (e.g. memory targets at a size they are not defined for).
    void info(std::string_view suite, std::string_view text);
    /// A target on elapsed time: judged like target(), except in a smoke run, where it is only
    /// shown (times on a shared CI runner say nothing about the code).
    void timing_target(std::string_view suite, bool passed, std::string_view text);
    void set_smoke(bool smoke) noexcept { smoke_ = smoke; }

    [[nodiscard]] bool any_failed() const noexcept;
    /// Every target again, in order, and the tally.
    void print_summary() const;

private:
    struct Target {
        std::string suite;
        std::string text;
        enum class Kind { pass, fail, info } kind;
    };
    static void print_target(const Target& t);
    std::vector<Target> targets_;
    bool smoke_ = false;
};

/// Prints "ABORT: <suite>: <why>" to stderr and exits with status 3.
[[noreturn]] void abort_run(std::string_view suite, std::string_view why);

}  // namespace moat::bench
