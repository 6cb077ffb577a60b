#include "report.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace moat::bench {

std::string format(const char* fmt, ...) {
    std::va_list args;
    va_start(args, fmt);
    std::va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
    if (n > 0) {
        std::vsnprintf(out.data(), out.size() + 1, fmt, again);
    }
    va_end(again);
    return out;
}

void Report::title(std::string_view suite, std::string_view what) {
    std::printf("\n== %.*s: %.*s\n", static_cast<int>(suite.size()), suite.data(),
                static_cast<int>(what.size()), what.data());
    std::fflush(stdout);
}

void Report::table_header() {
    std::printf("  %-28s %10s %9s %9s %9s %10s %12s\n", "operation", "ops", "p50 us", "p95 us",
                "p99 us", "max us", "ops/s");
}

void Report::row(std::string_view label, const Summary& s) {
    std::printf("  %-28.*s %10zu %9.3f %9.3f %9.3f %10.3f %12.0f\n", static_cast<int>(label.size()),
                label.data(), s.ops, s.p50_us, s.p95_us, s.p99_us, s.max_us, s.ops_per_s);
    std::fflush(stdout);
}

void Report::line(std::string_view text) {
    std::printf("  %.*s\n", static_cast<int>(text.size()), text.data());
    std::fflush(stdout);
}

void Report::target(std::string_view suite, bool passed, std::string_view text) {
    targets_.push_back(
        {std::string(suite), std::string(text), passed ? Target::Kind::pass : Target::Kind::fail});
    std::printf("  ");
    print_target(targets_.back());
    std::fflush(stdout);
}

void Report::info(std::string_view suite, std::string_view text) {
    targets_.push_back({std::string(suite), std::string(text), Target::Kind::info});
    std::printf("  ");
    print_target(targets_.back());
    std::fflush(stdout);
}

void Report::timing_target(std::string_view suite, bool passed, std::string_view text) {
    if (smoke_) {
        info(suite, std::string(text) + " (timing: not judged in a smoke run)");
    } else {
        target(suite, passed, text);
    }
}

bool Report::any_failed() const noexcept {
    for (const Target& t : targets_) {
        if (t.kind == Target::Kind::fail) {
            return true;
        }
    }
    return false;
}

void Report::print_target(const Target& t) {
    const char* kind = t.kind == Target::Kind::pass   ? "PASS"
                       : t.kind == Target::Kind::fail ? "FAIL"
                                                      : "INFO";
    std::printf("%s  %s %s\n", kind, t.suite.c_str(), t.text.c_str());
}

void Report::print_summary() const {
    std::printf("\n== summary\n");
    std::size_t passed = 0;
    std::size_t failed = 0;
    for (const Target& t : targets_) {
        print_target(t);
        passed += t.kind == Target::Kind::pass ? 1U : 0U;
        failed += t.kind == Target::Kind::fail ? 1U : 0U;
    }
    std::printf("%zu passed, %zu failed, %zu not judged\n", passed, failed,
                targets_.size() - passed - failed);
    std::fflush(stdout);
}

void abort_run(std::string_view suite, std::string_view why) {
    std::fflush(stdout);
    std::fprintf(stderr, "ABORT: %.*s: %.*s\n", static_cast<int>(suite.size()), suite.data(),
                 static_cast<int>(why.size()), why.data());
    std::exit(3);  // NOLINT(concurrency-mt-unsafe): the harness runs on one thread
}

}  // namespace moat::bench
