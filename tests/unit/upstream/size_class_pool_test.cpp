// The pool the memory of queries in flight comes from (src/upstream/size_class_pool.hpp): a freed
// block goes to the next request of its size class, blocks never overlap and are aligned for any
// type, requests it does not pool go to the upstream resource, and every chunk goes back to the
// upstream resource when the pool is destroyed.
#include "size_class_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <random>
#include <utility>
#include <vector>

namespace moat::upstream {
namespace {

/// The heap, with a count of what is out: what the pool asked for and has not given back.
class CountingHeap final : public std::pmr::memory_resource {
public:
    std::size_t blocks_out = 0;
    std::size_t bytes_out = 0;
    std::size_t requests = 0;

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override {
        ++blocks_out;
        ++requests;
        bytes_out += bytes;
        return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
    void do_deallocate(void* block, std::size_t bytes, std::size_t alignment) override {
        --blocks_out;
        bytes_out -= bytes;
        std::pmr::new_delete_resource()->deallocate(block, bytes, alignment);
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }
};

constexpr std::size_t kAlign = alignof(std::max_align_t);

TEST(SizeClassPool, TheNextRequestOfAClassGetsTheBlockFreedLast) {
    SizeClassPool pool;
    void* a = pool.allocate(96, kAlign);
    void* b = pool.allocate(90, kAlign);  // the same class: 81-96 octets
    pool.deallocate(a, 96, kAlign);
    pool.deallocate(b, 90, kAlign);
    EXPECT_EQ(pool.allocate(83, kAlign), b);
    EXPECT_EQ(pool.allocate(96, kAlign), a);
    EXPECT_NE(pool.allocate(96, kAlign), a);  // a new one: the class has none left
}

TEST(SizeClassPool, AFreedBlockIsNotGivenToAnotherClass) {
    SizeClassPool pool;
    void* small = pool.allocate(32, kAlign);
    pool.deallocate(small, 32, kAlign);
    EXPECT_NE(pool.allocate(33, kAlign), small);  // 33 octets would not fit in the freed 32
    EXPECT_NE(pool.allocate(16, kAlign), small);  // the 1-16 octet class is a list of its own
    EXPECT_EQ(pool.allocate(17, kAlign), small);  // 17-32 octets: the freed block's class
}

TEST(SizeClassPool, BlocksOfEverySizeAreAlignedAndNeverOverlap) {
    SizeClassPool pool;
    std::mt19937 random(7);
    std::uniform_int_distribution<std::size_t> size(1, SizeClassPool::kLargestPooled);
    struct Held {
        std::uint8_t* at;
        std::size_t size;
        std::uint8_t fill;
    };
    std::vector<Held> held;
    // Allocations and frees interleaved, so freed blocks are handed out again among new ones.
    for (int round = 0; round < 4000; ++round) {
        if (!held.empty() && random() % 3 == 0) {
            const std::size_t victim = random() % held.size();
            pool.deallocate(held[victim].at, held[victim].size, kAlign);
            held[victim] = held.back();
            held.pop_back();
            continue;
        }
        const std::size_t n = size(random);
        auto* at = static_cast<std::uint8_t*>(pool.allocate(n, kAlign));
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(at) % kAlign, 0U);
        const auto fill = static_cast<std::uint8_t>(round);
        std::memset(at, fill, n);
        held.push_back({at, n, fill});
    }
    // Every block still holds what was written into it: none was written over by another.
    for (const Held& h : held) {
        ASSERT_TRUE(std::all_of(h.at, h.at + h.size, [&](std::uint8_t b) { return b == h.fill; }));
    }
    std::sort(held.begin(), held.end(), [](const Held& x, const Held& y) { return x.at < y.at; });
    for (std::size_t i = 1; i < held.size(); ++i) {
        ASSERT_LE(held[i - 1].at + held[i - 1].size, held[i].at);
    }
    for (const Held& h : held) {
        pool.deallocate(h.at, h.size, kAlign);
    }
}

TEST(SizeClassPool, LargeAndOverAlignedRequestsGoToTheUpstreamResourceAsTheyAre) {
    CountingHeap heap;
    SizeClassPool pool(&heap);
    void* large = pool.allocate(SizeClassPool::kLargestPooled + 1, kAlign);
    EXPECT_EQ(heap.requests, 1U);
    EXPECT_EQ(heap.bytes_out, SizeClassPool::kLargestPooled + 1);
    void* aligned = pool.allocate(64, 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0U);
    EXPECT_EQ(heap.requests, 2U);
    pool.deallocate(large, SizeClassPool::kLargestPooled + 1, kAlign);
    pool.deallocate(aligned, 64, 64);
    EXPECT_EQ(heap.blocks_out, 0U) << "both went straight back to the upstream resource";
}

TEST(SizeClassPool, ChunksComeFromTheUpstreamResourceRarelyAndAllGoBackWithThePool) {
    CountingHeap heap;
    {
        SizeClassPool pool(&heap);
        std::vector<void*> blocks;
        blocks.reserve(1000);
        for (int i = 0; i < 1000; ++i) {
            blocks.push_back(pool.allocate(96, kAlign));
        }
        // 96,000 octets in chunks doubling from 4 KiB to 64 KiB: a handful of requests.
        EXPECT_LE(heap.requests, 6U);
        EXPECT_GE(heap.bytes_out, 96'000U);
        const std::size_t requests = heap.requests;
        for (void* b : blocks) {
            pool.deallocate(b, 96, kAlign);
        }
        for (int i = 0; i < 1000; ++i) {
            blocks[static_cast<std::size_t>(i)] = pool.allocate(96, kAlign);
        }
        EXPECT_EQ(heap.requests, requests) << "the second thousand reuse the first's blocks";
        EXPECT_GT(heap.blocks_out, 0U) << "freed blocks stay in the pool";
    }
    EXPECT_EQ(heap.blocks_out, 0U);
    EXPECT_EQ(heap.bytes_out, 0U);
}

TEST(SizeClassPool, ABlockLargerThanAChunkGetsAChunkOfItsOwn) {
    CountingHeap heap;
    SizeClassPool pool(&heap);
    auto* at = static_cast<std::uint8_t*>(pool.allocate(SizeClassPool::kLargestPooled, kAlign));
    std::memset(at, 1, SizeClassPool::kLargestPooled);  // the whole block is the pool's to give
    EXPECT_EQ(heap.requests, 1U);
    EXPECT_GT(heap.bytes_out, SizeClassPool::kLargestPooled);
}

}  // namespace
}  // namespace moat::upstream
