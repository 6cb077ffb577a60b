#include "moat/upstream/turn_end.hpp"

#include <algorithm>
#include <asio/bind_allocator.hpp>
#include <asio/post.hpp>

#include "flight_memory.hpp"

namespace moat::upstream {

TurnEnd::Task::Task(TurnEnd& owner, std::function<void()> work)
    : owner_(owner), work_(std::move(work)) {}

TurnEnd::Task::~Task() {
    if (queued_) {
        owner_.forget(*this);
    }
}

void TurnEnd::Task::defer() {
    if (!queued_) {
        owner_.defer(*this);
    }
}

TurnEnd::TurnEnd(asio::io_context& io)
    : asio::io_context::service(io), io_(io), memory_(make_flight_memory()) {}

std::size_t TurnEnd::queued() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(queued_.begin(), queued_.end(), [](const Task* t) { return t != nullptr; }));
}

void TurnEnd::defer(Task& task) {
    task.queued_ = true;
    queued_.push_back(&task);
    if (open_batches_ == 0 && !posted_) {
        posted_ = true;
        // The scheduler's pending handlers die with the io_context, unrun, before its services:
        // `this`, and the pool the handler is allocated from, outlive it.
        asio::post(io_, asio::bind_allocator(FlightAllocator(memory_.get()), [this] {
                       posted_ = false;
                       run_queued();
                   }));
    }
}

void TurnEnd::forget(Task& task) noexcept {
    std::replace(queued_.begin(), queued_.end(), &task, static_cast<Task*>(nullptr));
    task.queued_ = false;
}

void TurnEnd::run_queued() {
    // Counted as a batch: what the tasks defer (a flight's start queues its query in the pool)
    // joins this round instead of being posted.
    const Open open(open_batches_);
    // By index, not a range: the vector grows (and may move) while the tasks run.
    for (std::size_t i = 0; i < queued_.size(); ++i) {  // NOLINT(modernize-loop-convert)
        Task* task = queued_[i];
        if (task == nullptr) {
            continue;
        }
        task->queued_ = false;  // first: its work may defer it again, to run later in this loop
        queued_[i] = nullptr;
        task->work_();
    }
    queued_.clear();
}

void TurnEnd::shutdown() {
    for (Task* task : queued_) {
        if (task != nullptr) {
            task->queued_ = false;
        }
    }
    queued_.clear();
}

}  // namespace moat::upstream
