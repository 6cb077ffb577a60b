"""dnsmoat on 127.0.0.1 answering 1,000 names from a hosts file, for the query log's benchmarks
(bench/querylog_write_rate.py, bench/querylog_overhead.py): the query path is then the whole
cost, and no upstream is needed. bench/forward_cost.py gives it an upstream."""

import socket
import subprocess
import time
from pathlib import Path

NAMES = [f"host{i}.example.lan" for i in range(1000)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_inputs(work: Path) -> Path:
    """The hosts file the daemons answer from, and dnsperf's query file (returned)."""
    (work / "hosts").write_text("".join(f"192.168.1.{i % 250 + 1} {n}\n"
                                        for i, n in enumerate(NAMES)))
    queries = work / "queries"
    queries.write_text("".join(f"{n} A\n" for n in NAMES))
    return queries


def wait_answering(proc: subprocess.Popen, port: int, name: str, what: str, log: Path) -> None:
    """Waits until the server on 127.0.0.1:`port` answers `name` (at most 10 s), else kills it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out = subprocess.run(["dig", "+short", "+tries=1", "+time=1", "-p", str(port),
                              "@127.0.0.1", name], capture_output=True, text=True)
        if out.stdout.strip():
            return
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{what} did not answer within 10 s; see {log}")


def start(binary: str, work: Path, name: str, querylog: str, upstream: str = "127.0.0.1:9",
          env: dict[str, str] | None = None, extra_toml: str = "") -> tuple[subprocess.Popen, int]:
    """Starts a daemon whose [querylog] table is `querylog` (TOML lines), forwarding to
    `upstream` and answering the hosts file of write_inputs(); returns it and its port once it
    answers. `extra_toml` (whole tables) goes at the end of its configuration."""
    port = free_port()
    cfg = write_config(work, name, port, querylog, upstream, extra_toml)
    log = work / f"{name}.stderr"
    proc = subprocess.Popen([binary, "run", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), env=env)
    wait_answering(proc, port, NAMES[0], f"dnsmoat {name}", log)
    return proc, port


def write_config(work: Path, name: str, port: int, querylog: str, upstream: str,
                 extra_toml: str = "") -> Path:
    """The configuration start() gives a daemon, as `work`/`name`.toml: listening on
    127.0.0.1:`port`, no control socket and no API, forwarding to `upstream`, answering the hosts
    file of write_inputs(), with `querylog` as its [querylog] table."""
    cfg = work / f"{name}.toml"
    cfg.write_text(f"""
[server]
listen = ["127.0.0.1:{port}"]
control_socket = ""
[upstream]
servers = ["{upstream}"]
[local]
hosts_file = "{work / 'hosts'}"
[api]
enabled = false
[querylog]
{querylog}
{extra_toml}
""")
    return cfg
