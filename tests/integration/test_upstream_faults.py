"""Upstream faults through the real binary, beyond test_upstream.py: an upstream that answers only
after the client was given up on (SERVFAIL on time, the late answer ignored, never a second
answer), serve-stale when every upstream fails, a UDP answer cut in the middle of a record (with
and without TC), a forged answer from another source port (logged), a TCP upstream that sends a
length prefix and half the message and closes (or resets, or closes at once), DoT and DoH
upstreams that do not speak TLS at all and a DoH upstream whose certificate does not verify, and
no file descriptor leaked by a burst of all of these.

Already covered elsewhere (not repeated): silent / SERVFAIL / REFUSED first upstream with failover
(test_upstream.py::test_failover_to_second_upstream), every upstream silent / SERVFAIL / closed
(test_upstream.py::test_all_upstreams_failing_servfail), TC retried over TCP
(test_upstream.py::test_upstream_truncation_retried_over_tcp), wrong ID, wrong question, wrong
port, garbage followed by the genuine answer
(test_upstream.py::test_forged_upstream_answers_ignored), DoT certificates for the wrong name,
from an untrusted CA or not matching a pin
(test_encrypted_upstream.py::test_a_certificate_that_does_not_prove_the_server_is_refused)."""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
import time

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rrset
import pytest

from conftest import (LOOPBACK, answer_values, base_config, closed_port, free_port, make_query,
                      parse_reply, rcode_name, wait_until)
from test_encrypted import NAME, encrypted_config, pki, port_of  # noqa: F401 (pki: a fixture)
from test_metrics import metric

GENUINE = "192.0.2.44"
OTHER = "192.0.2.45"


# --------------------------------------------------------------------------------------------
# Helpers: answers cut short, a TCP upstream that breaks off, a server that is not TLS
# --------------------------------------------------------------------------------------------

def without_edns(r: dns.message.Message) -> dns.message.Message:
    r.use_edns(False)
    return r


def cut_mid_record(up, tc: bool = False):
    """A step for FakeUpstream: over UDP the genuine answer cut inside its last record (TC set
    when `tc`); over TCP the whole genuine answer."""
    def step(q, transport):
        r = up.genuine(q)
        if transport == "tcp":
            return r
        without_edns(r)
        if tc:
            r.flags |= dns.flags.TC
        wire = r.to_wire()
        assert len(wire) > 40
        return wire[:-3] if not tc else wire[:len(wire) // 2 + 7]
    return step


def local_fds(d) -> int:
    return len(os.listdir(f"/proc/{d.proc.pid}/fd"))


def fd_targets(d) -> list[str]:
    out = []
    for fd in os.listdir(f"/proc/{d.proc.pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{d.proc.pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(out)


def socket_kinds(targets: list[str]) -> list[str]:
    """socket:[INODE] named by its protocol and state from /proc/net (for failure messages)."""
    by_inode = {}
    for proto in ("udp", "udp6", "tcp", "tcp6", "unix"):
        try:
            lines = open(f"/proc/net/{proto}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            inode = f[6] if proto == "unix" else f[9]
            by_inode[inode] = proto if proto == "unix" else f"{proto} {f[1]}->{f[2]} st={f[3]}"
    out = []
    for t in targets:
        inode = t[len("socket:["):-1] if t.startswith("socket:[") else None
        out.append(by_inode.get(inode, t) if inode else t)
    return out


class _Server:
    """A TCP listener (and optionally a UDP socket on the same port) served by one thread, each
    connection by a thread of its own; every wait bounded; closed by close()."""

    def __init__(self, udp: bool):
        self.port = free_port()
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind((LOOPBACK, self.port))
        self.tcp.listen(64)
        self.udp = None
        if udp:
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind((LOOPBACK, self.port))
        self.accepted = 0
        self.udp_queries = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []
        self._main = threading.Thread(target=self._serve, daemon=True)
        self._main.start()

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def _serve(self) -> None:
        socks = [self.tcp] + ([self.udp] if self.udp else [])
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select(socks, [], [], 0.1)
            except (OSError, ValueError):
                return
            for s in readable:
                try:
                    if s is self.udp:
                        wire, peer = self.udp.recvfrom(65535)
                        self.udp_queries += 1
                        self.on_udp(wire, peer)
                    else:
                        conn, _ = self.tcp.accept()
                        self.accepted += 1
                        self._conns.append(conn)
                        t = threading.Thread(target=self._conn, args=(conn,), daemon=True)
                        self._threads.append(t)
                        t.start()
                except OSError:
                    continue
                except Exception as e:  # noqa: BLE001 - recorded, checked by the fixture
                    self.errors.append(f"{type(e).__name__}: {e}")

    def _conn(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(0.2)
            self.on_tcp(conn)
        except OSError:
            pass
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def read_exact(self, conn: socket.socket, n: int, seconds: float = 5.0) -> bytes | None:
        buf, deadline = b"", time.monotonic() + seconds
        while len(buf) < n and not self._stop.is_set() and time.monotonic() < deadline:
            try:
                chunk = conn.recv(n - len(buf))
            except socket.timeout:
                continue
            if not chunk:
                return None
            buf += chunk
        return buf if len(buf) == n else None

    def on_udp(self, wire: bytes, peer) -> None:
        pass

    def on_tcp(self, conn: socket.socket) -> None:
        pass

    def close(self) -> None:
        self._stop.set()
        self._main.join(timeout=2)
        for t in self._threads:
            t.join(timeout=2)
        for s in [self.tcp, self.udp, *self._conns]:
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


class TcpCutUpstream(_Server):
    """Over UDP: TC=1 and no records, so the daemon comes over TCP. Over TCP, by `mode`:
    "half"   the length prefix of the whole answer and half of it, then close
    "prefix" one octet of the length prefix, then close
    "close"  read the query, close without a word
    "reset"  read the query, close with a reset (SO_LINGER 0)"""

    def __init__(self, mode: str):
        self.mode = mode
        super().__init__(udp=True)

    def on_udp(self, wire: bytes, peer) -> None:
        q = dns.message.from_wire(wire)
        r = dns.message.make_response(q)
        r.flags |= dns.flags.TC
        self.udp.sendto(r.to_wire(), peer)

    def on_tcp(self, conn: socket.socket) -> None:
        head = self.read_exact(conn, 2)
        if head is None:
            return
        wire = self.read_exact(conn, struct.unpack(">H", head)[0])
        if wire is None:
            return
        q = dns.message.from_wire(wire)
        r = dns.message.make_response(q)
        r.answer.append(dns.rrset.from_text(q.question[0].name, 300, "IN", "A", "192.0.2.99"))
        full = r.to_wire()
        if self.mode == "half":
            conn.sendall(struct.pack(">H", len(full)) + full[:len(full) // 2])
        elif self.mode == "prefix":
            conn.sendall(struct.pack(">H", len(full))[:1])
        elif self.mode == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.05)


class NotTlsServer(_Server):
    """A TCP server where a DoT or DoH upstream is expected, that does not speak TLS:
    "silent"  accepts and never says a word (held until the client gives up, at most 10 s)
    "http"    answers plain HTTP/1.1 400 and closes
    "dns"     answers a DNS-over-TCP frame of junk and closes
    "close"   accepts and closes at once
    "junk"    sends 4 KiB of junk and closes"""

    def __init__(self, mode: str):
        self.mode = mode
        super().__init__(udp=False)

    def on_tcp(self, conn: socket.socket) -> None:
        if self.mode == "silent":
            deadline = time.monotonic() + 10
            while not self._stop.is_set() and time.monotonic() < deadline:
                try:
                    if conn.recv(65536) == b"":
                        return
                except socket.timeout:
                    continue
            return
        if self.mode == "close":
            return
        try:
            conn.recv(65536)  # the ClientHello
        except socket.timeout:
            pass
        if self.mode == "http":
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close"
                         b"\r\n\r\n")
        elif self.mode == "dns":
            conn.sendall(struct.pack(">H", 30) + bytes(range(30)))
        elif self.mode == "junk":
            conn.sendall(bytes((i * 7 + 3) & 0xFF for i in range(4096)))
        time.sleep(0.05)


@pytest.fixture
def servers():
    made: list[_Server] = []

    def make(cls, *args):
        s = cls(*args)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
    errors = [e for s in made for e in s.errors]
    assert not errors, f"helper server errors: {errors}"


def ask(d, name: str, rdtype: str = "A", timeout: float = 5.0):
    t0 = time.monotonic()
    r = d.query(name, rdtype, timeout=timeout)
    return r, time.monotonic() - t0


# --------------------------------------------------------------------------------------------
# Slow upstreams
# --------------------------------------------------------------------------------------------

def test_an_answer_after_the_deadline_gets_servfail_on_time_and_is_then_ignored(upstream, moat):
    upstream.add("late.faults.test", "A", GENUINE)
    upstream.rule("late.faults.test", ("delay", 1.4), "answer")
    # One server: its attempt timing out is every server failed, so SERVFAIL comes after
    # `timeout`; its answer comes later still.
    d = moat(base_config(upstream, upstream={"timeout": "500ms", "total_timeout": "1s"}))
    q = make_query("late.faults.test", "A")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((LOOPBACK, 0))
        t0 = time.monotonic()
        s.sendto(q.to_wire(), (LOOPBACK, d.port))
        s.settimeout(3)
        data, _ = s.recvfrom(65535)
        elapsed = time.monotonic() - t0
        r = parse_reply(q, data, "late.faults.test")
        assert rcode_name(r) == "SERVFAIL", f"{rcode_name(r)} {r.answer}"
        assert 0.4 <= elapsed < 1.2, f"SERVFAIL after {elapsed:.2f}s (timeout 500ms)"
    # The upstream's late answer (at 1.6 s) must not turn into a second answer to the client.
        s.settimeout(1.5)
        try:
            extra, _ = s.recvfrom(65535)
        except socket.timeout:
            extra = None
    assert extra is None, f"a second answer reached the client: {dns.message.from_wire(extra)}"
    assert wait_until(lambda: d.stderr_lines("ignored a datagram"), 2), \
        "the late answer was not logged as ignored at debug"
    # The daemon goes on: the name answers once the upstream is quick again.
    upstream.rule("late.faults.test", "answer")
    r, elapsed = ask(d, "late.faults.test")
    assert answer_values(r, "A") == [GENUINE] and elapsed < 1.0, (r, elapsed)


def test_a_slow_first_upstream_is_overtaken_and_its_late_answer_ignored(upstream_factory, moat):
    slow, quick = upstream_factory("slow"), upstream_factory("quick")
    for i in range(5):
        slow.add(f"s{i}.faults.test", "A", OTHER)
        slow.rule(f"s{i}.faults.test", ("delay", 0.8), "answer")
        quick.add(f"s{i}.faults.test", "A", GENUINE)
    d = moat(base_config(slow, quick, upstream={"strategy": "failover", "timeout": "250ms",
                                                "total_timeout": "3s"}))
    for i in range(5):
        r, elapsed = ask(d, f"s{i}.faults.test")
        assert answer_values(r, "A") == [GENUINE], f"s{i}: {r.answer}"
        assert elapsed < 0.75, f"s{i}: {elapsed:.2f}s: the quick upstream was not asked in time"
    time.sleep(1.0)  # every late answer has arrived
    for i in range(5):  # cached: the late answers did not replace them
        assert answer_values(d.query(f"s{i}.faults.test"), "A") == [GENUINE]


@pytest.mark.parametrize("failure", ["servfail", "silent"])
def test_serve_stale_when_every_upstream_fails(upstream, moat, failure):
    upstream.add("stale.faults.test", "A", GENUINE, ttl=1)
    d = moat(base_config(upstream, upstream={"timeout": "600ms", "total_timeout": "1s"},
                         cache={"serve_stale": True, "stale_ttl": "7s", "stale_max_age": "1h"},
                         querylog={"flush_interval": "100ms"}))
    r = d.query("stale.faults.test")
    assert answer_values(r, "A") == [GENUINE]
    time.sleep(1.3)  # the entry has expired
    upstream.rule("stale.faults.test", failure)
    r, elapsed = ask(d, "stale.faults.test", timeout=5)
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [GENUINE], \
        f"{failure}: expected the stale answer, got {rcode_name(r)} {r.answer}"
    assert r.answer[0].ttl == 7, f"stale TTL {r.answer[0].ttl}, stale_ttl is 7s"
    assert elapsed < 1.6, f"stale answer after {elapsed:.2f}s (total_timeout 1s)"
    # EDE 3 (Stale Answer) for a client that speaks EDNS.
    r = d.query("stale.faults.test", use_edns=0)
    codes = [o.code for o in r.options if o.otype == dns.edns.EDE]
    assert 3 in codes, f"no EDE 3 on the stale answer: {r.options}"
    assert metric(d, "dnsmoat_queries_total", outcome="stale") >= 2
    # A name that was never cached still gets SERVFAIL.
    upstream.rule("never.faults.test", failure)
    r, elapsed = ask(d, "never.faults.test", timeout=5)
    assert rcode_name(r) == "SERVFAIL" and elapsed < 1.6, (rcode_name(r), elapsed)


# --------------------------------------------------------------------------------------------
# Answers cut short, forgeries from another port
# --------------------------------------------------------------------------------------------

def test_a_udp_answer_cut_mid_record_is_ignored(upstream_factory, moat):
    first, second = upstream_factory("first"), upstream_factory("second")
    first.add("cut.faults.test", "A", OTHER)
    first.rule("cut.faults.test", cut_mid_record(first))
    second.add("cut.faults.test", "A", GENUINE)
    first.add("cutonly.faults.test", "A", OTHER)
    first.rule("cutonly.faults.test", cut_mid_record(first))
    second.rule("cutonly.faults.test", "servfail")
    d = moat(base_config(first, second, upstream={"timeout": "300ms", "total_timeout": "1s"}))
    r, elapsed = ask(d, "cut.faults.test")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [GENUINE], r
    assert elapsed < 0.9, f"{elapsed:.2f}s"
    assert d.wait_for_log("malformed", timeout=2), d.stderr_text()[-2000:]
    # Nothing but the cut answer: a SERVFAIL on time, never the cut answer's records.
    r, elapsed = ask(d, "cutonly.faults.test")
    assert rcode_name(r) == "SERVFAIL" and not r.answer and elapsed < 1.5, (r, elapsed)
    assert d.alive()


def test_a_truncated_answer_cut_mid_record_is_retried_over_tcp(upstream, moat):
    texts = [f'"part-{i}-' + "t" * 60 + '"' for i in range(8)]
    upstream.add("tccut.faults.test", "TXT", *texts)
    upstream.rule("tccut.faults.test", cut_mid_record(upstream, tc=True))
    d = moat(base_config(upstream, upstream={"timeout": "500ms", "total_timeout": "2s"}))
    r = d.query("tccut.faults.test", "TXT", use_edns=0, payload=1232)
    assert rcode_name(r) == "NOERROR" and answer_values(r, "TXT") == sorted(texts), r
    assert upstream.queries("tccut.faults.test", transport="tcp"), "not retried over TCP"


def test_a_forgery_from_another_source_port_is_ignored_and_logged(upstream, moat):
    upstream.add("port.faults.test", "A", GENUINE)
    upstream.rule("port.faults.test", "wrong_port", ("delay", 0.1), "answer")
    d = moat(base_config(upstream, upstream={"timeout": "1s", "total_timeout": "2s"}))
    r = d.query("port.faults.test")
    assert answer_values(r, "A") == [GENUINE], f"the forgery got through: {r.answer}"
    forged_port = upstream.other.getsockname()[1]
    lines = d.wait_for_log(f"ignored a datagram from 127.0.0.1:{forged_port}", timeout=2)
    assert lines and upstream.address in lines[0], \
        f"no 'ignored a datagram from 127.0.0.1:{forged_port}' line:\n{d.stderr_text()[-2000:]}"
    server = {"server": upstream.address, "route": "0"}
    assert metric(d, "dnsmoat_upstream_answers_total", **server) == 1


# --------------------------------------------------------------------------------------------
# TCP broken off
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["half", "prefix", "close", "reset"])
def test_a_tcp_upstream_that_breaks_off_mid_message(servers, upstream_factory, moat, mode):
    cut = servers(TcpCutUpstream, mode)
    good = upstream_factory("good")
    good.add("tcp.faults.test", "A", GENUINE)
    alone = moat(base_config(cut.address, upstream={"timeout": "800ms", "total_timeout": "3s"}))
    r, elapsed = ask(alone, "tcp.faults.test")
    assert rcode_name(r) == "SERVFAIL" and not r.answer, f"{mode}: {rcode_name(r)} {r.answer}"
    assert cut.accepted >= 1, "the daemon never came over TCP"
    assert elapsed < 0.8, f"{mode}: SERVFAIL after {elapsed:.2f}s: a broken-off TCP answer is " \
                          f"a failure at once, not a timeout"
    both = moat(base_config(cut.address, good, upstream={"timeout": "800ms",
                                                         "total_timeout": "3s"}))
    r, elapsed = ask(both, "tcp.faults.test")
    assert answer_values(r, "A") == [GENUINE] and elapsed < 0.8, (mode, r.answer, elapsed)
    for d in (alone, both):
        assert answer_values(d.query("localhost"), "A") == ["127.0.0.1"]


# --------------------------------------------------------------------------------------------
# Encrypted upstreams that fail
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["tls", "https"])
@pytest.mark.parametrize("mode", ["silent", "http", "dns", "close", "junk", "no listener"])
def test_an_encrypted_upstream_that_does_not_speak_tls(servers, upstream_factory, moat, scheme,
                                                       mode):
    if mode == "no listener":
        port = free_port()
        bad = None
    else:
        bad = servers(NotTlsServer, mode)
        port = bad.port
    url = (f"tls://{LOOPBACK}:{port}#{NAME}" if scheme == "tls"
           else f"https://{LOOPBACK}:{port}/dns-query#{NAME}")
    plain = upstream_factory("plain")
    for i in range(12):
        plain.add(f"e{i}.faults.test", "A", GENUINE)
    d = moat(base_config(url, plain, upstream={"timeout": "500ms", "total_timeout": "3s"}))
    r, elapsed = ask(d, "e0.faults.test")
    assert answer_values(r, "A") == [GENUINE], f"{scheme} {mode}: {rcode_name(r)} {r.answer}"
    assert elapsed < 1.2, f"{scheme} {mode}: {elapsed:.2f}s (timeout 500ms)"
    lines = d.wait_for_log(f"cannot connect to {scheme}://{LOOPBACK}:{port}", timeout=3)
    assert lines, f"{scheme} {mode}: no 'cannot connect' line:\n{d.stderr_text()[-2000:]}"
    # While it keeps failing, queries go on to the next server without waiting on it, and the
    # back-off (250 ms doubling) bounds the connection attempts.
    t0 = time.monotonic()
    for i in range(1, 12):
        r, elapsed = ask(d, f"e{i}.faults.test")
        assert answer_values(r, "A") == [GENUINE], (scheme, mode, i, r.answer)
        assert elapsed < 1.2, (scheme, mode, i, elapsed)
    spent = time.monotonic() - t0
    if bad is not None:
        assert bad.accepted <= 3 + spent / 0.25, \
            f"{bad.accepted} connections in {spent:.1f}s: no back-off"
    assert d.alive()


def test_a_doh_upstream_whose_certificate_does_not_verify(upstream, upstream_factory, moat, pki,
                                                          tmp_path):
    upstream.add("www.faults.test", "A", OTHER)
    back_dir = tmp_path / "backend"
    back_dir.mkdir()
    back = moat(encrypted_config(upstream, pki, back_dir))
    plain = upstream_factory("plain")
    plain.add("www.faults.test", "A", GENUINE)
    doh = f"https://{LOOPBACK}:{port_of(back, 'doh')}/dns-query#{NAME}"
    cfg = base_config(doh, plain, upstream={"timeout": "1s", "total_timeout": "3s",
                                            "tls_ca_file": str(pki["other_ca"])})
    front = moat(cfg)
    r = front.query("www.faults.test")
    assert answer_values(r, "A") == [GENUINE], r.answer
    assert not upstream.queries("www.faults.test"), "the query went through the unverified server"
    lines = front.wait_for_log("certificate not accepted")
    assert lines and "https://" in lines[0], front.stderr_text()[-2000:]


# --------------------------------------------------------------------------------------------
# No leak
# --------------------------------------------------------------------------------------------

def test_a_burst_of_upstream_failures_leaks_no_file_descriptor(servers, upstream_factory, moat):
    kinds: dict[str, str] = {}   # domain -> its one server
    for fault in ("silent", "servfail", "garbage", "wrong_id", "wrong_port", "refused"):
        up = upstream_factory(fault)
        up.default = [fault]
        kinds[f"{fault.replace('_', '')}.burst.test"] = up.address
    cut = upstream_factory("cut")
    cut.default = [cut_mid_record(cut)]
    cut.add("x.cut.burst.test", "A", OTHER)
    kinds["cut.burst.test"] = cut.address
    for mode in ("half", "reset"):
        kinds[f"tcp{mode}.burst.test"] = servers(TcpCutUpstream, mode).address
    kinds["closed.burst.test"] = f"{LOOPBACK}:{closed_port()}"
    good = upstream_factory("good")
    good.default = ["answer"]
    not_tls = servers(NotTlsServer, "close")
    silent_tls = servers(NotTlsServer, "silent")
    cfg = base_config(f"tls://{LOOPBACK}:{not_tls.port}#{NAME}",
                      f"https://{LOOPBACK}:{silent_tls.port}/dns-query#{NAME}", good,
                      upstream={"timeout": "300ms", "total_timeout": "1s",
                                "conditional": [{"domains": [dom], "servers": [addr]}
                                                for dom, addr in kinds.items()]},
                      cache={"size": 0})
    d = moat(cfg, log_level="info")

    def burst(tag: str, per_kind: int) -> dict[str, int]:
        """Every query of the burst in flight at once; each must be answered."""
        socks, pending = [], {}
        outcomes: dict[str, int] = {}
        names = [f"{tag}{i}.{dom}" for dom in kinds for i in range(per_kind)]
        names += [f"{tag}{i}.good.burst.test" for i in range(per_kind)]
        try:
            for n, name in enumerate(names):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind((LOOPBACK, 0))
                q = make_query(name, "A")
                pending[s] = (q, name)
                s.sendto(q.to_wire(), (LOOPBACK, d.port))
            deadline = time.monotonic() + 10
            while pending and time.monotonic() < deadline:
                readable, _, _ = select.select(list(pending), [], [], 0.2)
                for s in readable:
                    data, _ = s.recvfrom(65535)
                    q, name = pending.pop(s)
                    r = parse_reply(q, data, name)
                    assert not [v for v in answer_values(r, "A") if v in ("203.0.113.66", OTHER)], \
                        f"{name}: a forged or broken answer reached the client: {r.answer}"
                    key = name.split(".", 1)[1] + " " + rcode_name(r)
                    outcomes[key] = outcomes.get(key, 0) + 1
        finally:
            for s in socks:
                s.close()
        assert not pending, f"{len(pending)} queries never answered, e.g. " \
                            f"{[n for _, n in list(pending.values())[:5]]}"
        return outcomes

    # Warm-up: every pool socket (16 per family, made as they are drawn at random), timer and
    # connection is made; until the count holds still for a round (at most 6 rounds).
    warm: list[int] = []
    for round_ in range(6):
        burst(f"warm{round_}x", 15)
        time.sleep(1.5)        # every attempt of the round has ended
        warm.append(local_fds(d))
        if len(warm) >= 2 and warm[-1] == warm[-2]:
            break
    before = local_fds(d)
    before_targets = fd_targets(d)
    counts = []
    for round_ in range(4):
        outcomes = burst(f"r{round_}x", 15)
        # Each failing kind: SERVFAIL, every time. The working upstream: its answer.
        expected = {f"{dom} SERVFAIL": 15 for dom in kinds} | {"good.burst.test NXDOMAIN": 15}
        assert outcomes == expected, \
            f"round {round_}: {sorted(set(outcomes.items()) ^ set(expected.items()))}"
        time.sleep(1.5)
        counts.append(local_fds(d))
    after_targets = fd_targets(d)
    grown = [t for t in after_targets if after_targets.count(t) > before_targets.count(t)]
    print(f"open descriptors: {warm} while warming up, {before} before, {counts} after each "
          f"burst of {15 * (len(kinds) + 1)} queries")
    assert max(counts) - before <= 4, \
        f"descriptors grew from {before} to {counts}: {socket_kinds(sorted(set(grown)))}"
    assert counts[-1] - counts[0] <= 2, f"descriptors keep growing: {counts}"
    assert answer_values(d.query("localhost"), "A") == ["127.0.0.1"]
