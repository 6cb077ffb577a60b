#include "logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace moat::app {

namespace {
spdlog::level::level_enum to_spdlog(config::LogLevel level) {
    switch (level) {
        case config::LogLevel::trace: return spdlog::level::trace;
        case config::LogLevel::debug: return spdlog::level::debug;
        case config::LogLevel::info: return spdlog::level::info;
        case config::LogLevel::warn: return spdlog::level::warn;
        case config::LogLevel::error: return spdlog::level::err;
    }
    return spdlog::level::info;
}
}  // namespace

void setup_logging(config::LogLevel level) {
    auto logger = spdlog::stderr_logger_mt("dnsmoat");
    // Under systemd, journald timestamps every line itself (JOURNAL_STREAM is set for services
    // whose stderr goes to the journal).
    // Read once at start, before any other thread exists.
    const bool journald =
        std::getenv("JOURNAL_STREAM") != nullptr;  // NOLINT(concurrency-mt-unsafe)
    logger->set_pattern(journald ? "%l: %v" : "%Y-%m-%d %H:%M:%S.%e %l: %v");
    spdlog::set_default_logger(logger);
    set_log_level(level);
    spdlog::flush_on(spdlog::level::trace);  // a daemon's stderr is a pipe: never hold lines
}

void set_log_level(config::LogLevel level) { spdlog::set_level(to_spdlog(level)); }

}  // namespace moat::app
