#!/usr/bin/env python3
"""The training run of a profile-guided build of the daemon (GCC's -fprofile-generate, then
-fprofile-use): a build instrumented to count its branches answers the query mixes the peers
harness sends, and writes its counts (.gcda files) when it exits.

The daemon (bench/local_daemon.py: 1,000 local names, the query log off) forwards to one knotd on
127.0.0.1 serving a wildcard zone (bench/forward_cost.py's). dnsperf sends, in turn: names never
asked before as fast as the daemon answers (misses), the same at 2,000 a second (every miss
wakes the daemon twice, as at a household's pace), 2,000 names over and over (cached answers) and
the local names. Then the daemon is stopped with SIGTERM, so that it exits normally and writes
its counts. Loopback only. The whole recipe, and what the profile is worth, is in
docs/benchmarks.md ("A paced miss's latency, and where its CPU goes").

  bench/pgo_train.py --binary build/pgo/src/app/dnsmoat
"""

import argparse
import random
import sys
import tempfile
from pathlib import Path

import forward_cost
import local_daemon


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="a dnsmoat built with -fprofile-generate")
    ap.add_argument("--seconds", type=int, default=8, help="seconds per mix (default 8)")
    args = ap.parse_args()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory(prefix="moat-pgo-") as tmp:
        work = Path(tmp)
        local_names = local_daemon.write_inputs(work)
        knot, upstream = forward_cost.start_knot(work)
        daemon, port = forward_cost.start_daemon(args.binary, work, "train", upstream,
                                                 forward_cost.TUNED)
        try:
            # 150,000 misses a second is above what this machine answers: the file never wraps.
            misses = forward_cost.write_miss_names(work / "misses", 150_000 * args.seconds, rng,
                                                    "s")
            paced = forward_cost.write_miss_names(work / "paced", 2_000 * (args.seconds + 1), rng,
                                                   "p")
            cached = work / "cached"
            cached.write_text("".join(f"c{i}.m.test A\n" for i in range(2_000)))
            for what, queries, rate in (("misses", misses, None), ("paced misses", paced, 2_000),
                                        ("cached", cached, None), ("local", local_names, None)):
                qps, answered = forward_cost.load(port, queries, args.seconds, rate)
                print(f"{what}: {answered} answered, {qps:,.0f} a second", file=sys.stderr)
        finally:
            forward_cost.stop_all([daemon], knot)  # SIGTERM: a normal exit writes the counts
    if daemon.returncode != 0:
        print(f"the daemon exited with {daemon.returncode}: its counts may be missing",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
