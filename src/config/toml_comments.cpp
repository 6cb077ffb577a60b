// Collects a TOML file's comment blocks by the line below each (toml_comments.hpp). The scan is
// line by line, with just enough of TOML's syntax to know where a line's key or header is and
// whether a value goes on over the next lines (a multi-line string, an array or inline table
// left open), so that nothing inside a value is taken for a comment or a header.
#include "moat/config/toml_comments.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toml_bare_key.hpp"

namespace moat::config {

TomlPlace TomlPlace::key(std::string_view key) const {
    TomlPlace out = *this;
    out.text_ += std::to_string(key.size());
    out.text_ += ':';
    out.text_ += key;
    return out;
}

TomlPlace TomlPlace::entry(std::size_t n) const {
    TomlPlace out = *this;
    out.text_ += '@';
    out.text_ += std::to_string(n);
    out.text_ += ';';
    return out;
}

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_start(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) {
        s.remove_prefix(1);
    }
    return s;
}

/// A dotted key at the start of `s` (bare, "basic" or 'literal' parts); `s` is left after it.
/// Empty when the key cannot be read, or holds an escape (such keys are not placed).
std::optional<std::vector<std::string>> read_key(std::string_view& s) {
    std::vector<std::string> parts;
    for (;;) {
        s = trim_start(s);
        if (s.empty()) {
            return std::nullopt;
        }
        if (s.front() == '"' || s.front() == '\'') {
            const char quote = s.front();
            const std::size_t close = s.find(quote, 1);
            if (close == std::string_view::npos) {
                return std::nullopt;
            }
            const std::string_view inside = s.substr(1, close - 1);
            if (quote == '"' && inside.find('\\') != std::string_view::npos) {
                return std::nullopt;
            }
            parts.emplace_back(inside);
            s.remove_prefix(close + 1);
        } else {
            std::size_t n = 0;
            while (n < s.size() && detail::is_bare_key_char(s[n])) {
                ++n;
            }
            if (n == 0) {
                return std::nullopt;
            }
            parts.emplace_back(s.substr(0, n));
            s.remove_prefix(n);
        }
        s = trim_start(s);
        if (s.empty() || s.front() != '.') {
            return parts;
        }
        s.remove_prefix(1);
    }
}

constexpr const char* kBasicQuotes = R"(""")";  ///< a multi-line basic string's quotes
constexpr const char* kLiteralQuotes = "'''";   ///< a multi-line literal string's quotes

/// Where the scan of a value stands at the end of a line.
struct ValueState {
    int depth = 0;                  ///< arrays and inline tables open
    const char* closing = nullptr;  ///< inside a multi-line string: its closing quotes

    [[nodiscard]] bool open() const noexcept { return depth > 0 || closing != nullptr; }
};

/// Scans one line of a value from `state`: strings, brackets, and a comment that ends the line.
void scan_value_line(std::string_view line, ValueState& state) {
    std::size_t i = 0;
    while (i < line.size()) {
        if (state.closing != nullptr) {
            const std::string_view closing = state.closing;
            if (closing == kBasicQuotes && line[i] == '\\') {
                i += 2;  // an escaped character, a quote among them
                continue;
            }
            if (line.substr(i, 3) == closing) {
                state.closing = nullptr;
                i += 3;
                while (i < line.size() && line[i] == closing[0]) {
                    ++i;  // up to two more quotes belong to the string (""""" ends it too)
                }
                continue;
            }
            ++i;
            continue;
        }
        const char c = line[i];
        if (c == '#') {
            return;
        }
        if (c == '"' || c == '\'') {
            const char* quotes = c == '"' ? kBasicQuotes : kLiteralQuotes;
            if (line.substr(i, 3) == quotes) {
                state.closing = quotes;
                i += 3;
                continue;
            }
            ++i;
            while (i < line.size() && line[i] != c) {
                i += (c == '"' && line[i] == '\\') ? 2U : 1U;
            }
            ++i;
            continue;
        }
        if (c == '[' || c == '{') {
            ++state.depth;
        } else if ((c == ']' || c == '}') && state.depth > 0) {
            --state.depth;
        }
        ++i;
    }
}

/// The places of the tables the scan is in.
class Tables {
public:
    /// A `[path]` header: the table's place.
    [[nodiscard]] TomlPlace table(const std::vector<std::string>& path) const {
        return resolve(path, false);
    }

    /// A `[[path]]` header: the new entry's place.
    TomlPlace array_entry(const std::vector<std::string>& path) {
        const TomlPlace array = resolve(path, true);
        const std::size_t n = counts_[array.text()]++;
        TomlPlace entry = array.entry(n);
        // Arrays of tables inside the previous entry are closed by the new one.
        std::erase_if(open_arrays_, [&](const auto& open) {
            return open.first.size() > path.size() &&
                   std::equal(path.begin(), path.end(), open.first.begin());
        });
        open_arrays_.insert_or_assign(path, entry);
        return entry;
    }

private:
    /// `path`'s place: the longest open array of tables it starts with (not itself when
    /// `below_only`) stands for that part of it.
    [[nodiscard]] TomlPlace resolve(const std::vector<std::string>& path, bool below_only) const {
        std::size_t best = 0;
        const TomlPlace* base = nullptr;
        for (const auto& [array, place] : open_arrays_) {
            const std::size_t limit = below_only ? path.size() - 1 : path.size();
            if (array.size() > best && array.size() <= limit &&
                std::equal(array.begin(), array.end(), path.begin())) {
                best = array.size();
                base = &place;
            }
        }
        TomlPlace out = base != nullptr ? *base : TomlPlace{};
        for (std::size_t i = best; i < path.size(); ++i) {
            out = out.key(path[i]);
        }
        return out;
    }

    std::map<std::vector<std::string>, TomlPlace> open_arrays_;
    std::map<std::string, std::size_t> counts_;
};

}  // namespace

TomlComments collect_toml_comments(std::string_view text) {
    TomlComments out;
    Tables tables;
    TomlPlace table;        // the current table's place (the root's is empty)
    bool placeable = true;  // false under a header that could not be read: its keys get no place
    ValueState value;
    std::string block;              // comment and blank lines since the last line with content
    std::size_t through_blank = 0;  // block's length through its last blank line
    bool seen_content = false;
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        const std::string_view line =
            eol == std::string_view::npos ? text : text.substr(0, eol + 1);
        text.remove_prefix(line.size());
        if (value.open()) {
            scan_value_line(line, value);
            continue;
        }
        std::string_view rest = trim_start(line);
        const bool blank = rest.empty() || rest.front() == '\n' || rest.front() == '\r';
        if (blank || rest.front() == '#') {
            block += line;
            if (block.back() != '\n') {
                block += '\n';  // the file's last line had none
            }
            through_blank = blank ? block.size() : through_blank;
            continue;
        }
        // A line with content: the block above it is its own, but the file's heading (the
        // first block through its last blank line) stays at the top whatever the change.
        if (!seen_content) {
            seen_content = true;
            out.at_start = block.substr(0, through_blank);
            block.erase(0, through_blank);
        }
        std::optional<std::string> place;
        if (rest.starts_with('[')) {
            const bool array = rest.starts_with("[[");
            rest.remove_prefix(array ? 2 : 1);
            const auto path = read_key(rest);
            placeable = path && trim_start(rest).starts_with(array ? "]]" : "]");
            if (placeable) {
                table = array ? tables.array_entry(*path) : tables.table(*path);
                place = array ? table.as_array_header() : table.as_table_header();
            }
        } else {
            const std::string_view whole = rest;
            if (const auto key = read_key(rest); key && rest.starts_with('=') && placeable) {
                TomlPlace at = table;
                for (const std::string& part : *key) {
                    at = at.key(part);
                }
                place = at.as_key_line();
            }
            // From the line's start, whether or not its key was read: the key's quotes are
            // strings to the scan, and a value left open goes on over the next lines.
            scan_value_line(whole, value);
        }
        // A header with nothing above it keeps that too (an empty block): the renderer's own
        // blank line before a table would change the file where nothing changed.
        if (place && (!block.empty() || place->front() == '[')) {
            out.above.insert_or_assign(*place, std::move(block));
        }
        block.clear();
    }
    if (seen_content) {
        out.at_end = std::move(block);
    } else {
        out.at_start = std::move(block);  // a file of comments only
    }
    return out;
}

}  // namespace moat::config
