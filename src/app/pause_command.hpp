// `dnsmoat pause DURATION [--group NAME]` and `dnsmoat resume [--group NAME]`: ask the running
// daemon, through its control socket, to pause blocking or to end a pause.
#pragma once

#include <string>

#include "daemon.hpp"

namespace moat::app {

/// `duration` empty: resume. `socket` empty: the config's [server] control_socket. Prints the
/// daemon's reply; returns 0 when it says ok, 1 when not, 78 for a bad config or duration.
int run_pause(const Launch& launch, const std::string& socket, const std::string& duration,
              const std::string& group);

}  // namespace moat::app
