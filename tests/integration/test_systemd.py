"""dnsmoat under a service manager, with the real protocols and tools:

- sd_notify: a Unix datagram socket named by NOTIFY_SOCKET receives READY=1 (once the lists
  answer), STATUS=, WATCHDOG=1 at half of WATCHDOG_USEC, RELOADING=1 / READY=1 around SIGHUP
  and STOPPING=1, as dnsmoat.service (Type=notify, WatchdogSec=) expects;
- socket activation: systemd-socket-activate (from the systemd package) binds the sockets and
  starts dnsmoat on the first query, as dnsmoat.socket does;
- privileges: started as root it switches to [server] user; started as an ordinary user with
  the ambient CAP_NET_BIND_SERVICE (as the unit grants), it binds port 53 and drops it.

Every socket is on loopback.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import base64
from pathlib import Path

import pytest

from conftest import (LOOPBACK, base_config, free_port, make_query, moat_binary, parse_reply,
                      rcode_name, answer_values, tcp_exchange, to_toml, udp_exchange, wait_until)

ACTIVATE = shutil.which("systemd-socket-activate")
SETPRIV = shutil.which("setpriv")


class NotifySocket:
    """The service manager's end of sd_notify: collects every datagram sent to it."""

    def __init__(self, path: str):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        address = "\0" + path[1:] if path.startswith("@") else path
        self.sock.bind(address)
        self.sock.settimeout(0.1)
        self.messages: list[tuple[float, dict[str, str]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            fields = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
            self.messages.append((time.monotonic(), fields))

    def with_key(self, key: str, value: str | None = None) -> list[dict[str, str]]:
        return [m for _, m in self.messages if key in m and (value is None or m[key] == value)]

    def wait_for(self, key: str, value: str | None = None, count: int = 1,
                 timeout: float = 10.0) -> list[dict[str, str]]:
        found = wait_until(lambda: len(self.with_key(key, value)) >= count or None, timeout)
        assert found, (f"no {count}x {key}={value or '*'} within {timeout}s; "
                       f"received: {[m for _, m in self.messages]}")
        return self.with_key(key, value)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()
        if not self.path.startswith("@"):
            Path(self.path).unlink(missing_ok=True)


class Process:
    """dnsmoat (behind an optional wrapper such as systemd-socket-activate), bounded in time."""

    def __init__(self, workdir: Path, config: dict, *, prefix: list[str] = (),
                 env: dict[str, str] | None = None):
        workdir.mkdir(parents=True, exist_ok=True)
        self.dir = workdir
        self.config_path = workdir / "dnsmoat.toml"
        self.config_path.write_text(to_toml(config))
        self.stderr_path = workdir / "dnsmoat.stderr"
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [*prefix, str(moat_binary()), "run", "--config", str(self.config_path),
             "--log-level", "debug"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err, cwd=workdir,
            env={**os.environ, **(env or {})})

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def daemon_pid(self) -> int:
        """dnsmoat's own pid: the wrapper execs it, so the pid is the same."""
        return self.proc.pid

    def status(self) -> dict[str, str]:
        lines = Path(f"/proc/{self.daemon_pid()}/status").read_text().splitlines()
        return dict(l.split(":", 1) for l in lines if ":" in l)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._err.close()
        return self.proc.returncode


@pytest.fixture
def processes():
    made: list[Process] = []
    yield made
    for p in made:
        p.stop()


def config_for(upstream, workdir: Path, *, listen: list[str], blocklist: Path | None = None,
               **server) -> dict:
    cfg = base_config(upstream)
    cfg["server"] = {"listen": listen, "control_socket": "", "user": "", **server}
    cfg["querylog"] = {"path": str(workdir / "querylog.db")}
    cfg["api"] = {"enabled": False}
    cfg["lists"] = {"state_dir": str(workdir / "lists")}
    if blocklist is not None:
        cfg["blocklists"] = [{"name": "test", "path": str(blocklist)}]
    return cfg


def ask(port: int, name: str, *, tcp: bool = False, timeout: float = 3.0):
    q = make_query(name, "A")
    data = tcp_exchange(q.to_wire(), port, timeout) if tcp else udp_exchange(q.to_wire(), port,
                                                                              timeout)
    return parse_reply(q, data, f"{name} on port {port} over {'TCP' if tcp else 'UDP'}")


# -- sd_notify --------------------------------------------------------------------------------

@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_notify_ready_status_watchdog_reload_and_stop(tmp_path, upstream, processes, abstract):
    blocklist = tmp_path / "block.txt"
    blocklist.write_text("ads.example\n")
    path = (f"@moat-notify-{os.getpid()}-{time.monotonic_ns()}" if abstract
            else str(tmp_path / "notify.sock"))
    notify = NotifySocket(path)
    try:
        port = free_port()
        p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"],
                                               blocklist=blocklist),
                    env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"})
        processes.append(p)
        ready = notify.wait_for("READY", "1")[0]
        # READY=1 means served: the very next query is answered, from the loaded list.
        assert answer_values(ask(port, "ads.example."), "A") == ["0.0.0.0"]
        assert "rules" in ready.get("STATUS", ""), ready

        # WATCHDOG=1 every 200 ms (half of WATCHDOG_USEC), from the running event loop.
        first = len(notify.with_key("WATCHDOG", "1"))
        time.sleep(1.0)
        beats = len(notify.with_key("WATCHDOG", "1")) - first
        assert 3 <= beats <= 8, f"{beats} watchdog pings in 1 s at a 400 ms WatchdogSec"

        # STATUS= follows what happened: the query above is counted, and blocked.
        statuses = notify.wait_for("STATUS")
        assert any("1 blocked" in s["STATUS"] for s in statuses), statuses[-3:]

        # A reload: RELOADING=1 (with the monotonic time systemd 253 wants), then READY=1.
        readies = len(notify.with_key("READY", "1"))
        p.proc.send_signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING", "1")[0]
        assert int(reloading["MONOTONIC_USEC"]) > 0
        notify.wait_for("READY", "1", count=readies + 1)

        assert p.stop() == 0
        notify.wait_for("STOPPING", "1", timeout=2)
    finally:
        notify.close()


def test_status_counts_fresh_and_stale_answers_as_from_the_cache(tmp_path, upstream, processes):
    """The STATUS= line's "from the cache" counts every answer the cache gave: fresh ones and,
    with cache.optimistic, the expired ones answered at once while the upstream is asked again."""
    upstream.add("status.example.test", "A", "192.0.2.70", ttl=1)
    path = str(tmp_path / "notify.sock")
    notify = NotifySocket(path)
    try:
        port = free_port()
        config = config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"])
        config["cache"] = {"optimistic": True, "stale_ttl": "7s"}
        p = Process(tmp_path / "d", config, env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"})
        processes.append(p)
        notify.wait_for("READY", "1")
        assert ask(port, "status.example.test.").answer[0].ttl == 1   # forwarded
        assert ask(port, "status.example.test.").answer[0].ttl <= 1   # fresh from the cache
        time.sleep(1.3)                                               # the answer has expired
        assert ask(port, "status.example.test.").answer[0].ttl == 7   # stale, from the cache
        expected = "3 queries, 0 blocked (0%), 2 from the cache"
        found = wait_until(lambda: any(expected in m["STATUS"] for m in notify.with_key("STATUS"))
                           or None, 5)
        assert found, f"no STATUS= with {expected!r}: {notify.with_key('STATUS')[-3:]}"
    finally:
        notify.close()


def test_watchdog_of_another_process_is_not_ours(tmp_path, upstream, processes):
    """WATCHDOG_PID names the process the watchdog is for; a child must not ping for it."""
    path = str(tmp_path / "notify.sock")
    notify = NotifySocket(path)
    try:
        port = free_port()
        p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"]),
                    env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"})
        processes.append(p)
        notify.wait_for("READY", "1")
        time.sleep(0.5)
        assert notify.with_key("WATCHDOG") == []
    finally:
        notify.close()


def test_without_notify_socket_nothing_is_sent(tmp_path, upstream, processes):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"]),
                env=env)
    processes.append(p)
    assert wait_until(lambda: udp_exchange(make_query("localhost.", "A").to_wire(), port, 0.2),
                      10)
    assert "systemd" not in p.stderr()


# -- socket activation --------------------------------------------------------------------------

needs_activate = pytest.mark.skipif(ACTIVATE is None, reason="systemd-socket-activate missing "
                                    "(Debian package systemd)")


@needs_activate
def test_socket_activation_udp_first_query_is_answered(tmp_path, upstream, processes):
    """systemd binds the port and starts dnsmoat on the first datagram, which is answered."""
    port = free_port()
    p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"]),
                prefix=[ACTIVATE, "--datagram", "-l", f"{LOOPBACK}:{port}"])
    processes.append(p)
    time.sleep(0.3)  # the activator is listening; dnsmoat is not started yet
    r = ask(port, "localhost.", timeout=10)
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["127.0.0.1"]
    stderr = wait_until(lambda: "socket from systemd" in p.stderr() and p.stderr(), 5)
    assert f"udp {LOOPBACK}:{port} (socket from systemd)" in stderr
    # The configured listen address was not bound a second time (that would have failed).
    assert "cannot listen" not in stderr
    assert p.stop() == 0


@needs_activate
def test_socket_activation_names_pick_the_listener(tmp_path, upstream, processes):
    """FileDescriptorName= (here --fdname): "dns" serves DNS over TCP, "doh_plain" serves
    DNS over HTTP for a TLS terminator; the configured addresses of those kinds are not bound."""
    tcp_port, http_port, unused = free_port(), free_port(), free_port()
    cfg = config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{unused}"],
                     doh_plain=[f"{LOOPBACK}:{unused}"])
    p = Process(tmp_path / "d", cfg,
                prefix=[ACTIVATE, "-l", f"{LOOPBACK}:{tcp_port}", "-l", f"{LOOPBACK}:{http_port}",
                        "--fdname=dns:doh_plain"])
    processes.append(p)
    time.sleep(0.3)
    r = ask(tcp_port, "localhost.", tcp=True, timeout=10)
    assert answer_values(r, "A") == ["127.0.0.1"]

    q = make_query("localhost.", "A", id=0)
    url = (f"http://{LOOPBACK}:{http_port}/dns-query?dns="
           + base64.urlsafe_b64encode(q.to_wire()).decode().rstrip("="))
    with urllib.request.urlopen(url, timeout=5) as reply:
        assert reply.headers["Content-Type"] == "application/dns-message"
        assert answer_values(parse_reply(q, reply.read(), "DoH GET"), "A") == ["127.0.0.1"]

    stderr = p.stderr()
    assert f"tcp {LOOPBACK}:{tcp_port} (socket from systemd)" in stderr
    assert f"dns over plain http {LOOPBACK}:{http_port} (socket from systemd)" in stderr
    # Neither the UDP nor the TCP of `listen`, nor `doh_plain`, was bound.
    assert udp_exchange(make_query("localhost.", "A").to_wire(), unused, 0.3) is None
    with pytest.raises(OSError):
        socket.create_connection((LOOPBACK, unused), timeout=0.5).close()
    assert p.stop() == 0


@needs_activate
def test_socket_activation_dual_stack_socket_sees_ipv4_clients(tmp_path, upstream, processes):
    """A socket unit with ListenDatagram=53 makes one dual-stack IPv6 socket: IPv4 clients
    arrive as ::ffff:a.b.c.d. They must count as the IPv4 clients they are, or the default
    access list (127.0.0.0/8, private ranges) would refuse them."""
    port = free_port()
    p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"]),
                prefix=[ACTIVATE, "--datagram", "-l", f"[::ffff:{LOOPBACK}]:{port}"])
    processes.append(p)
    time.sleep(0.3)
    r = ask(port, "localhost.", timeout=10)
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["127.0.0.1"]
    assert p.stop() == 0


@needs_activate
def test_socket_activation_refuses_a_datagram_socket_named_for_dot(tmp_path, upstream,
                                                                   processes):
    port = free_port()
    p = Process(tmp_path / "d", config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"]),
                prefix=[ACTIVATE, "--datagram", "-l", f"{LOOPBACK}:{port}", "--fdname=dot"])
    processes.append(p)
    time.sleep(0.3)
    udp_exchange(make_query("localhost.", "A").to_wire(), port, 0.3)  # starts dnsmoat
    assert wait_until(lambda: p.proc.poll() is not None, 10), "dnsmoat kept running"
    assert p.proc.returncode == 69
    assert "datagram socket" in p.stderr() and "named \"dot\"" in p.stderr()


# -- privileges -------------------------------------------------------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (CI runs as root)")


def proc_status_ids(status: dict[str, str], key: str) -> set[int]:
    return {int(v) for v in status[key].split()}


def open_dir() -> Path:
    """A directory every user can enter (the test's tmp_path is root's alone)."""
    d = Path(tempfile.mkdtemp(prefix="moat-priv-", dir="/tmp"))
    d.chmod(0o755)
    return d


@needs_root
def test_root_binds_then_switches_to_the_configured_user(upstream, processes):
    nobody = pwd.getpwnam("nobody")
    base = open_dir()
    try:
        state = base / "state" / "lists"  # missing: created for the user
        port = free_port()
        cfg = config_for(upstream, base, listen=[f"{LOOPBACK}:{port}"], user="nobody")
        cfg["lists"] = {"state_dir": str(state)}
        cfg["querylog"] = {"path": str(base / "log" / "querylog.db")}
        p = Process(base / "d", cfg)
        processes.append(p)
        assert wait_until(lambda: "switched to user nobody" in p.stderr(), 10), p.stderr()
        status = p.status()
        assert proc_status_ids(status, "Uid") == {nobody.pw_uid}
        assert proc_status_ids(status, "Gid") == {nobody.pw_gid}
        assert status["Groups"].split() == [str(nobody.pw_gid)]
        for caps in ("CapEff", "CapPrm", "CapAmb", "CapInh"):
            assert int(status[caps], 16) == 0, (caps, status[caps])
        assert status["NoNewPrivs"].strip() == "1"
        # The directories it writes were made for it, and it writes them.
        assert (base / "log").stat().st_uid == nobody.pw_uid
        assert state.stat().st_uid == nobody.pw_uid
        assert answer_values(ask(port, "localhost."), "A") == ["127.0.0.1"]
        assert wait_until(lambda: (base / "log" / "querylog.db").exists(), 5)
        assert (base / "log" / "querylog.db").stat().st_uid == nobody.pw_uid
        assert p.stop() == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_root
def test_root_without_the_user_warns_and_keeps_serving(upstream, processes, tmp_path):
    port = free_port()
    cfg = config_for(upstream, tmp_path, listen=[f"{LOOPBACK}:{port}"],
                     user="no-such-user-moat")
    p = Process(tmp_path / "d", cfg)
    processes.append(p)
    assert wait_until(lambda: "there is no user no-such-user-moat" in p.stderr(), 10)
    assert answer_values(ask(port, "localhost."), "A") == ["127.0.0.1"]


@needs_root
@pytest.mark.skipif(SETPRIV is None, reason="setpriv missing (Debian package util-linux)")
def test_unprivileged_user_with_the_units_capability_binds_port_53_and_drops_it(upstream,
                                                                                  processes):
    """As dnsmoat.service runs it: an ordinary user with only CAP_NET_BIND_SERVICE, ambient.
    Port 53 on a loopback address of its own (127.0.0.0/8 is all loopback)."""
    nobody = pwd.getpwnam("nobody")
    address = f"127.{os.getpid() % 200 + 20}.{time.monotonic_ns() % 250 + 1}.53"
    base = open_dir()
    try:
        cfg = config_for(upstream, base, listen=[f"{address}:53"])
        cfg["querylog"] = {"enabled": False}
        p = Process(base / "d", cfg,
                    prefix=[SETPRIV, f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                            "--clear-groups", "--inh-caps=+net_bind_service",
                            "--ambient-caps=+net_bind_service"])
        processes.append(p)
        # It binds, then runs itself again without the capability, handing the sockets over.
        assert wait_until(lambda: "ready" in p.stderr(), 10), p.stderr()
        assert "running again without CAP_NET_BIND_SERVICE" in p.stderr()
        assert (f"udp {address}:53 (bound before the capability was dropped)" in p.stderr())
        status = p.status()
        assert proc_status_ids(status, "Uid") == {nobody.pw_uid}
        for caps in ("CapEff", "CapPrm", "CapAmb", "CapInh"):
            assert int(status[caps], 16) == 0, (caps, status[caps])
        q = make_query("localhost.", "A")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.settimeout(3)
            s.sendto(q.to_wire(), (address, 53))
            data, _ = s.recvfrom(4096)
        finally:
            s.close()
        assert answer_values(parse_reply(q, data, "port 53"), "A") == ["127.0.0.1"]
        assert p.stop() == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_root
def test_root_editing_the_services_config_leaves_it_to_its_owner(tmp_path):
    """`sudo dnsmoat password-hash --config /etc/dnsmoat/dnsmoat.toml` rewrites the file (a temp
    file renamed over it): the service's user must still own and read it afterwards."""
    nobody = pwd.getpwnam("nobody")
    config = tmp_path / "dnsmoat.toml"
    config.write_text('[upstream]\nservers = ["127.0.0.1:53"]\n')
    os.chown(config, nobody.pw_uid, nobody.pw_gid)
    config.chmod(0o660)
    done = subprocess.run([str(moat_binary()), "password-hash", "--config", str(config)],
                          input="correct horse battery staple\n", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "$argon2id$" in config.read_text()
    st = config.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (nobody.pw_uid, nobody.pw_gid, 0o660)


@needs_root
def test_root_reading_the_services_log_leaves_its_files_to_the_service(upstream, tmp_path):
    """`sudo dnsmoat log` on a stopped service's log: SQLite creates the -wal and -shm files;
    they must belong to the log's owner, or the service could not open its log again."""
    nobody = pwd.getpwnam("nobody")
    base = open_dir()
    try:
        port = free_port()
        cfg = config_for(upstream, base, listen=[f"{LOOPBACK}:{port}"], user="nobody")
        cfg["querylog"] = {"path": str(base / "log" / "querylog.db"), "flush_interval": "100ms"}
        p = Process(base / "d", cfg)
        assert wait_until(lambda: "switched to user nobody" in p.stderr(), 10), p.stderr()
        ask(port, "localhost.")
        assert p.stop() == 0  # a clean stop folds the -wal file into the database
        for extra in ("querylog.db-wal", "querylog.db-shm"):
            (base / "log" / extra).unlink(missing_ok=True)
        shown = subprocess.run([str(moat_binary()), "log", "--config", str(p.config_path)],
                               capture_output=True, text=True, timeout=30)
        assert shown.returncode == 0, shown.stderr
        assert "localhost" in shown.stdout
        files = {f.name for f in (base / "log").iterdir()}
        assert "querylog.db-shm" in files, files  # what a reader leaves behind
        for f in (base / "log").iterdir():
            assert f.stat().st_uid == nobody.pw_uid, f"{f.name} belongs to uid {f.stat().st_uid}"
    finally:
        shutil.rmtree(base, ignore_errors=True)
