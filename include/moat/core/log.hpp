// The daemon's log lines: moat::log::info("{} rules loaded", n) and its siblings, for layers 4
// and up (cmake/check_layering.py keeps it there, as it keeps spdlog). The app sets up where the
// lines go (src/app/logging.cpp); behind this header is spdlog's default logger.
//
// Why not call spdlog directly: its log functions are templates that instantiate fmt's whole
// formatter (integer, float and padding writers, the format-string parser) in every file that
// logs: about 5 s per such file under the sanitizers and 3 s at -O2 (the 20 files it changed:
// 305 -> 207 CPU s under ASan, 173 -> 112 s for aarch64). Here a call instantiates only the
// type erasure of its arguments; the formatting is libfmt's compiled vformat, in one place
// (src/core/log.cpp). The format string is still checked at compile time.
#pragma once

#include <fmt/core.h>

namespace moat::log {

enum class Level : unsigned char { debug, info, warn, error };

// True when a line of this level would be written: for building an expensive argument only
// when it is needed. The functions below check it themselves.
[[nodiscard]] bool enabled(Level level) noexcept;

// Formats and writes one line. A format error at run time (a width taken from an argument)
// writes the format string and the error instead of throwing.
void write(Level level, fmt::string_view format, fmt::format_args args) noexcept;

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::debug)) {
        write(Level::debug, format, fmt::make_format_args(args...));
    }
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::info)) {
        write(Level::info, format, fmt::make_format_args(args...));
    }
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::warn)) {
        write(Level::warn, format, fmt::make_format_args(args...));
    }
}

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::error)) {
        write(Level::error, format, fmt::make_format_args(args...));
    }
}

}  // namespace moat::log
