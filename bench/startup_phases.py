#!/usr/bin/env python3
"""How long two builds of the daemon take to start on one blocklist, phase by phase.

Each start is read from the daemon's own log: the time it logs that it is starting, that the
list is parsed ("N entries from M lines"), that the lists are built ("name rules"), and that it
is ready. The builds start in the order old-new-new-old, --rounds times, so drift in a shared
machine's speed falls on both; the medians of each phase are printed. The query log is off and
the upstream is a loopback port nothing listens on: nothing leaves 127.0.0.1.

  bench/startup_phases.py --old ../dnsmoat-before --new build/release/src/app/dnsmoat \\
      --blocklist blocklist.domains --rounds 4

With --downloaded the list is a downloaded one, as the shipped config's are: a loopback HTTP
server serves it once to the new build, which keeps it in a state directory of its own; the
server is then stopped, and every timed start compiles that copy (checking it against its status
as it reads) and finds the refresh not yet due.
"""

import argparse
import functools
import http.server
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MARKS = (("start", "starting"), ("parsed", " entries from "), ("built", " name rules"),
         ("ready", " ready"))


def one_start(binary, config, blocklist, seconds):
    """The phases of one start in milliseconds: (parse, build, start to ready). `blocklist` None:
    the config names the lists."""
    command = [binary, "run", "--config", config, "--listen", "127.0.0.1:25399", "--upstream",
               "127.0.0.1:25398"]
    if blocklist is not None:
        command += ["--blocklist", blocklist]
    run = subprocess.run(["timeout", str(seconds)] + command,
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


def download_once(binary, config, blocklist, state):
    """Serves `blocklist` on a loopback port until `binary`, started with `config` naming the URL
    LIST_URL (filled in here), has kept a copy in `state`."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(Path(blocklist).resolve().parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{Path(blocklist).name}"
    Path(config).write_text(Path(config).read_text().replace("LIST_URL", url))
    daemon = subprocess.Popen([binary, "run", "--config", config, "--listen", "127.0.0.1:25399",
                               "--upstream", "127.0.0.1:25398"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(Path(state).glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    daemon.terminate()
    daemon.wait()
    server.shutdown()
    if not list(Path(state).glob("*.json")):
        sys.exit(f"{binary} kept no copy of {url} in {state} within 60 s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the build before the change")
    ap.add_argument("--new", required=True, help="the build after it")
    ap.add_argument("--blocklist", required=True, help="a list file, e.g. the peers harness's")
    ap.add_argument("--rounds", type=int, default=4, help="old-new-new-old rounds (default 4)")
    ap.add_argument("--seconds", type=float, default=3, help="each daemon's run time (default 3)")
    ap.add_argument("--downloaded", action="store_true",
                    help="serve the list once from loopback; time starts from the kept copy")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "nolog.toml"
        config.write_text(f'[querylog]\nenabled = false\n[lists]\nstate_dir = "{scratch}/state"\n')
        blocklist = args.blocklist
        if args.downloaded:
            with config.open("a") as out:
                out.write('[[blocklists]]\nname = "downloaded"\nurl = "LIST_URL"\n')
            download_once(args.new, str(config), args.blocklist, f"{scratch}/state")
            blocklist = None
        phases = {args.old: [], args.new: []}
        for _ in range(args.rounds):
            for binary in (args.old, args.new, args.new, args.old):
                phases[binary].append(one_start(binary, str(config), blocklist, args.seconds))
    print(f"{'build':<50} {'parse':>8} {'build':>8} {'to ready':>9}  (ms, medians of "
          f"{2 * args.rounds} starts)")
    for binary in (args.old, args.new):
        parse, build, ready = (statistics.median(column) for column in zip(*phases[binary]))
        print(f"{binary:<50} {parse:8.0f} {build:8.0f} {ready:9.0f}")


if __name__ == "__main__":
    main()
