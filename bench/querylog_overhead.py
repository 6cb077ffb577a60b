#!/usr/bin/env python3
"""What the query log costs the daemon at full load: dnsmoat with [querylog] on and off, side by
side, interleaved, under dnsperf.

Both runs answer the same 1,000 names locally (a hosts file) so the query path is the whole
cost; each repetition runs dnsperf for --seconds against one and then the other. Reported: the
median queries per second, and the daemon's CPU time per query (all its threads: the log
writer's work counts), from /proc/PID/stat. Loopback only.

  bench/querylog_overhead.py --binary build/release/src/app/dnsmoat --seconds 10 --reps 3
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import local_daemon


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(port: int, queries: Path, seconds: int) -> float:
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                          "-l", str(seconds), "-c", "8", "-q", "200"],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    return float(re.search(r"Queries per second:\s+([\d.]+)", out).group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"log on": [], "log off": []}
    with tempfile.TemporaryDirectory(prefix="moat-logcost-") as tmp:
        work = Path(tmp)
        queries = local_daemon.write_inputs(work)
        daemons = {"log on": local_daemon.start(args.binary, work, "on",
                                                f'path = "{work / "on.db"}"'),
                   "log off": local_daemon.start(args.binary, work, "off", "enabled = false")}
        try:
            for rep in range(args.reps):
                order = list(daemons) if rep % 2 == 0 else list(reversed(daemons))
                for name in order:
                    proc, port = daemons[name]
                    cpu0 = cpu_seconds(proc.pid)
                    qps = load(port, queries, args.seconds)
                    cpu = cpu_seconds(proc.pid) - cpu0
                    results[name].append((qps, cpu / (qps * args.seconds) * 1e6))
        finally:
            for proc, _ in daemons.values():
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    print("| dnsmoat | qps (median) | CPU µs per query (median) |\n|---|---|---|")
    for name, rows in results.items():
        print(f"| {name} | {statistics.median(r[0] for r in rows):,.0f} | "
              f"{statistics.median(r[1] for r in rows):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
