// The common shapes' shortcut (line_shortcuts.hpp) against the full line parser: every line it
// takes gives the same outcome and the same rules, every line it declines gives nothing, and it
// takes nearly every line of the real lists. Also the hash normalize_name() computes in its pass.
#include "line_shortcuts.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "line_text.hpp"
#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"
#include "moat/filter/list_scan.hpp"
#include "moat/filter/name_hash.hpp"
#include "moat/wire/name.hpp"
#include "support/emulation.hpp"
#include "support/shared_data.hpp"

namespace moat::filter {
namespace {

/// Every event a parser gives its sink, as text.
class Recorder final : public RuleSink {
public:
    void on_name(const NameRule& r) override {
        events += "name " + std::string(r.name) + ' ' + std::to_string(r.hash) + ' ' +
                  std::to_string(static_cast<int>(r.match)) + (r.exception ? " @@" : "") +
                  (r.important ? " !" : "") + '\n';
    }
    bool on_regex(const RegexRule& r) override {
        events += "regex " + std::string(r.pattern) + '\n';
        return true;
    }
    void on_skipped() override { events += "skipped\n"; }

    std::string events;
};

struct Tally {
    std::size_t taken = 0;
    std::size_t declined = 0;
};

struct Setting {
    ListFormat format;
    bool subdomains;
};

/// Every format, with and without subdomains.
constexpr std::array<Setting, 10> kEverySetting{{{ListFormat::auto_detect, false},
                                                 {ListFormat::auto_detect, true},
                                                 {ListFormat::hosts, false},
                                                 {ListFormat::hosts, true},
                                                 {ListFormat::domains, false},
                                                 {ListFormat::domains, true},
                                                 {ListFormat::adblock, false},
                                                 {ListFormat::adblock, true},
                                                 {ListFormat::regex, false},
                                                 {ListFormat::regex, true}}};
/// For the two million lines of the real lists: each shortcut once, detection both ways. (Hosts
/// and domains lists go through the same code in both parsers; regex lists take no shortcut.)
constexpr std::array<Setting, 4> kListSettings{{{ListFormat::auto_detect, false},
                                                {ListFormat::auto_detect, true},
                                                {ListFormat::hosts, false},
                                                {ListFormat::adblock, false}}};

/// Parses `line` both ways in each setting and compares.
template <std::size_t N>
void compare(std::string_view raw, const std::array<Setting, N>& settings, Tally& tally) {
    const std::string_view line = trim(raw);
    if (line.empty()) {
        return;
    }
    for (const auto [format, sub] : settings) {
        Recorder quick;
        const auto shaped = parse_common_shape(line, format, sub, quick);
        if (!shaped) {
            ++tally.declined;
            ASSERT_EQ(quick.events, "") << "declined, yet gave rules: " << line;
            continue;
        }
        ++tally.taken;
        Recorder full;
        const LineOutcome outcome = parse_line_in_full(line, format, sub, full);
        ASSERT_EQ(*shaped, outcome)
            << line << " as format " << static_cast<int>(format) << ", subdomains " << sub;
        ASSERT_EQ(quick.events, full.events)
            << line << " as format " << static_cast<int>(format) << ", subdomains " << sub;
    }
}

/// Lines at the edges of each shape: case, trailing dots, addresses, local names, label and
/// name lengths, blanks, comments, and the characters each format gives a meaning.
std::vector<std::string> edge_lines() {
    const std::string label63(63, 'a');
    std::string name253;  // 63 + 1 + 63 + 1 + 63 + 1 + 61 octets
    for (int i = 0; i < 3; ++i) {
        name253 += label63 + '.';
    }
    name253 += std::string(61, 'b');
    std::vector<std::string> lines = {
        "example.com",
        "Ads.Example.COM",
        "example.com.",
        "example.com..",
        ".example.com",
        "a..b",
        "com",
        "a",
        "-",
        "_dmarc.example.org",
        "xn--80ak6aa92e.com",
        "1.2.3.4",
        "1.2.3.4.",
        "1.2.3",
        "1.2.3.4.5",
        "...",
        "....",
        "0.0.0.0",
        "localhost",
        "local",
        "ip6-localhost",
        "*.example.com",
        "example.com#x",
        "example.com #x",
        "#example.com",
        "0.0.0.0 example.com",
        "0.0.0.0\tExample.COM.",
        "127.0.0.1  ads.example.com",
        "0.0.0.0 \t ads.example.com",
        ":: ads.example.com",
        "::1 localhost",
        "fe80::1%lo0 x.org",
        "0.0.0.0 localhost",
        "0.0.0.0 0.0.0.0",
        "255.255.255.255 broadcasthost",
        "0.0.0.0 ip6-allnodes",
        "0.0.0.0 a.com b.com",
        "0.0.0.0 a.com # tracker",
        "0.0.0.0 a.com#x",
        "... a.com",
        "1.2.3 a.com",
        "0.0.0.0 1.2.3.4",
        "0.0.0.0 *.a.com",
        "0.0.0.0 a..com",
        "a.com 0.0.0.0",
        "||example.com^",
        "||Example.COM.^",
        "||^",
        "||.^",
        "||a^",
        "|example.com^",
        "||example.com^|",
        "||example.com",
        "||example.com^$important",
        "@@||example.com^",
        "||*.example.com^",
        "||ex*ample.com^",
        "||example.com/path^",
        "||a..b^",
        "||1.2.3.4^",
        "||localhost^",
        "!comment",
        "[Adblock Plus 2.0]",
        "##.ad",
        "/ads?[0-9]\\.example/",
        "^ads\\.",
        "(\\.|^)example\\.com$",
        "example.com$third-party",
        "example.com^",
        "|",
        "||",
        "a b",
        "a\tb",
        label63 + ".com",
        label63 + "a.com",
        name253,
        name253 + ".",
        name253 + "b",
        "0.0.0.0 " + name253,
        "||" + name253 + "^",
    };
    return lines;
}

TEST(LineShortcuts, AgreeWithTheFullParserOnEdgeLinesAndEveryOneOctetChangeOfThem) {
    // Every edge line, then each with one octet replaced, removed or doubled: the shortcut's
    // decisions sit on single characters (a dot, a blank, a digit, a capital, a pipe).
    constexpr std::string_view kSwaps = "aZ09.-_ \t#|^*$@!/:[]\r%";
    Tally tally;
    for (const std::string& line : edge_lines()) {
        compare(line, kEverySetting, tally);
        for (std::size_t i = 0; i < line.size(); ++i) {
            for (const char c : kSwaps) {
                std::string changed = line;
                changed[i] = c;
                compare(changed, kEverySetting, tally);
            }
            std::string removed = line;
            removed.erase(i, 1);
            compare(removed, kEverySetting, tally);
            std::string doubled = line;
            doubled.insert(i, 1, line[i]);
            compare(doubled, kEverySetting, tally);
        }
        if (HasFatalFailure()) {
            return;
        }
    }
    // Both branches are exercised many times over, or the comparison proves nothing.
    EXPECT_GT(tally.taken, 10000U);
    EXPECT_GT(tally.declined, 10000U);
}

TEST(LineShortcuts, TakeTheCommonShapesAsTheirFormatsAndAutoDetection) {
    Recorder sink;
    for (const ListFormat f : {ListFormat::domains, ListFormat::hosts, ListFormat::auto_detect}) {
        EXPECT_EQ(parse_common_shape("example.com", f, false, sink), LineOutcome::rules);
        EXPECT_EQ(parse_common_shape("0.0.0.0 example.com", f, false, sink), LineOutcome::rules);
    }
    for (const ListFormat f : {ListFormat::adblock, ListFormat::auto_detect}) {
        EXPECT_EQ(parse_common_shape("||example.com^", f, false, sink), LineOutcome::rules);
    }
    EXPECT_EQ(parse_common_shape("example.com", ListFormat::regex, false, sink), std::nullopt);
    EXPECT_EQ(parse_common_shape("example.com", ListFormat::adblock, false, sink), std::nullopt);
}

TEST(LineShortcuts, AgreeWithTheFullParserOnEveryLineOfTheRealLists) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    // Under qemu-user every line took 118 s of the aarch64 stage (44 s under ASan): there every
    // fourth line is compared, which still meets each shape the lists have many times over. The
    // code is the same bytes-only parser natively, where every line is compared.
    const std::size_t stride = moat::test::emulator() != nullptr ? 4 : 1;
    Tally tally;
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(".txt") && !name.ends_with(".list")) {
            continue;  // the MANIFEST, and the compressed union (its names are in the others)
        }
        ++files;
        std::ifstream in(entry.path(), std::ios::binary);
        std::string line;
        for (std::size_t n = 0; std::getline(in, line); ++n) {
            if (n % stride != 0) {
                continue;
            }
            compare(line, kListSettings, tally);
            if (HasFatalFailure()) {
                FAIL() << "in " << name << ", line " << n + 1;
            }
        }
    }
    EXPECT_GE(files, 20U);
    // Most lines of real lists have a common shape; the shortcut must take them (in most
    // settings, so well over a million times over these files), or it saves nothing.
    EXPECT_GT(tally.taken, 2'000'000U / stride);
}

TEST(LineShortcuts, TakeNearlyEveryLineOfAPlainAHostsAndAnAdblockList) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    const std::array<std::pair<const char*, ListFormat>, 3> lists{{
        {"hagezi-light.domains.txt", ListFormat::domains},
        {"hagezi-light.hosts.txt", ListFormat::hosts},
        {"hagezi-multi.adblock.txt", ListFormat::adblock},
    }};
    for (const auto& [file, format] : lists) {
        SCOPED_TRACE(file);
        std::ifstream in(dir / file, std::ios::binary);
        std::string line;
        std::size_t rules = 0;
        std::size_t taken = 0;
        while (std::getline(in, line)) {
            Recorder sink;
            if (parse_line_in_full(line, format, false, sink) == LineOutcome::rules) {
                ++rules;
                Recorder quick;
                const std::string_view trimmed = trim(line);
                if (parse_common_shape(trimmed, format, false, quick).has_value()) {
                    ++taken;
                }
            }
        }
        EXPECT_GT(rules, 50'000U);
        EXPECT_GE(taken * 1000, rules * 999) << taken << " of " << rules << " rule lines";
    }
}

TEST(NormalizeName, HashesAsTheDottedHashAndTheQuerySideSuffixHash) {
    const std::string long_label(63, 'q');
    for (const std::string& text : std::vector<std::string>{
             "com", "example.com", "Ads.Example.COM.", "a.b.c.d.e.f.g", "_dmarc.example.org",
             long_label + ".example.com", "exactly8.12345678.abcdefgh"}) {
        SCOPED_TRACE(text);
        std::array<char, 256> buf{};
        const auto name = normalize_name(text, buf);
        ASSERT_TRUE(name.has_value());
        EXPECT_EQ(name->hash, hash_dotted(name->text));
        const auto wire = wire::Name::from_text(name->text);
        ASSERT_TRUE(wire.has_value());
        SuffixHashes suffixes;
        suffixes.compute(wire->wire().data());
        EXPECT_EQ(name->hash, suffixes.hash[0]);
    }
}

TEST(NormalizeName, LeavesALowerCaseNameInPlaceAndLowersACapitalisedOneIntoTheBuffer) {
    std::array<char, 256> buf{};
    const std::string_view lower = "ads.example.com.";
    const auto same = normalize_name(lower, buf);
    ASSERT_TRUE(same.has_value());
    EXPECT_EQ(same->text, "ads.example.com");
    EXPECT_EQ(same->text.data(), lower.data());

    const std::string_view capitals = "Ads.Example.COM";
    const auto lowered = normalize_name(capitals, buf);
    ASSERT_TRUE(lowered.has_value());
    EXPECT_EQ(lowered->text, "ads.example.com");
    EXPECT_EQ(lowered->text.data(), buf.data());
    EXPECT_EQ(lowered->hash, same->hash);
}

}  // namespace
}  // namespace moat::filter
