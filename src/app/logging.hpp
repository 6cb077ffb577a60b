// spdlog set up for a daemon: to stderr, with timestamps unless journald (JOURNAL_STREAM) adds
// its own.
#pragma once

#include "moat/config/config.hpp"

namespace moat::app {

void setup_logging(config::LogLevel level);
void set_log_level(config::LogLevel level);

}  // namespace moat::app
