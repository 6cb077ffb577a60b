#!/usr/bin/env bash
# Build dnsmoat (release preset: -O3 + LTO) and run the daemon. Installs what it needs on
# Debian 12.
#
#   scripts/run.sh [ARGS...]      ARGS go to `dnsmoat run`
#
# With no /etc/dnsmoat/dnsmoat.toml and no --config, dnsmoat runs on its embedded defaults:
# listening on 127.0.0.1 and ::1 port 5353, blocking with its built-in starter list, forwarding
# the rest to the default public resolver (docs/daemon.md names it). Try it from another terminal:
#   dig @127.0.0.1 -p 5353 doubleclick.net     # blocked: 0.0.0.0
#   dig @127.0.0.1 -p 5353 localhost           # local: 127.0.0.1
# Examples: scripts/run.sh --config config/dnsmoat.toml
#           scripts/run.sh --upstream 192.168.1.1 --log-level debug
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

bash scripts/setup.sh build
cmake --preset release >/dev/null
cmake --build --preset release --target dnsmoat
exec build/release/src/app/dnsmoat run "$@"
