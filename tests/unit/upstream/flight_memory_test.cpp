// Where a flight's memory comes from (src/upstream/flight_memory.hpp): a pool that hands a freed
// block to the next query, except under AddressSanitizer, where every block is the sanitizer's
// to watch so that a use after free of a flight is reported instead of reading the next one.
#include "flight_memory.hpp"

#include <gtest/gtest.h>

namespace moat::upstream {
namespace {

TEST(FlightMemory, TheNextQueryGetsTheBlockTheLastOneFreed) {
    if constexpr (!kFlightMemoryPooled) {
        GTEST_SKIP() << "built with AddressSanitizer: flights use the heap (the death test below)";
    }
    const auto memory = make_flight_memory();
    void* first = memory->allocate(96, alignof(std::max_align_t));
    memory->deallocate(first, 96, alignof(std::max_align_t));
    void* next = memory->allocate(96, alignof(std::max_align_t));
    EXPECT_EQ(next, first);
    memory->deallocate(next, 96, alignof(std::max_align_t));
}

TEST(FlightMemoryDeathTest, AUseAfterFreeIsReportedUnderAddressSanitizer) {
    if constexpr (kFlightMemoryPooled) {
        GTEST_SKIP() << "a pooled build cannot see a use after free; the asan stage runs this";
    }
    const auto memory = make_flight_memory();
    auto* block = static_cast<volatile char*>(memory->allocate(96, alignof(std::max_align_t)));
    block[0] = 1;
    memory->deallocate(const_cast<char*>(block), 96, alignof(std::max_align_t));  // NOLINT
    // NOLINTNEXTLINE(clang-analyzer-cplusplus.NewDelete): the use after free under test
    EXPECT_DEATH(static_cast<void>(block[0]), "heap-use-after-free");
}

}  // namespace
}  // namespace moat::upstream
