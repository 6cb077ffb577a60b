// The one place below the app that reaches spdlog: include/moat/core/log.hpp's lines, formatted
// by libfmt and handed to the default logger as finished text.
#include "moat/core/log.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace moat::log {

namespace {
spdlog::level::level_enum to_spdlog(Level level) noexcept {
    switch (level) {
        case Level::debug: return spdlog::level::debug;
        case Level::info: return spdlog::level::info;
        case Level::warn: return spdlog::level::warn;
        case Level::error: return spdlog::level::err;
    }
    return spdlog::level::err;
}
}  // namespace

bool enabled(Level level) noexcept { return spdlog::should_log(to_spdlog(level)); }

void write(Level level, fmt::string_view format, fmt::format_args args) noexcept {
    spdlog::logger* logger = spdlog::default_logger_raw();
    const auto spdlog_level = to_spdlog(level);
    try {
        fmt::memory_buffer line;  // on the stack up to 500 octets, as spdlog's own formatting
        fmt::vformat_to(fmt::appender(line), format, args);
        logger->log(spdlog_level, spdlog::string_view_t(line.data(), line.size()));
    } catch (const std::exception& e) {
        // The line is not lost without a word: its format string says where it came from.
        // spdlog's non-template log() catches what its sinks throw.
        try {
            fmt::memory_buffer line;
            fmt::format_to(fmt::appender(line), "log line not formatted ({}): {}", e.what(),
                           format);
            logger->log(spdlog_level, spdlog::string_view_t(line.data(), line.size()));
        } catch (const std::exception&) {  // out of memory: nothing more to be done
        }
    }
}

}  // namespace moat::log
