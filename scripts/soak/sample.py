"""Sampler of scripts/soak.sh: every INTERVAL seconds one CSV row with the daemon's memory (VmRSS,
VmHWM, and VmRSS split into anonymous and file pages), file descriptors, threads and CPU from
/proc, and per load (a dnsperf -v output file, followed as it grows) the queries answered and
failed in the interval, with latency percentiles. The first row (t = 0) is the daemon before the
load.

    sample.py --pid PID --out samples.csv --totals totals.json --stop-file PATH
              --max-seconds N [--interval 5] [--probe ADDR:PORT]
              --feed NAME=FILE [--feed NAME=FILE ...]

Besides, per row: how busy the machine was, how long the sampler's own sleep overran (a stall
of the machine), and with --probe the slowest round trip of a query sent straight to the
upstream every 50 ms (a stall of the upstream).

A dnsperf -v line is "> RCODE NAME TYPE LATENCY" for an answer, "> T NAME TYPE" for a timeout and
"> I NAME TYPE" for a query interrupted when dnsperf's time is up. Failed: a timeout, or any rcode
but NOERROR and NXDOMAIN (SERVFAIL, REFUSED, ...). Interrupted queries are counted apart. The run
ends when the stop file appears (the loads have exited) or after --max-seconds; then the files
are read to their end, the last (partial) row written, and the totals (with dnsperf's closing
statistics) saved as JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import socket
import struct
import threading
import time
from collections import Counter

OK_RCODES = {"NOERROR", "NXDOMAIN"}
STAT_LINES = {
    "sent": re.compile(r"Queries sent:\s+(\d+)"),
    "completed": re.compile(r"Queries completed:\s+(\d+)"),
    "lost": re.compile(r"Queries lost:\s+(\d+)"),
    "response_codes": re.compile(r"Response codes:\s+(.*)$"),
}


class Feed:
    def __init__(self, name: str, path: str):
        self.name, self.path = name, path
        self.file = None
        self.rest = b""
        self.reset()
        self.total = {"answered": 0, "failed": 0, "interrupted": 0, "rcodes": {}}
        self.micros: Counter[int] = Counter()  # every latency of the run, in whole microseconds
        self.stats: dict[str, object] = {}

    def reset(self) -> None:
        self.answered = self.failed = 0
        self.latencies: list[float] = []

    def poll(self) -> None:
        if self.file is None:
            try:
                self.file = open(self.path, "rb")  # noqa: SIM115 - kept open while following
            except FileNotFoundError:
                return
        data = self.file.read()
        if not data:
            return
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        for raw in lines:
            self.line(raw.decode(errors="replace"))

    def line(self, text: str) -> None:
        if not text.startswith("> "):
            for key, pattern in STAT_LINES.items():
                m = pattern.search(text)
                if m:
                    value = m.group(1).strip()
                    self.stats[key] = value if key == "response_codes" else int(value)
            return
        fields = text.split()
        if len(fields) < 2:
            return
        code = fields[1]
        if code == "I":
            self.total["interrupted"] += 1
            return
        rcodes = self.total["rcodes"]
        rcodes[code] = rcodes.get(code, 0) + 1
        self.answered += 1
        self.total["answered"] += 1
        if code not in OK_RCODES:
            self.failed += 1
            self.total["failed"] += 1
        if code != "T" and len(fields) >= 5:
            try:
                latency = float(fields[-1])
            except ValueError:
                return
            self.latencies.append(latency)
            self.micros[round(latency * 1e6)] += 1


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of sorted values."""
    if not values:
        return float("nan")
    rank = max(1, min(len(values), -(-len(values) * q // 100)))
    return values[int(rank) - 1]


def run_percentiles(micros: Counter[int]) -> dict[str, float]:
    """Percentiles (ms) over every answer of the run."""
    total = sum(micros.values())
    out: dict[str, float] = {}
    if not total:
        return out
    wanted = [("p50_ms", 50), ("p95_ms", 95), ("p99_ms", 99), ("p99.9_ms", 99.9), ("max_ms", 100)]
    seen = 0
    for us in sorted(micros):
        seen += micros[us]
        while wanted and seen >= total * wanted[0][1] / 100:
            out[wanted.pop(0)[0]] = us / 1000
    return out


def proc_status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"):
                out[key] = int(value.split()[0])
    return out


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


class UpstreamProbe(threading.Thread):
    """Asks the upstream itself (not the daemon) for probe.soak.test every 50 ms: the longest
    round trip of each interval tells a stall of the upstream from one of the daemon."""

    QUERY = b"".join(bytes([len(label)]) + label for label in (b"probe", b"soak", b"test"))
    QUERY += b"\x00" + struct.pack(">HH", 1, 1)

    def __init__(self, address: str):
        super().__init__(daemon=True)
        host, port = address.rsplit(":", 1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect((host, int(port)))
        self.lock = threading.Lock()
        self.worst = 0.0        # seconds, since the last take()
        self.stop = threading.Event()

    def take(self) -> float:
        with self.lock:
            worst, self.worst = self.worst, 0.0
        return worst

    def note(self, seconds: float) -> None:
        with self.lock:
            self.worst = max(self.worst, seconds)

    def run(self) -> None:
        qid = 0
        while not self.stop.wait(0.05):
            qid = (qid + 1) & 0xFFFF
            sent = time.monotonic()
            try:
                self.sock.send(struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + self.QUERY)
                while True:
                    waited = time.monotonic() - sent
                    self.note(waited)  # an answer still awaited counts as it stands
                    if waited >= 2.0:
                        break
                    self.sock.settimeout(min(0.05, 2.0 - waited))
                    try:
                        reply = self.sock.recv(512)
                    except socket.timeout:
                        continue
                    if reply[:2] == struct.pack(">H", qid):
                        self.note(time.monotonic() - sent)
                        break
            except OSError:
                self.stop.wait(0.5)


def host_cpu() -> tuple[int, int, int]:
    """(all, idle + iowait, steal) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]), v[3] + v[4], v[7]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--totals", required=True)
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--max-seconds", type=float, required=True)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--feed", action="append", default=[], help="NAME=FILE (the first is judged)")
    ap.add_argument("--probe", help="ADDR:PORT of the upstream, asked directly every 50 ms")
    args = ap.parse_args()
    feeds = [Feed(*spec.split("=", 1)) for spec in args.feed]
    hz = os.sysconf("SC_CLK_TCK")
    probe = UpstreamProbe(args.probe) if args.probe else None
    if probe:
        probe.start()

    # cpu_pct: the daemon's CPU time (100 = one core); host_busy_pct, host_steal_pct: the whole
    # machine's (100 = every core); hiccup_ms: the longest this sampler's 0.1 s sleep overran, a
    # stall of the machine rather than of the daemon when it is large too; upstream_ms: the
    # longest round trip of the direct probe of the upstream
    columns = ["t_s", "dt_s", "rss_kib", "hwm_kib", "rss_anon_kib", "rss_file_kib", "fds",
               "threads", "cpu_pct", "host_busy_pct", "host_steal_pct", "hiccup_ms",
               "upstream_ms"]
    for f in feeds:
        columns += [f"{f.name}_answered", f"{f.name}_failed", f"{f.name}_p50_ms",
                    f"{f.name}_p95_ms", f"{f.name}_p99_ms", f"{f.name}_max_ms"]
    start = last = time.monotonic()
    start_epoch = time.time()
    last_cpu = cpu_ticks(args.pid)
    last_host = host_cpu()
    hiccup = 0.0
    alive = True
    with open(args.out, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(columns)

        def row(now: float) -> None:
            nonlocal last, last_cpu, last_host, hiccup, alive
            values: list[object] = [f"{now - start:.1f}", f"{now - last:.2f}"]
            host = host_cpu()
            jiffies = host[0] - last_host[0]
            machine = ["", "", ""] if not jiffies else [
                f"{100.0 * (jiffies - (host[1] - last_host[1])) / jiffies:.1f}",
                f"{100.0 * (host[2] - last_host[2]) / jiffies:.1f}", f"{hiccup:.1f}"]
            machine.append(f"{1000 * probe.take():.1f}" if probe and now > last else "")
            last_host, hiccup = host, 0.0
            try:
                st = proc_status(args.pid)
                fds = len(os.listdir(f"/proc/{args.pid}/fd"))
                cpu = cpu_ticks(args.pid)
                busy = "" if now == last else f"{100.0 * (cpu - last_cpu) / hz / (now - last):.1f}"
                values += [st["VmRSS"], st["VmHWM"], st["RssAnon"], st["RssFile"], fds,
                           st["Threads"], busy, *machine]
                last_cpu = cpu
            except (FileNotFoundError, ProcessLookupError, KeyError):
                alive = False  # the daemon is gone: the row says so with empty fields
                values += [""] * 7 + machine
            for f in feeds:
                lat = sorted(f.latencies)
                values += [f.answered, f.failed] + [
                    "" if not lat else f"{1000 * percentile(lat, q):.3f}"
                    for q in (50, 95, 99, 100)]
                f.reset()
            writer.writerow(values)
            out.flush()
            last = now

        row(start)  # the daemon before the load: t = 0
        deadline = start + args.max_seconds
        while True:
            for f in feeds:
                f.poll()
            now = time.monotonic()
            if now - last >= args.interval:
                row(now)
            if os.path.exists(args.stop_file) or now >= deadline:
                break
            time.sleep(0.1)
            hiccup = max(hiccup, 1000 * (time.monotonic() - now - 0.1))
        for f in feeds:
            f.poll()
            if f.rest:
                f.line(f.rest.decode(errors="replace"))
        now = time.monotonic()
        if now - last >= 1.0:
            row(now)

    totals = {"start_epoch": start_epoch, "seconds": round(time.monotonic() - start, 1),
              "daemon_alive": alive,
              "feeds": {f.name: {**f.total, "latency": run_percentiles(f.micros),
                                 "dnsperf": f.stats} for f in feeds}}
    with open(args.totals, "w") as t:
        json.dump(totals, t, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
