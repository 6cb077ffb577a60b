// Compiling through parts: lines spread over Compiler::Part objects in runs of any length, parsed
// in any order and merged in any order, give the snapshot one compiler fed the lists in order
// gives: the same counts, the same first invalid lines, the same verdicts citing the same lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "moat/filter/compiler.hpp"
#include "support/mixed_lists.hpp"

namespace moat::filter {
namespace {

std::shared_ptr<const Snapshot> compile_in_order(const test::MixedLists& in) {
    Compiler c;
    for (const test::MixedList& l : in.lists) {
        EXPECT_TRUE(c.add_text(l.spec, l.text));
    }
    auto built = std::move(c).build();
    EXPECT_TRUE(built.has_value());
    return built.value_or(nullptr);
}

/// A run of whole lines of one list, as a thread of a parallel load is handed one.
struct LineRun {
    std::size_t list;
    std::uint64_t first_line;
    std::string_view text;
};

/// Every list cut into runs of 1 to `max_lines` lines at random.
std::vector<LineRun> cut_into_runs(const test::MixedLists& in, std::size_t max_lines,
                                   std::mt19937_64& rng) {
    std::vector<LineRun> runs;
    for (std::size_t l = 0; l < in.lists.size(); ++l) {
        std::string_view rest = in.lists[l].text;
        std::uint64_t line = 1;
        while (!rest.empty()) {
            const std::size_t want = 1 + rng() % max_lines;
            std::size_t end = 0;
            std::size_t taken = 0;
            while (taken < want && end < rest.size()) {
                const std::size_t nl = rest.find('\n', end);
                end = nl == std::string_view::npos ? rest.size() : nl + 1;
                ++taken;
            }
            runs.push_back({l, line, rest.substr(0, end)});
            line += taken;
            rest.remove_prefix(end);
        }
    }
    return runs;
}

TEST(CompilerPart, LinesSpreadOverPartsCompileAsInOrder) {
    const test::MixedLists in = test::mixed_lists(6'000, 17);
    const auto want = compile_in_order(in);
    ASSERT_NE(want, nullptr);
    ASSERT_GE(want->lists()[0].stats.invalid, 2 * ListStats::kMaxReportedInvalid);

    for (const std::size_t max_lines : {std::size_t{1}, std::size_t{37}, std::size_t{5'000}}) {
        std::mt19937_64 rng(max_lines);
        Compiler c;
        for (const test::MixedList& l : in.lists) {
            ASSERT_TRUE(c.open_list(l.spec));
        }
        std::vector<Compiler::Part> parts;
        parts.reserve(3);
        for (int i = 0; i < 3; ++i) {
            parts.push_back(c.part());
        }
        std::vector<LineRun> runs = cut_into_runs(in, max_lines, rng);
        std::shuffle(runs.begin(), runs.end(), rng);  // later lines may come first
        for (const LineRun& r : runs) {
            parts[rng() % parts.size()].parse(r.list, in.lists[r.list].spec, r.first_line, r.text);
        }
        std::swap(parts[0], parts[2]);  // merged in another order than they were filled
        ASSERT_TRUE(c.merge(std::move(parts)));
        EXPECT_EQ(c.stats(0).lines, want->lists()[0].stats.lines);
        auto got = std::move(c).build();
        ASSERT_TRUE(got);
        SCOPED_TRACE("runs of at most " + std::to_string(max_lines) + " lines");
        test::expect_same_snapshot(*want, **got, in.probes);
    }
}

TEST(CompilerPart, LinesFedToTheCompilerAndPartsTogetherAddUp) {
    // The compiler parses list 0 itself; a part parses list 1; both count in one snapshot.
    Compiler c;
    const auto first = c.add_text({1, "a", ListKind::block, ListFormat::domains, false},
                                  "one.example\nbad..example\n");
    const auto second = c.open_list({2, "b", ListKind::block, ListFormat::domains, false});
    ASSERT_TRUE(first && second);
    Compiler::Part part = c.part();
    const ListSpec spec{2, "b", ListKind::block, ListFormat::domains, false};
    part.parse(*second, spec, 3, "three.example\nbad..three\n");
    part.parse(*second, spec, 1, "one.example\ntwo.example\n");
    std::vector<Compiler::Part> parts;
    parts.push_back(std::move(part));
    ASSERT_TRUE(c.merge(std::move(parts)));
    EXPECT_EQ(c.stats(*second).lines, 4U);
    EXPECT_EQ(c.stats(*second).entries, 3U);
    ASSERT_EQ(c.stats(*second).first_invalid.size(), 1U);
    EXPECT_EQ(c.stats(*second).first_invalid[0].line, 4U);
    auto s = std::move(c).build();
    ASSERT_TRUE(s);
    const Verdict two = (*s)->match_text("two.example");
    EXPECT_EQ((*s)->list_id(two), 2U);
    EXPECT_EQ(two.line, 2U);
    const Verdict one = (*s)->match_text("one.example");
    EXPECT_EQ((*s)->list_id(one), 1U);  // list 0 named it first
    EXPECT_EQ(one.line, 1U);
}

TEST(CompilerPart, AMergeOfAListNeverOpenedIsRefusedWhole) {
    Compiler c;
    const auto list =
        c.add_text({1, "a", ListKind::block, ListFormat::domains, false}, "a.example\n");
    ASSERT_TRUE(list);
    Compiler::Part part = c.part();
    part.parse(0, {1, "a", ListKind::block, ListFormat::domains, false}, 2, "b.example\n");
    part.parse(1, {2, "b", ListKind::block, ListFormat::domains, false}, 1, "c.example\n");
    std::vector<Compiler::Part> parts;
    parts.push_back(c.part());  // a good part beside it is refused too
    parts.back().parse(0, {1, "a", ListKind::block, ListFormat::domains, false}, 3, "d.example\n");
    parts.push_back(std::move(part));
    const auto merged = c.merge(std::move(parts));
    ASSERT_FALSE(merged);
    EXPECT_EQ(merged.error(), Errc::bad_list);
    EXPECT_EQ(c.stats(*list).lines, 1U);  // nothing of the part was added
    auto s = std::move(c).build();
    ASSERT_TRUE(s);
    EXPECT_EQ((*s)->name_rules(), 1U);
    EXPECT_EQ((*s)->match_text("b.example").action, Action::none);
    EXPECT_EQ((*s)->match_text("d.example").action, Action::none);
}

}  // namespace
}  // namespace moat::filter
