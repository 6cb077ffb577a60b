// TOML's bare keys (TOML 1.0: A-Z a-z 0-9 _ -, ASCII only whatever the locale), in one place for
// the code that writes keys (document.cpp, the key paths of errors) and the code that reads them
// back (toml_comments.cpp): a key written bare must read back as the same key.
#pragma once

#include <algorithm>
#include <string_view>

namespace moat::config::detail {

[[nodiscard]] constexpr bool is_bare_key_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/// Whether `key` can be written without quotes.
[[nodiscard]] constexpr bool is_bare_key(std::string_view key) noexcept {
    return !key.empty() && std::all_of(key.begin(), key.end(), is_bare_key_char);
}

}  // namespace moat::config::detail
