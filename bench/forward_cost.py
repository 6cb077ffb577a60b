#!/usr/bin/env python3
"""What a forwarded query (a cache miss) costs the daemon, with glibc's default per-thread cache
of freed blocks and with the larger one config/systemd/dnsmoat.service asks for, side by side.

Both daemons (bench/local_daemon.py) forward to one knotd on 127.0.0.1 serving a wildcard zone,
with the query log off (as the peers in docs/benchmarks.md run); dnsperf sends names never asked
before, so every query is a miss that goes upstream. Each repetition runs dnsperf for --seconds
against one and then the other (order alternating). Reported: median queries per second and the daemon's CPU
time per answered query (all its threads), from /proc/PID/stat, and VmRSS after the last run
(the answer cache has filled by then). The CPU time is also split into user and system (kernel)
time: what the daemon's own code costs, and what the system calls and the network stack cost.
Loopback only.

  bench/forward_cost.py --binary build/release/src/app/dnsmoat --seconds 6 --reps 3

With --baseline OTHER_BINARY it compares two builds instead, both with the unit's setting: a
change to the forwarding path against the commit before it, in the same run. Add
--glibc-default to compare them as a plain command line runs them, without the variable.

With --rate QPS dnsperf sends that many queries per second (-Q) instead of as many as the
daemon answers: the cost of a miss at a household's pace, where every query wakes the daemon
twice (its arrival, the upstream's answer) and nothing is batched.

With --tcp the clients ask over TCP (dnsperf -m tcp: 8 connections with up to 200 queries in
flight between them); the daemon still asks the upstream over UDP.

With --cache-size SIZE (e.g. "4MiB") the daemons' answer cache is that large: small enough to be
full after the first seconds, so that every miss also evicts an entry, as on a busy daemon whose
cache has filled. The default 32 MiB holds about 150,000 of these answers.
"""

import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import local_daemon

TUNED = "glibc.malloc.tcache_count=2000"  # as config/systemd/dnsmoat.service sets it


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU time of the process (all its threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def vm_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def write_miss_names(path: Path, count: int, rng: random.Random, prefix: str = "q") -> Path:
    """`count` dnsperf lines of names under m.test that no run asked before, so every query is a
    cache miss that start_knot's wildcard answers."""
    path.write_text("".join(f"{prefix}{rng.randrange(10**15)}.m.test A\n" for _ in range(count)))
    return path


def start_knot(work: Path, udp_workers: int = 1) -> tuple[subprocess.Popen, int]:
    port = local_daemon.free_port()
    (work / "knot").mkdir()
    (work / "knot" / "m.test.zone").write_text(
        "$ORIGIN m.test.\n$TTL 3600\n"
        "@ SOA ns.m.test. admin.m.test. 1 3600 600 86400 60\n@ NS ns.m.test.\n"
        "ns A 127.0.0.1\n* A 192.0.2.1\n")
    conf = work / "knot" / "knot.conf"
    conf.write_text(f"""server:
    listen: 127.0.0.1@{port}
    rundir: {work / 'knot'}
    udp-workers: {udp_workers}
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: warning
database:
    storage: {work / 'knot' / 'db'}
template:
  - id: default
    storage: {work / 'knot'}
    journal-content: none
    zonefile-sync: -1
zone:
  - domain: m.test
    file: {work / 'knot' / 'm.test.zone'}
""")
    knotd = shutil.which("knotd") or "/usr/sbin/knotd"
    log = work / "knot.stderr"
    proc = subprocess.Popen([knotd, "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"))
    local_daemon.wait_answering(proc, port, "x.m.test", "knotd", log)
    return proc, port


def stop_all(servers: list[subprocess.Popen], knot: subprocess.Popen) -> None:
    """Stops the servers (SIGTERM, as systemd would) and then their upstream."""
    for proc in servers:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    knot.terminate()
    knot.wait(timeout=10)


def start_daemon(binary: str, work: Path, name: str, upstream: int, tunables: str | None,
                 extra_env: dict[str, str] | None = None,
                 extra_toml: str = "") -> tuple[subprocess.Popen, int]:
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if tunables:
        env["GLIBC_TUNABLES"] = tunables
    env.update(extra_env or {})
    return local_daemon.start(binary, work, name, "enabled = false",
                              upstream=f"127.0.0.1:{upstream}", env=env, extra_toml=extra_toml)


def load(port: int, queries: Path, seconds: int, rate: int | None = None,
         tcp: bool = False) -> tuple[float, int]:
    """dnsperf for `seconds`: at saturation, or at `rate` queries per second; over UDP or TCP."""
    pace = ["-Q", str(rate)] if rate else []
    mode = ["-m", "tcp"] if tcp else []
    out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                          "-l", str(seconds), "-c", "8", "-q", "200", *pace, *mode],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    qps = float(re.search(r"Queries per second:\s+([\d.]+)", out).group(1))
    completed = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
    return qps, completed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--baseline", help="another dnsmoat binary: compare the two builds")
    ap.add_argument("--glibc-default", action="store_true",
                    help="with --baseline: run both builds without GLIBC_TUNABLES")
    ap.add_argument("--rate", type=int, help="queries per second (default: saturation)")
    ap.add_argument("--tcp", action="store_true", help="clients ask over TCP (default: UDP)")
    ap.add_argument("--cache-size", help='the [cache] size, e.g. "4MiB" (default: the daemon\'s)')
    args = ap.parse_args()
    extra_toml = f'[cache]\nsize = "{args.cache_size}"' if args.cache_size else ""
    # name -> (binary, GLIBC_TUNABLES)
    variants: dict[str, tuple[str, str | None]] = {
        "glibc default (7 blocks per size)": (args.binary, None),
        f"GLIBC_TUNABLES={TUNED}": (args.binary, TUNED),
    }
    if args.baseline:
        tunables = None if args.glibc_default else TUNED
        variants = {f"baseline {args.baseline}": (args.baseline, tunables),
                    f"{args.binary}": (args.binary, tunables)}
    # Per repetition: qps, then user and system CPU µs per answered query.
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
    rss: dict[str, float] = {}
    rng = random.Random(42)
    with tempfile.TemporaryDirectory(prefix="moat-fwdcost-") as tmp:
        work = Path(tmp)
        local_daemon.write_inputs(work)  # the hosts file every local_daemon answers from
        knot, upstream = start_knot(work)
        daemons = {}
        try:
            for i, (name, (binary, tunables)) in enumerate(variants.items()):
                daemons[name] = start_daemon(binary, work, f"d{i}", upstream, tunables,
                                             extra_toml=extra_toml)
            for rep in range(args.reps):
                order = list(daemons) if rep % 2 == 0 else list(reversed(daemons))
                for name in order:
                    # Names never asked before: every query is a miss.
                    queries = write_miss_names(work / "queries", 400_000, rng)
                    proc, port = daemons[name]
                    user0, sys0 = cpu_seconds(proc.pid)
                    qps, completed = load(port, queries, args.seconds, args.rate, args.tcp)
                    user1, sys1 = cpu_seconds(proc.pid)
                    results[name].append((qps, (user1 - user0) / completed * 1e6,
                                          (sys1 - sys0) / completed * 1e6))
                    print(f"rep {rep} {name}: {qps:,.0f} qps, "
                          f"{results[name][-1][1]:.2f} µs user and "
                          f"{results[name][-1][2]:.2f} system per query", file=sys.stderr,
                          flush=True)
            for name, (proc, _) in daemons.items():
                rss[name] = vm_rss_mib(proc.pid)
        finally:
            stop_all([proc for proc, _ in daemons.values()], knot)
    print("| dnsmoat, cache misses | qps (median) | CPU µs per query (medians): all (user, system) "
          "| VmRSS after (MiB) |\n|---|---|---|---|")
    for name, rows in results.items():
        total = statistics.median(r[1] + r[2] for r in rows)
        user = statistics.median(r[1] for r in rows)
        system = statistics.median(r[2] for r in rows)
        print(f"| {name} | {statistics.median(r[0] for r in rows):,.0f} | "
              f"{total:.2f} ({user:.2f}, {system:.2f}) | {rss.get(name, 0):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
