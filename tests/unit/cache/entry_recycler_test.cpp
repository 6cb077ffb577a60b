// The recycler of evicted entries' blocks: size classes, reuse within a class, the cap on what it
// keeps. Blocks are real operator new blocks, so ASan reports one that is freed twice or lost.
#include "entry_recycler.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace moat::cache {
namespace {

constexpr std::size_t kStep = EntryRecycler::kClassStep;

TEST(EntryRecycler, RoundsUpToAClassAndLeavesLargeBlocksExact) {
    EXPECT_EQ(EntryRecycler::block_size(1), kStep);
    EXPECT_EQ(EntryRecycler::block_size(kStep), kStep);
    EXPECT_EQ(EntryRecycler::block_size(kStep + 1), 2 * kStep);
    EXPECT_EQ(EntryRecycler::block_size(EntryRecycler::kLargestClass),
              EntryRecycler::kLargestClass);
    EXPECT_EQ(EntryRecycler::block_size(EntryRecycler::kLargestClass + 1),
              EntryRecycler::kLargestClass + 1);
}

TEST(EntryRecycler, AGivenBlockServesTheNextTakeOfItsClassOnly) {
    EntryRecycler recycler(4096);
    const std::size_t size = EntryRecycler::block_size(150);
    void* const block = recycler.take(size);
    std::memset(block, 0xAB, size);  // the whole block is the caller's
    recycler.give(block, size);
    EXPECT_EQ(recycler.parked_bytes(), size);

    void* const other_class = recycler.take(size + kStep);
    EXPECT_NE(other_class, block);
    EXPECT_EQ(recycler.parked_bytes(), size);

    EXPECT_EQ(recycler.take(size), block);
    EXPECT_EQ(recycler.parked_bytes(), 0U);
    recycler.give(block, size);
    recycler.give(other_class, size + kStep);
    EXPECT_EQ(recycler.parked_bytes(), 2 * size + kStep);
}

TEST(EntryRecycler, ParksLastInFirstOut) {
    EntryRecycler recycler(4096);
    const std::size_t size = 2 * kStep;
    void* const first = recycler.take(size);
    void* const second = recycler.take(size);
    recycler.give(first, size);
    recycler.give(second, size);
    EXPECT_EQ(recycler.take(size), second);  // the one most likely still in the CPU's caches
    EXPECT_EQ(recycler.take(size), first);
    recycler.give(first, size);
    recycler.give(second, size);
}

TEST(EntryRecycler, KeepsNoMoreThanItsLimit) {
    const std::size_t size = 4 * kStep;
    EntryRecycler recycler(3 * size);
    std::vector<void*> blocks(5);
    for (void*& block : blocks) {
        block = recycler.take(size);
    }
    for (void* block : blocks) {
        recycler.give(block, size);  // the fourth and fifth are freed
    }
    EXPECT_EQ(recycler.parked_bytes(), 3 * size);
    // Three come back from the lists, in reverse; the fourth take is a new block.
    EXPECT_EQ(recycler.take(size), blocks[2]);
    EXPECT_EQ(recycler.take(size), blocks[1]);
    EXPECT_EQ(recycler.take(size), blocks[0]);
    EXPECT_EQ(recycler.parked_bytes(), 0U);
    for (int i = 0; i < 3; ++i) {
        recycler.give(blocks[static_cast<std::size_t>(i)], size);
    }
}

TEST(EntryRecycler, NeverKeepsABlockAboveTheLargestClass) {
    EntryRecycler recycler(1U << 20U);
    const std::size_t size = EntryRecycler::block_size(EntryRecycler::kLargestClass + 100);
    recycler.give(recycler.take(size), size);
    EXPECT_EQ(recycler.parked_bytes(), 0U);
}

TEST(EntryRecycler, ReleaseAllEmptiesEveryClass) {
    EntryRecycler recycler(1U << 20U);
    for (std::size_t size = kStep; size <= EntryRecycler::kLargestClass; size += kStep) {
        recycler.give(recycler.take(size), size);
    }
    EXPECT_GT(recycler.parked_bytes(), 0U);
    recycler.release_all();
    EXPECT_EQ(recycler.parked_bytes(), 0U);
    // Taking after a release allocates anew rather than handing out a freed block.
    void* const fresh = recycler.take(kStep);
    recycler.give(fresh, kStep);
    EXPECT_EQ(recycler.parked_bytes(), kStep);
}

}  // namespace
}  // namespace moat::cache
