// Every list format (hosts, plain domains, AdBlock DNS syntax, Pi-hole regex, auto-detect) on any
// text: each line through parse_line(), the whole text through the Compiler fed in chunks and
// through scan_list(), then the snapshot asked about the names the rules gave and a few more.
//
// Why: lists are third-party downloads, re-read on every refresh; a line that crashes the parser
// or the compiler, or a rule that compiles to nothing, silently turns blocking off for everyone.
//
// Input: control (1 octet), then the list's text. Control bits 0-2: the format (auto, hosts,
// domains, adblock, regex; 5-7 auto again); bit 3: an allowlist instead of a blocklist; bit 4:
// entries include subdomains; bits 5-7: the size of the chunks the compiler is fed (1, 2, 3, 7,
// 64, 512, 4096 octets, or all at once), so lines cut across chunks are exercised.
//
// Checked: every name a rule carries is already normalised (normalize_name() gives it back
// unchanged) and carries its hash_dotted() hash, and every regex pattern is non-empty; a line the
// common shapes' shortcut takes gives the same outcome and rules as the full parser, and one it
// declines gives nothing; a comment or unsupported line gives no rule
// and a `rules` line gives at least one; the compiler counts exactly what scan_list() counts over
// the whole text (lines, entries, comments, skipped, unsupported, invalid and the first invalid
// lines); the snapshot builds unless the regex set fails to compile, and then every name rule
// matches its own name (and a subtree rule a name below it too).
#include <array>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "line_shortcuts.hpp"
#include "line_text.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/filter/filter_error.hpp"
#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"
#include "moat/filter/list_scan.hpp"
#include "moat/filter/name_hash.hpp"
#include "moat/filter/snapshot.hpp"

namespace {

using moat::filter::LineOutcome;
using moat::filter::ListFormat;
using moat::filter::RuleMatch;

constexpr std::array<std::size_t, 8> kChunkSizes{1, 2, 3, 7, 64, 512, 4096, 0};
/// Name rules whose lookups are checked; the rest only parse (bounds the time per input).
constexpr std::size_t kMaxCheckedNames = 64;
/// Names asked about in every snapshot, whatever the list says.
constexpr std::array<std::string_view, 8> kProbeNames{
    "example.com",        "ads.example.com",    "localhost", "a.b.c.d.e.f.g",
    "xn--80ak6aa92e.com", "_dmarc.example.org", "com",       "0.0.0.0"};

struct Control {
    ListFormat format = ListFormat::auto_detect;
    moat::filter::ListKind kind = moat::filter::ListKind::block;
    bool include_subdomains = false;
    std::size_t chunk = 0;  ///< 0: the whole text at once

    static Control of(std::uint8_t bits) {
        const unsigned format = bits & 7U;
        return {format <= 4 ? static_cast<ListFormat>(format) : ListFormat::auto_detect,
                (bits & 8U) != 0 ? moat::filter::ListKind::allow : moat::filter::ListKind::block,
                (bits & 0x10U) != 0, kChunkSizes[bits >> 5U]};
    }
};

struct NameSeen {
    std::string name;
    RuleMatch match = RuleMatch::exact;
};

/// Checks each rule as parse_line() hands it over and keeps some names for lookups.
class CheckingSink final : public moat::filter::RuleSink {
public:
    explicit CheckingSink(std::vector<NameSeen>& names) : names_(names) {}

    void on_name(const moat::filter::NameRule& rule) override {
        std::array<char, 256> buffer{};
        const auto normalised = moat::filter::normalize_name(rule.name, buffer);
        MOAT_FUZZ_CHECK(normalised && normalised->text == rule.name, std::string(rule.name));
        MOAT_FUZZ_CHECK(rule.hash == moat::filter::hash_dotted(rule.name), std::string(rule.name));
        if (names_.size() < kMaxCheckedNames) {
            names_.push_back({std::string(rule.name), rule.match});
        }
        ++heard;
    }
    bool on_regex(const moat::filter::RegexRule& rule) override {
        MOAT_FUZZ_CHECK(!rule.pattern.empty());
        ++heard;
        return true;  // validity is the compiler's to judge; scan_list() is compared with it
    }
    void on_skipped() override { ++heard; }

    std::size_t heard = 0;

private:
    std::vector<NameSeen>& names_;
};

/// Every event a parser gives a sink, as text, to compare two parsers.
class RecordingSink final : public moat::filter::RuleSink {
public:
    void on_name(const moat::filter::NameRule& rule) override {
        events += "name " + std::string(rule.name) + ' ' + std::to_string(rule.hash) + ' ' +
                  std::to_string(static_cast<int>(rule.match)) + (rule.exception ? " @@" : "") +
                  (rule.important ? " !" : "") + '\n';
    }
    bool on_regex(const moat::filter::RegexRule& rule) override {
        events += "regex " + std::string(rule.pattern) + '\n';
        return true;
    }
    void on_skipped() override { events += "skipped\n"; }

    std::string events;
};

void check_shortcut(std::string_view line, const Control& control) {
    line = moat::filter::trim(line);
    if (line.empty()) {
        return;
    }
    RecordingSink quick;
    const auto shaped =
        moat::filter::parse_common_shape(line, control.format, control.include_subdomains, quick);
    if (!shaped) {
        MOAT_FUZZ_CHECK(quick.events.empty(), "a declined line gave rules: " + std::string(line));
        return;
    }
    RecordingSink full;
    const LineOutcome outcome =
        moat::filter::parse_line_in_full(line, control.format, control.include_subdomains, full);
    MOAT_FUZZ_CHECK(*shaped == outcome && quick.events == full.events, std::string(line));
}

void check_lines(std::string_view text, const Control& control, std::vector<NameSeen>& names) {
    moat::filter::LineSplitter lines;
    const auto on_line = [&](std::string_view line) {
        CheckingSink sink(names);
        const LineOutcome outcome =
            moat::filter::parse_line(line, control.format, control.include_subdomains, sink);
        if (outcome == LineOutcome::comment || outcome == LineOutcome::unsupported) {
            MOAT_FUZZ_CHECK(sink.heard == 0, "a comment or unsupported line gave rules");
        } else if (outcome == LineOutcome::rules) {
            MOAT_FUZZ_CHECK(sink.heard > 0, "a rules line gave none");
        }
        check_shortcut(line, control);
    };
    lines.feed(text, on_line);
    lines.finish(on_line);
}

void check_same_stats(const moat::filter::ListStats& compiled,
                      const moat::filter::ListStats& scanned) {
    MOAT_FUZZ_CHECK(compiled.lines == scanned.lines);
    MOAT_FUZZ_CHECK(compiled.entries == scanned.entries);
    MOAT_FUZZ_CHECK(compiled.comments == scanned.comments);
    MOAT_FUZZ_CHECK(compiled.skipped == scanned.skipped);
    MOAT_FUZZ_CHECK(compiled.unsupported == scanned.unsupported);
    MOAT_FUZZ_CHECK(compiled.invalid == scanned.invalid);
    MOAT_FUZZ_CHECK(compiled.first_invalid == scanned.first_invalid);
    MOAT_FUZZ_CHECK(compiled.comments + compiled.unsupported + compiled.invalid <= compiled.lines);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const Control control = Control::of(data[0]);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

    std::vector<NameSeen> names;
    check_lines(text, control, names);

    moat::filter::Compiler compiler;
    const auto list = compiler.open_list(
        {7, "fuzz.txt", control.kind, control.format, control.include_subdomains});
    MOAT_FUZZ_CHECK(list.has_value());
    const std::size_t chunk = control.chunk == 0 ? text.size() + 1 : control.chunk;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
        MOAT_FUZZ_CHECK(compiler.feed(*list, text.substr(at, chunk)).has_value());
    }
    MOAT_FUZZ_CHECK(compiler.close_list(*list).has_value());

    std::istringstream whole{std::string(text)};
    const auto scanned = moat::filter::scan_list(whole, control.format, control.include_subdomains);
    check_same_stats(compiler.stats(*list), scanned);

    auto built = std::move(compiler).build();
    if (!built) {
        MOAT_FUZZ_CHECK(built.error() == moat::filter::Errc::regex_set,
                        std::to_string(static_cast<int>(built.error())));
        return 0;
    }
    const auto& snapshot = **built;
    MOAT_FUZZ_CHECK(snapshot.lists().size() == 1);
    check_same_stats(snapshot.lists()[0].stats, scanned);
    for (const NameSeen& seen : names) {
        MOAT_FUZZ_CHECK(snapshot.match_text(seen.name).action != moat::filter::Action::none,
                        seen.name);
        const std::string below = "x." + seen.name;
        if (seen.match == RuleMatch::subtree && below.size() <= 253) {
            MOAT_FUZZ_CHECK(snapshot.match_text(below).action != moat::filter::Action::none, below);
        }
    }
    for (const std::string_view probe : kProbeNames) {
        (void)snapshot.match_text(probe);
    }
    return 0;
}
