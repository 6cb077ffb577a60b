// Lists parsed and their tables built on several threads: the snapshot is the one a compile on
// one thread gives, however the text is handed over; the threads do take part, from the first
// run's worth of text; a small load starts none; finish() closes a list left open, its last
// lines too; a line longer than a run still counts as one line; a finished load takes no more.
#include "moat/lists/parallel_load.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>

#include "support/emulation.hpp"
#include "support/mixed_lists.hpp"

namespace moat::lists {
namespace {

std::shared_ptr<const filter::Snapshot> build(filter::Compiler& c) {
    auto built = std::move(c).build();
    EXPECT_TRUE(built.has_value());
    return built.value_or(nullptr);
}

std::shared_ptr<const filter::Snapshot> compile_on_one_thread(const test::MixedLists& in) {
    filter::Compiler c;
    for (const test::MixedList& l : in.lists) {
        EXPECT_TRUE(c.add_text(l.spec, l.text));
    }
    return build(c);
}

/// Hands list `l` over in pieces of `piece` bytes.
void feed_in_pieces(ParallelLoad& load, const test::MixedList& l, std::size_t piece) {
    const auto list = load.open_list(l.spec);
    ASSERT_TRUE(list);
    for (std::size_t at = 0; at < l.text.size(); at += piece) {
        ASSERT_TRUE(load.feed(*list, std::string_view(l.text).substr(at, piece)));
    }
    ASSERT_TRUE(load.close_list(*list));
}

/// Compiles the mixed lists through a load of `threads` threads, handed over in every way a
/// caller may, and expects the snapshot of a compile on one thread.
void expect_load_compiles_as_on_one_thread(unsigned threads) {
    const test::MixedLists in = test::mixed_lists(60'000, 3);
    ASSERT_GT(in.lists[0].text.size(), 20 * ParallelLoad::kRunBytes);
    const auto want = compile_on_one_thread(in);
    ASSERT_NE(want, nullptr);
    filter::Compiler c;
    ParallelLoad load(c, threads);
    EXPECT_EQ(load.threads(), threads);
    // Pieces smaller than a line, of odd sizes, larger than a run, and whole streams.
    feed_in_pieces(load, in.lists[0], 1'000);
    feed_in_pieces(load, in.lists[1], 100'003);
    ASSERT_TRUE(load.add_text(in.lists[2].spec, in.lists[2].text));
    std::istringstream stream(in.lists[3].text);
    ASSERT_TRUE(load.add_stream(in.lists[3].spec, stream));
    feed_in_pieces(load, in.lists[4], 65'536);
    load.finish();
    const std::vector<std::size_t>& runs = load.runs_per_thread();
    ASSERT_EQ(runs.size(), threads);
    const std::size_t by_workers = std::accumulate(runs.begin() + 1, runs.end(), std::size_t{0});
    EXPECT_GE(std::accumulate(runs.begin(), runs.end(), std::size_t{0}), 40U);
    if (threads > 1) {
        EXPECT_GT(by_workers, 0U) << "the workers parsed nothing";
    }
    auto built = load.build();  // the tables built at once, on `threads` threads
    ASSERT_TRUE(built);
    test::expect_same_snapshot(*want, **built, in.probes);
}

TEST(ParallelLoad, ListsLoadedOnOneThreadCompileAsTheCompilerAlone) {
    expect_load_compiles_as_on_one_thread(1);
}

TEST(ParallelLoad, ListsParsedOnSeveralThreadsCompileAsOnOne) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    for (const unsigned threads : {2U, 4U}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        expect_load_compiles_as_on_one_thread(threads);
    }
}

TEST(ParallelLoad, ASmallLoadStartsNoThread) {
    filter::Compiler c;
    ParallelLoad load(c, 4);
    ASSERT_TRUE(
        load.add_text({1, "small", filter::ListKind::block, filter::ListFormat::domains, false},
                      "a.example\nb.example"));
    load.finish();
    EXPECT_FALSE(load.started_threads());
    EXPECT_EQ(load.runs_per_thread(), (std::vector<std::size_t>{1, 0, 0, 0}));
    EXPECT_EQ(c.stats(0).entries, 2U);
    const auto s = load.build();
    ASSERT_TRUE(s);
    EXPECT_EQ((*s)->match_text("b.example").action, filter::Action::blocked);
}

/// A block list of bare domains, the load's first.
filter::ListSpec domains_list() {
    return {1, "a", filter::ListKind::block, filter::ListFormat::domains, false};
}

/// Lines "name<first>.example", "name<first + 1>.example", ... until the text holds `bytes`.
std::string numbered_names(std::size_t first, std::size_t bytes) {
    std::string text;
    for (std::size_t i = first; text.size() < bytes; ++i) {
        text += "name" + std::to_string(i) + ".example\n";
    }
    return text;
}

std::uint64_t lines_in(const std::string& text) {
    return static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ParallelLoad, TheThreadsStartWithTheFirstRunsWorthOfText) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();  // even one idle thread spins under qemu-user
    // Lines of 19 octets ("name" and six digits): a run's 32 KiB buffer ends 12 octets into a
    // line every time, so no run cut at a newline is ever a full kRunBytes long (the workers
    // once waited for one that was).
    static_assert(ParallelLoad::kRunBytes % 19 != 0);
    const std::string text = numbered_names(100'000, 2 * ParallelLoad::kRunBytes + 10'000);
    for (const unsigned threads : {1U, 2U}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        filter::Compiler c;
        ParallelLoad load(c, threads);
        const auto list = load.open_list(domains_list());
        ASSERT_TRUE(list);
        const std::string_view all(text);
        ASSERT_TRUE(load.feed(*list, all.substr(0, ParallelLoad::kRunBytes - 1)));
        EXPECT_FALSE(load.started_threads()) << "less than a run's text";
        ASSERT_TRUE(load.feed(*list, all.substr(ParallelLoad::kRunBytes - 1)));
        EXPECT_EQ(load.started_threads(), threads > 1);
        load.finish();
        EXPECT_EQ(c.stats(*list).entries, lines_in(text));
    }
}

TEST(ParallelLoad, FinishClosesAListLeftOpenWithItsLastLines) {
    // One thread, so it runs under qemu-user too: the lines after the last run are the caller's.
    filter::Compiler c;
    ParallelLoad load(c, 1);
    const auto list = load.open_list(domains_list());
    ASSERT_TRUE(list);
    const std::string text = numbered_names(0, ParallelLoad::kRunBytes + 1'000) + "last.example";
    ASSERT_TRUE(load.feed(*list, text));
    load.finish();  // closes the list, which still holds the lines after the first run
    EXPECT_EQ(c.stats(*list).lines, lines_in(text) + 1);  // the last without a newline
    const auto s = load.build();
    ASSERT_TRUE(s);
    EXPECT_EQ((*s)->match_text("last.example").action, filter::Action::blocked);
}

TEST(ParallelLoad, AClosedOrUnknownListIsRefused) {
    filter::Compiler c;
    ParallelLoad load(c, 2);
    const auto list = load.open_list(domains_list());
    ASSERT_TRUE(list);
    EXPECT_FALSE(load.feed(*list + 1, "x.example\n"));
    ASSERT_TRUE(load.feed(*list, "x.example\n"));
    ASSERT_TRUE(load.close_list(*list));
    EXPECT_FALSE(load.feed(*list, "y.example\n"));
    EXPECT_FALSE(load.close_list(*list));
    load.finish();
    EXPECT_EQ(c.stats(*list).lines, 1U);
    EXPECT_FALSE(
        load.add_text({2, "late", filter::ListKind::block, filter::ListFormat::domains, false},
                      "late.example\n"));
}

TEST(ParallelLoad, ALineLongerThanARunIsOneLine) {
    // One thread: cutting runs is the caller's work, and threads cannot start under qemu-user.
    filter::Compiler c;
    ParallelLoad load(c, 1);
    const auto list = load.open_list(domains_list());
    ASSERT_TRUE(list);
    const std::string text =
        "first.example\n" + std::string(3 * ParallelLoad::kRunBytes, 'x') + "\nlast.example\n";
    for (std::size_t at = 0; at < text.size(); at += 4096) {
        ASSERT_TRUE(load.feed(*list, std::string_view(text).substr(at, 4096)));
    }
    load.finish();  // closes the list
    const filter::ListStats& st = c.stats(*list);
    EXPECT_EQ(st.lines, 3U);
    EXPECT_EQ(st.entries, 2U);
    EXPECT_EQ(st.invalid, 1U);
    ASSERT_EQ(st.first_invalid.size(), 1U);
    EXPECT_EQ(st.first_invalid[0].line, 2U);
    const auto s = build(c);
    const filter::Verdict last = s->match_text("last.example");
    EXPECT_EQ(last.action, filter::Action::blocked);
    EXPECT_EQ(last.line, 3U);
}

}  // namespace
}  // namespace moat::lists
