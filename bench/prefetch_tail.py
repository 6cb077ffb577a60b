#!/usr/bin/env python3
"""What prefetch (cache.prefetch) does for a household's steady names: two daemons, one with
prefetch and one without, and unbound with `prefetch: yes` and `prefetch: no` beside them, all
forward to one slow upstream on 127.0.0.1 that answers every A query after --delay milliseconds
(an ISP resolver's round trip) with TTL --ttl. A paced client asks each server in turn for
--names names round robin at --rate queries per second for --seconds, after a warm-up of one
TTL and a second (or one round of the names, if longer), asked the same way and not measured,
that puts every name in the cache. Without prefetch every name expires once a TTL and the query
that finds it expired waits for the upstream; with it, a query in the last tenth of the TTL
renews the entry first. (--no-unbound leaves unbound out.)

With --feature optimistic the pairs are dnsmoat with cache.optimistic on and off (prefetch on in
both) and unbound with `serve-expired: yes` (answering at once: `serve-expired-client-timeout:
0`) and `no`. Pick names asked less often than their TTL (--names 300 --rate 100 --ttl 2: each
name every 3 s), which prefetch cannot help: without optimistic answers every such query waits.

Reported per server (medians over --reps, order alternating): latency p50, p99, p99.9 and max,
the share of answers that took longer than half the upstream's delay (they waited for it), and
the upstream queries the measured part caused, and the client's longest delay in sending a
query (ms; longer than a tenth of the TTL, it skips names' last tenth). Loopback only; the
client and the upstream are Python, so their own overhead (tens of microseconds) is in every
latency.

  bench/prefetch_tail.py --binary build/release/src/app/dnsmoat
  bench/prefetch_tail.py --feature optimistic --names 300 --rate 100 --ttl 2
"""

import argparse
import heapq
import math
import multiprocessing
import os
import select
import shutil
import socket
import statistics
import subprocess
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import local_daemon


class SlowUpstream:
    """Answers every query with one A record after `delay` seconds; counts what it was asked.
    A process of its own, so that it never holds the client's interpreter lock."""

    def __init__(self, delay: float, ttl: int):
        self.delay = delay
        self.ttl = ttl
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.queries = multiprocessing.Value("q", 0)
        self._process = multiprocessing.get_context("fork").Process(target=self._serve,
                                                                    daemon=True)
        self._process.start()

    def count(self) -> int:
        return int(self.queries.value)

    def stop(self) -> None:
        self._process.terminate()
        self._process.join()
        self.sock.close()

    def _answer(self, query: bytes) -> bytes | None:
        if len(query) < 12:
            return None
        end = 12
        while end < len(query) and query[end] != 0:
            end += 1 + query[end]
        end += 5  # the root label, QTYPE, QCLASS
        if end > len(query):
            return None
        header = struct.pack(">HHHHHH", struct.unpack(">H", query[:2])[0], 0x8180, 1, 1, 0, 0)
        last = sum(query[12:end]) % 250 + 1
        record = struct.pack(">HHHIH", 0xC00C, 1, 1, self.ttl, 4) + bytes([192, 0, 2, last])
        return header + query[12:end] + record

    def _serve(self) -> None:
        due: list[tuple[float, int, bytes, tuple]] = []
        sequence = 0
        while True:
            timeout = 0.05 if not due else max(0.0, min(0.05, due[0][0] - time.monotonic()))
            readable, _, _ = select.select([self.sock], [], [], timeout)
            if readable:
                data, addr = self.sock.recvfrom(4096)
                answer = self._answer(data)
                if answer is not None:
                    with self.queries.get_lock():
                        self.queries.value += 1
                    sequence += 1
                    heapq.heappush(due, (time.monotonic() + self.delay, sequence, answer, addr))
            now = time.monotonic()
            while due and due[0][0] <= now:
                _, _, answer, addr = heapq.heappop(due)
                self.sock.sendto(answer, addr)


def start_unbound(work: Path, label: str, upstream: int, feature: str, on: bool,
                  probe: str) -> tuple[subprocess.Popen, int]:
    """unbound forwarding everything to the upstream, as the peers harness runs it (one thread,
    iterator only), with its own prefetch or serve-expired; returns it and its port once it
    answers."""
    yes = "yes" if on else "no"
    setting = (f"prefetch: {yes}" if feature == "prefetch" else
               f"serve-expired: {yes}\n    serve-expired-client-timeout: 0\n"
               "    serve-expired-reply-ttl: 30\n    serve-expired-ttl: 86400")
    port = local_daemon.free_port()
    rundir = work / label.replace(" ", "-")
    rundir.mkdir()
    conf = rundir / "unbound.conf"
    conf.write_text(f"""server:
    interface: 127.0.0.1
    port: {port}
    outgoing-interface: 127.0.0.1
    do-ip6: no
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "{rundir}"
    pidfile: ""
    use-syslog: no
    logfile: ""
    verbosity: 0
    num-threads: 1
    module-config: "iterator"
    do-not-query-localhost: no
    qname-minimisation: no
    {setting}
    local-zone: "test." nodefault
forward-zone:
    name: "."
    forward-addr: 127.0.0.1@{upstream}
remote-control:
    control-enable: no
""")
    log = rundir / "stderr"
    proc = subprocess.Popen(["unbound", "-d", "-p", "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"))
    local_daemon.wait_answering(proc, port, probe, label, log)
    return proc, port


def query_bytes(qid: int, name: str) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\x00\x00\x01\x00\x01"


def paced_run(port: int, names: list[str], rate: int, seconds: float, warm_up: float,
              at_warm_up_end) -> tuple[list[float | None], float]:
    """Asks names round robin at `rate` per second for `warm_up` and then `seconds` without a
    pause, calling `at_warm_up_end()` between the two. Returns each measured query's latency in
    seconds (None: no answer within a second), and the longest any query left after its time
    (seconds): a client that stalls longer than a tenth of the TTL skips names' last tenth,
    which then expire."""
    warm = int(rate * warm_up)
    total = warm + int(rate * seconds)
    sent = [0.0] * total
    received: list[float | None] = [None] * total
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    sock.settimeout(0.2)
    done = threading.Event()

    def receive() -> None:
        while not done.is_set():
            try:
                data = sock.recv(4096)
            except socket.timeout:
                continue
            at = time.monotonic()
            qid = struct.unpack(">H", data[:2])[0]
            if qid < total and received[qid] is None:
                received[qid] = at

    receiver = threading.Thread(target=receive, daemon=True)
    receiver.start()
    start = time.monotonic()
    for i in range(total):
        if i == warm:
            at_warm_up_end()
        wait = start + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        sent[i] = time.monotonic()
        sock.send(query_bytes(i, names[i % len(names)]))
    time.sleep(1.0)
    done.set()
    receiver.join()
    sock.close()
    lag = max(at - (start + i / rate) for i, at in enumerate(sent))
    return [None if r is None else r - s for s, r in zip(sent[warm:], received[warm:])], lag


def percentile(sorted_values: list[float], p: float) -> float:
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))  # nearest rank
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summarise(latencies: list[float | None], slow: float) -> dict[str, float]:
    answered = sorted(x for x in latencies if x is not None)
    return {
        "p50": percentile(answered, 50) * 1e3,
        "p99": percentile(answered, 99) * 1e3,
        "p99.9": percentile(answered, 99.9) * 1e3,
        "max": answered[-1] * 1e3,
        "slow %": 100.0 * sum(1 for x in answered if x > slow) / len(answered),
        "lost": float(len(latencies) - len(answered)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default="build/release/src/app/dnsmoat")
    parser.add_argument("--names", type=int, default=100)
    parser.add_argument("--rate", type=int, default=500, help="queries per second")
    parser.add_argument("--seconds", type=float, default=16.0)
    parser.add_argument("--ttl", type=int, default=4, help="the upstream's TTL, seconds")
    parser.add_argument("--delay", type=float, default=20.0, help="the upstream's delay, ms")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-unbound", action="store_true", help="dnsmoat only")
    parser.add_argument("--feature", choices=["prefetch", "optimistic"], default="prefetch",
                        help="what the pairs of servers differ in")
    args = parser.parse_args()
    for tool in ["dig"] + ([] if args.no_unbound else ["unbound"]):
        if not shutil.which(tool):
            print(f"prefetch_tail.py: needs {tool} (scripts/setup.sh test)", file=sys.stderr)
            return 2

    work = Path(tempfile.mkdtemp(prefix="moat-prefetch-"))
    local_daemon.write_inputs(work)
    upstream = SlowUpstream(args.delay / 1e3, args.ttl)
    names = [f"name{i}.prefetch.test" for i in range(args.names)]
    daemons = {}
    try:
        unbound_key = "prefetch" if args.feature == "prefetch" else "serve-expired"
        for label, on in ((f"dnsmoat, {args.feature} on", "true"),
                          (f"dnsmoat, {args.feature} off", "false")):
            daemons[label] = local_daemon.start(
                args.binary, work, label.replace(", ", "-").replace(" ", "-"), "enabled = false",
                upstream=f"127.0.0.1:{upstream.port}",
                extra_toml=f"[cache]\n{args.feature} = {on}\n")
        if not args.no_unbound:
            for label, on in ((f"unbound, {unbound_key}: yes", True),
                              (f"unbound, {unbound_key}: no", False)):
                daemons[label] = start_unbound(work, label.replace(", ", "-").replace(": ", "-"),
                                               upstream.port, args.feature, on, names[0])
        results: dict[str, list[dict[str, float]]] = {label: [] for label in daemons}
        for rep in range(args.reps):
            order = list(daemons) if rep % 2 == 0 else list(reversed(daemons))  # alternating
            for label in order:
                port = daemons[label][1]
                # The warm-up, asked like the rest, puts every name in the cache and lets a
                # TTL pass: the measured part starts in the steady state, with no idle gap in
                # which entries could expire unasked.
                before = [0]
                warm_up = max(args.ttl + 1.0, len(names) / args.rate)
                latencies, lag = paced_run(port, names, args.rate, args.seconds, warm_up,
                                           lambda: before.__setitem__(0, upstream.count()))
                row = summarise(latencies, args.delay / 2e3)
                row["upstream"] = float(upstream.count() - before[0])
                row["send lag"] = lag * 1e3
                results[label].append(row)
                print(f"rep {rep + 1} {label}: " +
                      ", ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
        keys = ["p50", "p99", "p99.9", "max", "slow %", "upstream", "lost", "send lag"]
        print(f"\n{args.names} names at {args.rate} qps for {args.seconds:g} s, TTL {args.ttl} s, "
              f"upstream delay {args.delay:g} ms; medians of {args.reps} (latencies in ms)")
        print("| server | " + " | ".join(keys) + " |")
        print("|---|" + "---|" * len(keys))
        for label, rows in results.items():
            cells = [f"{statistics.median(r[k] for r in rows):.3f}" for k in keys]
            print(f"| {label} | " + " | ".join(cells) + " |")
    finally:
        for proc, _ in daemons.values():
            proc.terminate()
            proc.wait(timeout=10)
        upstream.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    sys.exit(main())
