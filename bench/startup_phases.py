#!/usr/bin/env python3
"""How long two builds of the daemon take to start on one blocklist, phase by phase.

Each start is read from the daemon's own log: the time it logs that it is starting, that the
list is parsed ("N entries from M lines"), that the lists are built ("name rules"), and that it
is ready. The builds start in the order old-new-new-old, --rounds times, so drift in a shared
machine's speed falls on both; the medians of each phase are printed. The query log is off and
the upstream is a loopback port nothing listens on: nothing leaves 127.0.0.1.

  bench/startup_phases.py --old ../dnsmoat-before --new build/release/src/app/dnsmoat \\
      --blocklist blocklist.domains --rounds 4
"""

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

MARKS = (("start", "starting"), ("parsed", " entries from "), ("built", " name rules"),
         ("ready", " ready"))


def one_start(binary, config, blocklist, seconds):
    """The phases of one start in milliseconds: (parse, build, start to ready)."""
    run = subprocess.run(
        ["timeout", str(seconds), binary, "run", "--config", config, "--listen", "127.0.0.1:25399",
         "--upstream", "127.0.0.1:25398", "--blocklist", blocklist],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    at = {}
    for line in run.stdout.splitlines():
        stamp = re.match(r"\S+ (\d+):(\d+):(\d+\.\d+) ", line)
        if not stamp:
            continue
        seconds_of_day = (int(stamp.group(1)) * 60 + int(stamp.group(2))) * 60 + float(stamp.group(3))
        for mark, text in MARKS:
            if text in line and mark not in at:
                at[mark] = seconds_of_day
    missing = [mark for mark, _ in MARKS if mark not in at]
    if missing:
        sys.exit(f"{binary}: no log line for {', '.join(missing)}; its output:\n{run.stdout}")
    return ((at["parsed"] - at["start"]) * 1e3, (at["built"] - at["parsed"]) * 1e3,
            (at["ready"] - at["start"]) * 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the build before the change")
    ap.add_argument("--new", required=True, help="the build after it")
    ap.add_argument("--blocklist", required=True, help="a list file, e.g. the peers harness's")
    ap.add_argument("--rounds", type=int, default=4, help="old-new-new-old rounds (default 4)")
    ap.add_argument("--seconds", type=float, default=3, help="each daemon's run time (default 3)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "nolog.toml"
        config.write_text(f'[querylog]\nenabled = false\n[lists]\nstate_dir = "{scratch}/state"\n')
        phases = {args.old: [], args.new: []}
        for _ in range(args.rounds):
            for binary in (args.old, args.new, args.new, args.old):
                phases[binary].append(one_start(binary, str(config), args.blocklist, args.seconds))
    print(f"{'build':<50} {'parse':>8} {'build':>8} {'to ready':>9}  (ms, medians of "
          f"{2 * args.rounds} starts)")
    for binary in (args.old, args.new):
        parse, build, ready = (statistics.median(column) for column in zip(*phases[binary]))
        print(f"{binary:<50} {parse:8.0f} {build:8.0f} {ready:9.0f}")


if __name__ == "__main__":
    main()
