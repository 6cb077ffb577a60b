#!/usr/bin/env python3
"""What a cache miss costs at a household's pace, dnsmoat beside dnsdist on the same upstream,
and why: besides each server's CPU time per answered query (all its threads, /proc/PID/stat) and
the latency its client saw (p50 and p99 of every answer, from dnsperf -v, as ../shared/bench
reads them), the times its threads went to sleep (voluntary context switches) and were preempted
(involuntary ones) per query, read from /proc/PID/task/*/status.

Both servers forward to one knotd on 127.0.0.1 serving a wildcard zone (bench/forward_cost.py's),
dnsmoat with the query log off and dnsdist as ../shared/bench configures it (packet cache on,
security polling off). dnsperf sends --rate names never asked before per second, so every query
is a miss and wakes the server twice: its arrival and the upstream's answer. The servers take
turns, the order alternating between repetitions. Loopback only.

  bench/paced_miss_peer.py --binary build/release/src/app/dnsmoat --reps 10

With --pin the servers run on CPU 1 and everything else (dnsperf, knotd, this script) on CPU 0,
so the scheduler cannot place the upstream or dnsperf on the server's CPU when a send wakes
them: what is left is each server's own cost per miss, wake-ups included. With --baseline
OTHER_BINARY a second dnsmoat build takes its turn too (a change against the commit before it).
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import forward_cost
import local_daemon


def thread_counts(pid: int) -> tuple[float, int, int]:
    """CPU seconds (user + system) and the voluntary and involuntary context switches, summed
    over the process's threads."""
    cpu = sum(forward_cost.cpu_seconds(pid))
    sleeps = preempted = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except FileNotFoundError:  # a thread that ended between the listing and the read
            continue
        sleeps += int(re.search(r"\nvoluntary_ctxt_switches:\s+(\d+)", status).group(1))
        preempted += int(re.search(r"nonvoluntary_ctxt_switches:\s+(\d+)", status).group(1))
    return cpu, sleeps, preempted


def dnsdist_config(work: Path, port: int, upstream: int) -> Path:
    """dnsdist's configuration, forwarding to `upstream` as ../shared/bench/dnsbench.py
    configures it (without the blocklist rule, which a miss never matches)."""
    conf = work / "dnsdist.conf"
    conf.write_text(f"""setSecurityPollSuffix("")
setLocal("127.0.0.1:{port}")
local s = newServer({{address="127.0.0.1:{upstream}", name="upstream", checkName="m.test.",
                     checkInterval=3600}})
s:setUp()
pc = newPacketCache(100000, {{maxTTL=86400, minTTL=0, temporaryFailureTTL=60, staleTTL=60}})
getPool(""):setCache(pc)
""")
    return conf


def start_dnsdist(work: Path, upstream: int) -> tuple[subprocess.Popen, int]:
    """dnsdist forwarding to `upstream` (dnsdist_config), once it answers."""
    port = local_daemon.free_port()
    conf = dnsdist_config(work, port, upstream)
    binary = shutil.which("dnsdist") or "/usr/bin/dnsdist"
    log = work / "dnsdist.stderr"
    proc = subprocess.Popen([binary, "--supervised", "--disable-syslog", "-C", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    local_daemon.wait_answering(proc, port, "x.m.test", "dnsdist", log)
    return proc, port


def paced_turn(port: int, queries: Path, seconds: int, rate: int) -> list[float]:
    """dnsperf at `rate` queries per second for `seconds`, with -v: the latency of every answer
    in ms, sorted. (-q 100 as ../shared/bench's fixed-rate runs; at this rate it never binds.)"""
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                          "-l", str(seconds), "-c", "8", "-q", "100", "-Q", str(rate), "-v"],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    # One "> RCODE NAME TYPE SECONDS" line per answer; "> T" (timeout) and "> I" lines are not.
    return sorted(float(line.rsplit(None, 1)[1]) * 1000 for line in out.splitlines()
                  if line.startswith("> ") and not line.startswith(("> T ", "> I ")))


def nearest_rank(sorted_values: list[float], share: float) -> float:
    """The percentile as ../shared/bench takes it: index int(n * share), capped at the last."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * share))]


def pin(pid: int, cpu: int) -> None:
    """Every thread of `pid` onto `cpu`."""
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--baseline", help="another dnsmoat binary, in the same turns")
    ap.add_argument("--rate", type=int, default=2000, help="queries per second (default 2000)")
    ap.add_argument("--seconds", type=int, default=8, help="seconds per turn (default 8)")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--pin", action="store_true",
                    help="servers on CPU 1, dnsperf and knotd on CPU 0")
    ap.add_argument("--knot-workers", type=int, default=1,
                    help="knotd's UDP worker threads (default 1; ../shared/bench runs 2)")
    args = ap.parse_args()
    if args.pin:
        os.sched_setaffinity(0, {0})  # this script, and so dnsperf and knotd, on CPU 0
    rng = random.Random(42)
    rows: dict[str, list[tuple[float, float, float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="moat-pacedmiss-") as tmp:
        work = Path(tmp)
        local_daemon.write_inputs(work)
        knot, upstream = forward_cost.start_knot(work, args.knot_workers)
        servers: dict[str, tuple[subprocess.Popen, int]] = {}
        try:
            builds = {"dnsmoat": args.binary}
            if args.baseline:
                builds = {f"dnsmoat {args.baseline}": args.baseline, **builds}
            for i, (name, binary) in enumerate(builds.items()):
                servers[name] = forward_cost.start_daemon(binary, work, f"d{i}", upstream,
                                                          forward_cost.TUNED)
            servers["dnsdist"] = start_dnsdist(work, upstream)
            if args.pin:
                for proc, _ in servers.values():
                    pin(proc.pid, 1)
            for rep in range(args.reps):
                order = list(servers) if rep % 2 == 0 else list(reversed(servers))
                for name in order:
                    queries = forward_cost.write_miss_names(
                        work / "queries", args.rate * (args.seconds + 1), rng)
                    proc, port = servers[name]
                    cpu0, sleeps0, pre0 = thread_counts(proc.pid)
                    latencies = paced_turn(port, queries, args.seconds, args.rate)
                    completed = len(latencies)
                    cpu1, sleeps1, pre1 = thread_counts(proc.pid)
                    row = ((cpu1 - cpu0) / completed * 1e6, (sleeps1 - sleeps0) / completed,
                           (pre1 - pre0) / completed, nearest_rank(latencies, 0.5),
                           nearest_rank(latencies, 0.99))
                    rows.setdefault(name, []).append(row)
                    print(f"rep {rep} {name}: {row[0]:.1f} µs, {row[1]:.2f} sleeps and "
                          f"{row[2]:.2f} preemptions per miss, p50 {row[3]:.3f} and p99 "
                          f"{row[4]:.3f} ms", file=sys.stderr, flush=True)
        finally:
            forward_cost.stop_all([proc for proc, _ in servers.values()], knot)
    pinned = "servers pinned to CPU 1" if args.pin else "not pinned"
    print(f"| {args.rate} misses per second, {args.reps} turns each, {pinned} | CPU µs per miss: "
          "median (range) | sleeps per miss | preemptions per miss | p50 ms | p99 ms: median "
          "(range) |\n|---|---|---|---|---|---|")
    for name, r in rows.items():
        cpu = [x[0] for x in r]
        p99 = [x[4] for x in r]
        print(f"| {name} | {statistics.median(cpu):.1f} ({min(cpu):.1f}-{max(cpu):.1f}) | "
              f"{statistics.median(x[1] for x in r):.2f} | {statistics.median(x[2] for x in r):.2f} | "
              f"{statistics.median(x[3] for x in r):.3f} | "
              f"{statistics.median(p99):.3f} ({min(p99):.3f}-{max(p99):.3f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
