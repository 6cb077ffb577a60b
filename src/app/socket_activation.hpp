// Sockets handed over by systemd (dnsmoat.socket): sd_listen_fds(3)'s protocol, $LISTEN_PID,
// $LISTEN_FDS and $LISTEN_FDNAMES, with the descriptors from 3 up. A socket unit's
// FileDescriptorName= tells what a stream socket serves: "dot", "doh" or "doh_plain"; any other
// name (systemd's default is the unit's name) serves plain DNS over UDP or TCP.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/server/server.hpp"

namespace moat::app {

struct ActivatedSocket {
    server::InheritedSocket socket;
    std::string description;  ///< e.g. "udp 0.0.0.0:53", for the log
};

/// The sockets systemd passed to this process (none when it passed none, or passed them to
/// another process). Clears the three variables so nothing started later sees them. The error
/// names a descriptor that is not an IPv4 or IPv6 socket, or a datagram socket named for
/// DoT or DoH.
tl::expected<std::vector<ActivatedSocket>, std::string> sockets_from_systemd();

}  // namespace moat::app
