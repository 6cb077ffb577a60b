// Deadlines: entries run in order of their due time, once, on a real event loop; disarmed,
// re-armed, destroyed or outlived entries never run; an entry due before the timer's wait moves
// the wait earlier.
#include "deadlines.hpp"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moat/upstream/turn_end.hpp"

namespace moat::upstream {
namespace {

using std::chrono::milliseconds;
using Clock = Deadlines::Clock;

/// Long enough for every test's deadlines to come, short enough to end a hung test.
constexpr milliseconds kEnough{2000};

/// An entry that records its name in `log` when it runs, then calls `then` if set.
class Recorder final : public Deadlines::Entry {
public:
    Recorder(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;
    Recorder(Recorder&&) = delete;
    Recorder& operator=(Recorder&&) = delete;
    ~Recorder() override = default;

    std::function<void()> then;

private:
    void on_due() override {
        log_.push_back(name_);
        if (then) {
            then();
        }
    }
    std::string name_;
    std::vector<std::string>& log_;
};

class DeadlinesTest : public ::testing::Test {
protected:
    /// Runs the loop until it has nothing left to do (at most kEnough).
    void run() {
        io_.restart();
        io_.run_for(kEnough);
    }

    asio::io_context io_;
    std::vector<std::string> log_;
};

TEST_F(DeadlinesTest, EntriesRunOnceInTheOrderOfTheirDueTimes) {
    Deadlines list(io_);
    Recorder a("a", log_);
    Recorder b("b", log_);
    Recorder c("c", log_);
    Recorder d("d", log_);
    const Clock::time_point now = Clock::now();
    // Armed out of order: the list finds each one's place.
    list.arm(c, now + milliseconds(30));
    list.arm(a, now + milliseconds(10));
    list.arm(d, now + milliseconds(40));
    list.arm(b, now + milliseconds(20));
    EXPECT_EQ(list.size(), 4U);
    EXPECT_TRUE(a.armed());
    run();
    EXPECT_EQ(log_, (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(list.size(), 0U);
    EXPECT_FALSE(a.armed());
}

TEST_F(DeadlinesTest, EntriesDueAtTheSameTimeRunInTheOrderTheyWereArmed) {
    Deadlines list(io_);
    Recorder first("first", log_);
    Recorder second("second", log_);
    Recorder third("third", log_);
    const Clock::time_point due = Clock::now() + milliseconds(10);
    list.arm(first, due);
    list.arm(second, due);
    list.arm(third, due);
    run();
    EXPECT_EQ(log_, (std::vector<std::string>{"first", "second", "third"}));
}

TEST_F(DeadlinesTest, ADisarmedEntryNeverRuns) {
    Deadlines list(io_);
    Recorder kept("kept", log_);
    Recorder dropped("dropped", log_);
    const Clock::time_point now = Clock::now();
    list.arm(dropped, now + milliseconds(10));  // the one the timer waits for
    list.arm(kept, now + milliseconds(20));
    dropped.disarm();
    dropped.disarm();  // twice is nothing
    EXPECT_FALSE(dropped.armed());
    EXPECT_EQ(list.size(), 1U);
    run();
    EXPECT_EQ(log_, std::vector<std::string>{"kept"});
}

TEST_F(DeadlinesTest, AnEntryDueBeforeTheWaitRunsWithoutWaitingForTheOthers) {
    Deadlines list(io_);
    Recorder late("late", log_);
    Recorder soon("soon", log_);
    const Clock::time_point now = Clock::now();
    list.arm(late, now + std::chrono::seconds(30));  // the timer now waits 30 s
    list.arm(soon, now + milliseconds(10));          // and must wake earlier for this one
    io_.run_for(milliseconds(500));
    EXPECT_EQ(log_, std::vector<std::string>{"soon"});
    EXPECT_TRUE(late.armed());
    late.disarm();
}

TEST_F(DeadlinesTest, ReArmingMovesTheEntryAndItRunsOnce) {
    Deadlines list(io_);
    Recorder moved("moved", log_);
    Recorder middle("middle", log_);
    const Clock::time_point now = Clock::now();
    list.arm(moved, now + milliseconds(10));
    list.arm(middle, now + milliseconds(20));
    list.arm(moved, now + milliseconds(30));  // later than it was: after `middle`
    EXPECT_EQ(list.size(), 2U);
    run();
    EXPECT_EQ(log_, (std::vector<std::string>{"middle", "moved"}));
}

TEST_F(DeadlinesTest, AnEntryMovesFromOneListToAnother) {
    Deadlines first_list(io_);
    Deadlines second_list(io_);
    Recorder entry("entry", log_);
    const Clock::time_point now = Clock::now();
    first_list.arm(entry, now + milliseconds(10));
    second_list.arm(entry, now + milliseconds(20));
    EXPECT_EQ(first_list.size(), 0U);
    EXPECT_EQ(second_list.size(), 1U);
    run();
    EXPECT_EQ(log_, std::vector<std::string>{"entry"});
}

TEST_F(DeadlinesTest, ARunningEntryMayArmItselfAndDisarmOthers) {
    Deadlines list(io_);
    Recorder repeating("repeating", log_);
    Recorder victim("victim", log_);
    Recorder armed_later("armed later", log_);
    int runs = 0;
    repeating.then = [&] {
        if (++runs < 3) {
            list.arm(repeating, Clock::now() + milliseconds(5));
        }
        victim.disarm();
        if (runs == 1) {
            // Far enough behind the repeats that a stalled machine does not reorder them.
            list.arm(armed_later, Clock::now() + milliseconds(500));
        }
    };
    const Clock::time_point now = Clock::now();
    list.arm(repeating, now + milliseconds(5));
    list.arm(victim, now + milliseconds(5));  // due with it, disarmed by its first run
    run();
    EXPECT_EQ(log_,
              (std::vector<std::string>{"repeating", "repeating", "repeating", "armed later"}));
}

TEST_F(DeadlinesTest, AnEntryDestroyedWhileArmedLeavesTheList) {
    Deadlines list(io_);
    Recorder stays("stays", log_);
    {
        Recorder gone("gone", log_);
        list.arm(gone, Clock::now() + milliseconds(10));
        list.arm(stays, Clock::now() + milliseconds(20));
        EXPECT_EQ(list.size(), 2U);
    }
    EXPECT_EQ(list.size(), 1U);
    run();
    EXPECT_EQ(log_, std::vector<std::string>{"stays"});
}

TEST_F(DeadlinesTest, WhatTheDueEntriesDeferRunsBeforeTheTimersHandlerReturns) {
    // A retry's or a hedge's query is deferred to the end of the turn (upstream/turn_end.hpp);
    // the timer's handler ends that turn itself rather than post a handler for it, before which
    // Asio would poll the sockets once more.
    std::vector<std::string> deferred;
    TurnEnd::Task send(TurnEnd::of(io_), [&] { deferred.emplace_back("sent"); });
    Deadlines list(io_);
    Recorder retry("retry", log_);
    Recorder hedge("hedge", log_);
    retry.then = [&] { send.defer(); };
    hedge.then = [&] { send.defer(); };
    const auto due = Clock::now() + milliseconds{5};
    list.arm(retry, due);
    list.arm(hedge, due);
    io_.restart();
    while (log_.empty() && io_.run_one_for(kEnough) != 0) {
    }
    EXPECT_EQ(log_, (std::vector<std::string>{"retry", "hedge"}));
    EXPECT_EQ(deferred, (std::vector<std::string>{"sent"})) << "once, in the timer's handler";
    EXPECT_EQ(TurnEnd::of(io_).queued(), 0U);
}

TEST_F(DeadlinesTest, ALoopThatOutlivesTheListRunsNothingOfIt) {
    Recorder entry("entry", log_);
    {
        Deadlines list(io_);
        list.arm(entry, Clock::now() + milliseconds(5));
    }  // its timer's wait is cancelled; the handler still runs, later, on the loop
    EXPECT_FALSE(entry.armed());
    run();
    EXPECT_TRUE(log_.empty());
}

}  // namespace
}  // namespace moat::upstream
