// The line parsers of every list format, one behaviour per test.
#include "moat/filter/line_parser.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "moat/filter/list_scan.hpp"

namespace moat::filter {
namespace {

struct Collected {
    std::string text;
    RuleMatch match = RuleMatch::exact;
    bool exception = false;
    bool important = false;
    bool regex = false;
};

class Collector final : public RuleSink {
public:
    void on_name(const NameRule& r) override {
        rules.push_back({std::string(r.name), r.match, r.exception, r.important, false});
    }
    bool on_regex(const RegexRule& r) override {
        rules.push_back({std::string(r.pattern), RuleMatch::exact, r.exception, r.important, true});
        return accept_regex;
    }
    void on_skipped() override { ++skipped; }

    std::vector<Collected> rules;
    int skipped = 0;
    bool accept_regex = true;
};

struct Result {
    std::vector<Collected> rules;
    int skipped = 0;
};

Result parse(std::string_view line, ListFormat f, LineOutcome expected, bool sub = false) {
    Collector c;
    EXPECT_EQ(parse_line(line, f, sub, c), expected) << line;
    return {c.rules, c.skipped};
}

TEST(FilterHosts, ZeroAndLoopbackAddresses) {
    for (const char* line : {"0.0.0.0 ads.example.com", "127.0.0.1  ads.example.com",
                             ":: ads.example.com", "::1\tads.example.com"}) {
        const auto c = parse(line, ListFormat::hosts, LineOutcome::rules);
        ASSERT_EQ(c.rules.size(), 1U) << line;
        EXPECT_EQ(c.rules[0].text, "ads.example.com");
        EXPECT_EQ(c.rules[0].match, RuleMatch::exact);
    }
}

TEST(FilterHosts, SeveralNamesAndInlineComment) {
    const auto c =
        parse("0.0.0.0 a.com b.COM. c.net # tracker", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 3U);
    EXPECT_EQ(c.rules[0].text, "a.com");
    EXPECT_EQ(c.rules[1].text, "b.com");
    EXPECT_EQ(c.rules[2].text, "c.net");
}

TEST(FilterHosts, CommentsAndBlankLines) {
    parse("# [163.com]", ListFormat::hosts, LineOutcome::comment);
    parse("   ", ListFormat::hosts, LineOutcome::comment);
    parse("\r", ListFormat::auto_detect, LineOutcome::comment);
    parse("#0.0.0.0 a.com", ListFormat::auto_detect, LineOutcome::comment);
}

TEST(FilterHosts, LocalhostEntriesAreSkipped) {
    for (const char* line : {"127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback",
                             "127.0.0.1 localhost.localdomain", "255.255.255.255 broadcasthost",
                             "0.0.0.0 0.0.0.0", "127.0.0.1 local"}) {
        const auto c = parse(line, ListFormat::hosts, LineOutcome::rules);
        EXPECT_TRUE(c.rules.empty()) << line;
        EXPECT_GE(c.skipped, 1) << line;
    }
}

TEST(FilterHosts, InvalidNamesAndBareAddress) {
    parse("0.0.0.0", ListFormat::hosts, LineOutcome::invalid);
    parse("0.0.0.0 bad..name", ListFormat::hosts, LineOutcome::invalid);
    parse("0.0.0.0 exa$mple.com", ListFormat::hosts, LineOutcome::invalid);
    const auto c = parse("0.0.0.0 good.com b@d.com", ListFormat::hosts, LineOutcome::invalid);
    ASSERT_EQ(c.rules.size(), 1U);  // the good name on the line is still taken
    EXPECT_EQ(c.rules[0].text, "good.com");
}

TEST(FilterDomains, PlainAndWildcard) {
    auto c = parse("Tracker.Example.COM.", ListFormat::domains, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_EQ(c.rules[0].text, "tracker.example.com");
    EXPECT_EQ(c.rules[0].match, RuleMatch::exact);

    c = parse("*.example.org", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_EQ(c.rules[0].text, "example.org");
    EXPECT_EQ(c.rules[0].match, RuleMatch::subtree);
}

TEST(FilterDomains, SubdomainOverride) {
    const auto c = parse("example.org", ListFormat::domains, LineOutcome::rules, true);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_EQ(c.rules[0].match, RuleMatch::subtree);
}

TEST(FilterDomains, IdnKeptAsGivenAndUnderscoreAccepted) {
    auto c = parse("xn--80ak6aa92e.com", ListFormat::domains, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).text, "xn--80ak6aa92e.com");
    c = parse("_dmarc.example.com # inline", ListFormat::domains, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).text, "_dmarc.example.com");
    parse(
        "b\xc3\xbc"
        "cher.de",
        ListFormat::domains, LineOutcome::invalid);
}

TEST(FilterDomains, LengthLimits) {
    parse(std::string(64, 'a') + ".com", ListFormat::domains, LineOutcome::invalid);
    parse(std::string(63, 'a') + ".com", ListFormat::domains, LineOutcome::rules);
    std::string long_name;
    for (int i = 0; i < 60; ++i) {
        long_name += "abcd.";
    }
    parse(long_name + "com", ListFormat::domains, LineOutcome::invalid);
    parse("two words", ListFormat::domains, LineOutcome::invalid);
}

TEST(FilterAdblock, DomainAnchors) {
    auto c = parse("||ads.example.com^", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_EQ(c.rules[0].text, "ads.example.com");
    EXPECT_EQ(c.rules[0].match, RuleMatch::subtree);
    EXPECT_FALSE(c.rules[0].exception);

    c = parse("||ads.example.com^|", ListFormat::adblock, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).match, RuleMatch::subtree);

    c = parse("|ads.example.com^", ListFormat::auto_detect, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).text, "ads.example.com");
    EXPECT_EQ(c.rules.at(0).match, RuleMatch::exact);

    c = parse("@@||good.example.com^|", ListFormat::auto_detect, LineOutcome::rules);
    EXPECT_TRUE(c.rules.at(0).exception);
    EXPECT_EQ(c.rules.at(0).match, RuleMatch::subtree);
}

TEST(FilterAdblock, Modifiers) {
    auto c = parse("||ads.example.com^$important", ListFormat::auto_detect, LineOutcome::rules);
    EXPECT_TRUE(c.rules.at(0).important);
    c = parse("||ads.example.com^$third-party", ListFormat::adblock, LineOutcome::unsupported);
    EXPECT_TRUE(c.rules.empty());
    parse("||ads.example.com^$important,client=1.2.3.4", ListFormat::adblock,
          LineOutcome::unsupported);
    parse("example.com##.banner", ListFormat::adblock, LineOutcome::unsupported);
    parse("||example.com/path^", ListFormat::adblock, LineOutcome::unsupported);
}

TEST(FilterAdblock, Comments) {
    parse("[Adblock Plus]", ListFormat::auto_detect, LineOutcome::comment);
    parse("! Title: HaGeZi", ListFormat::auto_detect, LineOutcome::comment);
    parse("!", ListFormat::adblock, LineOutcome::comment);
}

TEST(FilterAdblock, WildcardsBecomeRegex) {
    auto c = parse("||ad*.example.com^", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_TRUE(c.rules[0].regex);
    EXPECT_EQ(c.rules[0].text, "(^|\\.)ad.*\\.example\\.com$");
    c = parse("|ads*^", ListFormat::adblock, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).text, "^ads.*$");
}

TEST(FilterAdblock, RegexRules) {
    auto c = parse("/^ad[0-9]+\\./", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_TRUE(c.rules[0].regex);
    EXPECT_EQ(c.rules[0].text, "^ad[0-9]+\\.");
    c = parse("@@/^good\\./$important", ListFormat::adblock, LineOutcome::rules);
    EXPECT_TRUE(c.rules.at(0).exception);
    EXPECT_TRUE(c.rules.at(0).important);

    Collector reject;
    reject.accept_regex = false;
    EXPECT_EQ(parse_line("/(unclosed/", ListFormat::adblock, false, reject), LineOutcome::invalid);
}

TEST(FilterAdblock, BareNamesAreExactOrOverridden) {
    auto c = parse("example.com", ListFormat::adblock, LineOutcome::rules);
    EXPECT_EQ(c.rules.at(0).match, RuleMatch::exact);
    c = parse("example.com", ListFormat::adblock, LineOutcome::rules, true);
    EXPECT_EQ(c.rules.at(0).match, RuleMatch::subtree);
    parse("banner", ListFormat::adblock, LineOutcome::invalid);
}

TEST(FilterRegex, PiholeLines) {
    auto c = parse("^ad([sxv]?[0-9]*|system)[_.-]", ListFormat::auto_detect, LineOutcome::rules);
    ASSERT_EQ(c.rules.size(), 1U);
    EXPECT_TRUE(c.rules[0].regex);
    c = parse("(\\.|^)facebook\\.com$", ListFormat::regex, LineOutcome::rules);
    EXPECT_TRUE(c.rules.at(0).regex);
    parse("# comment", ListFormat::regex, LineOutcome::comment);
    parse("^ads\\.;querytype=AAAA", ListFormat::regex, LineOutcome::unsupported);
}

TEST(FilterDetect, Formats) {
    EXPECT_EQ(detect_format("0.0.0.0 a.com"), ListFormat::hosts);
    EXPECT_EQ(detect_format("a.com"), ListFormat::domains);
    EXPECT_EQ(detect_format("*.a.com"), ListFormat::domains);
    EXPECT_EQ(detect_format("||a.com^"), ListFormat::adblock);
    EXPECT_EQ(detect_format("@@||a.com^"), ListFormat::adblock);
    EXPECT_EQ(detect_format("/ads/"), ListFormat::adblock);
    EXPECT_EQ(detect_format("^ads\\."), ListFormat::regex);
    EXPECT_EQ(detect_format("(^|\\.)x\\.com$"), ListFormat::regex);
}

// Detection reads each line's characters once against a table: every character of each class
// must still decide as it did when the classes were searched for one set at a time.
TEST(FilterDetect, EachSyntaxCharacterDecides) {
    for (const char c : std::string_view("()\\[]{}+?")) {
        const std::string line = std::string("ads") + c + "x.com";
        EXPECT_EQ(detect_format(line), ListFormat::regex) << line;
    }
    EXPECT_EQ(detect_format("ads.com$important"), ListFormat::adblock);
    EXPECT_EQ(detect_format("ads.com^"), ListFormat::adblock);
    EXPECT_EQ(detect_format("ad*.com"), ListFormat::adblock);
    EXPECT_EQ(detect_format("*.ad.com"), ListFormat::domains);
    EXPECT_EQ(detect_format("ads-1_x.example.com"), ListFormat::domains);
}

TEST(FilterAdblock, UrlPartsAreUnsupportedAndStrayAnchorsInvalid) {
    for (const char* line :
         {"||a.com/x^", "||a.com:8080^", "||a.com?x^", "||a.com=x^", "||a.com&x^"}) {
        parse(line, ListFormat::adblock, LineOutcome::unsupported);
    }
    parse("||a|b.com^", ListFormat::adblock, LineOutcome::invalid);
    parse("||a^b.com^", ListFormat::adblock, LineOutcome::invalid);
}

}  // namespace
}  // namespace moat::filter

namespace moat::filter {
namespace {

TEST(FilterScan, CountsLinesSplitAcrossChunksAndALastLineWithoutNewline) {
    // A line longer than the 64 KiB read chunk, a bad regex, a comment and no final newline.
    const std::string long_comment = "# " + std::string(70000, 'x');
    std::istringstream in("ads.example\n" + long_comment + "\n/(unclosed/\n\ntracker.example");
    const ListStats st = scan_list(in, ListFormat::auto_detect, false);
    EXPECT_EQ(st.lines, 5U);
    EXPECT_EQ(st.entries, 2U);
    EXPECT_EQ(st.comments, 2U);
    EXPECT_EQ(st.invalid, 1U);
    ASSERT_EQ(st.first_invalid.size(), 1U);
    EXPECT_EQ(st.first_invalid[0].line, 3U);
    EXPECT_EQ(st.first_invalid[0].text, "/(unclosed/");
}

TEST(FilterScan, SplitterHandsOverWholeLinesWhateverTheChunking) {
    const std::string text = "a\nbb\n\nccc";
    for (std::size_t step = 1; step <= text.size(); ++step) {
        LineSplitter splitter;
        std::vector<std::string> lines;
        auto take = [&](std::string_view l) { lines.emplace_back(l); };
        for (std::size_t at = 0; at < text.size(); at += step) {
            splitter.feed(std::string_view(text).substr(at, step), take);
        }
        splitter.finish(take);
        EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb", "", "ccc"})) << "step " << step;
    }
}

}  // namespace
}  // namespace moat::filter
