// Turns lists into one immutable Snapshot.
//
//   Compiler c;
//   auto list = c.open_list({.id = 1, .name = "ads.txt"});   // index of the list
//   c.feed(*list, chunk1); c.feed(*list, chunk2);            // any chunking, e.g. a download
//   c.close_list(*list);                                      // flushes the last line
//   auto snapshot = std::move(c).build();                     // shared_ptr<const Snapshot>
//
// Lines are parsed as they arrive (line_parser.hpp) and only their rules are kept (14 bytes per
// name rule until build(), which sorts them in place), so the raw text of a list is never held
// whole. Bad lines are counted in the list's ListStats and never stop a load; build() fails only
// when the compiled form cannot be made (too many lists, RE2 out of its memory budget), and then
// the caller keeps publishing the snapshot it has. Not thread-safe: one compiler per rebuild, on
// one thread.
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

namespace moat::filter {

struct CompileOptions {
    /// Keep each name rule's line number (4 bytes per rule) so verdicts can cite it.
    bool keep_line_numbers = true;
};

class Compiler {
public:
    static constexpr std::size_t kMaxLists = std::size_t{NameHashSet::kMaxList} + 1;

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

    [[nodiscard]] const ListStats& stats(std::size_t list) const noexcept;

    /// Builds the snapshot; the compiler is spent afterwards.
    tl::expected<std::shared_ptr<const Snapshot>, Errc> build() &&;

private:
    class Sink;
    struct OpenList {
        ListInfo info;
        LineSplitter lines;
        bool open = true;
    };
    void parse(std::size_t list, std::string_view line);

    CompileOptions options_;
    std::vector<OpenList> lists_;
    NameHashSet::Builder block_exact_;
    NameHashSet::Builder block_subtree_;
    NameHashSet::Builder allow_exact_;
    NameHashSet::Builder allow_subtree_;
    std::unique_ptr<RegexMatcher> block_regex_;
    std::unique_ptr<RegexMatcher> allow_regex_;
};

}  // namespace moat::filter
