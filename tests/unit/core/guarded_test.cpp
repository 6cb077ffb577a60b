#include "moat/core/guarded.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "support/emulation.hpp"

namespace {

TEST(Guarded, ExclusiveAccessSerialisesWriters) {
    MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR();
    moat::Guarded<long> counter;
    std::vector<std::thread> threads;
    // Small counts: under qemu-aarch64 every contended lock is an emulated futex call.
    threads.reserve(2);
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 500; ++i) {
                counter.with([](long& v) { ++v; });
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(counter.with([](const long& v) { return v; }), 1000);
}

TEST(Guarded, SharedReadersSeeAConsistentValue) {
    moat::Guarded<std::vector<int>, std::shared_mutex> table(std::in_place, std::size_t{3}, 7);
    table.with([](std::vector<int>& v) { v.push_back(7); });
    const auto sum = table.with_shared([](const std::vector<int>& v) {
        int s = 0;
        for (const int x : v) {
            s += x;
        }
        return s;
    });
    EXPECT_EQ(sum, 28);
}

}  // namespace
