// Deadlines of the queries in flight, kept in one list per kind with one Asio timer for the
// whole list, instead of a timer per query.
//
// Why: every forwarded query has two deadlines (its attempt's and its total), and nearly every
// one is met, so both are cancelled. With an asio::steady_timer each, a miss constructed two
// timers (a service lookup under a mutex each), put two waits in the reactor's timer heap under
// its mutex, took them out again on the answer, and ran both handlers once more with
// operation_aborted: about 8% of a miss's user time under load (perf, docs/benchmarks.md).
// Here arming is a link at the list's end and disarming an unlink, both without a lock, a
// clock read or a handler.
//
// The list is kept in order of due time. Its entries are armed with nearly always the same
// delay, so a new one belongs at the end, and the insertion looks for its place from there. The
// timer waits for the earliest entry; it is moved earlier only when an entry due sooner than
// the wait arrives, and never moved later: when the entry it waits for is disarmed, the timer
// runs out anyway and waits again for whatever is first then (at most one wake-up per delay
// while queries come, none when they stop).
//
// Only the event loop's thread uses a Deadlines and its entries.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>

#include "moat/upstream/turn_end.hpp"

namespace moat::upstream {

class Deadlines {
public:
    using Clock = std::chrono::steady_clock;

    /// Something that waits for a deadline: on_due() runs on the event loop once the entry's
    /// time has come, unless it was disarmed before. An entry is in at most one list; it
    /// leaves it when disarmed, when due, or when it is destroyed.
    class Entry {
    public:
        Entry() = default;
        Entry(const Entry&) = delete;
        Entry& operator=(const Entry&) = delete;
        Entry(Entry&&) = delete;
        Entry& operator=(Entry&&) = delete;

        [[nodiscard]] bool armed() const noexcept { return list_ != nullptr; }
        /// Takes the entry out of its list; nothing when it is in none.
        void disarm() noexcept;

    protected:
        virtual ~Entry() { disarm(); }
        /// The entry's time has come; it is no longer armed. May arm or disarm any entry, this
        /// one included.
        virtual void on_due() = 0;

    private:
        friend class Deadlines;
        Deadlines* list_ = nullptr;
        Entry* previous_ = nullptr;
        Entry* next_ = nullptr;
        Clock::time_point due_{};
    };

    explicit Deadlines(asio::io_context& io);
    Deadlines(const Deadlines&) = delete;
    Deadlines& operator=(const Deadlines&) = delete;
    Deadlines(Deadlines&&) = delete;
    Deadlines& operator=(Deadlines&&) = delete;
    /// Entries still armed are disarmed without running.
    ~Deadlines();

    /// Arms `entry` for `due`, moving it if it was armed already (here or in another list).
    void arm(Entry& entry, Clock::time_point due);

    /// Entries armed now.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    void link(Entry& entry) noexcept;
    void unlink(Entry& entry) noexcept;
    /// Makes the timer end at `due`.
    void wait_until(Clock::time_point due);
    /// The timer ran out: runs every entry due by now, then waits for the next.
    void run_due();

    asio::steady_timer timer_;
    TurnEnd& turn_end_;  ///< what the due entries send (a retry, a hedge) leaves at its end
    Entry* first_ = nullptr;
    Entry* last_ = nullptr;
    std::size_t size_ = 0;
    /// When the timer's wait ends; none when nothing waits (or while run_due() runs).
    std::optional<Clock::time_point> waiting_until_;
    bool running_due_ = false;
    /// Handlers hold it weakly: one that was already queued when the list was destroyed must
    /// not touch it.
    std::shared_ptr<Deadlines*> self_;
};

}  // namespace moat::upstream
