// Reading the environment at start-up, before the daemon starts any thread (getenv and unsetenv
// are not thread-safe, hence the NOLINTs: they run on the main thread alone).
#pragma once

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace moat::app {

/// The variable's value, or nullptr when it is unset.
inline const char* env_text(const char* name) {
    return std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
}

/// The variable as a whole decimal number; nullopt when unset or not a number.
inline std::optional<long long> env_number(const char* name) {
    const char* text = env_text(name);
    if (text == nullptr) {
        return std::nullopt;
    }
    const std::string_view view(text);
    long long value = 0;
    auto [ptr, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
    if (ec != std::errc() || ptr != view.data() + view.size()) {
        return std::nullopt;
    }
    return value;
}

inline void env_set(const char* name, const char* value) {
    ::setenv(name, value, 1);  // NOLINT(concurrency-mt-unsafe)
}

inline void env_clear(const char* name) {
    ::unsetenv(name);  // NOLINT(concurrency-mt-unsafe)
}

}  // namespace moat::app
