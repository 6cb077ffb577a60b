// compile: list text through the Compiler as a rebuild does it (open_list, feed in 64 KiB
// chunks, close_list, build) over three lists of N/3 distinct names each, one per common
// syntax: hosts "0.0.0.0 name", plain domains "name", AdBlock "||name^". Lines per second
// (median of 3 runs) and the memory a rebuild needs beyond what the process held before it:
// VmHWM is reset after the text is generated, VmRSS read, the compile run, VmHWM read. A first
// compile, as the daemon's start-up one, comes before the measured ones and is not counted.
// The lists are compiled twice: declared with their format, and with the format detected line by
// line, which is what a list configured without `format` (the default) gets. Both go through
// lists::ParallelLoad, as the daemon's lists do: parsed on every core, the tables sorted at once.
// The same compiles fed straight to the Compiler, on one thread, follow for comparison.
#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "blocklist.hpp"
#include "memory.hpp"
#include "memory_floor.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/lists/parallel_load.hpp"
#include "suites.hpp"

namespace moat::bench {
namespace {

constexpr int kRuns = 3;
constexpr double kLinesPerSecondLimit = 10e6;
constexpr double kSlackMib = 1.0;

struct ListText {
    const char* label;
    filter::ListFormat format;
    std::string text;
    std::size_t lines = 0;
};

std::array<ListText, 3> make_lists(std::size_t domains, std::uint64_t seed) {
    std::array<ListText, 3> lists = {{
        {"hosts", filter::ListFormat::hosts, {}, 0},
        {"domains", filter::ListFormat::domains, {}, 0},
        {"adblock", filter::ListFormat::adblock, {}, 0},
    }};
    NameList names = generate_listed(domains, seed ^ 0xC0C0ULL);
    for (std::size_t l = 0; l < lists.size(); ++l) {
        const std::size_t begin = names.size() * l / lists.size();
        const std::size_t end = names.size() * (l + 1) / lists.size();
        std::string& text = lists[l].text;
        text.reserve((end - begin) * 32);
        for (std::size_t i = begin; i < end; ++i) {
            switch (lists[l].format) {
                case filter::ListFormat::hosts:
                    text.append("0.0.0.0 ").append(names[i]).push_back('\n');
                    break;
                case filter::ListFormat::adblock:
                    text.append("||").append(names[i]).append("^\n");
                    break;
                default: text.append(names[i]).push_back('\n'); break;
            }
        }
        lists[l].lines = end - begin;
    }
    return lists;
}

struct CompileRun {
    double seconds = 0;
    std::size_t snapshot_bytes = 0;
    std::size_t name_rules = 0;
    std::uint64_t entries = 0;
    std::uint64_t invalid = 0;
    ProcessMemory before;
    ProcessMemory after;
    bool peak_reset = false;
};

/// How the lists are declared to the compiler.
enum class Declared : std::uint8_t { format, auto_detect };
/// Who parses and builds: the daemon's parallel load, or the Compiler alone on this thread.
enum class Parsing : std::uint8_t { parallel, one_thread };

/// The load's calls, whichever does the parsing: a ParallelLoad and a Compiler share them.
template <typename Load>
void feed_lists(Load& load, const std::array<ListText, 3>& lists, Declared declared) {
    std::uint32_t id = 1;
    for (const ListText& l : lists) {
        const filter::ListFormat format =
            declared == Declared::format ? l.format : filter::ListFormat::auto_detect;
        auto list = load.open_list({id++, l.label, filter::ListKind::block, format, false});
        if (!list) {
            abort_run("compile", "open_list failed");
        }
        for (std::size_t at = 0; at < l.text.size(); at += kFeedChunk) {
            if (!load.feed(*list, std::string_view(l.text).substr(at, kFeedChunk))) {
                abort_run("compile", "feed failed");
            }
        }
        if (!load.close_list(*list)) {
            abort_run("compile", "close_list failed");
        }
    }
}

CompileRun compile_once(const std::array<ListText, 3>& lists, Declared declared, Parsing parsing) {
    CompileRun run;
    trim_heap();  // the baseline is live memory, not free pages the compile could reuse unseen
    run.peak_reset = reset_peak_memory();
    run.before = read_process_memory();
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const filter::Snapshot> snapshot;
    {
        filter::Compiler c;
        std::optional<lists::ParallelLoad> load;  // none when the Compiler works alone
        if (parsing == Parsing::parallel) {
            load.emplace(c);
            feed_lists(*load, lists, declared);
            load->finish();
        } else {
            feed_lists(c, lists, declared);
        }
        for (std::size_t i = 0; i < lists.size(); ++i) {
            run.entries += c.stats(i).entries;
            run.invalid += c.stats(i).invalid;
        }
        auto built = load ? load->build() : std::move(c).build();
        if (!built) {
            abort_run("compile", std::string("build failed: ") + filter::reason(built.error()));
        }
        snapshot = std::move(*built);
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.after = read_process_memory();
    run.snapshot_bytes = snapshot->memory_bytes();
    run.name_rules = snapshot->name_rules();
    return run;  // the snapshot is freed here, before the next run
}

/// The peak above the pre-compile RSS, when both figures exist and the peak was reset.
std::optional<double> peak_above(const CompileRun& r) {
    if (!r.peak_reset || !r.before.rss_mib || !r.after.hwm_mib) {
        return std::nullopt;
    }
    return *r.after.hwm_mib - *r.before.rss_mib;
}

/// kRuns compiles of the lists declared one way: each run's line, the median rate, the worst
/// peak; aborts when a run loses entries.
struct Measured {
    double median_rate = 0;
    double worst_peak = 0;
    bool have_peak = true;
    CompileRun last;
};

Measured measure(const std::array<ListText, 3>& lists, std::size_t lines, Declared declared,
                 Parsing parsing, Report& report) {
    std::array<double, kRuns> rates{};
    Measured m;
    for (int i = 0; i < kRuns; ++i) {
        const CompileRun r = compile_once(lists, declared, parsing);
        rates[static_cast<std::size_t>(i)] = static_cast<double>(lines) / r.seconds;
        const auto peak = peak_above(r);
        m.have_peak = m.have_peak && peak.has_value();
        m.worst_peak = std::max(m.worst_peak, peak.value_or(0));
        report.line(
            format("%s%s run %d: %.3f s, %.2fM lines/s; VmRSS before %s, VmHWM after %s, "
                   "peak above before %s; snapshot %.1f MiB",
                   parsing == Parsing::parallel ? "" : "one thread, ",
                   declared == Declared::format ? "format declared," : "format detected,", i + 1,
                   r.seconds, rates[static_cast<std::size_t>(i)] / 1e6,
                   mib_text(r.before.rss_mib).c_str(), mib_text(r.after.hwm_mib).c_str(),
                   mib_text(peak).c_str(), to_mib(static_cast<double>(r.snapshot_bytes))));
        if (r.name_rules == 0 || r.entries != lines || r.invalid != 0) {
            abort_run("compile",
                      format("%llu entries (%llu invalid) from %zu lines, %zu name rules",
                             static_cast<unsigned long long>(r.entries),
                             static_cast<unsigned long long>(r.invalid), lines, r.name_rules));
        }
        m.last = r;
    }
    std::sort(rates.begin(), rates.end());
    m.median_rate = rates[kRuns / 2];
    return m;
}

}  // namespace

void run_compile(const Options& options, Report& report) {
    const auto domains = static_cast<std::size_t>(options.domains);
    const unsigned threads = lists::ParallelLoad::default_threads();
    report.title("compile", format("three block lists of N/3 distinct names each (hosts "
                                   "\"0.0.0.0 name\", domains \"name\", adblock \"||name^\"), "
                                   "%zu lines, fed in 64 KiB chunks and parsed on %u threads; "
                                   "%d runs with each list's format declared, %d with it "
                                   "detected per line (the default), then both on one thread",
                                   domains, threads, kRuns, kRuns));
    const std::array<ListText, 3> lists = make_lists(domains, options.seed);
    std::size_t lines = 0;
    std::size_t text_bytes = 0;
    for (const ListText& l : lists) {
        lines += l.lines;
        text_bytes += l.text.size();
    }
    // One compile first, not counted: a rebuild follows the daemon's start-up compile, which
    // pages in once per process what the first parallel compile touches first (the load's code,
    // the threads' stacks, 0.3 MiB here), so a rebuild's peak does not pay for it again.
    const CompileRun warm_up = compile_once(lists, Declared::format, Parsing::parallel);
    report.line(
        format("warm-up (the daemon's start-up compile, not counted): %.3f s; peak above "
               "before %s",
               warm_up.seconds, mib_text(peak_above(warm_up)).c_str()));
    const Measured declared = measure(lists, lines, Declared::format, Parsing::parallel, report);
    const Measured detected =
        measure(lists, lines, Declared::auto_detect, Parsing::parallel, report);
    const Measured declared_alone =
        measure(lists, lines, Declared::format, Parsing::one_thread, report);
    const Measured detected_alone =
        measure(lists, lines, Declared::auto_detect, Parsing::one_thread, report);
    const CompileRun& last = detected.last;
    report.line(
        format("sanity: entries %llu/%zu lines, invalid %llu, distinct name rules %zu; "
               "list text %.1f MiB (held during every run)",
               static_cast<unsigned long long>(last.entries), lines,
               static_cast<unsigned long long>(last.invalid), last.name_rules,
               to_mib(static_cast<double>(text_bytes))));
    // The builder's columns: an 8-byte key, a 2-byte list and a 3-byte line per rule.
    constexpr std::size_t kBuilderBytesPerRule = 13;
    report_write_floor(report, "the builder's columns for these rules",
                       static_cast<std::size_t>(last.entries) * kBuilderBytesPerRule);
    for (const auto& [m, how] : {std::pair{&declared, "declared"}, {&detected, "detected"}}) {
        report.timing_target("compile", m->median_rate >= kLinesPerSecondLimit,
                             format("%.2fM lines/s, format %s (median of %d) >= %.0fM lines/s",
                                    m->median_rate / 1e6, how, kRuns, kLinesPerSecondLimit / 1e6));
    }
    for (const auto& [m, how] :
         {std::pair{&declared_alone, "declared"}, {&detected_alone, "detected"}}) {
        report.info("compile", format("%.2fM lines/s, format %s, the Compiler alone on one thread "
                                      "(median of %d)",
                                      m->median_rate / 1e6, how, kRuns));
    }
    const double worst_peak = std::max({declared.worst_peak, detected.worst_peak,
                                        declared_alone.worst_peak, detected_alone.worst_peak});
    const double snapshot_mib = to_mib(static_cast<double>(last.snapshot_bytes));
    const std::string peak_text = format(
        "rebuild peak above steady state %.1f MiB <= 1 snapshot (%.1f MiB) + %.0f MiB "
        "slack (worst of %d runs)",
        worst_peak, snapshot_mib, kSlackMib, 4 * kRuns);
    if (declared.have_peak && detected.have_peak && declared_alone.have_peak &&
        detected_alone.have_peak) {
        report.target("compile", worst_peak <= snapshot_mib + kSlackMib, peak_text);
    } else {
        report.info("compile", "rebuild peak n/a (VmHWM cannot be reset or read)");
    }
}

}  // namespace moat::bench
