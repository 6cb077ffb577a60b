#!/usr/bin/env bash
# Build dnsmoat (release preset: -O3 + LTO) and run it. Installs what it needs on Debian 12.
#
#   scripts/run.sh [ARGS...]      ARGS go to the program that is started
#
# The daemon does not exist yet, so today this runs the wire-format benchmark
# (build/release/bench/dnsmoat-bench-wire). When src/app lands, the last block starts the daemon
# instead: exec build/release/dnsmoat --config config/dnsmoat.toml "$@".
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export MOAT_SHARED_DIR=${MOAT_SHARED_DIR:-$repo/../shared}

bash scripts/setup.sh build bench
cmake --workflow --preset release

# Until the daemon exists: the benchmark of the zero-copy wire library.
bench=build/release/bench/dnsmoat-bench-wire
if [[ ! -x "$bench" ]]; then
    echo "run.sh: $bench was not built (is Google Benchmark installed? scripts/setup.sh bench)" >&2
    exit 1
fi
exec "$bench" "$@"
