#!/usr/bin/env python3
"""What a locally answered query costs the daemon, beside the canned-answer responder of
../shared/bench (echo_responder.c: recvmmsg/sendmmsg, no parsing, the cheapest UDP server).

Both answer dnsperf's queries for 1,000 names (dnsmoat from a hosts file, bench/local_daemon.py,
query log off), interleaved, --reps times for --seconds each. Reported per repetition: queries
per second and the server's user and system CPU time per answered query (/proc/PID/stat). With
--syscalls, also dnsmoat's system calls per query of each kind, counted by `perf stat` on the
syscalls tracepoints (tracefs must be mounted: `mount -t tracefs nodev /sys/kernel/tracing`).
Loopback only.

  bench/local_cost.py --binary build/release/src/app/dnsmoat --responder ../shared/bench/echo_responder.c

With --baseline OTHER_BINARY a second daemon of that build answers the same names beside them,
interleaved with the other two: a change to the query path against the commit before it, in the
same run.

With --blocked the daemons also load a blocklist of 1,000,000 generated names, and dnsperf asks
for 100,000 drawn from it (the shape of ../shared/bench/peers.sh's blocked file): queries whose
blocklist reads miss the CPU's caches, where the local names' reads stay in them.

With --cached the daemons forward to a knotd on 127.0.0.1 (bench/forward_cost.py's wildcard
zone), load the same 1,000,000-name blocklist, and dnsperf asks for 1,000 names none of them
blocks, each answered once before the first repetition: cache hits, the shape of
../shared/bench/peers.sh's cached test. --no-list leaves the blocklist out, so the two runs
show what checking a cached name against it costs.
"""

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import forward_cost
import local_daemon

SYSCALLS = ["epoll_wait", "epoll_ctl", "recvmmsg", "sendmmsg", "recvfrom", "sendto", "futex"]


BLOCKED_NAMES = 1_000_000
BLOCKED_QUERIES = 100_000


def write_blocked_inputs(work: Path) -> tuple[Path, str]:
    """A blocklist of BLOCKED_NAMES generated names (fixed seed) and a query file of
    BLOCKED_QUERIES names drawn from it; returns the query file and the daemons' TOML for the
    list."""
    rng = random.Random(4)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    tlds = ["com", "net", "org", "io", "de", "co.uk", "info", "xyz"]
    names: set[str] = set()
    while len(names) < BLOCKED_NAMES:
        label = "".join(rng.choices(alphabet, k=rng.randint(4, 14)))
        parent = "".join(rng.choices(alphabet, k=rng.randint(3, 10)))
        names.add(f"{label}.{parent}.{rng.choice(tlds)}")
    ordered = sorted(names)
    (work / "blocklist.txt").write_text("".join(n + "\n" for n in ordered))
    queries = work / "blocked-queries"
    queries.write_text("".join(f"{rng.choice(ordered)} A\n" for _ in range(BLOCKED_QUERIES)))
    return queries, f'[[blocklists]]\nname = "generated"\npath = "{work / "blocklist.txt"}"\n'


CACHED_NAMES = 1_000


def write_cached_queries(work: Path) -> Path:
    """dnsperf's file of CACHED_NAMES names under m.test (fixed seed), none of them blocked."""
    rng = random.Random(5)
    return forward_cost.write_miss_names(work / "cached-queries", CACHED_NAMES, rng, prefix="c")


def fill_cache(port: int, queries: Path) -> None:
    """Asks every name of `queries` once, one at a time, so that the daemon caches each."""
    subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                    "-n", "1", "-c", "1", "-q", "1"], capture_output=True, timeout=120, check=True)


def dnsperf(port: int, queries: Path, seconds: int) -> tuple[float, int]:
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                          "-l", str(seconds), "-c", "8", "-q", "200"],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    return (float(re.search(r"Queries per second:\s+([\d.]+)", out).group(1)),
            int(re.search(r"Queries completed:\s+(\d+)", out).group(1)))


def measure(pid: int, port: int, queries: Path, seconds: int, syscalls: bool) -> str:
    user0, sys0 = forward_cost.cpu_seconds(pid)
    perf = None
    if syscalls:
        events = ",".join(f"syscalls:sys_enter_{s}" for s in SYSCALLS)
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", events, "-p", str(pid)],
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
    qps, answered = dnsperf(port, queries, seconds)
    counts = ""
    if perf is not None:
        perf.send_signal(2)
        for line in perf.communicate(timeout=30)[1].splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[0].isdigit():
                name = fields[2].rsplit("sys_enter_", 1)[-1]
                counts += f" {name} {int(fields[0]) / answered:.3f}"
    user1, sys1 = forward_cost.cpu_seconds(pid)
    return (f"{qps:9,.0f} qps, user {(user1 - user0) / answered * 1e6:.2f} µs, "
            f"system {(sys1 - sys0) / answered * 1e6:.2f} µs per query"
            + (f"; system calls per query:{counts}" if counts else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--responder", required=True, help="echo_responder.c (built here) or its binary")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--syscalls", action="store_true")
    ap.add_argument("--baseline", help="another dnsmoat binary, measured beside --binary")
    ap.add_argument("--blocked", action="store_true",
                    help="the daemons ask about names of a 1,000,000-name blocklist instead")
    ap.add_argument("--cached", action="store_true",
                    help="the daemons answer 1,000 names from their caches, beside a 1,000,000-name "
                    "blocklist")
    ap.add_argument("--no-list", action="store_true",
                    help="with --cached: load no blocklist")
    args = ap.parse_args()
    if args.no_list and not args.cached:
        ap.error("--no-list goes with --cached")
    if args.blocked and args.cached:
        ap.error("--blocked and --cached ask different names: choose one")
    with tempfile.TemporaryDirectory(prefix="moat-localcost-") as tmp:
        work = Path(tmp)
        queries = local_daemon.write_inputs(work)
        extra_toml = ""
        upstream = "127.0.0.1:9"  # the discard port: nothing is forwarded
        knot = None
        if args.blocked or args.cached:
            blocked_queries, extra_toml = write_blocked_inputs(work)
            queries = blocked_queries if args.blocked else write_cached_queries(work)
            if args.no_list:
                extra_toml = ""
        if args.cached:
            knot, knot_port = forward_cost.start_knot(work)
            upstream = f"127.0.0.1:{knot_port}"
        responder = args.responder
        if responder.endswith(".c"):
            subprocess.run(["cc", "-O2", "-o", str(work / "echo_responder"), responder],
                           check=True)
            responder = str(work / "echo_responder")
        daemon, daemon_port = local_daemon.start(args.binary, work, "d", "enabled = false",
                                                   upstream=upstream, extra_toml=extra_toml)
        baseline = None
        if args.baseline:
            baseline, baseline_port = local_daemon.start(args.baseline, work, "b", "enabled = false",
                                                         upstream=upstream, extra_toml=extra_toml)
        if args.cached:
            for port in [daemon_port] + ([baseline_port] if baseline is not None else []):
                fill_cache(port, queries)
        echo_port = local_daemon.free_port()
        echo = subprocess.Popen([responder, str(echo_port)], stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        try:
            for rep in range(args.reps):
                order = [("dnsmoat", daemon.pid, daemon_port, args.syscalls),
                         ("responder", echo.pid, echo_port, False)]
                if baseline is not None:
                    order.insert(1, ("baseline", baseline.pid, baseline_port, args.syscalls))
                for name, pid, port, syscalls in order if rep % 2 == 0 else reversed(order):
                    print(f"rep {rep + 1} {name:9} "
                          f"{measure(pid, port, queries, args.seconds, syscalls)}", flush=True)
        finally:
            for proc in (daemon, echo) if baseline is None else (daemon, baseline, echo):
                proc.terminate()
                proc.wait(timeout=30)
            if knot is not None:
                knot.terminate()
                knot.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
