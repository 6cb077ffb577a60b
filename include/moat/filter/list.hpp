// What a list is (id, name, block or allow, format, subdomain override) and what loading it found
// (entries, skipped and invalid lines with their line numbers).
//
// Plain value types: a ListSpec is given to the Compiler, a ListStats comes back per list. Both
// own their strings; nothing here is used on the query path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moat::filter {

/// The syntax of a list's lines. `auto_detect` decides per line (see docs/lists.md).
enum class ListFormat : std::uint8_t { auto_detect, hosts, domains, adblock, regex };

/// Whether a list's rules block names or allow them. AdBlock `@@` rules allow in either kind.
enum class ListKind : std::uint8_t { block, allow };

struct ListSpec {
    std::uint32_t id = 0;  ///< caller's identifier, reported back in verdicts
    std::string name;      ///< human-readable name (file or URL), for reports
    ListKind kind = ListKind::block;
    ListFormat format = ListFormat::auto_detect;
    /// When true, entries whose syntax does not say (hosts names, plain domains, bare AdBlock
    /// names) mean the name and all its subdomains, as hagezi's `*-onlydomains` files intend.
    bool entries_include_subdomains = false;
};

/// A line that failed to parse: its 1-based number and its text (truncated to 200 bytes).
struct InvalidLine {
    std::uint64_t line = 0;
    std::string text;

    friend bool operator==(const InvalidLine&, const InvalidLine&) = default;
};

struct ListStats {
    std::uint64_t lines = 0;        ///< lines read
    std::uint64_t entries = 0;      ///< rules taken (names and regexes, duplicates included)
    std::uint64_t comments = 0;     ///< blank and comment lines
    std::uint64_t skipped = 0;      ///< localhost-style host names deliberately ignored
    std::uint64_t unsupported = 0;  ///< AdBlock rules with modifiers or syntax we do not apply
    std::uint64_t invalid = 0;      ///< lines that could not be parsed
    std::vector<InvalidLine> first_invalid;  ///< the first kMaxReportedInvalid invalid lines

    static constexpr std::size_t kMaxReportedInvalid = 10;
};

}  // namespace moat::filter
