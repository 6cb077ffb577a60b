// Compiling lists into a Snapshot and matching names against it: precedence, exact versus
// subtree semantics per format, the per-list override, regex rules, case, invalid lines.
#include "moat/filter/snapshot.hpp"

#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>

#include "moat/filter/compiler.hpp"
#include "moat/wire/name.hpp"

namespace moat::filter {
namespace {

ListSpec spec(std::uint32_t id, ListKind kind = ListKind::block,
              ListFormat format = ListFormat::auto_detect, bool subdomains = false) {
    return {id, "list" + std::to_string(id), kind, format, subdomains};
}

std::shared_ptr<const Snapshot> build(Compiler& c) {
    auto s = std::move(c).build();
    EXPECT_TRUE(s.has_value());
    return s.value_or(nullptr);
}

Action action(const Snapshot& s, std::string_view name) { return s.match_text(name).action; }

TEST(FilterSnapshot, EmptyMatchesNothing) {
    const Snapshot s;
    EXPECT_EQ(action(s, "example.com"), Action::none);
    EXPECT_EQ(s.name_rules(), 0U);
    EXPECT_GT(s.memory_bytes(), 0U);
}

TEST(FilterSnapshot, HostsAndDomainsAreExactByDefault) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "0.0.0.0 ads.example.com\ntracker.net\n"));
    const auto s = build(c);
    EXPECT_EQ(action(*s, "ads.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "tracker.net"), Action::blocked);
    EXPECT_EQ(action(*s, "x.ads.example.com"), Action::none);
    EXPECT_EQ(action(*s, "example.com"), Action::none);
    EXPECT_EQ(action(*s, "sub.tracker.net"), Action::none);
    const Verdict v = s->match_text("tracker.net");
    EXPECT_EQ(v.rule, RuleType::exact);
    EXPECT_EQ(s->list_id(v), 1U);
    EXPECT_EQ(v.line, 2U);
}

TEST(FilterSnapshot, SubtreeRulesCoverTheNameAndBelow) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(7), "||ads.example.com^\n*.tracker.net\n"));
    const auto s = build(c);
    EXPECT_EQ(action(*s, "ads.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "a.b.ads.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "tracker.net"), Action::blocked);
    EXPECT_EQ(action(*s, "x.tracker.net"), Action::blocked);
    EXPECT_EQ(action(*s, "example.com"), Action::none);
    EXPECT_EQ(action(*s, "badads.example.com"), Action::none);
    EXPECT_EQ(action(*s, "nottracker.net"), Action::none);
    const Verdict v = s->match_text("a.b.ads.example.com");
    EXPECT_EQ(v.rule, RuleType::subtree);
    EXPECT_EQ(v.suffix, 2U);
    EXPECT_EQ(v.line, 1U);
}

TEST(FilterSnapshot, PerListSubdomainOverride) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1, ListKind::block, ListFormat::domains, true), "ads.com\n"));
    ASSERT_TRUE(c.add_text(spec(2, ListKind::block, ListFormat::hosts, false), "0.0.0.0 t.org\n"));
    const auto s = build(c);
    EXPECT_EQ(action(*s, "ads.com"), Action::blocked);
    EXPECT_EQ(action(*s, "cdn.ads.com"), Action::blocked);
    EXPECT_EQ(action(*s, "t.org"), Action::blocked);
    EXPECT_EQ(action(*s, "x.t.org"), Action::none);
}

TEST(FilterSnapshot, AllowBeatsBlock) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "||example.com^\n"));
    ASSERT_TRUE(c.add_text(spec(2, ListKind::allow), "good.example.com\n"));
    ASSERT_TRUE(c.add_text(spec(3), "@@||fine.example.com^\n"));
    const auto s = build(c);
    EXPECT_EQ(action(*s, "example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "bad.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "good.example.com"), Action::allowed);
    EXPECT_EQ(action(*s, "x.good.example.com"), Action::blocked);  // the allow is exact
    EXPECT_EQ(action(*s, "fine.example.com"), Action::allowed);
    EXPECT_EQ(action(*s, "a.fine.example.com"), Action::allowed);
    EXPECT_EQ(s->list_id(s->match_text("a.fine.example.com")), 3U);
}

TEST(FilterSnapshot, ImportantBlockBeatsAllow) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "||track.com^$important\n||ads.com^\n"));
    ASSERT_TRUE(c.add_text(spec(2), "@@||track.com^\n@@||ads.com^\n"));
    ASSERT_TRUE(c.add_text(spec(3), "@@||ok.track.com^$important\n"));
    const auto s = build(c);
    const Verdict v = s->match_text("x.track.com");
    EXPECT_EQ(v.action, Action::blocked);
    EXPECT_TRUE(v.important);
    EXPECT_EQ(action(*s, "ads.com"), Action::allowed);
    EXPECT_EQ(action(*s, "ok.track.com"), Action::allowed);  // important allow beats both
}

TEST(FilterSnapshot, ProbedInStepsWithOneReusedProbeSet) {
    // The engine's way: prefetch(), probe(), then its own reads, then match_probed(), with one
    // MatchProbes for every query. A long name leaves probes past a shorter name's suffixes; they
    // must not count for it.
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "||track.com^$important\n||ads.com^\nexact.example.org\n"));
    ASSERT_TRUE(c.add_text(spec(2), "@@||ads.com^\n@@||ok.track.com^$important\n"));
    ASSERT_TRUE(c.add_text(spec(3, ListKind::block, ListFormat::regex), "^ad[0-9]+\\.\n"));
    const auto s = build(c);
    struct Case {
        const char* name;
        Action expected;
    };
    const std::array<Case, 8> cases = {{
        {"a.b.c.d.e.x.track.com", Action::blocked},
        {"com", Action::none},
        {"ads.com", Action::allowed},
        {"ok.track.com", Action::allowed},
        {"exact.example.org", Action::blocked},
        {"x.exact.example.org", Action::none},
        {"ad12.example.net", Action::blocked},
        {"org", Action::none},
    }};
    MatchProbes probes;  // NOLINT(cppcoreguidelines-pro-type-member-init): probe() sets it
    for (const Case& k : cases) {
        SCOPED_TRACE(k.name);
        const auto name = wire::Name::from_text(k.name);
        ASSERT_TRUE(name);
        SuffixHashes hashes;
        s->prefetch(name->wire().data(), hashes);
        s->probe(hashes, probes);
        const Verdict v = s->match_probed(name->wire().data(), hashes, probes);
        EXPECT_EQ(v.action, k.expected);
        const Verdict whole = s->match_text(k.name);
        EXPECT_EQ(v.rule, whole.rule);
        EXPECT_EQ(v.list, whole.list);
        EXPECT_EQ(v.line, whole.line);
        EXPECT_EQ(v.suffix, whole.suffix);
    }
}

TEST(FilterSnapshot, CaseInsensitiveOnWireNames) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "0.0.0.0 Ads.Example.COM\n"));
    const auto s = build(c);
    const auto name = wire::Name::from_text("ADS.example.Com.");
    ASSERT_TRUE(name);
    EXPECT_EQ(s->match(name->view()).action, Action::blocked);
    EXPECT_EQ(action(*s, "ads.example.com."), Action::blocked);
}

TEST(FilterSnapshot, RegexRules) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1, ListKind::block, ListFormat::regex),
                           "# ads\n^ad[0-9]+\\.\n(\\.|^)facebook\\.com$\n"));
    ASSERT_TRUE(c.add_text(spec(2, ListKind::allow, ListFormat::regex), "^ad7\\.good\\.\n"));
    ASSERT_TRUE(c.add_text(spec(3), "||ad9.hashed.com^\n"));
    const auto s = build(c);
    EXPECT_EQ(s->regex_rules(), 3U);
    Verdict v = s->match_text("AD12.example.com");
    EXPECT_EQ(v.action, Action::blocked);
    EXPECT_EQ(v.rule, RuleType::regex);
    EXPECT_EQ(v.line, 2U);
    EXPECT_EQ(s->regex_pattern(v), "^ad[0-9]+\\.");
    EXPECT_EQ(action(*s, "www.facebook.com"), Action::blocked);
    EXPECT_EQ(action(*s, "facebook.com"), Action::blocked);
    EXPECT_EQ(action(*s, "notfacebook.com"), Action::none);
    EXPECT_EQ(action(*s, "ads.example.com"), Action::none);
    v = s->match_text("ad7.good.net");
    EXPECT_EQ(v.action, Action::allowed);
    EXPECT_EQ(s->regex_pattern(v), "^ad7\\.good\\.");
    v = s->match_text("ad9.hashed.com");
    EXPECT_EQ(v.rule, RuleType::subtree);  // hashed rule decided
}

TEST(FilterSnapshot, AdblockWildcard) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "||ad*.example.com^\n"));
    const auto s = build(c);
    EXPECT_EQ(action(*s, "ads.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "x.adserver1.example.com"), Action::blocked);
    EXPECT_EQ(action(*s, "bad.example.com"), Action::none);
}

TEST(FilterSnapshot, InvalidLinesAreCountedWithLineNumbers) {
    Compiler c;
    const auto list =
        c.add_text(spec(1), "good.com\nbad..com\n\n# c\nb@d.com\n||x.com^$dnstype=A\n");
    ASSERT_TRUE(list);
    const ListStats& st = c.stats(*list);
    EXPECT_EQ(st.lines, 6U);
    EXPECT_EQ(st.entries, 1U);
    EXPECT_EQ(st.invalid, 2U);
    EXPECT_EQ(st.comments, 2U);
    EXPECT_EQ(st.unsupported, 1U);
    ASSERT_EQ(st.first_invalid.size(), 2U);
    EXPECT_EQ(st.first_invalid[0].line, 2U);
    EXPECT_EQ(st.first_invalid[0].text, "bad..com");
    EXPECT_EQ(st.first_invalid[1].line, 5U);
    const auto s = build(c);
    EXPECT_EQ(action(*s, "good.com"), Action::blocked);
    EXPECT_EQ(s->lists().at(0).stats.invalid, 2U);
}

TEST(FilterSnapshot, StreamedInSplitChunks) {
    Compiler c;
    const auto list = c.open_list(spec(1));
    ASSERT_TRUE(list);
    const std::string text = "0.0.0.0 one.com\r\n0.0.0.0 two.com\nthree.com";
    for (const char ch : text) {  // worst case: one byte per chunk
        ASSERT_TRUE(c.feed(*list, std::string_view(&ch, 1)));
    }
    ASSERT_TRUE(c.close_list(*list));
    EXPECT_FALSE(c.feed(*list, "x.com\n"));  // closed
    std::istringstream in("four.com\nfive.com\n");
    ASSERT_TRUE(c.add_stream(spec(2), in));
    const auto s = build(c);
    for (const char* n : {"one.com", "two.com", "three.com", "four.com", "five.com"}) {
        EXPECT_EQ(action(*s, n), Action::blocked) << n;
    }
    EXPECT_EQ(s->lists().at(0).stats.lines, 3U);
}

TEST(FilterSnapshot, WithoutLineNumbers) {
    Compiler c(CompileOptions{.keep_line_numbers = false});
    ASSERT_TRUE(c.add_text(spec(1), "a.com\nb.com\n"));
    const auto s = build(c);
    const Verdict v = s->match_text("b.com");
    EXPECT_EQ(v.action, Action::blocked);
    EXPECT_EQ(v.line, 0U);
}

TEST(FilterSnapshot, DuplicatesCountOnce) {
    Compiler c;
    ASSERT_TRUE(c.add_text(spec(1), "a.com\nA.com.\n"));
    ASSERT_TRUE(c.add_text(spec(2), "a.com\n"));
    const auto s = build(c);
    EXPECT_EQ(s->name_rules(), 1U);
    EXPECT_EQ(s->list_id(s->match_text("a.com")), 1U);  // the first list that named it
}

}  // namespace
}  // namespace moat::filter

namespace moat::filter {
namespace {

Verdict match_selected(const Snapshot& s, std::string_view name, const ListSelection& sel) {
    const auto parsed = wire::Name::from_text(name);
    EXPECT_TRUE(parsed.has_value()) << name;
    return s.match(parsed->view(), &sel);
}

/// Lists 0 and 1 overlap on shared.example; 2 is an allowlist; 3 holds a regex.
std::shared_ptr<const Snapshot> grouped() {
    Compiler c;
    EXPECT_TRUE(c.add_text(spec(10), "only0.example\nshared.example\n||sub0.example^\n"));
    EXPECT_TRUE(c.add_text(spec(11), "# kids\nshared.example\nonly1.example\n"));
    EXPECT_TRUE(c.add_text(spec(12, ListKind::allow), "only0.example\n"));
    EXPECT_TRUE(c.add_text(spec(13, ListKind::block, ListFormat::regex), "^game[0-9]+\\.\n"));
    return build(c);
}

TEST(FilterSelection, OnlyTheSelectedListsCount) {
    const auto s = grouped();
    const ListSelection kids(s->list_sets(), {false, true, false, true});
    EXPECT_EQ(match_selected(*s, "only1.example", kids).action, Action::blocked);
    EXPECT_EQ(match_selected(*s, "game7.example", kids).action, Action::blocked);
    EXPECT_EQ(match_selected(*s, "x.sub0.example", kids).action, Action::none);
    EXPECT_EQ(match_selected(*s, "only0.example", kids).action, Action::none)
        << "neither list 0's block nor list 2's allow counts";
    const ListSelection adults(s->list_sets(), {true, false, true, false});
    EXPECT_EQ(match_selected(*s, "only0.example", adults).action, Action::allowed);
    EXPECT_EQ(match_selected(*s, "only1.example", adults).action, Action::none);
    EXPECT_EQ(match_selected(*s, "game7.example", adults).action, Action::none);
    EXPECT_EQ(match_selected(*s, "x.sub0.example", adults).action, Action::blocked);
    const ListSelection none(s->list_sets(), {});
    EXPECT_EQ(match_selected(*s, "shared.example", none).action, Action::none);
}

TEST(FilterSelection, ASharedRuleNamesTheFirstSelectedList) {
    const auto s = grouped();
    const Verdict all = s->match_text("shared.example");
    EXPECT_EQ(s->list_id(all), 10U);
    EXPECT_EQ(all.line, 2U);
    const ListSelection kids(s->list_sets(), {false, true, false, false});
    const Verdict v = match_selected(*s, "shared.example", kids);
    EXPECT_EQ(v.action, Action::blocked);
    EXPECT_EQ(s->list_id(v), 11U);
    EXPECT_EQ(v.line, 0U) << "the line kept is list 10's, so none is claimed for list 11";
    EXPECT_EQ(s->list_sets().size(), 5U) << "four lists and the set {0, 1}";
}

TEST(FilterSelection, SetsStayFewWhenManyListsOverlap) {
    Compiler c;
    std::string text;
    for (int i = 0; i < 2000; ++i) {
        text += "name" + std::to_string(i) + ".example\n";
    }
    for (std::uint32_t l = 0; l < 6; ++l) {
        ASSERT_TRUE(c.add_text(spec(l), text));
    }
    const auto s = build(c);
    EXPECT_EQ(s->name_rules(), 2000U);
    EXPECT_EQ(s->list_sets().size(), 6U + 5U) << "{0,1}, {0,1,2}, ... {0..5}";
    std::vector<bool> only_last(6, false);
    only_last[5] = true;
    const ListSelection sel(s->list_sets(), only_last);
    const Verdict v = match_selected(*s, "name77.example", sel);
    EXPECT_EQ(v.action, Action::blocked);
    EXPECT_EQ(s->list_id(v), 5U);
}

}  // namespace
}  // namespace moat::filter
