// The screen before a regex set's search (atom_screen.hpp): it may only turn away a name that no
// rule matches, which is checked against RE2::Set itself over the regex rules of the real lists
// it screens and real popular names, and it must turn away most names, or it saves nothing.
#include "atom_screen.hpp"

#include <gtest/gtest.h>
#include <re2/set.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"
#include "regex_matcher.hpp"
#include "support/shared_data.hpp"

namespace moat::filter {
namespace {

AtomScreen screen_of(const std::vector<std::string>& patterns) {
    return AtomScreen::of(patterns, RegexMatcher::options());
}

TEST(AtomScreen, TurnsAwayNamesWithoutTheRulesLiteralTextInAnyCase) {
    const AtomScreen s =
        screen_of({"^ads\\.", "(^|\\.)doubleclick\\.net$", "^adtrack(er|ing)?[_.-]"});
    ASSERT_FALSE(s.passes_everything());
    // `(^|\.)` gives two strings, either of which guards the rule.
    EXPECT_EQ(s.atoms(),
              (std::vector<std::string>{".doubleclick.net", "ads.", "adtrack", "doubleclick.net"}));
    EXPECT_TRUE(s.may_match("ads.example.com"));
    EXPECT_TRUE(s.may_match("ADS.Example.com"));
    EXPECT_TRUE(s.may_match("x.DoubleClick.NET"));
    EXPECT_TRUE(s.may_match("adtracking.example"));
    // An atom anywhere lets the name through; the set decides (this one matches no rule).
    EXPECT_TRUE(s.may_match("www.ads.example.com"));
    EXPECT_FALSE(s.may_match("www.example.com"));
    EXPECT_FALSE(s.may_match("ads"));       // "ads." cut short
    EXPECT_FALSE(s.may_match("adtrac.x"));  // "adtrack" cut short
    EXPECT_FALSE(s.may_match("doubleclick.ne"));
    EXPECT_FALSE(s.may_match(""));
    EXPECT_FALSE(s.may_match("a"));
}

TEST(AtomScreen, FindsAtomsOfFourOctetsOrMoreAnywhereInAName) {
    // Four octets (a table key that is the atom) and more (a key, then the rest compared), two
    // sharing their first four, and one starting with the same pair as others.
    const AtomScreen s = screen_of({"^wxyz", "^trackers\\.", "^trackbar", "^trap"});
    ASSERT_FALSE(s.passes_everything());
    EXPECT_EQ(s.atoms(), (std::vector<std::string>{"trackbar", "trackers.", "trap", "wxyz"}));
    for (const char* name : {"wxyz", "q.wxyz", "WxYz.net", "trackers.example", "a-TRACKERS.b",
                             "xtrackbar", "TRACKBAR", "trap", "a.trap1.b"}) {
        EXPECT_TRUE(s.may_match(name)) << name;
    }
    for (const char* name : {"x", "tr", "wxy", "wx.yz", "w.x.y.z", "trackers", "trackba",
                             "track.bar", "tracxbar", "trackersx", "tra.p", "www.example.com"}) {
        EXPECT_FALSE(s.may_match(name)) << name;
    }
}

TEST(AtomScreen, PassesEverythingWhenARuleHasNoLiteralTextOfFourOctets) {
    // The other rule's atom does not guard this one, so no name may be turned away.
    const AtomScreen s = screen_of({"^ads\\.", "^[a-z]{3}[0-9]+$"});
    EXPECT_TRUE(s.passes_everything());
    EXPECT_TRUE(s.may_match("abc1"));
    EXPECT_TRUE(s.may_match("www.example.com"));
    EXPECT_TRUE(screen_of({"^x[^.]*$"}).passes_everything()) << "a one-octet atom";
    // Shorter atoms occur in too many names to pay for the scan (mmotti's `^ad...`, `^aff...`).
    EXPECT_TRUE(screen_of({"^ads\\.", "^ad[0-9]+\\."}).passes_everything()) << "\"ad\"";
    EXPECT_TRUE(screen_of({"^aff(iliate)?[_.-]"}).passes_everything()) << "\"aff\"";
    // RE2 finds no atom in some rules that have one, such as an optional group after a
    // shared prefix (Pi-hole's facebook list): those turn the screen off too.
    EXPECT_TRUE(screen_of({"(facebook|fb(cdn|sbx)?)\\."}).passes_everything());
    EXPECT_FALSE(screen_of({"(facebook|fbcdn|fbsbx)\\."}).passes_everything());
    EXPECT_TRUE(AtomScreen().may_match("anything"));
    EXPECT_TRUE(screen_of({}).passes_everything());
}

TEST(AtomScreen, PassesEveryTextThatIsNotAscii) {
    // RE2 folds case over Unicode: with case ignored, `k` matches U+212A KELVIN SIGN, which a
    // byte scan for "k" would miss.
    const std::vector<std::string> patterns{"tracking\\."};
    const AtomScreen s = screen_of(patterns);
    ASSERT_FALSE(s.passes_everything());
    const std::string kelvin = "trac\xE2\x84\xAAing.example";
    re2::RE2::Set set(RegexMatcher::options(), re2::RE2::UNANCHORED);
    ASSERT_EQ(set.Add(patterns[0], nullptr), 0);
    ASSERT_TRUE(set.Compile());
    ASSERT_TRUE(set.Match(kelvin, nullptr));
    EXPECT_TRUE(s.may_match(kelvin));
    EXPECT_TRUE(s.may_match("caf\xC3\xA9.example"));
    EXPECT_FALSE(s.may_match("cafe.example"));
    EXPECT_TRUE(screen_of({"caf\xC3\xA9"}).passes_everything()) << "an atom that is not ASCII";
}

/// Collects the patterns of the regex rules a list's lines give.
class PatternSink final : public RuleSink {
public:
    void on_name(const NameRule& /*rule*/) override {}
    bool on_regex(const RegexRule& rule) override {
        patterns.emplace_back(rule.pattern);
        return true;
    }
    void on_skipped() override {}

    std::vector<std::string> patterns;
};

/// The regex rules of every real list that has some, by file, as the line parser gives them to
/// the compiler.
std::map<std::string, std::vector<std::string>> real_regex_rules(const std::filesystem::path& dir) {
    std::map<std::string, std::vector<std::string>> rules;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const bool pihole = name.starts_with("mmotti-") && name != "mmotti-whitelist.list";
        const bool adblock =
            name.ends_with(".adblock.txt") || name == "adguard-sdns-source-exclusions.txt";
        if (!pihole && !adblock) {
            continue;
        }
        PatternSink sink;
        std::ifstream in(entry.path(), std::ios::binary);
        std::string line;
        while (std::getline(in, line)) {
            (void)parse_line(line, pihole ? ListFormat::regex : ListFormat::adblock, false, sink);
        }
        if (!sink.patterns.empty()) {
            rules[name] = std::move(sink.patterns);
        }
    }
    return rules;
}

/// Real popular names, then each of the screen's atoms inside a name, in upper and lower case:
/// names the rules match are rare among the first and common among the second.
std::vector<std::string> names_to_try(const std::filesystem::path& queries,
                                      const std::vector<std::string>& atoms) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(queries)) {
        if (entry.path().extension() != ".csv") {
            continue;
        }
        std::ifstream in(entry.path(), std::ios::binary);
        std::string line;
        while (std::getline(in, line)) {
            // "rank,name" in two of the files, the bare name in the third.
            const std::size_t comma = line.find(',');
            names.push_back(comma == std::string::npos ? line : line.substr(comma + 1));
        }
    }
    for (const std::string& atom : atoms) {
        for (const std::string& name : {atom + "1.example.com", "x." + atom + "-y.example", atom,
                                        "www." + atom + "s.net", "a-" + atom + "_b.org"}) {
            names.push_back(name);
            std::string upper = name;
            for (char& c : upper) {
                c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
            }
            names.push_back(upper);
        }
    }
    return names;
}

/// What a screen did with names, held to RE2::Set over the same rules.
struct Screened {
    std::size_t names = 0;
    std::size_t matched = 0;
    std::size_t turned_away = 0;
};

/// Fails the test at the first name a rule matches that the screen turns away.
Screened hold_to_the_set(const std::vector<std::string>& patterns, const AtomScreen& screen,
                         const std::vector<std::string>& names) {
    re2::RE2::Set set(RegexMatcher::options(), re2::RE2::UNANCHORED);
    for (const std::string& p : patterns) {
        EXPECT_GE(set.Add(p, nullptr), 0) << p;
    }
    EXPECT_TRUE(set.Compile());
    Screened out{.names = names.size()};
    for (const std::string& name : names) {
        const bool may = screen.may_match(name);
        if (set.Match(name, nullptr)) {
            ++out.matched;
            EXPECT_TRUE(may) << "turned away '" << name << "', which a rule matches";
            if (!may) {
                break;
            }
        }
        out.turned_away += may ? 0 : 1;
    }
    return out;
}

TEST(AtomScreen, NeverTurnsAwayANameARealListsRuleMatches) {
    MOAT_SHARED_PATH_OR_SKIP(lists, "data/blocklists");
    MOAT_SHARED_PATH_OR_SKIP(queries, "data/queries");
    const auto rules = real_regex_rules(lists);
    ASSERT_GE(rules.size(), 5U) << "the real lists' regex rules were not found";
    // Each list on its own, then every list the screen works for together, as the compiler
    // puts all block regexes in one set.
    std::vector<std::string> screened_together;
    std::vector<std::string> screened_lists;
    for (const auto& [file, patterns] : rules) {
        SCOPED_TRACE(file);
        const AtomScreen screen = screen_of(patterns);
        if (screen.passes_everything()) {
            continue;
        }
        screened_lists.push_back(file);
        const Screened alone =
            hold_to_the_set(patterns, screen, names_to_try(queries, screen.atoms()));
        ASSERT_FALSE(HasFailure());
        EXPECT_GT(alone.matched, 0U);
        EXPECT_GT(alone.turned_away, alone.names / 2);
        screened_together.insert(screened_together.end(), patterns.begin(), patterns.end());
    }
    // mmotti's regex.list needs "ad", "aff", "stat" and such: too short to screen for. The
    // AdGuard filter's regex rules (its wildcards) and two small Pi-hole lists are screened.
    EXPECT_EQ(screened_lists,
              (std::vector<std::string>{"adguard-dns-filter-android-optimized.adblock.txt",
                                        "mmotti-miscellaneous-internationalized-domains.list",
                                        "mmotti-social-twitter.list"}));
    ASSERT_GE(screened_together.size(), 100U);
    const AtomScreen screen = screen_of(screened_together);
    ASSERT_FALSE(screen.passes_everything());
    const Screened all =
        hold_to_the_set(screened_together, screen, names_to_try(queries, screen.atoms()));
    ASSERT_FALSE(HasFailure());
    // Both sides are exercised: a hundred names and more that a rule matches, and most names
    // turned away.
    EXPECT_GT(all.matched, 100U);
    EXPECT_GT(all.turned_away, all.names / 2);
}

}  // namespace
}  // namespace moat::filter
