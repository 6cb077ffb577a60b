// SnapshotPublisher: readers keep what they hold, publish swaps, a failed build changes nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "moat/filter/compiler.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "support/emulation.hpp"

namespace moat::filter {
namespace {

std::shared_ptr<const Snapshot> snapshot_of(std::string_view text) {
    Compiler c;
    EXPECT_TRUE(c.add_text({1, "t", ListKind::block, ListFormat::auto_detect, false}, text));
    return std::move(c).build().value_or(nullptr);
}

TEST(FilterPublisher, StartsEmpty) {
    const SnapshotPublisher p;
    ASSERT_NE(p.current(), nullptr);
    EXPECT_EQ(p.current()->match_text("a.com").action, Action::none);
}

TEST(FilterPublisher, PublishSwapsAndReadersKeepTheirs) {
    SnapshotPublisher p(snapshot_of("a.com\n"));
    const auto held = p.current();
    const auto old = p.publish(snapshot_of("b.com\n"));
    EXPECT_EQ(old, held);
    EXPECT_EQ(held->match_text("a.com").action, Action::blocked);  // still usable
    EXPECT_EQ(p.current()->match_text("a.com").action, Action::none);
    EXPECT_EQ(p.current()->match_text("b.com").action, Action::blocked);
}

// Cache entries remember the serial of the snapshot that passed their name, so no two snapshots
// may ever share one: not one built after another, not the two sides of a move.
TEST(FilterPublisher, EverySnapshotHasASerialOfItsOwn) {
    const auto a = snapshot_of("a.com\n");
    const auto b = snapshot_of("a.com\n");
    const Snapshot empty;
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a->serial(), 0U);
    EXPECT_NE(a->serial(), b->serial()) << "the same rules, another snapshot";
    EXPECT_NE(empty.serial(), a->serial());
    EXPECT_NE(empty.serial(), b->serial());

    Snapshot source;
    const std::uint64_t taken = source.serial();
    Snapshot moved(std::move(source));
    EXPECT_EQ(moved.serial(), taken) << "a move keeps the snapshot's number";
    // NOLINTNEXTLINE(bugprone-use-after-move): what a moved-from snapshot holds is the point
    EXPECT_NE(source.serial(), taken) << "and the moved-from object gets another";
    Snapshot assigned;
    const std::uint64_t before = assigned.serial();
    assigned = std::move(moved);
    EXPECT_EQ(assigned.serial(), taken);
    EXPECT_NE(moved.serial(), taken);  // NOLINT(bugprone-use-after-move): as above
    EXPECT_NE(moved.serial(), before);
}

TEST(FilterPublisher, NullIsIgnored) {
    SnapshotPublisher p(snapshot_of("a.com\n"));
    EXPECT_EQ(p.publish(nullptr), nullptr);
    EXPECT_EQ(p.current()->match_text("a.com").action, Action::blocked);
}

TEST(FilterPublisher, AReaderKeepsItsSnapshotUntilANewerOneIsPublished) {
    auto a = snapshot_of("a.com\n");
    const std::weak_ptr<const Snapshot> watch_a = a;
    SnapshotPublisher p(std::move(a));
    EXPECT_EQ(p.version(), 0U);
    SnapshotReader reader(p);
    const Snapshot* first = reader.current().get();
    EXPECT_EQ(first, p.current().get());
    EXPECT_EQ(reader.current().get(), first) << "no publish: the same snapshot";

    (void)p.publish(snapshot_of("b.com\n"));
    EXPECT_EQ(p.version(), 1U);
    EXPECT_FALSE(watch_a.expired()) << "the reader still holds a.com's snapshot";
    EXPECT_EQ(reader.current()->match_text("b.com").action, Action::blocked);
    EXPECT_EQ(reader.current()->match_text("a.com").action, Action::none);
    EXPECT_TRUE(watch_a.expired()) << "let go once the reader moved on";

    (void)p.publish(nullptr);
    EXPECT_EQ(p.version(), 1U) << "an ignored publish is no new version";
}

TEST(FilterPublisher, ReadersSeeOneWholeSnapshotWhilePublishing) {
    // Snapshot A blocks a.com only, B blocks b.com only: a reader must never see both or neither.
    // Readers run a fixed number of rounds (not "until the writer is done"): glibc's
    // std::shared_mutex prefers readers, so a writer may wait until they pause.
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    const auto a = snapshot_of("a.com\n");
    const auto b = snapshot_of("b.com\n");
    SnapshotPublisher p(a);
    std::atomic<int> torn{0};
    std::vector<std::thread> readers;
    readers.reserve(2);
    for (int i = 0; i < 2; ++i) {
        // One reader asks the publisher each time, the other reads through a SnapshotReader.
        readers.emplace_back([&, through_reader = i == 1] {
            SnapshotReader reader(p);
            for (int round = 0; round < 300; ++round) {
                const auto s = through_reader ? reader.current() : p.current();
                const bool in_a = s->match_text("a.com").action == Action::blocked;
                const bool in_b = s->match_text("b.com").action == Action::blocked;
                if (in_a == in_b) {
                    torn.fetch_add(1);
                }
            }
        });
    }
    for (int i = 0; i < 51; ++i) {
        p.publish(i % 2 == 0 ? b : a);
    }
    for (auto& t : readers) {
        t.join();
    }
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(p.current(), b);  // the last publish (i = 50, even) put b
}

}  // namespace
}  // namespace moat::filter
