// `dnsmoat run`: builds every module from the config, serves until SIGTERM, reloads on SIGHUP,
// refreshes the downloaded lists on SIGUSR1 (and on SIGHUP).
#pragma once

#include "launch.hpp"

namespace moat::app {

/// Runs the daemon; returns the process exit status (0 after SIGTERM, 78 for a bad config,
/// 69 when a listen address cannot be bound).
int run_daemon(const Launch& launch);

}  // namespace moat::app
