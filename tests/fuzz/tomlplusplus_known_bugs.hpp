// Five bugs of toml++ 3.3.0 (Debian 12's libtomlplusplus-dev) that any TOML text can reach, and
// the test fuzz_config uses to skip the texts that hit them, so the fuzzer keeps finding new things
// instead of these again. 1 and 2 are fixed upstream, 3 to 5 not reported. The loader refuses
// bug 2's texts itself; 1, 3, 4 and 5 are assertions, reached only in builds without NDEBUG
// (docs/security.md, "Fuzzing"). Remove this file once the loader rejects such
// texts itself or toml++ is new enough.
//
// 1. parse_key() asserts (TOML_ASSERT_ASSUME) that a key starts with a key character or a quote,
//    but parse_table_header() calls it on whatever follows `[` or `[[`: `[,`, `[[=`, `[` at
//    the end of a line. A build without NDEBUG aborts; with NDEBUG, GCC ignores the assumption
//    and reports a syntax error, Clang is told it holds (undefined behaviour).
//    marzer/tomlplusplus PR #301. Corpus: corpus/fuzz_config/toml_header_without_key_asserts.
// 2. is_non_ascii_horizontal_whitespace() reaches TOML_UNREACHABLE (__builtin_unreachable with
//    NDEBUG: undefined behaviour) for most code points in U+00A1..U+0499, U+2C5E..U+3057 and
//    U+FB26..U+FEFE, e.g. `[café]` or `é = 1` (a non-ASCII letter in a bare key).
//    marzer/tomlplusplus issues #190 and #295, PR #305. The loader now refuses non-ASCII text
//    outside strings and comments first (src/config/toml_guard.hpp), so this one is no longer
//    reached or skipped. Corpus: corpus/fuzz_config/toml_bare_key_non_ascii_unreachable.
// 3. parse_value() asserts (TOML_ASSERT_ASSUME) that it does not start at a value terminator,
//    but parse_array() calls it on a `}` where a value or `]` should come: `a = [}]`,
//    `a = [1, }`. Aborts without NDEBUG, as 1. Not found in the upstream tracker.
//    Corpus: corpus/fuzz_config/toml_array_closed_by_brace_asserts.
// 4. parse_time() asserts (TOML_ASSERT_ASSUME) that it starts at a digit, but parse_date_time()
//    calls it on whatever follows the `T` of a date: `a = 1979-05-27Tx7:32:00`. Aborts without
//    NDEBUG, as 1. Not found in the upstream tracker.
//    Corpus: corpus/fuzz_config/toml_date_time_without_time_asserts.
// 5. parse_value()'s look-ahead asserts it is not at a value terminator when a date is followed
//    by a space and a single digit: `a = 1979-05-27 1` and a line break (or any terminator). Aborts
//    without NDEBUG, as 1. Not found in the upstream tracker. Corpus:
//    corpus/fuzz_config/toml_date_space_digit_asserts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace moat::fuzz {

constexpr bool is_toml_key_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '"' || c == '\'';
}

/// Bug 1: a line `[` or `[[` (blanks around) followed by a character that cannot start a key.
inline bool has_table_header_without_key(std::string_view text) {
    constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";  // toml++ skips it
    if (text.starts_with(kByteOrderMark)) {
        text.remove_prefix(kByteOrderMark.size());
    }
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end + 1 - at);  // with its newline, if any
        at = end + 1;
        const auto skip_blanks = [&line] {
            const bool had = !line.empty() && (line[0] == ' ' || line[0] == '\t');
            line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
            return had;
        };
        (void)skip_blanks();
        if (line.empty() || line[0] != '[') {
            continue;
        }
        line.remove_prefix(1);
        if (!skip_blanks() && !line.empty() && line[0] == '[') {
            line.remove_prefix(1);
            (void)skip_blanks();
        }
        if (!line.empty() && line[0] != ']' && !is_toml_key_start(line[0])) {
            return true;
        }
    }
    return false;
}

/// Bug 3: a `}` where an array expects a value: after `[` or `,`, with only blanks, line breaks
/// and comments between (strings are not told apart: a few more texts are skipped than must be).
inline bool has_brace_where_array_value_expected(std::string_view text) {
    bool expect_value = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '[' || c == ',') {
            expect_value = true;
        } else if (c == '#') {
            i = std::min(text.find('\n', i), text.size());
        } else if (c == '}' && expect_value) {
            return true;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            expect_value = false;
        }
    }
    return false;
}

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Bug 4: `-DD` then `T` or `t` then anything but a digit (the end of a date, no time after it).
inline bool has_date_time_without_time(std::string_view text) {
    for (std::size_t i = 3; i + 1 < text.size(); ++i) {
        if ((text[i] == 'T' || text[i] == 't') && text[i - 3] == '-' && is_digit(text[i - 2]) &&
            is_digit(text[i - 1]) && !is_digit(text[i + 1])) {
            return true;
        }
    }
    return false;
}

/// What toml++ ends a value at: whitespace (with \v, \f and the non-ASCII spaces: any byte from
/// 0x80 counts, to be safe), `]`, `}`, `,`, `#`.
constexpr bool is_value_terminator(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == ',' || c == ']' || c == '}' || c == '#' ||
           static_cast<unsigned char>(c) >= 0x80;
}

/// Bug 5: ten characters shaped like a date (`D???-??-??`), a space, one digit, a terminator.
inline bool has_date_space_digit(std::string_view text) {
    constexpr std::size_t kDate = 10;
    for (std::size_t i = kDate; i + 2 < text.size(); ++i) {
        if (text[i] == ' ' && is_digit(text[i + 1]) && is_value_terminator(text[i + 2]) &&
            is_digit(text[i - kDate]) && text[i - kDate + 4] == '-' && text[i - kDate + 7] == '-') {
            return true;
        }
    }
    return false;
}

inline bool hits_known_tomlplusplus_bug(std::string_view text) {
    // Bug 2 is not skipped: src/config/toml_guard.cpp refuses those texts before toml++ sees
    // them, and the fuzzer checks that it does.
    return has_table_header_without_key(text) || has_brace_where_array_value_expected(text) ||
           has_date_time_without_time(text) || has_date_space_digit(text);
}

}  // namespace moat::fuzz
