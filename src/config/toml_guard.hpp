// What is checked of a TOML text before toml++ reads it. toml++ 3.3.0 (Debian 12) reaches
// undefined behaviour (its "unreachable" branch) when asked whether some non-ASCII characters
// are whitespace, e.g. for `[café]` or `é = 1` (marzer/tomlplusplus issues #190 and #295):
// tests/fuzz/fuzz_config found it. TOML 1.0 allows non-ASCII text only inside strings and
// comments (bare keys are ASCII, whitespace is space and tab), so refusing it anywhere else
// rejects no valid file. A string is where TOML can start one (toml_guard.cpp), not wherever a
// quote stands.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace moat::config::detail {

/// The line of the first non-ASCII byte outside strings and comments, if there is one.
[[nodiscard]] std::optional<std::uint32_t> non_ascii_outside_quotes(std::string_view text) noexcept;

}  // namespace moat::config::detail
