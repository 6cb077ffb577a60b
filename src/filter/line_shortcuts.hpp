// The shapes that nearly every line of a published list has, each parsed in one pass:
// "name" (plain domain lists), "address name" (hosts files) and "||name^" (AdBlock DNS lists).
//
// The full parser (parse_line_in_full) tells formats and shapes apart by asking each line
// several questions, each a walk over its text: comments, blanks, addresses, syntax characters,
// then the name. On these shapes every answer is known from the first character and the name
// check, so parse_line() tries them first. A shortcut that meets anything else (a second name,
// a comment, a name that is not valid) declines before it calls the sink, and the full parser
// decides; on every line it takes, its outcome and rule equal the full parser's
// (tests/unit/filter/line_shortcuts_test.cpp and the list-line fuzzer compare the two).
#pragma once

#include <optional>
#include <string_view>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/list.hpp"

namespace moat::filter {

/// Parses a trimmed, non-empty `line` when it has one of the common shapes; nullopt, with the
/// sink untouched, when it does not.
[[nodiscard]] std::optional<LineOutcome> parse_common_shape(std::string_view line,
                                                            ListFormat format,
                                                            bool include_subdomains,
                                                            RuleSink& sink);

/// parse_line() without the shortcuts: the reference they are held to.
LineOutcome parse_line_in_full(std::string_view line, ListFormat format, bool include_subdomains,
                               RuleSink& sink);

}  // namespace moat::filter
