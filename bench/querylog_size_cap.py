#!/usr/bin/env python3
"""Whether the query log stays within [querylog] max_size under a flood: dnsmoat answers 1,000
names from a hosts file and logs every query into a file of its own, while dnsperf asks as fast
as it can. After every --seconds of load the script reads the file's pages in use (page_count -
freelist_count, what the limit counts), its size on disk and its rows. Loopback only.

  bench/querylog_size_cap.py --binary build/release/src/app/dnsmoat --max-size 4MiB

With --baseline OTHER_BINARY a daemon of that build runs the same load afterwards, on a file of
its own: a change to the log's pruning against the commit before it.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import local_daemon


def pages_in_use(db: Path) -> tuple[int, int]:
    """The bytes of the file's pages in use and its row count (sqlite3 reads beside the writer,
    as WAL mode allows)."""
    out = subprocess.run(["sqlite3", str(db), "PRAGMA page_count; PRAGMA freelist_count;"
                          " PRAGMA page_size; SELECT count(*) FROM queries;"],
                         capture_output=True, text=True, check=True).stdout.split()
    pages, free, page_size, rows = (int(v) for v in out)
    return (pages - free) * page_size, rows


def flood(binary: str, work: Path, name: str, queries: Path, args: argparse.Namespace) -> None:
    db = work / f"{name}.db"
    daemon, port = local_daemon.start(
        binary, work, name, f'path = "{db}"\nmax_size = "{args.max_size}"')
    try:
        for rnd in range(1, args.rounds + 1):
            subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                            "-l", str(args.seconds), "-c", "8", "-q", "200"],
                           capture_output=True, check=True, timeout=args.seconds + 60)
            time.sleep(1.5)  # the writer's last batch of the round
            used, rows = pages_in_use(db)
            print(f"{name:8} after {rnd * args.seconds:3} s of load: pages in use "
                  f"{used / 2**20:6.1f} MiB, file {db.stat().st_size / 2**20:6.1f} MiB, "
                  f"{rows:,} rows", flush=True)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--baseline", help="another dnsmoat binary, run after --binary")
    ap.add_argument("--max-size", default="4MiB", help='[querylog] max_size (default "4MiB")')
    ap.add_argument("--seconds", type=int, default=5, help="seconds of load per round")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="moat-logcap-") as tmp:
        work = Path(tmp)
        queries = local_daemon.write_inputs(work)
        flood(args.binary, work, "dnsmoat", queries, args)
        if args.baseline:
            flood(args.baseline, work, "baseline", queries, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
