#!/usr/bin/env python3
"""Wake-ups and CPU time of a DNS server that is idle or nearly so: a household's network at
night. Starts dnsmoat as installed (the query log on), dnsmoat with the log off, and the peers
that are installed (dnsmasq, unbound, dnsdist), each with its defaults on a loopback port, asks
each for a blocked name at a trickle of queries per second for a while, and reads every thread's
context switches and time on the CPU from /proc. Loopback only: the upstreams named are
loopback ports where nothing answers, and only blocked names are asked.

  bench/idle_wakeups.py --binary build/release/src/app/dnsmoat --seconds 30 --rates 0,0.2,1,5

With --baseline OTHER_BINARY, that build runs too (as installed), for a before and after.

A context switch is a thread going to sleep or being put off the CPU: for a server with nothing
to do, each is a wake-up that kept the CPU from its idle state.
"""

import argparse
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dns.message

import paced_miss_peer

BLOCKED = "ads.idle.test."
NOWHERE = "127.0.0.1:9"  # discard: no DNS server, and only blocked names are asked


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dnsmoat(binary: str, work: Path, port: int, log: bool) -> list[str]:
    (work / "block.txt").write_text(BLOCKED.rstrip(".") + "\n")
    api = free_port()
    querylog = f'path = "{work}/querylog.db"' if log else "enabled = false"
    (work / "dnsmoat.toml").write_text(f"""[server]
listen = ["127.0.0.1:{port}"]
control_socket = ""
user = ""
[upstream]
servers = ["{NOWHERE}"]
[api]
listen = ["127.0.0.1:{api}"]
[querylog]
{querylog}
[lists]
state_dir = "{work}/lists"
[[blocklists]]
name = "idle"
path = "{work}/block.txt"
""")
    return [binary, "run", "--config", str(work / "dnsmoat.toml")]


def dnsmasq(work: Path, port: int) -> list[str]:
    return ["dnsmasq", "-k", "-C", "/dev/null", "--pid-file=", "--user=root", "--no-resolv",
            "--no-hosts", "--bind-interfaces", "--listen-address=127.0.0.1", f"--port={port}",
            f"--server={NOWHERE.replace(':', '#')}", f"--address=/{BLOCKED.rstrip('.')}/0.0.0.0"]


def unbound(work: Path, port: int) -> list[str]:
    host, upstream_port = NOWHERE.split(":")
    (work / "unbound.conf").write_text(f"""server:
  interface: 127.0.0.1@{port}
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "{work}"
  pidfile: ""
  use-syslog: no
  local-zone: "{BLOCKED}" always_nxdomain
forward-zone:
  name: "."
  forward-addr: {host}@{upstream_port}
""")
    return ["unbound", "-d", "-c", str(work / "unbound.conf")]


def dnsdist(work: Path, port: int) -> list[str]:
    (work / "dnsdist.conf").write_text(f"""setLocal("127.0.0.1:{port}")
newServer({{address="{NOWHERE}"}})
addAction("{BLOCKED}", SpoofAction("0.0.0.0"))
""")
    return ["dnsdist", "--supervised", "--disable-syslog", "-C", str(work / "dnsdist.conf")]


def switches_and_cpu_ns(pid: int) -> tuple[int, int]:
    """Context switches of every thread (paced_miss_peer's count) and their time on the CPU in
    nanoseconds: schedstat's, since /proc/PID/stat counts in ticks of 10 ms, too coarse here."""
    _, sleeps, preempted = paced_miss_peer.thread_counts(pid)
    cpu_ns = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            cpu_ns += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # a thread that just ended
            continue
    return sleeps + preempted, cpu_ns


def ask(port: int) -> bool:
    query = dns.message.make_query(BLOCKED, "A")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(query.to_wire(), ("127.0.0.1", port))
        try:
            return dns.message.from_wire(s.recv(4096)).id == query.id
        except (socket.timeout, dns.exception.DNSException):
            return False


def measure(command: list[str], port: int, seconds: float, rate: float) -> tuple[float, float]:
    """Wake-ups per second and CPU milliseconds per minute over `seconds`, asked at `rate`."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not ask(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not answer on port {port}")
            time.sleep(0.1)
        time.sleep(2)  # past the start-up's own work and the first query's
        switches0, cpu0 = switches_and_cpu_ns(proc.pid)
        start = time.monotonic()
        asked = 0
        while (now := time.monotonic()) < start + seconds:
            if rate > 0 and asked < int((now - start) * rate) + 1:
                ask(port)
                asked += 1
            time.sleep(min(0.05, start + seconds - now))
        switches1, cpu1 = switches_and_cpu_ns(proc.pid)
        return (switches1 - switches0) / seconds, (cpu1 - cpu0) / 1e6 * 60 / seconds
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the dnsmoat binary")
    ap.add_argument("--seconds", type=float, default=30, help="per system and rate")
    ap.add_argument("--rates", default="0,0.2,1,5", help="queries per second, comma-separated")
    ap.add_argument("--baseline", help="another dnsmoat binary, run as installed beside it")
    ap.add_argument("--no-peers", action="store_true", help="dnsmoat only")
    args = ap.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    with tempfile.TemporaryDirectory(prefix="moat-idle-") as tmp:
        work = Path(tmp)
        systems = {} if not args.baseline else {
            "dnsmoat --baseline (query log on)":
                lambda p: dnsmoat(args.baseline, work / "log", p, True),
        }
        systems |= {
            "dnsmoat (query log on)": lambda p: dnsmoat(args.binary, work / "log", p, True),
            "dnsmoat (query log off)": lambda p: dnsmoat(args.binary, work / "nolog", p, False),
            "dnsmasq": lambda p: dnsmasq(work, p),
            "unbound": lambda p: unbound(work, p),
            "dnsdist": lambda p: dnsdist(work, p),
        }
        (work / "log").mkdir()
        (work / "nolog").mkdir()
        print("| system | " + " | ".join(f"{r:g} q/s: wake-ups/s, CPU ms/min" for r in rates)
              + " |")
        print("|---|" + "---|" * len(rates))
        for name, make in systems.items():
            program = name.split()[0] if not name.startswith("dnsmoat") else args.binary
            if args.no_peers and not name.startswith("dnsmoat"):
                continue
            if not shutil.which(program):
                print(f"| {name} | " + " | ".join("not installed" for _ in rates) + " |")
                continue
            cells = []
            for rate in rates:
                port = free_port()
                wakes, cpu = measure(make(port), port, args.seconds, rate)
                cells.append(f"{wakes:.1f}, {cpu:.1f}")
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
