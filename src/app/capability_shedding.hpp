// Giving up CAP_NET_BIND_SERVICE without capset(2). dnsmoat.service runs dnsmoat as its own user
// with that one capability (ambient), and its system call filter leaves out capset, the only
// call that could clear it. So the daemon binds its DNS sockets first, clears the ambient set
// (prctl, which the filter allows) and runs its own binary again, handing the sockets over by
// the socket-activation protocol (LISTEN_FDS). A program without file capabilities started by
// an ordinary user keeps no capability across exec, so the new image has none at all.
#pragma once

#include "moat/config/config.hpp"

namespace moat::app {

/// When this process is an ordinary user's holding CAP_NET_BIND_SERVICE and was given no
/// sockets: binds every DNS listener of `config` (plain DNS over UDP and TCP, DoT, DoH, plain
/// DoH) and execs itself with `argv`; does not return then. Returns when there is nothing to
/// do, or after logging why it could not (a bind error, which the normal start reports again,
/// or a failed exec); the daemon then starts as it would have.
void shed_capabilities_by_reexec(const config::Config& config, char** argv);

/// "(socket from systemd)", or what a socket handed over by shed_capabilities_by_reexec() is.
[[nodiscard]] const char* handed_over_by();

}  // namespace moat::app
