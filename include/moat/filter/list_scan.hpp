// Reading a list's text line by line, and counting what it holds without keeping its rules.
//
// LineSplitter turns chunks of any size (a file read, a download) into whole lines, carrying a
// partial last line to the next chunk; record_line() books a line's outcome in ListStats. Both
// are shared by the Compiler and by scan_list(), so a list scanned before it is installed counts
// exactly what compiling it will count. scan_list() keeps nothing but the counters: it checks a
// downloaded list (empty? shrunk?) before the download replaces the last good copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <utility>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"

namespace moat::filter {

class LineSplitter {
public:
    /// Calls `on_line(std::string_view)` for every complete line in `bytes` (newline removed).
    template <class F>
    void feed(std::string_view bytes, F&& on_line) {
        while (!bytes.empty()) {
            const std::size_t nl = bytes.find('\n');
            if (nl == std::string_view::npos) {
                pending_.append(bytes);
                return;
            }
            if (pending_.empty()) {
                on_line(bytes.substr(0, nl));
            } else {
                pending_.append(bytes.substr(0, nl));
                const std::string line = std::exchange(pending_, {});
                on_line(std::string_view(line));
            }
            bytes.remove_prefix(nl + 1);
        }
    }

    /// Hands over the last line when the text did not end with a newline.
    template <class F>
    void finish(F&& on_line) {
        if (!pending_.empty()) {
            const std::string line = std::exchange(pending_, {});
            on_line(std::string_view(line));
        }
    }

private:
    std::string pending_;  ///< a partial line carried between feed() calls
};

/// Calls `on_chunk(std::string_view)` with each read of up to 64 KiB from `in`, until its end;
/// a read error ends it where it is. How every list file is read (compiler, scan, parallel load).
template <class F>
void read_chunks(std::istream& in, F&& on_chunk) {
    std::string chunk(std::size_t{64} * 1024, '\0');
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) {
            break;
        }
        on_chunk(std::string_view(chunk.data(), got));
    }
}

/// Books one parsed line (already counted in `stats.lines`) by its outcome; an invalid line is
/// remembered with its `number` if it is among the first ListStats::kMaxReportedInvalid by
/// number (in the order met; merging parts sorts them).
void record_line(ListStats& stats, LineOutcome outcome, std::uint64_t number,
                 std::string_view line);

/// Reads `in` to its end and returns what compiling it as `format` would count. Regex rules are
/// checked with the compiler's RE2 options; nothing else is kept.
[[nodiscard]] ListStats scan_list(std::istream& in, ListFormat format, bool include_subdomains);

}  // namespace moat::filter
