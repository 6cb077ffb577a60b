#!/usr/bin/env python3
"""The code a cache miss runs, dnsmoat beside dnsdist: instructions per miss, and the distinct
64-octet lines and 4 KiB pages of code that a miss executes, per object (the server itself, libc,
libstdc++, ...). After an idle spell every one of those lines may have to come back from memory
and every page may need its TLB entry again, so the footprint is what a paced miss pays for on a
CPU that went idle between queries, and this guest exposes no hardware counters to count that.

Each server runs under valgrind's callgrind with collection off, forwarding to one knotd on
127.0.0.1 serving a wildcard zone (bench/forward_cost.py's); dnsmoat with the query log off,
dnsdist configured as bench/paced_miss_peer.py does. After --warm misses, asked one at a time,
collection is switched on (callgrind_control) for --misses more, one at a time, each a name never
asked before, and then dumped. The lines and pages are the union over those misses: each takes
the same path, so the union is about one miss's footprint. With --cached every query asks the
same name instead, so all but the first are answered from the cache (dnsdist's packet cache).
Loopback only.

  bench/miss_footprint.py --binary build/release/src/app/dnsmoat [--cached]
"""

import argparse
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import forward_cost
import local_daemon
import paced_miss_peer


def query_bytes(name: str, ident: int) -> bytes:
    """A recursion-desired A query for `name`, as a stub resolver sends it."""
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split("."))
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack(
        "!HH", 1, 1)


def ask_one_at_a_time(port: int, count: int, rng: random.Random, timeout: float = 5.0,
                      name: str | None = None) -> int:
    """`count` queries, each sent after the answer to the one before: for `name`, or else each
    for a name never asked before. Returns how many were answered."""
    answered = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        for _ in range(count):
            ident = rng.randrange(65536)
            asked = name or f"f{rng.randrange(10**15)}.m.test"
            s.sendto(query_bytes(asked, ident), ("127.0.0.1", port))
            try:
                while True:
                    reply, _ = s.recvfrom(4096)
                    if struct.unpack("!H", reply[:2])[0] == ident:
                        answered += 1
                        break
            except socket.timeout:
                pass
            time.sleep(0.002)  # a pause, as between a household's queries
    return answered


def wait_answering(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    probe = random.Random(7)
    while time.monotonic() < deadline:
        if ask_one_at_a_time(port, 1, probe, timeout=1.0):
            return
    raise RuntimeError(f"no answer on port {port} within {seconds} s")


def footprint(dumps: list[Path]) -> tuple[int, dict[str, tuple[int, int, int]]]:
    """Instructions in total, and per object (ob=) the instructions, distinct code lines and
    distinct code pages, from callgrind dumps written with --dump-instr=yes --dump-line=no (one,
    unless something dumped early; lines and pages are counted once over all of them)."""
    totals: dict[str, list] = defaultdict(lambda: [0, set(), set()])
    for dump in dumps:
        names: dict[str, str] = {}
        obj = "?"
        addr = 0
        skip_next = False
        for line in dump.read_text(errors="replace").splitlines():
            if line.startswith(("ob=", "cob=")):
                m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line)
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("ob="):
                    obj = names.get(m.group(1), line[3:]) if m else line[3:]
                continue
            if line.startswith("calls="):
                skip_next = True  # the line after is the call's inclusive cost at the call site
                continue
            if not line or not (line[0] in "+-*" or line.startswith("0x")):
                continue
            fields = line.split()
            pos = fields[0]
            if pos.startswith("0x"):
                addr = int(pos, 16)
            elif pos[0] in "+-":
                step = int(pos[1:], 16) if pos[1:].startswith("0x") else int(pos[1:])
                addr += step if pos[0] == "+" else -step
            if skip_next:
                skip_next = False
                continue
            t = totals[Path(obj).name]
            t[0] += int(fields[1]) if len(fields) > 1 else 0
            t[1].add(addr >> 6)
            t[2].add(addr >> 12)
    result = {k: (v[0], len(v[1]), len(v[2])) for k, v in totals.items()}
    return sum(v[0] for v in result.values()), result


def measure(cmd: list[str], port: int, work: Path, tag: str, warm: int, misses: int,
            rng: random.Random, name: str | None) -> tuple[int, dict[str, tuple[int, int, int]]]:
    out = work / f"callgrind.{tag}.out"
    log = work / f"{tag}.valgrind"
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                             "--dump-instr=yes", "--dump-line=no", "--separate-threads=no",
                             f"--callgrind-out-file={out}", *cmd],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        wait_answering(port, 120)
        ask_one_at_a_time(port, warm, rng, name=name)
        subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True,
                       capture_output=True)
        answered = ask_one_at_a_time(port, misses, rng, name=name)
        subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True,
                       capture_output=True)
        if answered != misses:
            raise RuntimeError(f"{tag}: {answered} of {misses} misses answered")
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    return footprint(sorted(work.glob(f"callgrind.{tag}.out*")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--baseline", help="another dnsmoat binary, measured the same way")
    ap.add_argument("--warm", type=int, default=200)
    ap.add_argument("--misses", type=int, default=200)
    ap.add_argument("--no-dnsdist", action="store_true")
    ap.add_argument("--cached", action="store_true",
                    help="ask one name over and over: cache hits (dnsdist's packet cache) instead "
                    "of misses")
    ap.add_argument("--keep", help="a folder to copy the callgrind dumps to, for "
                    "callgrind_annotate")
    args = ap.parse_args()
    rng = random.Random(42)
    asked = "cached.m.test" if args.cached else None
    what = "cached answers" if args.cached else "misses"
    with tempfile.TemporaryDirectory(prefix="moat-footprint-") as tmp:
        work = Path(tmp)
        local_daemon.write_inputs(work)
        knot, upstream = forward_cost.start_knot(work)
        rows = {}
        binaries = {}  # row -> the server's executable, whose object is "its own" code
        try:
            builds = {"dnsmoat": args.binary}
            if args.baseline:
                builds[f"dnsmoat {args.baseline}"] = args.baseline
            for i, (name, binary) in enumerate(builds.items()):
                port = local_daemon.free_port()
                cfg = local_daemon.write_config(work, f"d{i}", port, "enabled = false",
                                                f"127.0.0.1:{upstream}")
                binaries[name] = binary
                rows[name] = measure([binary, "run", "--config", str(cfg)], port, work,
                                     f"d{i}", args.warm, args.misses, rng, asked)
            if not args.no_dnsdist:
                port = local_daemon.free_port()
                conf = paced_miss_peer.dnsdist_config(work, port, upstream)
                binary = shutil.which("dnsdist") or "/usr/bin/dnsdist"
                binaries["dnsdist"] = binary
                rows["dnsdist"] = measure([binary, "--supervised", "--disable-syslog", "-C",
                                           str(conf)], port, work, "dnsdist", args.warm,
                                          args.misses, rng, asked)
        finally:
            knot.terminate()
            knot.wait(timeout=10)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                for dump in work.glob("callgrind.*.out*"):
                    shutil.copy(dump, args.keep)
    n = args.misses
    print(f"| {n} {what}, one at a time | instructions per query | code lines | code pages | "
          "the server's own lines / pages | libc's | libstdc++'s |\n|---|---|---|---|---|---|---|")
    for name, (total, per) in rows.items():
        lines = sum(v[1] for v in per.values())
        pages = sum(v[2] for v in per.values())
        own = per.get(Path(binaries[name]).name, (0, 0, 0))
        libc = next((v for k, v in per.items() if k.startswith("libc.so")), (0, 0, 0))
        cxx = next((v for k, v in per.items() if k.startswith("libstdc++")), (0, 0, 0))
        print(f"| {name} | {total / n:,.0f} | {lines:,} | {pages:,} | {own[1]:,} / {own[2]:,} | "
              f"{libc[1]:,} / {libc[2]:,} | {cxx[1]:,} / {cxx[2]:,} |")
    for name, (total, per) in rows.items():
        print(f"\n{name}, per object (instructions per query, lines, pages):", file=sys.stderr)
        for k, v in sorted(per.items(), key=lambda kv: -kv[1][1]):
            print(f"  {k}: {v[0] / n:,.0f}, {v[1]:,}, {v[2]:,}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
