// A memory resource for blocks that are freed and asked for again at the same few sizes, over
// and over: the memory of queries in flight (flight_memory.hpp).
//
// Each size class (multiples of 16 octets up to kLargestPooled) keeps a list of its freed
// blocks, and the next request of that class takes the one freed last, which is the most likely
// to be still in the CPU's caches. New blocks are cut from chunks taken from the upstream
// resource; nothing goes back to it before the pool is destroyed, so the pool holds the blocks of
// its busiest moment. Larger or over-aligned requests go to the upstream resource as they are.
//
// Why not std::pmr::unsynchronized_pool_resource: libstdc++'s finds a freed block's chunk with a
// binary search and keeps each chunk's blocks in a bitmap. callgrind counted about 2,000
// instructions per forwarded miss in it, 12% of the miss (bench/miss_footprint.py,
// docs/benchmarks.md). Here an allocation is a pop and a free a push.
//
// Not synchronised: one thread uses a pool.
#pragma once

#include <array>
#include <cstddef>
#include <memory_resource>

namespace moat::upstream {

class SizeClassPool final : public std::pmr::memory_resource {
public:
    /// The class step, and the alignment of every pooled block (that of std::max_align_t).
    static constexpr std::size_t kGranule = 16;
    /// Requests above this go to the upstream resource.
    static constexpr std::size_t kLargestPooled = 4096;

    explicit SizeClassPool(
        std::pmr::memory_resource* upstream = std::pmr::new_delete_resource()) noexcept
        : upstream_(upstream) {}
    ~SizeClassPool() override;
    SizeClassPool(const SizeClassPool&) = delete;
    SizeClassPool& operator=(const SizeClassPool&) = delete;
    SizeClassPool(SizeClassPool&&) = delete;
    SizeClassPool& operator=(SizeClassPool&&) = delete;

private:
    struct FreeBlock {
        FreeBlock* next;
    };
    /// The header of a chunk taken from upstream; its blocks follow it.
    struct alignas(kGranule) Chunk {
        Chunk* next;
        std::size_t size;
    };

    void* do_allocate(std::size_t bytes, std::size_t alignment) override;
    void do_deallocate(void* block, std::size_t bytes, std::size_t alignment) override;
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }

    static bool pooled(std::size_t bytes, std::size_t alignment) noexcept {
        return bytes <= kLargestPooled && alignment <= kGranule;
    }
    /// 0 for 1-16 octets (and 0), 1 for 17-32, ...
    static std::size_t class_of(std::size_t bytes) noexcept {
        return bytes == 0 ? 0 : (bytes - 1) / kGranule;
    }
    /// A new block of `size` octets from the current chunk, or from a new one.
    void* cut(std::size_t size);

    std::pmr::memory_resource* upstream_;
    std::array<FreeBlock*, kLargestPooled / kGranule> free_{};
    std::byte* cursor_ = nullptr;  // the unused rest of the newest chunk
    std::byte* end_ = nullptr;
    Chunk* chunks_ = nullptr;
    std::size_t next_chunk_size_ = 4096;
};

}  // namespace moat::upstream
