#!/usr/bin/env python3
"""System calls per forwarded query (a cache miss): the daemon under `strace -c -f` while dnsperf
sends names never asked before through it to one knotd on 127.0.0.1 (the setup of
bench/forward_cost.py: the unit's allocator setting, the query log off). Prints strace's table
and the calls per answered query. strace slows the daemon, so its batches grow larger than
without it: the counts compare builds measured the same way, they are not a rate. Loopback only.

  bench/miss_syscalls.py --binary build/release/src/app/dnsmoat --queries 30000
  bench/miss_syscalls.py --binary build/release/src/app/dnsmoat --queries 10000 --rate 2000

With --rate, dnsperf paces the queries (its -Q): at a household's pace nothing is batched and
each miss wakes the daemon on its own. With --tcp the clients ask over TCP (dnsperf -m tcp, 8
connections, each with many queries in flight); the upstream is still asked over UDP.
"""

import argparse
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import forward_cost
import local_daemon


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--queries", type=int, default=30000)
    ap.add_argument("--rate", type=int, help="queries per second (default: saturation)")
    ap.add_argument("--tcp", action="store_true", help="clients ask over TCP (default: UDP)")
    args = ap.parse_args()
    if not shutil.which("strace"):
        sys.exit("miss_syscalls.py: strace is missing (scripts/setup.sh bench installs it)")
    with tempfile.TemporaryDirectory(prefix="moat-syscalls-") as tmp:
        work = Path(tmp)
        local_daemon.write_inputs(work)
        knot, upstream = forward_cost.start_knot(work)
        daemon = None
        try:
            daemon, port = forward_cost.start_daemon(args.binary, work, "d", upstream,
                                                     forward_cost.TUNED)
            rng = random.Random(7)
            queries = forward_cost.write_miss_names(work / "queries", args.queries, rng, "s")
            table = work / "strace.txt"
            tracer = subprocess.Popen(["strace", "-c", "-f", "-p", str(daemon.pid), "-o",
                                       str(table)], stderr=subprocess.DEVNULL)
            time.sleep(1)  # attached to every thread before the first query
            pace = ["-Q", str(args.rate)] if args.rate else []
            mode = ["-m", "tcp"] if args.tcp else []
            out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d",
                                  str(queries), "-n", "1", "-c", "8", "-q", "200", *pace, *mode],
                                 capture_output=True, text=True, timeout=600, check=True).stdout
            time.sleep(1)  # the last answers' system calls
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
            completed = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
            text = table.read_text()
            total = int(re.search(r"^100\.00\s+\S+\s+\S+\s+(\d+)", text, re.M).group(1))
        finally:
            if daemon is not None:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=30)
            knot.terminate()
            knot.wait(timeout=10)
    print(text)
    print(f"{completed} misses answered; {total} system calls: {total / completed:.2f} per miss")
    return 0


if __name__ == "__main__":
    sys.exit(main())
