#include "moat/core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;

TEST(ManualClock, MovesOnlyWhenAdvanced) {
    moat::ManualClock clock;
    const auto t0 = clock.now();
    EXPECT_EQ(clock.now(), t0);
    clock.advance(1500ms);
    EXPECT_EQ(clock.now() - t0, 1500ms);
}

TEST(ManualClock, WallClockCanJumpBothWays) {
    moat::ManualClock clock;
    const auto noon = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + 12h;
    clock.set_wall(noon);
    EXPECT_EQ(clock.wall(), noon);
    clock.advance(10s);
    EXPECT_EQ(clock.wall(), noon + 10s);
    const auto monotonic = clock.now();
    clock.set_wall(noon - 1h);  // a clock step backwards leaves the monotonic time alone
    EXPECT_EQ(clock.wall(), noon - 1h);
    EXPECT_EQ(clock.now(), monotonic);
}

TEST(SystemClock, IsMonotonic) {
    const moat::SystemClock clock;
    const auto a = clock.now();
    const auto b = clock.now();
    EXPECT_LE(a, b);
}

}  // namespace
