// Work held until the end of the event loop's current turn: the sends a turn collects into one
// sendmmsg (the upstream pool's queries, a UDP listener's answers to forwarded queries) and the
// starts of the flights the turn created.
//
// Why not a plain asio::post for each: a handler posted while another runs waits in the
// scheduler's queue, and Asio polls the sockets (an epoll_wait that does not block) before it
// runs it. At a household's pace a forwarded query paid one such poll or more (9.1 system calls
// a miss with them, 8.0 without; docs/benchmarks.md). So every handler that can start or
// finish forwarded queries runs its work in_batch() instead: a batch of datagrams (a UDP
// listener's, the upstream pool's), a read of a TCP, DoT or DoH connection (a client's, an
// encrypted upstream's, a truncated answer's TCP retry) and the deadlines' timer. What is
// deferred meanwhile runs when the batch ends, before the handler returns to the event loop.
// Deferred outside any batch, it runs in one handler posted for everything deferred until then.
//
// One per io_context (an Asio service: asio::use_service<TurnEnd>(io)), used from its thread only.
#pragma once

#include <asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <memory_resource>
#include <utility>
#include <vector>

namespace moat::upstream {

class TurnEnd final : public asio::io_context::service {
public:
    /// Something that runs once at the end of a turn, however often it was deferred in it. Owned
    /// by the object whose work it flushes (declared last, so it goes first: a task destroyed
    /// while queued is dropped from the queue).
    class Task {
    public:
        Task(TurnEnd& owner, std::function<void()> work);
        ~Task();
        Task(const Task&) = delete;
        Task& operator=(const Task&) = delete;
        Task(Task&&) = delete;
        Task& operator=(Task&&) = delete;

        /// Runs the work at the end of this turn (once, if deferred again before then).
        void defer();

    private:
        friend class TurnEnd;
        TurnEnd& owner_;
        std::function<void()> work_;
        bool queued_ = false;
    };

    // NOLINTNEXTLINE(readability-identifier-naming): the name Asio looks a service up by
    static inline asio::execution_context::id id;

    explicit TurnEnd(asio::io_context& io);
    /// The io_context's own (looked up under a lock: keep the reference).
    static TurnEnd& of(asio::io_context& io) { return asio::use_service<TurnEnd>(io); }

    /// Runs `body` (a handler's work through a batch of datagrams), then what was deferred during
    /// it. Batches may nest; the outermost runs the deferred work.
    template <typename Body>
    void in_batch(Body&& body) {
        {
            const Open open(open_batches_);
            std::forward<Body>(body)();
        }
        if (open_batches_ == 0) {
            run_queued();
        }
    }

    /// Tasks waiting for the end of the turn (for tests).
    [[nodiscard]] std::size_t queued() const noexcept;

private:
    /// Counts an open batch for as long as it lives, also when its body throws.
    class Open {
    public:
        explicit Open(std::size_t& count) noexcept : count_(count) { ++count_; }
        ~Open() { --count_; }
        Open(const Open&) = delete;
        Open& operator=(const Open&) = delete;
        Open(Open&&) = delete;
        Open& operator=(Open&&) = delete;

    private:
        std::size_t& count_;
    };

    void defer(Task& task);
    void forget(Task& task) noexcept;
    void run_queued();
    void shutdown() override;

    asio::io_context& io_;
    /// The posted handler's memory, a pool as the flights' (src/upstream/flight_memory.hpp): a
    /// deferral outside a batch allocates nothing once warm, so neither does a forwarded query
    /// (tests/unit/upstream/forwarder_alloc_test.cpp).
    std::shared_ptr<std::pmr::memory_resource> memory_;
    std::vector<Task*> queued_;  ///< in order of deferral; a forgotten one is left as nullptr
    std::size_t open_batches_ = 0;
    bool posted_ = false;  ///< a handler that runs the queue is waiting in the event loop
};

}  // namespace moat::upstream
