"""Hostile and odd queries: malformed bytes (hand-made and real ones from shared/data/wire) get
FORMERR when the 12-byte header is there and no answer otherwise; QR=1 packets are never
answered; opcodes other than QUERY get NOTIMP; valid queries keep working throughout."""

import json
import socket
import struct

import dns.message
import dns.opcode
import pytest

from conftest import (LOOPBACK, base_config, answer_values, make_query, raw_header,
                      reply_header, require_shared, tcp_exchange)

FORMERR, NOTIMP = 1, 4
RD = 0x0100
QUESTION_LOCALHOST_A = b"\x09localhost\x00\x00\x01\x00\x01"


def label_name(*labels: bytes) -> bytes:
    return b"".join(bytes([len(l)]) + l for l in labels) + b"\x00"


# (id, bytes, expect) where expect is "formerr" or "none"
HAND_MADE = [
    ("empty", b"", "none"),
    ("3 bytes", b"\x12\x34\x01", "none"),
    ("11-byte header", raw_header(0x2222, RD, 1)[:11], "none"),
    ("qdcount 1, no question", raw_header(0x2301, RD, 1), "formerr"),
    ("label past the end", raw_header(0x2302, RD, 1) + b"\x07exam", "formerr"),
    ("pointer to itself", raw_header(0x2303, RD, 1) + b"\xc0\x0c\x00\x01\x00\x01", "formerr"),
    ("forward pointer past end", raw_header(0x2304, RD, 1) + b"\xc0\xff\x00\x01\x00\x01", "formerr"),
    ("reserved label type 0x40", raw_header(0x2305, RD, 1) + b"\x41" + b"a" * 65 + b"\x00\x00\x01\x00\x01",
     "formerr"),
    ("name over 255 octets", raw_header(0x2306, RD, 1) + label_name(*[b"a" * 63] * 5) + b"\x00\x01\x00\x01",
     "formerr"),
    ("type and class cut", raw_header(0x2307, RD, 1) + b"\x09localhost\x00\x00\x01", "formerr"),
    ("ancount 1, no record", raw_header(0x2308, RD, 1, an=1) + QUESTION_LOCALHOST_A, "formerr"),
    ("arcount 1, OPT cut", raw_header(0x2309, RD, 1, ar=1) + QUESTION_LOCALHOST_A + b"\x00\x00\x29\x04",
     "formerr"),
]


@pytest.fixture
def daemon(upstream, moat):
    upstream.add("alive.example.test", "A", "192.0.2.40")
    return moat(base_config(upstream))


def assert_still_serving(d, n=0):
    r = d.query("localhost", "A", id=0x7000 + n % 0x0FFF)
    assert answer_values(r, "A") == ["127.0.0.1"], "valid query failed after a bad packet"
    assert d.alive(), f"dnsmoat died; stderr:\n{d.stderr_text()[-3000:]}"


def check_bad(d, label, wire, expect, allowed_rcodes=(FORMERR,)):
    reply = d.send_raw(wire, timeout=0.6 if expect == "none" else 1.5)
    if expect == "none":
        assert reply is None, f"{label}: expected no answer, got {reply[:12].hex()}"
    else:
        assert reply is not None, f"{label}: expected FORMERR, got no answer"
        h = reply_header(reply)
        assert h["qr"], f"{label}: answer without QR"
        assert h["id"] == struct.unpack(">H", wire[:2])[0], f"{label}: ID not echoed"
        assert h["rcode"] in allowed_rcodes, \
            f"{label}: rcode {h['rcode']}, expected one of {allowed_rcodes}"


def test_hand_made_malformed_queries(daemon):
    for i, (label, wire, expect) in enumerate(HAND_MADE):
        check_bad(daemon, label, wire, expect)
        assert_still_serving(daemon, i)
    r = daemon.query("alive.example.test", "A")
    assert answer_values(r, "A") == ["192.0.2.40"]


def test_malformed_over_tcp(daemon):
    # A bad message on a TCP connection: FORMERR, or the connection closed; never a crash.
    for label, wire, expect in HAND_MADE:
        if expect != "formerr":
            continue
        try:
            reply = tcp_exchange(wire, daemon.port, timeout=1.5)
        except OSError:
            reply = None
        if reply is not None:
            h = reply_header(reply)
            assert h["qr"] and h["rcode"] == FORMERR, f"TCP {label}: {h}"
        r = daemon.query("localhost", "A", tcp=True)
        assert answer_values(r, "A") == ["127.0.0.1"]
    # a frame of length 0, then a valid query on a new connection
    with socket.create_connection((LOOPBACK, daemon.port), timeout=2) as s:
        s.sendall(b"\x00\x00")
    r = daemon.query("localhost", "A", tcp=True)
    assert answer_values(r, "A") == ["127.0.0.1"]


def shared_malformed():
    """Distinct messages from data/wire/index.jsonl that our parser check rejects and dnspython
    cannot parse either, small enough for one UDP datagram."""
    root = require_shared("data", "wire")
    out, seen = [], set()
    for line in (root / "index.jsonl").read_text().splitlines():
        e = json.loads(line)
        if "error" not in e or e["sha256"] in seen or e["len"] > 65000:
            continue
        seen.add(e["sha256"])
        data = (root / e["file"]).read_bytes()
        try:
            dns.message.from_wire(data)
            continue  # dnspython takes it: not clearly malformed
        except Exception:  # noqa: BLE001
            pass
        out.append((e["file"], data, e.get("qr"), e.get("opcode")))
    return out


def test_shared_wire_malformed(daemon):
    cases = shared_malformed()
    assert len(cases) >= 10, f"only {len(cases)} malformed messages found in shared/data/wire"
    for i, (name, data, qr, opcode) in enumerate(cases):
        if len(data) < 12:
            check_bad(daemon, name, data, "none")
        elif qr == 1:
            check_bad(daemon, name, data, "none")  # a response is never answered
        elif opcode == 0:
            check_bad(daemon, name, data, "formerr")
        else:
            check_bad(daemon, name, data, "formerr", allowed_rcodes=(FORMERR, NOTIMP))
        assert_still_serving(daemon, i)


def test_qr_set_never_answered(daemon, upstream):
    # a query for a name that would be answered, with QR=1
    wire = raw_header(0x3101, 0x8000 | RD, 1) + QUESTION_LOCALHOST_A
    check_bad(daemon, "QR=1 localhost", wire, "none")
    q = make_query("alive.example.test", "A", id=0x3102)
    q.flags |= 0x8000
    check_bad(daemon, "QR=1 forwarded name", q.to_wire(), "none")
    assert upstream.queries("alive.example.test") == [], "a QR=1 packet was forwarded"
    # real responses from the shared captures
    root = require_shared("data", "wire")
    responses = sorted((root / "extracted").glob("dnscap__dns__p0*_*r.bin"))[:3]
    assert responses
    for f in responses:
        check_bad(daemon, f.name, f.read_bytes(), "none")
    assert_still_serving(daemon)


@pytest.mark.parametrize("opcode", [dns.opcode.STATUS, dns.opcode.NOTIFY, dns.opcode.UPDATE],
                         ids=["STATUS", "NOTIFY", "UPDATE"])
def test_other_opcodes_notimp(daemon, upstream, opcode):
    q = make_query("alive.example.test", "A", id=0x3200 + opcode)
    q.set_opcode(opcode)
    reply = daemon.send_raw(q.to_wire(), timeout=1.5)
    assert reply is not None, f"opcode {opcode}: no answer"
    h = reply_header(reply)
    assert h["qr"] and h["id"] == q.id
    assert h["rcode"] == NOTIMP, f"opcode {opcode}: rcode {h['rcode']}, expected NOTIMP (4)"
    assert h["opcode"] == opcode, "the opcode is copied into the answer"
    assert upstream.queries("alive.example.test") == []
    assert_still_serving(daemon)
