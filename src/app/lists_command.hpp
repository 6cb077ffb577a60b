// `dnsmoat lists`: each configured list with what is known about it: entries and invalid lines,
// and for downloaded lists the last good copy, the last success and the last error, read from
// the state directory (no running daemon needed; like `pihole -g`'s summary, without updating).
#pragma once

#include "daemon.hpp"

namespace moat::app {

/// Prints the lists on stdout (as JSON with `json`); returns the exit status (0, 78 for a bad
/// config).
int run_lists(const Launch& launch, bool json);

}  // namespace moat::app
