// The memo of names a snapshot's regex rules do not match (regex_memo.hpp): a remembered name
// skips the set's search, and nothing it remembers changes a verdict: not a match, not a
// replaced snapshot, not a client group's lists, not an allow rule.
#include "moat/filter/regex_memo.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "moat/filter/compiler.hpp"
#include "moat/filter/list_sets.hpp"
#include "moat/filter/snapshot.hpp"
#include "moat/wire/name.hpp"
#include "regex_matcher.hpp"

namespace moat::filter {
namespace {

std::shared_ptr<const Snapshot> snapshot(std::string_view block_regexes,
                                         std::string_view block_names = {},
                                         std::string_view allow_regexes = {}) {
    Compiler c;
    EXPECT_TRUE(c.add_text({1, "regex", ListKind::block, ListFormat::regex, false}, block_regexes));
    if (!block_names.empty()) {
        EXPECT_TRUE(
            c.add_text({2, "names", ListKind::block, ListFormat::domains, false}, block_names));
    }
    if (!allow_regexes.empty()) {
        EXPECT_TRUE(
            c.add_text({3, "allow", ListKind::allow, ListFormat::regex, false}, allow_regexes));
    }
    auto built = std::move(c).build();
    EXPECT_TRUE(built.has_value());
    return built.value_or(nullptr);
}

/// A verdict as the engine asks for one, and how many searches of a regex set it took.
struct Asked {
    Verdict verdict;
    std::uint64_t searches = 0;
};

Asked ask(const Snapshot& s, std::string_view name, RegexMemo* memo,
          const ListSelection* selection = nullptr) {
    const auto parsed = wire::Name::from_text(name);
    EXPECT_TRUE(parsed.has_value());
    const wire::Name lower = wire::Name::from_view_lower(parsed->view());
    SuffixHashes hashes;
    s.prefetch(lower.wire().data(), hashes);
    const std::uint64_t before = RegexMatcher::searches_on_this_thread();
    const Verdict v = s.match_hashed(lower.wire().data(), hashes, selection, memo);
    return {v, RegexMatcher::searches_on_this_thread() - before};
}

TEST(RegexMemo, ANameNoRuleMatchesIsSearchedOnceThenRemembered) {
    const auto s = snapshot("^ads\\.\n(^|\\.)doubleclick\\.net$\n");
    RegexMemo memo;
    for (const char* name : {"www.example.com", "Mail.Example.ORG", "."}) {
        SCOPED_TRACE(name);
        const Asked first = ask(*s, name, &memo);
        EXPECT_EQ(first.verdict.action, Action::none);
        EXPECT_EQ(first.searches, 1U);
        const Asked again = ask(*s, name, &memo);
        EXPECT_EQ(again.verdict.action, Action::none);
        EXPECT_EQ(again.searches, 0U) << "remembered";
        EXPECT_EQ(ask(*s, name, nullptr).searches, 1U) << "no memo: searched every time";
    }
}

TEST(RegexMemo, AMatchIsNeverRemembered) {
    const auto s = snapshot("^ads\\.\n");
    RegexMemo memo;
    for (int i = 0; i < 3; ++i) {
        const Asked asked = ask(*s, "ads.example.com", &memo);
        EXPECT_EQ(asked.verdict.action, Action::blocked);
        EXPECT_EQ(asked.verdict.rule, RuleType::regex);
        EXPECT_EQ(asked.searches, 1U);
    }
}

TEST(RegexMemo, AReplacedSnapshotIsSearchedAgainForANameTheOldOneMissed) {
    RegexMemo memo;
    auto old_snapshot = snapshot("^ads\\.\n");
    EXPECT_EQ(ask(*old_snapshot, "tracker.example.org", &memo).verdict.action, Action::none);
    EXPECT_EQ(ask(*old_snapshot, "tracker.example.org", &memo).searches, 0U);
    old_snapshot.reset();  // its matcher's memory may be reused by the next one's
    const auto new_snapshot = snapshot("^tracker\\.\n");
    const Asked asked = ask(*new_snapshot, "tracker.example.org", &memo);
    EXPECT_EQ(asked.verdict.action, Action::blocked);
    EXPECT_EQ(asked.searches, 1U);
}

TEST(RegexMemo, ARuleOutsideTheGroupsListsLeavesNothingRemembered) {
    // The set matches, but the client's group does not use the rule's list: no verdict, and
    // the name must not be remembered, or a group that uses the list would miss the rule.
    const auto s = snapshot("^ads\\.\n", "other.example\n");
    RegexMemo memo;
    const std::vector<bool> names_only = {false, true, false};
    const ListSelection without_regexes(s->list_sets(), names_only);
    EXPECT_EQ(ask(*s, "ads.example.com", &memo, &without_regexes).verdict.action, Action::none);
    EXPECT_EQ(ask(*s, "ads.example.com", &memo, &without_regexes).searches, 1U);
    EXPECT_EQ(ask(*s, "ads.example.com", &memo).verdict.action, Action::blocked);
}

TEST(RegexMemo, AllowRulesAreRememberedApartFromBlockRules) {
    // "ads.example.com" is blocked by name; the allow regexes are searched because only a
    // hashed, non-important block matched. "ads.trusted.example" is allowed by one of them.
    const auto s = snapshot("^never-matches-anything$\n", "ads.example.com\nads.trusted.example\n",
                            "\\.trusted\\.example$\n");
    RegexMemo memo;
    for (int i = 0; i < 2; ++i) {
        const Asked blocked = ask(*s, "ads.example.com", &memo);
        EXPECT_EQ(blocked.verdict.action, Action::blocked);
        EXPECT_EQ(blocked.verdict.rule, RuleType::exact);
        EXPECT_EQ(blocked.searches, i == 0 ? 1U : 0U) << "round " << i;
        const Asked allowed = ask(*s, "ads.trusted.example", &memo);
        EXPECT_EQ(allowed.verdict.action, Action::allowed);
        EXPECT_EQ(allowed.verdict.rule, RuleType::regex);
        EXPECT_EQ(allowed.searches, 1U) << "round " << i;
    }
    // A name in no list: the block rules are searched and remembered, the allow rules are not
    // asked at all.
    EXPECT_EQ(ask(*s, "www.example.com", &memo).searches, 1U);
    EXPECT_EQ(ask(*s, "www.example.com", &memo).searches, 0U);
}

TEST(RegexMemo, KeysOfOneNameDifferPerMatcherAndAreNeverZero) {
    EXPECT_NE(RegexMemo::key_of(42, 1), RegexMemo::key_of(42, 2));
    EXPECT_NE(RegexMemo::key_of(42, 1), RegexMemo::key_of(43, 1));
    const std::uint64_t zero_maker = 1 * 0x9E3779B97F4A7C15ULL;
    EXPECT_NE(RegexMemo::key_of(zero_maker, 1), 0U);
    RegexMemo memo;
    EXPECT_FALSE(memo.remembers(RegexMemo::key_of(zero_maker, 1))) << "an empty slot holds 0";
}

}  // namespace
}  // namespace moat::filter
