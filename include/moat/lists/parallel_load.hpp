// Compiling lists on several threads. The caller reads each list and hands its text over in
// pieces of any size, as it would to a filter::Compiler; runs of whole lines (32 KiB) go to
// worker threads, each parsing into its own filter::Compiler::Part, and finish() merges the parts
// into the compiler, which then builds the snapshot as usual. The caller parses too whenever the
// workers are behind, so N threads keep N cores busy, and a load too small to be worth a thread
// (less than one run) starts none.
//
// Parsing is about two thirds of a compile (docs/benchmarks.md); build() then sorts the four
// tables on the same threads, each table's sort cut into pieces the threads share. The snapshot
// is the same as a compile on one thread gives, but for the numbering of sets of lists.
//
//   filter::Compiler compiler;
//   ParallelLoad load(compiler);
//   load.add_stream(spec, file);       // as many lists as there are
//   load.finish();                     // every line parsed; compiler.stats() complete
//   auto snapshot = load.build();      // the tables built on the same threads
#pragma once

#include <cstddef>
#include <istream>
#include <memory>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "moat/filter/compiler.hpp"
#include "moat/filter/filter_error.hpp"
#include "moat/filter/list.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::lists {

class ParallelLoad {
public:
    /// The most threads a load uses, however many cores there are: past this the sort that
    /// follows, on one thread, is most of the time.
    static constexpr unsigned kMaxThreads = 8;
    /// The text handed to a thread at a time.
    static constexpr std::size_t kRunBytes = std::size_t{32} * 1024;

    /// `threads`: how many threads parse, the caller's included; 0 for default_threads().
    explicit ParallelLoad(filter::Compiler& compiler, unsigned threads = 0);
    ParallelLoad(const ParallelLoad&) = delete;
    ParallelLoad& operator=(const ParallelLoad&) = delete;
    ParallelLoad(ParallelLoad&&) = delete;
    ParallelLoad& operator=(ParallelLoad&&) = delete;
    /// Stops the threads. Lines not merged by finish() are lost to the compiler.
    ~ParallelLoad();

    /// As filter::Compiler's, whose list index this is.
    tl::expected<std::size_t, filter::Errc> open_list(filter::ListSpec spec);
    /// Hands over the next piece of a list's text; whole runs of lines start being parsed.
    /// Throws std::bad_alloc (when the caller parses).
    tl::expected<void, filter::Errc> feed(std::size_t list, std::string_view bytes);
    /// Hands over the rest of the list, its last line with or without a newline.
    tl::expected<void, filter::Errc> close_list(std::size_t list);

    /// open_list + feed + close_list over a whole text.
    tl::expected<std::size_t, filter::Errc> add_text(filter::ListSpec spec, std::string_view text);
    /// open_list + feed of each 64 KiB read + close_list. A read error ends the list where it is.
    tl::expected<std::size_t, filter::Errc> add_stream(filter::ListSpec spec, std::istream& in);

    /// Closes the lists still open, waits until every line handed over is parsed and merges the
    /// threads' rules into the compiler, whose stats() then count every line. Lists can no
    /// longer be added. Rethrows what a thread threw (std::bad_alloc); the compile is then lost.
    void finish();

    /// finish(), then the compiler's snapshot, its tables built at once on as many threads as
    /// parsed (filter::Compiler::build(TaskRunner&)). The compiler is spent afterwards.
    tl::expected<std::shared_ptr<const filter::Snapshot>, filter::Errc> build();

    /// The threads a load given 0 uses: one per core this process may run on, at most
    /// kMaxThreads.
    [[nodiscard]] static unsigned default_threads() noexcept;
    /// The threads that parse, the caller's included.
    [[nodiscard]] unsigned threads() const noexcept;
    /// Whether the load has started its threads: as soon as a list hands over a run's worth of
    /// text, not for a load smaller than that.
    [[nodiscard]] bool started_threads() const noexcept;
    /// After finish(): the runs of lines each thread parsed, the caller's first.
    [[nodiscard]] const std::vector<std::size_t>& runs_per_thread() const noexcept;

private:
    class State;
    std::unique_ptr<State> state_;
};

}  // namespace moat::lists
