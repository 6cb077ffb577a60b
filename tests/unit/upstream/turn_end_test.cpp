// TurnEnd: work deferred inside a batch runs when the batch ends, within the same handler and
// without a handler posted for it (which would let Asio poll the sockets first); deferred
// outside a batch it runs in one posted handler, never inline; a task runs once however often it
// is deferred, and never after its owner is gone.
#include "moat/upstream/turn_end.hpp"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace moat::upstream {
namespace {

class TurnEndTest : public ::testing::Test {
protected:
    /// A task that appends `name` to the log when it runs.
    std::unique_ptr<TurnEnd::Task> recorder(const std::string& name) {
        return std::make_unique<TurnEnd::Task>(turn_end_, [this, name] { log_.push_back(name); });
    }

    asio::io_context io_;
    TurnEnd& turn_end_ = TurnEnd::of(io_);
    std::vector<std::string> log_;
};

TEST_F(TurnEndTest, IsOnePerEventLoop) {
    EXPECT_EQ(&TurnEnd::of(io_), &turn_end_);
    asio::io_context other;
    EXPECT_NE(&TurnEnd::of(other), &turn_end_);
}

TEST_F(TurnEndTest, DeferredOutsideABatchItRunsInAPostedHandlerNotInline) {
    const auto task = recorder("flush");
    task->defer();
    EXPECT_TRUE(log_.empty());
    EXPECT_EQ(turn_end_.queued(), 1U);
    EXPECT_EQ(io_.poll(), 1U);  // the posted handler
    EXPECT_EQ(log_, std::vector<std::string>{"flush"});
    EXPECT_EQ(turn_end_.queued(), 0U);
}

TEST_F(TurnEndTest, DeferredInABatchItRunsWhenTheBatchEndsWithNothingPosted) {
    const auto task = recorder("flush");
    asio::post(io_, [&] {
        turn_end_.in_batch([&] {
            task->defer();
            log_.emplace_back("batch");
        });
        log_.emplace_back("after the batch");
    });
    asio::post(io_, [&] { log_.emplace_back("next handler"); });
    EXPECT_EQ(io_.poll(), 2U);  // the two handlers above and no third
    EXPECT_EQ(log_,
              (std::vector<std::string>{"batch", "flush", "after the batch", "next handler"}));
}

TEST_F(TurnEndTest, DeferredTwiceInATurnItRunsOnce) {
    const auto task = recorder("flush");
    turn_end_.in_batch([&] {
        task->defer();
        task->defer();
    });
    task->defer();
    task->defer();
    io_.poll();
    EXPECT_EQ(log_, (std::vector<std::string>{"flush", "flush"}));
}

TEST_F(TurnEndTest, TasksRunInTheOrderTheyWereFirstDeferred) {
    const auto a = recorder("a");
    const auto b = recorder("b");
    turn_end_.in_batch([&] {
        b->defer();
        a->defer();
        b->defer();
    });
    EXPECT_EQ(log_, (std::vector<std::string>{"b", "a"}));
}

TEST_F(TurnEndTest, AnInnerBatchLeavesTheWorkToTheOuterOne) {
    const auto task = recorder("flush");
    turn_end_.in_batch([&] {
        turn_end_.in_batch([&] { task->defer(); });
        log_.emplace_back("inner ended");
    });
    EXPECT_EQ(log_, (std::vector<std::string>{"inner ended", "flush"}));
    EXPECT_EQ(io_.poll(), 0U);
}

TEST_F(TurnEndTest, WorkThatATaskDefersRunsInTheSameEnd) {
    // A flight's start queues its query in the pool, whose flush is deferred in turn.
    const auto send = recorder("send");
    TurnEnd::Task start(turn_end_, [&] {
        log_.emplace_back("start");
        send->defer();
    });
    turn_end_.in_batch([&] { start.defer(); });
    EXPECT_EQ(log_, (std::vector<std::string>{"start", "send"}));
    EXPECT_EQ(io_.poll(), 0U);

    start.defer();  // and outside a batch: one posted handler runs both
    io_.restart();  // the poll above ran out of work, which stops the loop
    EXPECT_EQ(io_.poll(), 1U);
    EXPECT_EQ(log_, (std::vector<std::string>{"start", "send", "start", "send"}));
}

TEST_F(TurnEndTest, ATaskDeferredAgainByItsOwnWorkRunsAgainInTheSameEnd) {
    int runs = 0;
    std::unique_ptr<TurnEnd::Task> task;
    task = std::make_unique<TurnEnd::Task>(turn_end_, [&] {
        if (++runs < 3) {
            task->defer();
        }
    });
    turn_end_.in_batch([&] { task->defer(); });
    EXPECT_EQ(runs, 3);
    EXPECT_EQ(io_.poll(), 0U);
}

TEST_F(TurnEndTest, ATaskDestroyedWhileQueuedNeverRuns) {
    auto gone = recorder("gone");
    const auto kept = recorder("kept");
    gone->defer();
    kept->defer();
    gone.reset();
    EXPECT_EQ(turn_end_.queued(), 1U);
    io_.poll();
    EXPECT_EQ(log_, std::vector<std::string>{"kept"});
}

TEST_F(TurnEndTest, ATaskDestroyedByAnEarlierTaskOfTheSameEndNeverRuns) {
    auto second = recorder("second");
    TurnEnd::Task first(turn_end_, [&] {
        log_.emplace_back("first");
        second.reset();
    });
    turn_end_.in_batch([&] {
        first.defer();
        second->defer();
    });
    EXPECT_EQ(log_, std::vector<std::string>{"first"});
}

TEST_F(TurnEndTest, ABatchWhoseBodyThrowsStillEnds) {
    const auto task = recorder("flush");
    EXPECT_THROW(turn_end_.in_batch([] { throw std::runtime_error("handler failed"); }),
                 std::runtime_error);
    // Were the batch still counted open, this deferral would wait for an end that never comes.
    task->defer();
    EXPECT_EQ(io_.poll(), 1U);
    EXPECT_EQ(log_, std::vector<std::string>{"flush"});
}

TEST_F(TurnEndTest, AnEventLoopDestroyedWithAPostedRunPendingRunsNothing) {
    bool ran = false;
    {
        asio::io_context io;
        TurnEnd::Task task(TurnEnd::of(io), [&ran] { ran = true; });
        task.defer();
        // The task goes first (its owner's member), then the loop with the handler unrun.
    }
    EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace moat::upstream
