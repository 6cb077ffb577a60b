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
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(binary: str, work: Path, name: str, log: bool) -> tuple[subprocess.Popen, int]:
    port = free_port()
    cfg = work / f"{name}.toml"
    cfg.write_text(f"""
[server]
listen = ["127.0.0.1:{port}"]
control_socket = ""
[upstream]
servers = ["127.0.0.1:9"]
[local]
hosts_file = "{work / 'hosts'}"
[querylog]
enabled = {str(log).lower()}
path = "{work / (name + '.db')}"
[api]
enabled = false
""")
    proc = subprocess.Popen([binary, "run", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=open(work / f"{name}.stderr", "w"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out = subprocess.run(["dig", "+short", "+tries=1", "+time=1", "-p", str(port),
                              "@127.0.0.1", "host0.example.lan"], capture_output=True, text=True)
        if out.stdout.strip():
            return proc, port
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not start")


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
        names = [f"host{i}.example.lan" for i in range(1000)]
        (work / "hosts").write_text("".join(f"192.168.1.{i % 250 + 1} {n}\n"
                                            for i, n in enumerate(names)))
        (work / "queries").write_text("".join(f"{n} A\n" for n in names))
        daemons = {"log on": start(args.binary, work, "on", True),
                   "log off": start(args.binary, work, "off", False)}
        try:
            for rep in range(args.reps):
                order = list(daemons) if rep % 2 == 0 else list(reversed(daemons))
                for name in order:
                    proc, port = daemons[name]
                    cpu0 = cpu_seconds(proc.pid)
                    qps = load(port, work / "queries", args.seconds)
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
