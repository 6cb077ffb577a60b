#!/usr/bin/env python3
"""Heap allocations per cache miss, counted exactly, and where they are made.

The daemon (bench/local_daemon.py, query log off) runs with bench/malloc_sites/malloc_sites.c
preloaded and forwards to one knotd on 127.0.0.1 serving a wildcard zone (as in
bench/forward_cost.py); dnsperf sends --queries names never asked before, each once, so every
query is a miss. When the daemon has stopped, the malloc() calls are divided by the queries
answered, and the call sites made about once per query or more are listed with the functions
addr2line names (with link-time optimisation, inlined code shows as its caller). Counting is
exact, so unlike a time it needs no repetitions; the preloaded counter makes the daemon slow,
so this measures nothing else. Loopback only.

  bench/miss_allocations.py --binary build/release/src/app/dnsmoat --queries 20000

The default cache (32 MiB) holds every answer of such a run. --cache-size 1MiB makes it full
after a few thousand misses, as a busy daemon's is: from then on each miss evicts an entry.
"""

import argparse
import random
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import forward_cost
import local_daemon

HERE = Path(__file__).resolve().parent


def build_counter(work: Path) -> Path:
    library = work / "malloc_sites.so"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(library),
                    str(HERE / "malloc_sites" / "malloc_sites.c"), "-ldl", "-lpthread"], check=True)
    return library


def function_at(binary: str, frame: str) -> str:
    """The function addr2line names for "object+0xOFFSET" in `binary`, else the frame itself."""
    obj, _, offset = frame.partition("+")
    if obj != Path(binary).name:
        return frame
    out = subprocess.run(["addr2line", "-f", "-C", "-e", binary, offset],
                         capture_output=True, text=True).stdout.splitlines()
    name = out[0] if out else frame
    for long, short in (("std::__cxx11::basic_string<char, std::char_traits<char>, "
                         "std::allocator<char> >", "std::string"),
                        ("std::vector<unsigned char, std::allocator<unsigned char> >",
                         "std::vector<uint8_t>")):
        name = name.replace(long, short)
    name = re.sub(r"^void\*? ", "", name)  # a template's return type
    return re.sub(r"(<[^()]*>)?\(.*", "", name)  # without its parameter list


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--queries", type=int, default=20000)
    ap.add_argument("--cache-size", help='the [cache] size, e.g. "1MiB" (default: the daemon\'s)')
    args = ap.parse_args()
    binary = str(Path(args.binary).resolve())
    with tempfile.TemporaryDirectory(prefix="moat-allocs-") as tmp:
        work = Path(tmp)
        counter = build_counter(work)
        sites_file = work / "sites.txt"
        local_daemon.write_inputs(work)
        knot, upstream = forward_cost.start_knot(work)
        proc, port = forward_cost.start_daemon(
            binary, work, "counted", upstream, forward_cost.TUNED,
            extra_env={"LD_PRELOAD": str(counter), "MOAT_MALLOC_SITES": str(sites_file)},
            extra_toml=f'[cache]\nsize = "{args.cache_size}"' if args.cache_size else "")
        try:
            rng = random.Random(42)
            queries = forward_cost.write_miss_names(work / "queries", args.queries, rng)
            out = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", str(queries),
                                  "-n", "1", "-Q", "5000"], capture_output=True, text=True,
                                 timeout=args.queries / 1000 + 120, check=True).stdout
            answered = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            knot.terminate()
            knot.wait(timeout=10)
        rows = []
        for line in sites_file.read_text().splitlines():
            count, *frames = line.split()
            rows.append((int(count), frames))
    total = sum(count for count, _ in rows)
    cache = f"a {args.cache_size} cache" if args.cache_size else "the default cache"
    print(f"{answered} misses answered ({cache}); malloc() calls: {total / answered:.2f} per miss "
          "(start-up and shutdown included, spread over the misses)")
    print("\n| calls per miss | allocating function | called from |\n|---|---|---|")
    for count, frames in sorted(rows, key=lambda r: -r[0]):
        if count < 0.9 * answered:
            break
        # frames[0] is usually operator new in libstdc++: name the first frame in the binary.
        ours = [f for f in frames if f.startswith(Path(binary).name + "+")]
        first = function_at(binary, ours[0]) if ours else frames[0]
        caller = function_at(binary, ours[1]) if len(ours) > 1 else ""
        print(f"| {count / answered:.2f} | `{first[:90]}` | `{caller[:70]}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
