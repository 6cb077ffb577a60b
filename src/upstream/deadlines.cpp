#include "deadlines.hpp"

#include <system_error>

namespace moat::upstream {

void Deadlines::Entry::disarm() noexcept {
    if (list_ != nullptr) {
        list_->unlink(*this);
    }
}

Deadlines::Deadlines(asio::io_context& io)
    : timer_(io), turn_end_(TurnEnd::of(io)), self_(std::make_shared<Deadlines*>(this)) {}

Deadlines::~Deadlines() {
    while (first_ != nullptr) {
        unlink(*first_);
    }
}

void Deadlines::arm(Entry& entry, Clock::time_point due) {
    entry.disarm();
    entry.due_ = due;
    link(entry);
    // While run_due() runs, it waits for the first entry once it is done.
    if (!running_due_ && (!waiting_until_ || due < *waiting_until_)) {
        wait_until(due);
    }
}

void Deadlines::link(Entry& entry) noexcept {
    // From the end: nearly every entry is due after all the others.
    Entry* before = last_;
    while (before != nullptr && entry.due_ < before->due_) {
        before = before->previous_;
    }
    Entry* after = before != nullptr ? before->next_ : first_;
    entry.previous_ = before;
    entry.next_ = after;
    (before != nullptr ? before->next_ : first_) = &entry;
    (after != nullptr ? after->previous_ : last_) = &entry;
    entry.list_ = this;
    ++size_;
}

void Deadlines::unlink(Entry& entry) noexcept {
    (entry.previous_ != nullptr ? entry.previous_->next_ : first_) = entry.next_;
    (entry.next_ != nullptr ? entry.next_->previous_ : last_) = entry.previous_;
    entry.previous_ = nullptr;
    entry.next_ = nullptr;
    entry.list_ = nullptr;
    --size_;
}

void Deadlines::wait_until(Clock::time_point due) {
    // Setting the expiry cancels a wait in progress: its handler runs with operation_aborted
    // and leaves the list alone.
    timer_.expires_at(due);
    waiting_until_ = due;
    timer_.async_wait([alive = std::weak_ptr<Deadlines*>(self_)](const std::error_code& ec) {
        const auto self = alive.lock();
        if (!self || ec == asio::error::operation_aborted) {
            return;
        }
        // A batch: the retries and hedges of the entries due together start as one round.
        (*self)->turn_end_.in_batch([&] { (*self)->run_due(); });
    });
}

void Deadlines::run_due() {
    // A handler may run after a newer wait was set (it had run out before it could be
    // cancelled); this one then does the newer wait's work, which finds the same entries.
    waiting_until_.reset();
    {
        // Reset even when on_due() throws: the next arm() then waits again.
        struct Running {
            bool& flag;
            explicit Running(bool& f) : flag(f) { flag = true; }
            Running(const Running&) = delete;
            Running& operator=(const Running&) = delete;
            ~Running() { flag = false; }
        } running(running_due_);
        const Clock::time_point now = Clock::now();
        while (first_ != nullptr && first_->due_ <= now) {
            Entry& due = *first_;
            unlink(due);
            due.on_due();
        }
    }
    if (first_ != nullptr) {
        wait_until(first_->due_);
    }
}

}  // namespace moat::upstream
