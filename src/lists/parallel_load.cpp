#include "moat/lists/parallel_load.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "moat/filter/list_scan.hpp"
#include "moat/filter/task_runner.hpp"

namespace moat::lists {
namespace {

/// The cores this process may run on (taskset, a unit's CPUAffinity=), at least one.
unsigned usable_cores() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
        return static_cast<unsigned>(std::max(CPU_COUNT(&set), 1));
    }
    return std::max(std::thread::hardware_concurrency(), 1U);
}

/// Newlines in `text`: the number of the line after it, counted from its first.
std::uint64_t newlines_in(std::string_view text) noexcept {
    std::uint64_t n = 0;
    for (const char c : text) {
        n += c == '\n' ? 1U : 0U;
    }
    return n;
}

/// Runs a build's tasks on up to `threads` threads, the caller's one of them.
class ThreadRunner final : public filter::TaskRunner {
public:
    explicit ThreadRunner(unsigned threads) : threads_(threads) {}

    void run_all(std::span<const std::function<void()>> tasks) override {
        std::atomic<std::size_t> next{0};
        std::mutex failing;
        std::exception_ptr failure;
        const auto take_tasks = [&] {
            for (std::size_t i = next++; i < tasks.size(); i = next++) {
                try {
                    tasks[i]();
                } catch (...) {
                    const std::lock_guard lock(failing);
                    if (!failure) {
                        failure = std::current_exception();
                    }
                }
            }
        };
        {
            std::vector<std::jthread> helpers;
            const std::size_t wanted = std::min<std::size_t>(threads_, tasks.size());
            try {
                for (std::size_t i = 1; i < wanted; ++i) {
                    helpers.emplace_back(take_tasks);
                }
            } catch (const std::system_error&) {
                // No more threads to be had: the ones started and the caller share the tasks.
            }
            take_tasks();
        }  // joins the helpers
        if (failure) {
            std::rethrow_exception(failure);
        }
    }

private:
    unsigned threads_;
};

}  // namespace

class ParallelLoad::State {
    // Nested, not in the anonymous namespace: GCC rejects (-Wsubobject-linkage) a member of
    // internal-linkage type in a class of external linkage outside the main source file, which
    // is where a unity build (the CI presets) puts this one.

    /// A list as the load knows it. Kept at one address (a deque) while threads read its spec.
    struct ListState {
        filter::ListSpec spec;
        std::size_t index = 0;
        std::string pending;          ///< text handed over and not yet given to a thread
        std::uint64_t next_line = 1;  ///< the number of the first line in `pending`
        bool open = true;
    };

    /// Whole lines of one list for a thread to parse.
    struct Run {
        const ListState* list = nullptr;
        std::uint64_t first_line = 0;
        std::string text;
    };

public:
    State(filter::Compiler& compiler, unsigned threads) : compiler_(compiler), threads_(threads) {
        // parts_[0] is the caller's; every worker gets one of its own before any starts, so the
        // vector never moves under them.
        parts_.reserve(threads_);
        for (unsigned i = 0; i < threads_; ++i) {
            parts_.push_back(compiler_.part());
        }
        runs_.assign(threads_, 0);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    State(State&&) = delete;
    State& operator=(State&&) = delete;
    ~State() {
        {
            const std::lock_guard lock(mutex_);
            queue_.clear();  // finish() never ran: nobody wants these lines now
        }
        stop();
    }

    tl::expected<std::size_t, filter::Errc> open_list(filter::ListSpec spec) {
        if (finished_) {
            return tl::unexpected(filter::Errc::bad_list);
        }
        auto index = compiler_.open_list(spec);
        if (index) {
            lists_.push_back({std::move(spec), *index, {}, 1, true});
        }
        return index;
    }

    tl::expected<void, filter::Errc> feed(std::size_t list, std::string_view bytes) {
        ListState* l = find(list);
        if (l == nullptr) {
            return tl::unexpected(filter::Errc::bad_list);
        }
        // The text goes straight into the buffer of the next run, a run's worth at a time, so
        // no buffer grows past a run unless one line does.
        while (!bytes.empty()) {
            std::string& text = l->pending;
            if (text.capacity() < kRunBytes) {
                text.reserve(kRunBytes);
            }
            const std::size_t room =
                text.size() < kRunBytes ? kRunBytes - text.size() : bytes.size();
            const std::size_t taken = std::min(room, bytes.size());
            text.append(bytes.substr(0, taken));
            bytes.remove_prefix(taken);
            if (text.size() >= kRunBytes) {
                cut_run(*l);
            }
        }
        return {};
    }

    tl::expected<void, filter::Errc> close_list(std::size_t list) {
        ListState* l = find(list);
        if (l == nullptr) {
            return tl::unexpected(filter::Errc::bad_list);
        }
        l->open = false;
        if (!l->pending.empty()) {
            hand_over({l, l->next_line, std::exchange(l->pending, {})}, /*from_full_buffer=*/false);
        }
        return compiler_.close_list(list);
    }

    void finish() {
        if (finished_) {
            return;
        }
        // Before finished_ is set: close_list() refuses lists once it is, and a list left open
        // would lose the lines still pending (the partial buffer after its last run).
        for (ListState& l : lists_) {
            if (l.open) {
                (void)close_list(l.index);
            }
        }
        finished_ = true;
        // The caller takes its share of what is queued, then waits for the workers.
        while (auto run = take(/*wait=*/false)) {
            parse_here(*run);
        }
        stop();
        if (failure_) {
            std::rethrow_exception(failure_);
        }
        (void)compiler_.merge(std::move(parts_));  // every list the parts saw was opened here
        parts_.clear();
    }

    tl::expected<std::shared_ptr<const filter::Snapshot>, filter::Errc> build() {
        finish();
        if (!used_workers_) {  // too small a load for threads: so is its sort
            return std::move(compiler_).build();
        }
        ThreadRunner runner(threads_);
        return std::move(compiler_).build(runner);
    }

    [[nodiscard]] unsigned threads() const noexcept { return threads_; }
    [[nodiscard]] bool started_threads() const noexcept { return used_workers_; }
    [[nodiscard]] const std::vector<std::size_t>& runs_per_thread() const noexcept { return runs_; }

private:
    static constexpr std::size_t kRunsQueuedPerThread = 1;

    ListState* find(std::size_t list) noexcept {
        if (finished_) {
            return nullptr;
        }
        for (ListState& l : lists_) {
            if (l.index == list && l.open) {
                return &l;
            }
        }
        return nullptr;
    }

    /// Hands over the whole lines of a list's full buffer; the partial line after them starts
    /// the next buffer. A buffer without a newline is one long line so far, and keeps growing
    /// until it ends (the parser then decides what it is).
    void cut_run(ListState& l) {
        const std::size_t last_newline = l.pending.rfind('\n');
        if (last_newline == std::string::npos) {
            return;
        }
        std::string next = spare_buffer();
        next.assign(l.pending, last_newline + 1);
        l.pending.resize(last_newline + 1);
        Run run{&l, l.next_line, std::exchange(l.pending, std::move(next))};
        l.next_line += newlines_in(run.text);
        hand_over(std::move(run), /*from_full_buffer=*/true);
    }

    static void parse(filter::Compiler::Part& part, const Run& run) {
        part.parse(run.list->index, run.list->spec, run.first_line, run.text);
    }
    /// Parses a run on the caller's thread.
    void parse_here(Run& run) {
        parse(parts_[0], run);
        ++runs_[0];
        give_back(std::move(run.text));
    }

    /// A buffer for a run's text, with the capacity of one if any was given back: runs reuse
    /// a few buffers, no more than can be in use at once, instead of a malloc each.
    std::string spare_buffer() {
        const std::lock_guard lock(mutex_);
        if (spare_.empty()) {
            return {};
        }
        std::string text = std::move(spare_.back());
        spare_.pop_back();
        return text;
    }
    void give_back(std::string&& text) {
        text.clear();
        const std::lock_guard lock(mutex_);
        // As many as can be in use at once: queued, being parsed, being filled.
        if (spare_.size() < (kRunsQueuedPerThread + 1) * threads_ + 1) {
            spare_.push_back(std::move(text));
        }
    }

    /// Queues a run for the workers, starting them for the first run cut from a full buffer
    /// (a load of at least a run's text); parses it on the caller's thread when the queue is
    /// full or the load is too small for threads. (Not the run's own size: a run cut at the last
    /// newline of a full buffer is shorter than kRunBytes but for the rare buffer that ends one
    /// line exactly, so a test of its size started the workers only after a random number of
    /// runs, 14 ms into a 1,000,000-line load, or never for a list of a few hundred KiB.)
    void hand_over(Run run, bool from_full_buffer) {
        if (threads_ > 1 && (!workers_.empty() || from_full_buffer)) {
            if (workers_.empty()) {
                start_workers();
            }
            const std::lock_guard lock(mutex_);
            if (queue_.size() < kRunsQueuedPerThread * threads_) {
                queue_.push_back(std::move(run));
                has_run_.notify_one();
                return;
            }
        }
        parse_here(run);
    }

    void start_workers() {
        used_workers_ = true;
        workers_.reserve(threads_ - 1);
        try {
            for (unsigned i = 1; i < threads_; ++i) {
                workers_.emplace_back([this, i] { work(parts_[i], runs_[i]); });
            }
        } catch (const std::system_error&) {
            // No more threads to be had (a process or cgroup limit): the ones started share the
            // work with the caller, or the caller does it all.
            threads_ = static_cast<unsigned>(workers_.size()) + 1;
        }
    }

    /// The next queued run; when `wait`, blocks until there is one or the load stops.
    std::optional<Run> take(bool wait) {
        std::unique_lock lock(mutex_);
        if (wait) {
            has_run_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        }
        if (queue_.empty()) {
            return std::nullopt;
        }
        Run run = std::move(queue_.front());
        queue_.pop_front();
        return run;
    }

    /// A worker's loop; `runs` is its own counter, read once it is joined.
    void work(filter::Compiler::Part& part, std::size_t& runs) {
        while (auto run = take(/*wait=*/true)) {
            try {
                parse(part, *run);
                ++runs;
                give_back(std::move(run->text));
            } catch (...) {
                const std::lock_guard lock(mutex_);
                if (!failure_) {
                    failure_ = std::current_exception();
                }
                return;  // the other threads empty the queue; finish() rethrows
            }
        }
    }

    void stop() noexcept {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        has_run_.notify_all();
        workers_.clear();  // joins each
    }

    filter::Compiler& compiler_;
    unsigned threads_;
    std::deque<ListState> lists_;
    std::vector<filter::Compiler::Part> parts_;  ///< [0] the caller's, [i] worker i's
    std::vector<std::size_t> runs_;              ///< runs parsed, by the same index

    std::mutex mutex_;
    std::condition_variable has_run_;
    std::deque<Run> queue_;
    std::vector<std::string> spare_;  ///< buffers of runs parsed, for the next runs
    bool stopping_ = false;
    bool finished_ = false;
    bool used_workers_ = false;  ///< a run cut from a full buffer started the workers
    std::exception_ptr failure_;
    std::vector<std::jthread> workers_;
};

ParallelLoad::ParallelLoad(filter::Compiler& compiler, unsigned threads)
    : state_(std::make_unique<State>(compiler, threads == 0 ? default_threads() : threads)) {}

unsigned ParallelLoad::default_threads() noexcept { return std::min(usable_cores(), kMaxThreads); }

ParallelLoad::~ParallelLoad() = default;

tl::expected<std::size_t, filter::Errc> ParallelLoad::open_list(filter::ListSpec spec) {
    return state_->open_list(std::move(spec));
}

tl::expected<void, filter::Errc> ParallelLoad::feed(std::size_t list, std::string_view bytes) {
    return state_->feed(list, bytes);
}

tl::expected<void, filter::Errc> ParallelLoad::close_list(std::size_t list) {
    return state_->close_list(list);
}

tl::expected<std::size_t, filter::Errc> ParallelLoad::add_text(filter::ListSpec spec,
                                                               std::string_view text) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    for (std::size_t at = 0; at < text.size(); at += kRunBytes) {
        (void)feed(*list, text.substr(at, kRunBytes));
    }
    (void)close_list(*list);
    return list;
}

tl::expected<std::size_t, filter::Errc> ParallelLoad::add_stream(filter::ListSpec spec,
                                                                 std::istream& in) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    filter::read_chunks(in, [&](std::string_view chunk) { (void)feed(*list, chunk); });
    (void)close_list(*list);
    return list;
}

void ParallelLoad::finish() { state_->finish(); }

tl::expected<std::shared_ptr<const filter::Snapshot>, filter::Errc> ParallelLoad::build() {
    return state_->build();
}

unsigned ParallelLoad::threads() const noexcept { return state_->threads(); }

bool ParallelLoad::started_threads() const noexcept { return state_->started_threads(); }

const std::vector<std::size_t>& ParallelLoad::runs_per_thread() const noexcept {
    return state_->runs_per_thread();
}

}  // namespace moat::lists
