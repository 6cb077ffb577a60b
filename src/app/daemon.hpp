// `dnsmoat run`: builds every module from the config, serves until SIGTERM, reloads on SIGHUP,
// refreshes the downloaded lists on SIGUSR1 (and on SIGHUP).
#pragma once

#include "launch.hpp"

namespace moat::app {

/// Runs the daemon; returns the process exit status (0 after SIGTERM, 78 for a bad config,
/// 69 when a listen address cannot be bound). `argv` is the command line, for running itself
/// again without capabilities (capability_shedding.hpp).
int run_daemon(const Launch& launch, char** argv);

}  // namespace moat::app
