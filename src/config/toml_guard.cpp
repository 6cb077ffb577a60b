#include "toml_guard.hpp"

namespace moat::config::detail {
namespace {

/// Skips the string that opens at `at` (a quote: basic "...", literal '...', or their
/// multi-line forms with three quotes), counting the line breaks inside it into `line`.
/// Returns the index after its closing quotes (or the end of the text, or of the line for an
/// unterminated single-line string: toml++ reports that error itself).
std::size_t skip_string(std::string_view text, std::size_t at, std::uint32_t& line) noexcept {
    const char quote = text[at];
    const bool basic = quote == '"';
    const bool multi = text.substr(at, 3) == std::string_view(basic ? R"(""")" : "'''");
    const std::string_view close = multi ? text.substr(at, 3) : text.substr(at, 1);
    std::size_t i = at + close.size();
    while (i < text.size()) {
        if (text[i] == '\n') {
            if (!multi) {
                return i;
            }
            ++line;
        } else if (basic && text[i] == '\\' && i + 1 < text.size()) {
            ++i;  // an escaped character (a quote, or the line break of a line continuation)
            if (text[i] == '\n') {
                ++line;
            }
        } else if (text.substr(i, close.size()) == close) {
            return i + close.size();
        }
        ++i;
    }
    return i;
}

}  // namespace

std::optional<std::uint32_t> non_ascii_outside_quotes(std::string_view text) noexcept {
    constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    std::size_t i = text.starts_with(kByteOrderMark) ? kByteOrderMark.size() : 0;
    std::uint32_t line = 1;
    // A quote opens a string only where TOML lets one begin: first on its line (a key), or after
    // `=`, `[`, `,`, `{` or `.` (a value, an element, a key or a key's next part). Anywhere else
    // toml++ does not read a string either (`1979-05-27T07:32"""...` is a date followed by
    // rubbish, and toml++ asked whether the next non-ASCII character was whitespace), so the
    // text after such a quote is checked like any other.
    bool line_start = true;
    char last = '\n';  // the last character outside strings, comments and blanks
    while (i < text.size()) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            ++i;
            line_start = true;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            ++i;
        } else if (c == '#') {
            const std::size_t end = text.find('\n', i);
            i = end == std::string_view::npos ? text.size() : end;
        } else if ((c == '"' || c == '\'') &&
                   (line_start || std::string_view("=[,{.").find(last) != std::string_view::npos)) {
            i = skip_string(text, i, line);
            last = c;
            line_start = false;
        } else if (static_cast<unsigned char>(c) >= 0x80) {
            return line;
        } else {
            last = c;
            line_start = false;
            ++i;
        }
    }
    return std::nullopt;
}

}  // namespace moat::config::detail
