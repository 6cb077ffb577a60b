#!/usr/bin/env python3
"""Bytes the query log writes at a steady query rate: how hard it works an SD card.

Starts dnsmoat on 127.0.0.1 with its query log in a temporary directory (defaults otherwise;
--flush sets flush_interval), sends queries at each rate with dnsperf for --seconds (names a
household repeats: 1000 names, answered locally, so no upstream is needed), and reads the
daemon's /proc/PID/io from just after one write of the log to just after the load's last:
`wchar` (bytes handed to write()), `write_bytes` (bytes the kernel sent to the disk for it) and
`syscw` (write calls). Loopback only.

  bench/querylog_write_rate.py --binary build/release/src/app/dnsmoat --rates 10,100 --seconds 240
"""

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import local_daemon


def io_of(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        key, value = line.split(":")
        fields[key] = int(value)
    return fields


def row_count(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM queries").fetchone()[0]
    finally:
        con.close()


def wait_for_write(wal: Path, timeout: float) -> None:
    """Returns just after the log's WAL file next changes (a batch was written)."""
    def stamp():
        try:
            st = wal.stat()
            return (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return None
    first = stamp()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if stamp() != first:
            time.sleep(0.2)  # the rest of the commit
            return
    raise RuntimeError(f"no write of {wal} within {timeout:.0f} s")


def seconds_of(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for suffix in ("ms", "s", "m", "h"):
        if duration.endswith(suffix):
            return float(duration[: -len(suffix)]) * units[suffix]
    raise ValueError(duration)


def measure(binary: str, rate: int, seconds: int, flush: str, work: Path) -> dict:
    interval = seconds_of(flush)
    queries = local_daemon.write_inputs(work)
    db = work / f"log-{rate}-{flush}.db"
    wal = Path(str(db) + "-wal")
    proc, port = local_daemon.start(binary, work, f"rate-{rate}",
                                    f'path = "{db}"\nflush_interval = "{flush}"')
    try:
        # The window runs from just after one write of the log to just after the last write of
        # the load, so it holds whole batches only. dnsperf runs in the background meanwhile.
        perf = subprocess.Popen(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d",
                                 str(queries), "-Q", str(rate), "-l", str(seconds),
                                 "-c", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_write(wal, timeout=interval + 10)
        before, rows_before, started = io_of(proc.pid), row_count(db), time.monotonic()
        after = None
        while True:
            wait_for_write(wal, timeout=interval + 10)
            if perf.poll() is not None:
                break  # this batch may have been partly idle: the window ends at the one before
            after, rows_after, elapsed = io_of(proc.pid), row_count(db), time.monotonic() - started
        perf.wait(timeout=30)
        if after is None:
            raise RuntimeError("--seconds must cover at least three flush intervals")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    diff = {k: after[k] - before[k] for k in ("wchar", "write_bytes", "syscw")}
    return {"rate": rate, "queries": rows_after - rows_before, **diff, "seconds": elapsed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rates", default="10,100")
    ap.add_argument("--seconds", type=int, default=240,
                    help="load per rate; at least three flush intervals")
    ap.add_argument("--flush", default="1m")
    args = ap.parse_args()
    print(f"| queries/s | flush_interval | written (KiB/s) | to disk (KiB/s) | per query (bytes) "
          f"| write calls/s | per day (MiB) |\n|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="moat-writerate-") as tmp:
        for rate in (int(r) for r in args.rates.split(",")):
            m = measure(args.binary, rate, args.seconds, args.flush, Path(tmp))
            per_s = m["wchar"] / m["queries"] * rate  # at exactly `rate`, from bytes per row
            print(f"| {rate} | {args.flush} | {per_s / 1024:.1f} | "
                  f"{m['write_bytes'] / m['queries'] * rate / 1024:.1f} | "
                  f"{m['wchar'] / m['queries']:.0f} | "
                  f"{m['syscw'] / m['seconds']:.1f} | {per_s * 86400 / 2**20:.0f} |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
