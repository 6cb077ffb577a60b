// Parses one line of a list (hosts, plain domains, AdBlock DNS syntax, Pi-hole regex) into rules.
//
// A line yields zero or more rules, handed to a RuleSink as they are found; the names passed are
// normalised (lower-case, no trailing dot, validated as DNS names) and live in the line's text
// or a buffer of the parser's stack frame, so a sink that keeps one must copy it. The parser holds
// no state between lines, so lists can be fed from any source (file, download) in chunks. Formats
// and their exact semantics are documented in docs/lists.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "moat/filter/list.hpp"

namespace moat::filter {

/// Whether a name rule covers only the name or also every name below it.
enum class RuleMatch : std::uint8_t { exact, subtree };

struct NameRule {
    std::string_view name;  ///< lower-case, no trailing dot, valid DNS name
    RuleMatch match = RuleMatch::exact;
    bool exception = false;  ///< AdBlock `@@`: allows, whatever the list's kind
    bool important = false;  ///< AdBlock `$important`
    /// hash_dotted(name), the key of the filter's tables, computed in the pass that normalised
    /// the name (normalize_name()).
    std::uint64_t hash = 0;
};

struct RegexRule {
    std::string_view pattern;  ///< RE2 syntax, matched against the lower-case dotted name
    bool exception = false;
    bool important = false;
};

/// Receives the rules of a line.
class RuleSink {
public:
    RuleSink() = default;
    RuleSink(const RuleSink&) = delete;
    RuleSink& operator=(const RuleSink&) = delete;
    virtual ~RuleSink() = default;

    virtual void on_name(const NameRule& rule) = 0;
    /// Returns false when the pattern is not a valid regex (the line then counts as invalid).
    virtual bool on_regex(const RegexRule& rule) = 0;
    /// A host name deliberately ignored (localhost and friends in hosts files).
    virtual void on_skipped() = 0;
};

/// What a line was, as a whole.
enum class LineOutcome : std::uint8_t {
    rules,        ///< at least one rule (or skipped name) was given to the sink
    comment,      ///< blank, comment, or header line
    unsupported,  ///< valid AdBlock syntax that a DNS filter does not apply ($modifiers, ...)
    invalid,      ///< could not be parsed (a hosts line may still have given some rules)
};

/// Parses `line` (without its newline; a trailing '\r' is ignored) as `format`.
/// `include_subdomains` is the list's override for entries whose syntax does not say.
LineOutcome parse_line(std::string_view line, ListFormat format, bool include_subdomains,
                       RuleSink& sink);

/// The format auto-detection would pick for `line` (already trimmed, not a comment).
[[nodiscard]] ListFormat detect_format(std::string_view line) noexcept;

/// A normalised name and its hash.
struct NormalizedName {
    std::string_view text;   ///< lower-case, no trailing dot
    std::uint64_t hash = 0;  ///< hash_dotted(text) (name_hash.hpp)
};

/// Normalises a domain name: lower-cases, drops one trailing dot, checks characters (letters,
/// digits, '-', '_') and lengths (wire::Name::from_text), and hashes it from the label
/// boundaries that one pass found. The result's text is a view into `text` when that was
/// lower-case already, else into `buf`. Empty on failure.
[[nodiscard]] std::optional<NormalizedName> normalize_name(std::string_view text,
                                                           std::array<char, 256>& buf) noexcept;

}  // namespace moat::filter
