// The comments of a TOML config file, kept through a change made from the dashboard or the API.
//
// A change re-renders the file from its tree (document.hpp), and no TOML library keeps comments
// through an edit. So the comment lines are collected from the old text first, each block by the
// line it sits above (a key or a table header), and the renderer writes every block back above
// the same line. The shipped config explains each key in the comment above it; a dashboard click
// must not strip that.
//
// A line's place: its table's path and its key, with an array of tables' entries told apart by
// their position in the old file ([[blocklists]] number 0, 1, ...). A block above a key the
// change removed goes with it; the renderer gives an entry of an array of tables the place of
// the old entry it continues (entry_match.hpp), so its block follows it. Comments at
// the end of a line (`mode = "null"  # ...`) and inside a value that spans lines (an array over
// several lines) are not kept.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace moat::config {

/// Where a line sits in a TOML tree, as a string that tells every place apart: each key is
/// written as `LENGTH:KEY`, each entry of an array of tables as `@N;`.
class TomlPlace {
public:
    TomlPlace() = default;
    /// This place extended by a key, or by the nth entry of an array of tables.
    [[nodiscard]] TomlPlace key(std::string_view key) const;
    [[nodiscard]] TomlPlace entry(std::size_t n) const;
    /// The place's key for a table header line (`[a]`), or an array-of-tables entry's (`[[a]]`).
    [[nodiscard]] std::string as_table_header() const { return "[" + text_; }
    [[nodiscard]] std::string as_array_header() const { return "[[" + text_; }
    /// The place's key for a key line (`a = 1`).
    [[nodiscard]] const std::string& as_key_line() const noexcept { return text_; }
    [[nodiscard]] const std::string& text() const noexcept { return text_; }

private:
    std::string text_;
};

struct TomlComments {
    /// The lines before the first table or key, through the last blank line among them: the
    /// file's own heading, written first whatever the change.
    std::string at_start;
    /// Each block of comment and blank lines, by the place of the line below it (TomlPlace's
    /// as_table_header(), as_array_header() or as_key_line()).
    std::map<std::string, std::string, std::less<>> above;
    /// The lines after the last table or key.
    std::string at_end;
};

/// The comments of `text`, a TOML file that loads. Lines it cannot place (a key with escapes in
/// quotes) lose their block, nothing else.
[[nodiscard]] TomlComments collect_toml_comments(std::string_view text);

}  // namespace moat::config
