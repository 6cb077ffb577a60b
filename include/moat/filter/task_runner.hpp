// Running a compile's independent steps (building its four tables) at once when the caller has
// threads for them: this module starts none (docs/ARCHITECTURE.md, rule 3), so the caller hands
// one in. The default runs them one after another.
#pragma once

#include <functional>
#include <span>

namespace moat::filter {

class TaskRunner {
public:
    TaskRunner() = default;
    TaskRunner(const TaskRunner&) = delete;
    TaskRunner& operator=(const TaskRunner&) = delete;
    TaskRunner(TaskRunner&&) = delete;
    TaskRunner& operator=(TaskRunner&&) = delete;
    virtual ~TaskRunner() = default;

    /// Runs every task, in any order and at once if it can, and returns when all have run.
    /// Rethrows what a task threw, once every task has finished.
    virtual void run_all(std::span<const std::function<void()>> tasks) = 0;
};

/// Runs the tasks one after another on the calling thread.
class InlineRunner final : public TaskRunner {
public:
    void run_all(std::span<const std::function<void()>> tasks) override {
        for (const auto& task : tasks) {
            task();
        }
    }
};

}  // namespace moat::filter
