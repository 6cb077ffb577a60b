// Turns lists into one immutable Snapshot.
//
//   Compiler c;
//   auto list = c.open_list({.id = 1, .name = "ads.txt"});   // index of the list
//   c.feed(*list, chunk1); c.feed(*list, chunk2);            // any chunking, e.g. a download
//   c.close_list(*list);                                      // flushes the last line
//   auto snapshot = std::move(c).build();                     // shared_ptr<const Snapshot>
//
// Lines are parsed as they arrive (line_parser.hpp) and only their rules are kept (13 bytes per
// name rule until build(), which sorts them in place), so the raw text of a list is never held
// whole. Bad lines are counted in the list's ListStats and never stop a load; build() fails only
// when the compiled form cannot be made (too many lists, RE2 out of its memory budget), and then
// the caller keeps publishing the snapshot it has. Not thread-safe: one compiler per rebuild, on
// one thread.
//
// Parsing is most of a compile, and it can be spread over threads the caller owns (this module
// starts none): each thread fills a Compiler::Part with runs of whole lines, and merge() adds the
// parts to the compiler before build(). The snapshot is the same however the lines were spread:
// the name tables are sorted by name, then list, then line, and the regex rules by list and line.
// lists/parallel_load.hpp does this for the daemon.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "moat/filter/filter_error.hpp"
#include "moat/filter/list.hpp"
#include "moat/filter/list_scan.hpp"
#include "moat/filter/name_hash_set.hpp"
#include "moat/filter/snapshot.hpp"
#include "moat/filter/task_runner.hpp"

namespace moat::filter {

struct CompileOptions {
    /// Keep each name rule's line number (4 bytes per rule) so verdicts can cite it.
    bool keep_line_numbers = true;
};

struct RuleTables;

class Compiler {
public:
    static constexpr std::size_t kMaxLists = std::size_t{NameHashSet::kMaxList} + 1;

    class Part;

    explicit Compiler(CompileOptions options = {});
    Compiler(const Compiler&) = delete;
    Compiler& operator=(const Compiler&) = delete;
    Compiler(Compiler&&) noexcept;
    Compiler& operator=(Compiler&&) noexcept;
    ~Compiler();

    /// Starts a list; returns its index (the order of lists in the snapshot).
    tl::expected<std::size_t, Errc> open_list(ListSpec spec);
    /// Parses the complete lines in `bytes`; a partial last line waits for the next chunk.
    tl::expected<void, Errc> feed(std::size_t list, std::string_view bytes);
    /// Parses the pending partial line, if any, and closes the list.
    tl::expected<void, Errc> close_list(std::size_t list);

    /// open_list + feed + close_list over a whole text.
    tl::expected<std::size_t, Errc> add_text(ListSpec spec, std::string_view text);
    /// open_list + feed in 64 KiB chunks + close_list. A read error ends the list where it is.
    tl::expected<std::size_t, Errc> add_stream(ListSpec spec, std::istream& in);

    /// An empty part for another thread to parse lines into; see Part.
    [[nodiscard]] Part part() const;
    /// Adds the parts' rules and counts to this compiler's, all at once: their tables are put
    /// together by moving pages, not copying (a second merge into the same compiler copies).
    /// The parts are spent. Every list
    /// a part parsed lines of must have been opened here (else Errc::bad_list and nothing is
    /// added). Throws std::bad_alloc, after which the compiler is not to be built.
    tl::expected<void, Errc> merge(std::vector<Part> parts);

    /// A list's counts so far: the lines fed here and those of the parts merged.
    [[nodiscard]] const ListStats& stats(std::size_t list) const noexcept;

    /// Builds the snapshot; the compiler is spent afterwards.
    tl::expected<std::shared_ptr<const Snapshot>, Errc> build() &&;
    /// The same, its four tables built as tasks of `runner` (at once, on threads the caller
    /// owns). The snapshot is the same but for the numbering of sets of lists.
    tl::expected<std::shared_ptr<const Snapshot>, Errc> build(TaskRunner& runner) &&;

private:
    struct OpenList {
        ListInfo info;
        LineSplitter lines;
        bool open = true;
    };
    void parse(std::size_t list, std::string_view line);

    CompileOptions options_;
    std::vector<OpenList> lists_;
    std::unique_ptr<RuleTables> tables_;
};

/// Lines of the compiler's lists parsed apart from it: a part touches neither its compiler nor
/// other parts, so each thread of a parallel load fills its own while the compiler goes on
/// opening lists. Lines may be spread over parts in any runs and any order; merge() brings them
/// together.
class Compiler::Part {
public:
    Part(const Part&) = delete;
    Part& operator=(const Part&) = delete;
    Part(Part&&) noexcept;
    Part& operator=(Part&&) noexcept;
    ~Part();

    /// Parses `text`, whole lines of list `list` (opened in the compiler with `spec`): split at
    /// '\n', a last line without one is a line too, and the first is line `first_line` of the
    /// list (1-based, as verdicts and reports cite it). Throws std::bad_alloc.
    void parse(std::size_t list, const ListSpec& spec, std::uint64_t first_line,
               std::string_view text);

private:
    friend class Compiler;
    explicit Part(bool keep_line_numbers);

    std::unique_ptr<RuleTables> tables_;
    std::vector<ListStats> stats_;  ///< by list index, as far as this part has seen lists
};

}  // namespace moat::filter
