// `dnsmoat query NAME`: which list and rule block or allow NAME, from the compiled lists,
// without a running daemon (like `pihole -q`).
#pragma once

#include <string>

#include "daemon.hpp"

namespace moat::app {

/// Prints the verdict on stdout; returns the exit status (0, or 78 for a bad config).
int run_query(const Launch& launch, const std::string& name);

}  // namespace moat::app
