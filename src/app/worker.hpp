// One background thread that runs jobs in the order they were posted.
//
// The daemon has two: one compiles lists (a reload or a recompile after downloads), so two
// snapshots are never built at once and memory peaks at one rebuild; one downloads lists, so a
// slow list server never delays a reload. Jobs report back by posting to the event loop.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

namespace moat::app {

class Worker {
public:
    Worker() : thread_([this] { loop(); }) {}
    ~Worker() {
        try {
            stop();
        } catch (const std::system_error&) {  // join() failing: nothing a destructor can do
        }
    }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    void post(std::function<void()> job) {
        {
            const std::lock_guard lock(mutex_);
            if (stopping_) {
                return;
            }
            jobs_.push_back(std::move(job));
        }
        wake_.notify_one();
    }

    /// Lets the running job finish, drops the queued ones and joins the thread.
    void stop() {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
            jobs_.clear();
        }
        wake_.notify_one();
        if (thread_.joinable()) {
            thread_.join();
        }
    }

private:
    void loop() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
                if (stopping_) {
                    return;
                }
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            job();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::thread thread_;  // last: starts once the members above exist
};

}  // namespace moat::app
