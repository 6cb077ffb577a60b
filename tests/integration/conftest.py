"""Fixtures and helpers of the dnsmoat integration tests.

Everything talks to 127.0.0.1 only. Every subprocess (dnsmoat, knotd, dig, kdig) and every
helper thread is bounded in time and stopped in fixture teardown.

Helpers:
  free_port()          a port free on 127.0.0.1 for both UDP and TCP
  closed_port()        a port nothing listens on, below the ephemeral range (an upstream that
                       refuses every datagram, and stays refusing)
  to_toml(dict)        a small TOML writer for the test configs
  FakeUpstream         an in-test DNS responder (UDP + TCP) that records every query and whose
                       behaviour per name is scripted by the test
  Knot                 a real authoritative server (/usr/sbin/knotd) with zones from the test
  Daemon               one dnsmoat process: config in a tmp dir, stderr to a file, readiness
                       poll, queries through dnspython, raw sends, signals, SIGTERM at the end
Fixtures: upstream (a FakeUpstream), upstream_factory, moat (a Daemon factory), knot_main
(example.test with a large TXT RRset), knot_home (home.arpa), shared_dir.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest

LOOPBACK = "127.0.0.1"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_BINARY = REPO / "build" / "dev" / "src" / "app" / "dnsmoat"
KNOTD = "/usr/sbin/knotd"

# Address that only forged upstream answers carry: if a client ever sees it, a forgery got in.
FORGED_V4 = "203.0.113.66"
# Records of the fake upstream's negative answers ("test." is the zone of every fake name).
FAKE_SOA = "ns.test. hostmaster.test. 1 3600 600 86400 60"


# --------------------------------------------------------------------------------------------
# Small utilities
# --------------------------------------------------------------------------------------------

def moat_binary() -> Path:
    return Path(os.environ.get("MOAT_BINARY") or DEFAULT_BINARY)


def shared_dir_path() -> Path:
    env = os.environ.get("MOAT_SHARED_DIR")
    return Path(env) if env else (REPO.parent / "shared")


def require_shared(*relative: str) -> Path:
    """The shared data path, or skip (fail under MOAT_REQUIRE_SHARED=1) when it is absent."""
    path = shared_dir_path().joinpath(*relative)
    if not path.exists():
        msg = (f"shared test data not found: {path} (set MOAT_SHARED_DIR to the directory "
               f"holding data/; skipped)")
        if os.environ.get("MOAT_REQUIRE_SHARED") == "1":
            pytest.fail(msg.replace("; skipped", "; MOAT_REQUIRE_SHARED=1 makes this a failure"))
        pytest.skip(msg)
    return path


_used_ports: set[int] = set()


def _own_ports() -> range:
    """The ports this test process hands out: below the ephemeral range, which the kernel never
    gives to a socket bound to port 0, in a slice of its own for each pytest-xdist worker (gw0,
    gw1, ...). A port from the ephemeral range could be taken between the choice and the bind by
    any client or server of a parallel test binding port 0, and a daemon would then fail to
    listen while the test talked to that other test's server (seen once under ThreadSanitizer,
    whose slow start widens the window)."""
    low, high = (int(v) for v in
                 Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[:2])
    # The larger room outside the ephemeral range: below it (clear of the lowest ports, where
    # system services listen) or above it.
    start, stop = max((1024 + (low - 1024) // 8, low), (high + 1, 65536),
                      key=lambda r: r[1] - r[0])
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) % workers if worker.isdigit() else 0
    size = (stop - start) // workers
    if size < 500:
        raise RuntimeError(f"ephemeral ports {low}-{high} leave too few for the tests' servers")
    return range(start + index * size, start + (index + 1) * size)


def _bindable_port(purpose: str) -> int:
    """A port of _own_ports() that binds for both UDP and TCP right now and was never handed out
    before in this session (a stopped daemon keeps its port for a restart)."""
    ports = _own_ports()
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(ports.start, ports.stop)
        if port in _used_ports:
            continue
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            tcp.bind((LOOPBACK, port))
            udp.bind((LOOPBACK, port))
        except OSError:
            continue
        finally:
            tcp.close()
            udp.close()
        _used_ports.add(port)
        return port
    raise RuntimeError(f"no {purpose} port in {ports.start}-{ports.stop - 1} after 200 tries")


def free_port() -> int:
    """A port on 127.0.0.1 that is free for both UDP and TCP and that no other test can take
    before the caller binds it (_own_ports)."""
    return _bindable_port("free")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on for the whole test: a datagram sent there is
    refused (ICMP port unreachable). From _own_ports(), so no client's ephemeral port becomes it
    and receives what was meant to be refused."""
    return _bindable_port("closed")


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.05) -> Any:
    """Poll predicate until it returns a truthy value or timeout passes; returns the last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


def fqdn(name: str) -> str:
    name = name.lower()
    return name if name.endswith(".") else name + "."


def write_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------------------------
# TOML writer (enough for the dnsmoat schema: tables, arrays of tables, scalars, arrays)
# --------------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def to_toml(cfg: dict) -> str:
    lines: list[str] = []

    def emit(path: list[str], table: dict) -> None:
        scalars = [(k, v) for k, v in table.items()
                   if not isinstance(v, dict) and not _is_table_array(v)]
        if path and (scalars or not table):
            lines.append("")
            lines.append("[" + ".".join(_toml_key(p) for p in path) + "]")
        for k, v in scalars:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        for k, v in table.items():
            if isinstance(v, dict):
                emit(path + [k], v)
            elif _is_table_array(v):
                for item in v:
                    lines.append("")
                    lines.append("[[" + ".".join(_toml_key(p) for p in path + [k]) + "]]")
                    for ik, iv in item.items():
                        lines.append(f"{_toml_key(ik)} = {_toml_value(iv)}")

    emit([], cfg)
    return "\n".join(lines).lstrip("\n") + "\n"


# --------------------------------------------------------------------------------------------
# DNS client helpers (dnspython messages, our own sockets so every wait is bounded)
# --------------------------------------------------------------------------------------------

def make_query(name: str, rdtype: str | int = "A", *, id: int | None = None, **kw) -> dns.message.Message:
    """dns.message.make_query with keyword passthrough (use_edns, want_dnssec, payload, options)."""
    q = dns.message.make_query(name, rdtype, **kw)
    version = kw.get("use_edns")
    if isinstance(version, int) and not isinstance(version, bool) and version > 0:
        # dnspython 2.3's want_dnssec(False) (called by make_query) clears the EDNS version
        # bits along with DO; put the version back.
        q.use_edns(version, int(q.ednsflags) & 0xFFFF, q.payload, options=list(q.options))
        assert q.edns == version
    if id is not None:
        q.id = id
    return q


def recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes | None:
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(buf))
        except socket.timeout:
            return None
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def udp_exchange(wire: bytes, port: int, timeout: float = 2.0, *, match_id: bool = True,
                 source: str = LOOPBACK) -> bytes | None:
    """Send one datagram from `source` (any 127.0.0.0/8 address) to 127.0.0.1:port; the first
    reply (with the same ID when match_id and the packet has one), or None after timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        s.sendto(wire, (LOOPBACK, port))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            s.settimeout(left)
            try:
                data, addr = s.recvfrom(65535)
            except socket.timeout:
                return None
            except ConnectionRefusedError:
                return None
            if addr != (LOOPBACK, port):
                continue
            if match_id and len(wire) >= 2 and data[:2] != wire[:2]:
                continue
            return data


def tcp_exchange(wire: bytes, port: int, timeout: float = 3.0) -> bytes | None:
    """One length-prefixed message over a new TCP connection; the reply, or None."""
    deadline = time.monotonic() + timeout
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as s:
        s.sendall(struct.pack(">H", len(wire)) + wire)
        head = recv_exact(s, 2, deadline)
        if head is None:
            return None
        return recv_exact(s, struct.unpack(">H", head)[0], deadline)


def parse_reply(query: dns.message.Message, data: bytes | None, what: str) -> dns.message.Message:
    assert data is not None, f"no answer to {what} within the timeout"
    r = dns.message.from_wire(data)
    r.wire = data  # type: ignore[attr-defined]
    assert r.id == query.id, f"{what}: answer ID {r.id} != query ID {query.id}"
    assert r.flags & dns.flags.QR, f"{what}: answer without QR"
    if r.question:
        assert r.question == query.question, f"{what}: question {r.question} != {query.question}"
    return r


def rcode_name(r: dns.message.Message) -> str:
    return dns.rcode.to_text(r.rcode())


def answer_values(r: dns.message.Message, rdtype: str | int | None = None) -> list[str]:
    """Every answer rdata as text (of one type when rdtype is given), sorted."""
    want = dns.rdatatype.from_text(rdtype) if isinstance(rdtype, str) else rdtype
    out = []
    for rrset in r.answer:
        if want is None or rrset.rdtype == want:
            out.extend(rd.to_text() for rd in rrset)
    return sorted(out)


def answer_ttls(r: dns.message.Message) -> list[int]:
    return [rrset.ttl for rrset in r.answer]


def raw_header(id: int, flags: int, qd: int = 0, an: int = 0, ns: int = 0, ar: int = 0) -> bytes:
    return struct.pack(">HHHHHH", id, flags, qd, an, ns, ar)


def reply_header(data: bytes) -> dict:
    """The header fields of raw reply bytes (no further parsing)."""
    id_, flags, qd, an, ns, ar = struct.unpack(">HHHHHH", data[:12])
    return {"id": id_, "qr": bool(flags & 0x8000), "opcode": (flags >> 11) & 0xF,
            "tc": bool(flags & 0x0200), "rcode": flags & 0xF, "qd": qd, "an": an, "ns": ns, "ar": ar}


# --------------------------------------------------------------------------------------------
# FakeUpstream: a scripted DNS responder on 127.0.0.1 (UDP and TCP on one port)
# --------------------------------------------------------------------------------------------

@dataclass
class Received:
    transport: str                     # "udp" or "tcp"
    wire: bytes
    msg: dns.message.Message | None    # None when dnspython could not parse it
    time: float                        # time.monotonic() at arrival
    peer: tuple

    @property
    def qname(self) -> str | None:
        if self.msg is None or not self.msg.question:
            return None
        return self.msg.question[0].name.to_text().lower()

    @property
    def qtype(self) -> str | None:
        if self.msg is None or not self.msg.question:
            return None
        return dns.rdatatype.to_text(self.msg.question[0].rdtype)

    @property
    def do(self) -> bool:
        return bool(self.msg is not None and self.msg.edns >= 0 and self.msg.ednsflags & dns.flags.DO)

    def option_codes(self) -> list[int]:
        if self.msg is None or self.msg.edns < 0:
            return []
        return [int(o.otype) for o in self.msg.options]


# A step is one of:
#   "answer"            the genuine answer from the records (NXDOMAIN + SOA when the name is
#                       unknown, NODATA + SOA when the name has other types only)
#   "silent"            nothing
#   "servfail" | "refused" | "nxdomain-nosoa"
#   "garbage"           two non-DNS / broken packets with the query's ID
#   "wrong_id"          a forged answer (FORGED_V4) with another ID
#   "wrong_port"        a forged answer with the right ID from another source port
#   "wrong_question"    a forged answer with the right ID for another question
#   "tc"                over UDP: TC=1 and no records; over TCP: the genuine answer
#   ("delay", seconds)  wait before the next step
#   callable(query_msg, transport) -> dns.message.Message | bytes | None: a custom reply
Step = Any


class FakeUpstream:
    def __init__(self, name: str = "fake"):
        self.name = name
        self.port = free_port()
        self.records: dict[tuple[str, int], tuple[int, list[str]]] = {}
        self.rules: dict[str, list[Step]] = {}
        self.default: list[Step] = ["answer"]
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[str] = []

        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((LOOPBACK, self.port))
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind((LOOPBACK, self.port))
        self.tcp.listen(32)
        self.other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # for "wrong_port"
        self.other.bind((LOOPBACK, 0))
        self._main = threading.Thread(target=self._serve, name=f"{name}-serve", daemon=True)
        self._main.start()

    # -- configuration by the test ---------------------------------------------------------
    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def add(self, name: str, rdtype: str, *rdatas: str, ttl: int = 300) -> "FakeUpstream":
        self.records[(fqdn(name), dns.rdatatype.from_text(rdtype))] = (ttl, list(rdatas))
        return self

    def rule(self, name: str, *steps: Step) -> "FakeUpstream":
        self.rules[fqdn(name)] = list(steps)
        return self

    # -- what it saw -------------------------------------------------------------------------
    def queries(self, name: str | None = None, rdtype: str | None = None,
                transport: str | None = None) -> list[Received]:
        with self._lock:
            out = list(self.received)
        if name is not None:
            out = [r for r in out if r.qname == fqdn(name)]
        if rdtype is not None:
            out = [r for r in out if r.qtype == rdtype]
        if transport is not None:
            out = [r for r in out if r.transport == transport]
        return out

    def clear(self) -> None:
        with self._lock:
            self.received.clear()

    # -- answers -----------------------------------------------------------------------------
    def genuine(self, q: dns.message.Message) -> dns.message.Message:
        r = dns.message.make_response(q, recursion_available=True)
        if q.edns >= 0:
            r.use_edns(0, q.ednsflags & dns.flags.DO, 1232)
        if not q.question:
            r.set_rcode(dns.rcode.FORMERR)
            return r
        qname = q.question[0].name
        rdtype = q.question[0].rdtype
        # Follow CNAMEs among our own records, as a recursive resolver's answer would (at most 8).
        for _ in range(8):
            cname_key = (qname.to_text().lower(), dns.rdatatype.CNAME)
            if (qname.to_text().lower(), rdtype) in self.records or cname_key not in self.records \
                    or rdtype == dns.rdatatype.CNAME:
                break
            ttl, (target,) = self.records[cname_key]
            r.answer.append(dns.rrset.from_text(qname, ttl, "IN", "CNAME", target))
            qname = dns.name.from_text(target)
        key = (qname.to_text().lower(), rdtype)
        if key in self.records:
            ttl, rdatas = self.records[key]
            r.answer.append(dns.rrset.from_text_list(qname, ttl, "IN", rdtype, rdatas))
            return r
        if r.answer:
            return r  # a chain that ends in no data
        soa = dns.rrset.from_text("test.", 60, "IN", "SOA", FAKE_SOA)
        if not any(k[0] == key[0] for k in self.records):
            r.set_rcode(dns.rcode.NXDOMAIN)
        r.authority.append(soa)
        return r

    def _forged(self, q: dns.message.Message, qname: dns.name.Name | None = None) -> dns.message.Message:
        r = dns.message.make_response(q, recursion_available=True)
        if q.edns >= 0:
            r.use_edns(0, q.ednsflags & dns.flags.DO, 1232)
        owner = q.question[0].name
        if qname is not None:
            r.question = [dns.rrset.RRset(qname, dns.rdataclass.IN, q.question[0].rdtype)]
        r.answer.append(dns.rrset.from_text(owner, 300, "IN", "A", FORGED_V4))
        return r

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select([self.udp, self.tcp], [], [], 0.1)
            except (OSError, ValueError):
                return
            for s in readable:
                if s is self.udp:
                    try:
                        wire, peer = self.udp.recvfrom(65535)
                    except OSError:
                        continue
                    self._handle(wire, "udp", peer,
                                 lambda data, p=peer: self.udp.sendto(data, p),
                                 lambda data, p=peer: self.other.sendto(data, p))
                else:
                    try:
                        conn, peer = self.tcp.accept()
                    except OSError:
                        continue
                    t = threading.Thread(target=self._tcp_conn, args=(conn, peer), daemon=True)
                    self._threads.append(t)
                    t.start()

    def _tcp_conn(self, conn: socket.socket, peer: tuple) -> None:
        send_lock = threading.Lock()

        def send(data: bytes) -> None:
            with send_lock:
                try:
                    conn.sendall(struct.pack(">H", len(data)) + data)
                except OSError:
                    pass

        with conn:
            conn.settimeout(0.2)
            buf = b""
            deadline = time.monotonic() + 15.0
            while not self._stop.is_set() and time.monotonic() < deadline:
                try:
                    chunk = conn.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= 2:
                    size = struct.unpack(">H", buf[:2])[0]
                    if len(buf) < 2 + size:
                        break
                    body, buf = buf[2:2 + size], buf[2 + size:]
                    self._handle(body, "tcp", peer, send, send)

    def _handle(self, wire: bytes, transport: str, peer: tuple,
                send: Callable[[bytes], Any], send_other: Callable[[bytes], Any]) -> None:
        try:
            msg = dns.message.from_wire(wire)
        except Exception:  # noqa: BLE001 - any parse failure is recorded as msg=None
            msg = None
        rec = Received(transport, wire, msg, time.monotonic(), peer)
        with self._lock:
            self.received.append(rec)
        if msg is None or msg.flags & dns.flags.QR:
            return  # recorded; a non-query is never answered
        steps = self.rules.get(rec.qname or "", self.default)
        t = threading.Thread(target=self._run_steps, args=(msg, transport, list(steps), send, send_other),
                             daemon=True)
        self._threads.append(t)
        t.start()

    def _run_steps(self, q: dns.message.Message, transport: str, steps: list[Step],
                   send: Callable[[bytes], Any], send_other: Callable[[bytes], Any]) -> None:
        try:
            for step in steps:
                if self._stop.is_set():
                    return
                if isinstance(step, tuple) and step[0] == "delay":
                    self._stop.wait(step[1])
                    continue
                if callable(step):
                    out = step(q, transport)
                    if out is not None:
                        send(out if isinstance(out, bytes) else out.to_wire())
                    continue
                if step == "silent":
                    continue
                if step == "answer" or (step == "tc" and transport == "tcp"):
                    send(self.genuine(q).to_wire())
                elif step == "tc":
                    r = dns.message.make_response(q, recursion_available=True)
                    if q.edns >= 0:
                        r.use_edns(0, q.ednsflags & dns.flags.DO, 1232)
                    r.flags |= dns.flags.TC
                    send(r.to_wire())
                elif step in ("servfail", "refused", "nxdomain-nosoa"):
                    r = dns.message.make_response(q, recursion_available=True)
                    r.set_rcode({"servfail": dns.rcode.SERVFAIL, "refused": dns.rcode.REFUSED,
                                 "nxdomain-nosoa": dns.rcode.NXDOMAIN}[step])
                    send(r.to_wire())
                elif transport == "tcp":
                    continue  # forgeries are a UDP matter
                elif step == "wrong_id":
                    r = self._forged(q)
                    r.id = q.id ^ 0x5A5A
                    send(r.to_wire())
                elif step == "wrong_port":
                    send_other(self._forged(q).to_wire())
                elif step == "wrong_question":
                    other = dns.name.from_text("forged-" + q.question[0].name.to_text())
                    send(self._forged(q, other).to_wire())
                elif step == "garbage":
                    send(b"\x00\x01garb")  # shorter than a header
                    # right ID, QR set, one question whose name runs past the end
                    send(struct.pack(">HHHHHH", q.id, 0x8180, 1, 1, 0, 0) + b"\x3fgarbage")
                else:
                    self.errors.append(f"unknown step {step!r}")
        except Exception as e:  # noqa: BLE001 - keep the thread from dying silently
            self.errors.append(f"{type(e).__name__}: {e}")

    def close(self) -> None:
        self._stop.set()
        self._main.join(timeout=2)
        for t in self._threads:
            t.join(timeout=2)
        for s in (self.udp, self.tcp, self.other):
            try:
                s.close()
            except OSError:
                pass


# --------------------------------------------------------------------------------------------
# Knot: a real authoritative upstream
# --------------------------------------------------------------------------------------------

class Knot:
    def __init__(self, workdir: Path, zones: dict[str, str]):
        """zones: origin -> zone file text."""
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.zones = zones
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "knotd.log"

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 10.0) -> "Knot":
        if not os.path.exists(KNOTD):
            pytest.skip(f"{KNOTD} not installed (apt-get install knot)")
        zone_conf = []
        for origin, text in self.zones.items():
            path = write_file(self.dir / f"{origin.strip('.')}.zone", text)
            zone_conf.append(f"  - domain: {origin}\n    file: \"{path}\"\n")
        conf = (
            "server:\n"
            f"    rundir: \"{self.dir}\"\n"
            f"    listen: {LOOPBACK}@{self.port}\n"
            "    udp-workers: 1\n"
            "    tcp-workers: 1\n"
            "    background-workers: 1\n"
            "database:\n"
            f"    storage: \"{self.dir}\"\n"
            "log:\n"
            "  - target: stderr\n"
            "    any: info\n"
            "template:\n"
            "  - id: default\n"
            f"    storage: \"{self.dir}\"\n"
            "    zonefile-sync: -1\n"
            "    journal-content: none\n"
            "zone:\n" + "".join(zone_conf)
        )
        conf_path = write_file(self.dir / "knot.conf", conf)
        self._logf = open(self.log, "wb")
        self.proc = subprocess.Popen([KNOTD, "-c", str(conf_path)], stdin=subprocess.DEVNULL,
                                     stdout=self._logf, stderr=subprocess.STDOUT)
        origin = next(iter(self.zones))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"knotd exited with {self.proc.returncode}: {self.log.read_text()}")
            q = make_query(origin, "SOA")
            data = udp_exchange(q.to_wire(), self.port, timeout=0.2)
            if data is not None:
                r = dns.message.from_wire(data)
                if r.rcode() == dns.rcode.NOERROR and r.answer:
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"knotd did not answer within {timeout}s: {self.log.read_text()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if getattr(self, "_logf", None):
            self._logf.close()


# A TXT RRset well above 512 octets and below 1232 on the wire: 8 strings of 100 characters.
BIG_TXT = [f"\"{i}-" + ("x" * 98) + "\"" for i in range(8)]

EXAMPLE_ZONE = (
    "$ORIGIN example.test.\n"
    "$TTL 300\n"
    "@ SOA ns hostmaster 1 3600 900 86400 60\n"
    "@ NS ns\n"
    "ns A 127.0.0.1\n"
    "www A 192.0.2.10\n"
    "www AAAA 2001:db8::10\n"
    + "".join(f"big TXT {t}\n" for t in BIG_TXT)
)

HOME_ZONE = (
    "$ORIGIN home.arpa.\n"
    "$TTL 300\n"
    "@ SOA ns hostmaster 1 3600 900 86400 60\n"
    "@ NS ns\n"
    "ns A 127.0.0.1\n"
    "router A 192.168.1.1\n"
    "nas A 192.168.1.10\n"
)


# --------------------------------------------------------------------------------------------
# Daemon: one dnsmoat process
# --------------------------------------------------------------------------------------------

def _loopback_address(addr: str) -> bool:
    for scheme in ("tls://", "https://"):
        addr = addr.removeprefix(scheme)
    return addr.startswith("127.0.0.1") or addr.startswith("[::1]")


def _resolved_by_name(addr: str) -> bool:
    """An encrypted upstream given by host name (resolved through upstream.bootstrap)."""
    if not addr.startswith(("tls://", "https://")):
        return False
    host = addr.split("://", 1)[1].split("/", 1)[0].split("#", 1)[0].rsplit(":", 1)[0]
    return any(c.isalpha() for c in host) and not host.startswith("[")


class Daemon:
    def __init__(self, workdir: Path, config: dict | str, *, args: Iterable[str] = (),
                 log_level: str | None = "debug", config_name: str = "dnsmoat.toml"):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.binary = moat_binary()
        self.config_path = self.dir / config_name
        self.stderr_path = self.dir / "dnsmoat.stderr"
        self.stdout_path = self.dir / "dnsmoat.stdout"
        self.args = list(args)
        if log_level:
            self.args += ["--log-level", log_level]
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.returncode: int | None = None
        self.write_config(config)

    # -- config -------------------------------------------------------------------------------
    def write_config(self, config: dict | str) -> None:
        if isinstance(config, dict):
            cfg = json.loads(json.dumps(config))  # a private deep copy
            server = cfg.setdefault("server", {})
            # A control socket of its own (short: a Unix socket path has at most 107 bytes).
            # Kept across write_config(): [server] changes need a restart.
            self.control_socket = server.setdefault(
                "control_socket", getattr(self, "control_socket", None) or
                f"/tmp/moat-{uuid.uuid4().hex[:12]}.sock")
            # Tests run as whoever runs them (root in CI): never the switch to the packaged
            # service's user, which could not write the test's directories.
            server.setdefault("user", "")
            # The query log goes into the test's directory, never the system's state directory.
            cfg.setdefault("querylog", {}).setdefault("path", str(self.dir / "querylog.db"))
            # The HTTP endpoint on a port of its own (daemons of parallel tests never share one);
            # kept across write_config() like the DNS port.
            api = cfg.setdefault("api", {})
            if "listen" not in api:
                self.api_port = getattr(self, "api_port", 0) or free_port()
                api["listen"] = [f"{LOOPBACK}:{self.api_port}"]
            if "listen" not in server:
                self.port = self.port or free_port()
                server["listen"] = [f"{LOOPBACK}:{self.port}"]
            else:
                self.port = int(server["listen"][0].rsplit(":", 1)[1])
            # Safety: this machine must never send DNS anywhere but loopback.
            for addr in server["listen"]:
                assert _loopback_address(addr), f"non-loopback listen address {addr}"
            ups = cfg.get("upstream", {})
            servers = list(ups.get("servers", []))
            for cond in ups.get("conditional", []):
                servers += cond.get("servers", [])
            assert ups.get("servers"), "every test config names its loopback upstreams"
            bootstrap = ups.get("bootstrap", [])
            for addr in bootstrap:
                assert _loopback_address(addr), f"non-loopback bootstrap server {addr}"
            for addr in servers:
                if _resolved_by_name(addr):
                    assert bootstrap, f"{addr} is resolved by name: name loopback bootstrap servers"
                    continue
                assert _loopback_address(addr), f"non-loopback upstream {addr}"
            text = to_toml(cfg)
        else:
            text = config
        self.config_text = text
        self.config_path.write_text(text)

    # -- process ------------------------------------------------------------------------------
    def start(self, ready_timeout: float = 10.0) -> "Daemon":
        if not self.binary.exists():
            pytest.fail(f"dnsmoat binary not found at {self.binary} (build it, or set MOAT_BINARY)")
        self._err = open(self.stderr_path, "wb")
        self._out = open(self.stdout_path, "wb")
        self.proc = subprocess.Popen(
            [str(self.binary), "run", "--config", str(self.config_path), *self.args],
            stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err, cwd=self.dir)
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"dnsmoat exited with status {self.proc.returncode} before it was "
                            f"ready; stderr:\n{self.stderr_text()[-4000:]}")
            q = make_query("localhost.", "A")
            data = udp_exchange(q.to_wire(), self.port, timeout=0.2)
            if data is not None:
                return self
            time.sleep(0.05)
        pytest.fail(f"dnsmoat did not answer localhost. A on {LOOPBACK}:{self.port} within "
                    f"{ready_timeout}s; stderr:\n{self.stderr_text()[-4000:]}")

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stderr_lines(self, needle: str) -> list[str]:
        return [l for l in self.stderr_text().splitlines() if needle in l]

    def wait_for_log(self, needle: str, timeout: float = 5.0, after: int = 0) -> list[str]:
        """Lines containing needle, once there are more than `after` of them (else [])."""
        def more():
            lines = self.stderr_lines(needle)
            return lines if len(lines) > after else None
        return wait_until(more, timeout) or []

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def reload(self, timeout: float = 5.0) -> str:
        """SIGHUP; waits for a new `reload: applied` or `reload failed` line and returns which."""
        applied = len(self.stderr_lines("reload: applied"))
        failed = len(self.stderr_lines("reload failed"))
        self.signal(signal.SIGHUP)

        def outcome():
            if len(self.stderr_lines("reload: applied")) > applied:
                return "applied"
            if len(self.stderr_lines("reload failed")) > failed:
                return "failed"
            return None

        result = wait_until(outcome, timeout)
        assert result, f"no reload outcome logged within {timeout}s; stderr:\n{self.stderr_text()[-3000:]}"
        return result

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would; the daemon may be started again."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (getattr(self, "_err", None), getattr(self, "_out", None)):
            if f:
                f.close()
        self.proc = None  # expected to end this way: the teardown does not count it

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM and wait; returns the exit status (kills after timeout and returns -9)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
                self.returncode = -9
        if self.returncode is None:
            self.returncode = self.proc.returncode
        for f in (getattr(self, "_err", None), getattr(self, "_out", None)):
            if f:
                f.close()
        return self.returncode

    # -- queries ------------------------------------------------------------------------------
    def query(self, name: str, rdtype: str | int = "A", tcp: bool = False, timeout: float = 3.0,
              **kw) -> dns.message.Message:
        q = make_query(name, rdtype, **kw)
        return self.query_msg(q, tcp=tcp, timeout=timeout)

    def query_msg(self, q: dns.message.Message, tcp: bool = False, timeout: float = 3.0) -> dns.message.Message:
        wire = q.to_wire()
        data = tcp_exchange(wire, self.port, timeout) if tcp else udp_exchange(wire, self.port, timeout)
        what = f"{q.question[0].name} {dns.rdatatype.to_text(q.question[0].rdtype)} over {'TCP' if tcp else 'UDP'}"
        return parse_reply(q, data, what)

    def send_raw(self, wire: bytes, timeout: float = 1.0, tcp: bool = False) -> bytes | None:
        """Raw bytes in, raw reply (same leading two bytes when there are two) or None."""
        if tcp:
            return tcp_exchange(wire, self.port, timeout)
        return udp_exchange(wire, self.port, timeout, match_id=len(wire) >= 2)


def run_tool(argv: list[str], timeout: float = 10.0) -> subprocess.CompletedProcess:
    """dig / kdig / dnsmoat check-config, bounded in time."""
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def binary() -> Path:
    path = moat_binary()
    if not path.exists():
        pytest.fail(f"dnsmoat binary not found at {path} (build it, or set MOAT_BINARY)")
    return path


@pytest.fixture
def upstream_factory():
    made: list[FakeUpstream] = []

    def make(name: str = "fake") -> FakeUpstream:
        up = FakeUpstream(name)
        made.append(up)
        return up

    yield make
    for up in made:
        up.close()
    errors = [e for up in made for e in up.errors]
    assert not errors, f"fake upstream errors: {errors}"


@pytest.fixture
def upstream(upstream_factory) -> FakeUpstream:
    return upstream_factory("upstream")


def base_config(*upstreams: Any, **sections: Any) -> dict:
    """A config with the given upstreams (FakeUpstream, Knot or 'addr:port') and timeouts shorter
    than the shipped ones. Short, not tight: with one server, that server's timeout is when the
    client gets SERVFAIL, and with 300 ms a test in the ThreadSanitizer stage (four test workers
    on two cores) once got an empty answer for a name its upstream held. Tests that judge timing
    set their own."""
    servers = [u if isinstance(u, str) else u.address for u in upstreams]
    cfg: dict = {
        "upstream": {"servers": servers, "strategy": "failover", "timeout": "1s",
                     "total_timeout": "2s"},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    return cfg


@pytest.fixture
def moat(tmp_path, binary):
    """Factory: moat(config, args=(), start=True, ready_timeout=10) -> started Daemon.
    Teardown sends SIGTERM to every daemon still running and asserts exit status 0."""
    daemons: list[Daemon] = []
    counter = [0]

    def make(config: dict | str, *, args: Iterable[str] = (), start: bool = True,
             ready_timeout: float = 10.0, log_level: str | None = "debug",
             config_name: str = "dnsmoat.toml") -> Daemon:
        counter[0] += 1
        d = Daemon(tmp_path / f"moat{counter[0]}", config, args=args, log_level=log_level,
                   config_name=config_name)
        daemons.append(d)
        if start:
            d.start(ready_timeout=ready_timeout)
        return d

    yield make
    problems = []
    for d in daemons:
        if d.proc is None:
            continue
        already_exited = d.proc.poll() is not None and d.returncode is None
        rc = d.stop()
        if already_exited and rc != 0:
            problems.append(f"dnsmoat died during the test with status {rc}; stderr tail:\n"
                            f"{d.stderr_text()[-3000:]}")
        elif rc != 0:
            problems.append(f"dnsmoat exited with status {rc} on SIGTERM (expected 0); stderr tail:\n"
                            f"{d.stderr_text()[-3000:]}")
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="session")
def knot_main(tmp_path_factory):
    k = Knot(tmp_path_factory.mktemp("knot-main"), {"example.test.": EXAMPLE_ZONE})
    k.start()
    yield k
    k.stop()


@pytest.fixture(scope="session")
def knot_home(tmp_path_factory):
    k = Knot(tmp_path_factory.mktemp("knot-home"), {"home.arpa.": HOME_ZONE})
    k.start()
    yield k
    k.stop()


@pytest.fixture
def shared_dir() -> Path:
    return require_shared("data")


def dig_tool(name: str) -> str:
    path = shutil.which(name) or f"/usr/bin/{name}"
    if not os.path.exists(path):
        pytest.skip(f"{name} not installed")
    return path


def seeded(seed: int) -> random.Random:
    return random.Random(seed)
