"""DNS over TCP: pipelining on one connection (RFC 7766), and UDP truncation with the whole answer
over TCP (knotd serves a TXT RRset larger than 512 octets); answers through knotd without its AA."""

import socket
import struct
import time

import dns.flags
import dns.message
import dns.rdatatype

from conftest import (BIG_TXT, LOOPBACK, base_config, answer_values, dig_tool, make_query,
                      rcode_name, run_tool)


def read_frames(sock, want_ids, timeout):
    """Read length-prefixed replies until every ID in want_ids is seen or timeout passes."""
    replies = {}
    buf = b""
    deadline = time.monotonic() + timeout
    while set(want_ids) - set(replies) and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 2:
            size = struct.unpack(">H", buf[:2])[0]
            if len(buf) < 2 + size:
                break
            r = dns.message.from_wire(buf[2:2 + size])
            buf = buf[2 + size:]
            assert r.id not in replies, f"two replies with ID {r.id}"
            replies[r.id] = r
    return replies


def test_tcp_pipelining(upstream, moat):
    upstream.add("slow.example.test", "A", "192.0.2.61")
    upstream.rule("slow.example.test", ("delay", 0.15), "answer")  # < the 1 s timeout
    upstream.add("quick.example.test", "A", "192.0.2.62")
    d = moat(base_config(upstream, local={"records": {"nas.lan": "A 192.168.1.10"}}))
    queries = [
        make_query("slow.example.test", "A", id=0x1001),
        make_query("nas.lan", "A", id=0x1002),
        make_query("localhost", "AAAA", id=0x1003),
        make_query("quick.example.test", "A", id=0x1004),
    ]
    expect = {0x1001: ("A", ["192.0.2.61"]), 0x1002: ("A", ["192.168.1.10"]),
              0x1003: ("AAAA", ["::1"]), 0x1004: ("A", ["192.0.2.62"])}
    blob = b"".join(struct.pack(">H", len(w)) + w for w in (q.to_wire() for q in queries))
    with socket.create_connection((LOOPBACK, d.port), timeout=3) as s:
        s.sendall(blob)  # all four in one write
        replies = read_frames(s, expect, timeout=4)
        assert set(replies) == set(expect), f"answered IDs {sorted(map(hex, replies))}"
        by_id = {q.id: q for q in queries}
        for qid, (rdtype, values) in expect.items():
            r = replies[qid]
            assert r.question == by_id[qid].question
            assert rcode_name(r) == "NOERROR" and answer_values(r, rdtype) == values, r
        # the connection stays usable
        q = make_query("nas.lan", "A", id=0x1005)
        s.sendall(struct.pack(">H", len(q.to_wire())) + q.to_wire())
        more = read_frames(s, [0x1005], timeout=3)
        assert 0x1005 in more and answer_values(more[0x1005], "A") == ["192.168.1.10"]


def full_txt():
    return sorted(t for t in BIG_TXT)


def test_udp_truncation_and_tcp(knot_main, moat):
    d = moat(base_config(knot_main))
    # whole answer over TCP first: the reference
    r = d.query("big.example.test", "TXT", tcp=True)
    assert rcode_name(r) == "NOERROR" and not r.flags & dns.flags.TC
    assert answer_values(r, "TXT") == full_txt()
    assert len(r.wire) > 512

    # plain UDP, no EDNS: at most 512 octets, TC=1, cut at a whole record
    q = make_query("big.example.test", "TXT")
    r = d.query_msg(q)
    assert r.flags & dns.flags.TC, "an answer larger than 512 octets must come truncated over UDP"
    assert len(r.wire) <= 512, f"{len(r.wire)} octets over UDP without EDNS"
    assert set(answer_values(r, "TXT")) <= set(full_txt()), "partial records in a truncated answer"
    assert len(answer_values(r, "TXT")) < len(BIG_TXT)

    # EDNS with a 600-octet buffer: truncated to it
    r = d.query("big.example.test", "TXT", use_edns=0, payload=600)
    assert r.flags & dns.flags.TC and len(r.wire) <= 600
    assert r.edns >= 0, "an EDNS query gets OPT back, truncated or not"

    # EDNS with room for it: whole over UDP
    r = d.query("big.example.test", "TXT", use_edns=0, payload=1232)
    assert not r.flags & dns.flags.TC and answer_values(r, "TXT") == full_txt()

    # kdig and dig over TCP get the whole answer
    out = run_tool([dig_tool("kdig"), "@127.0.0.1", "-p", str(d.port), "+tcp", "+retry=0",
                    "+timeout=3", "big.example.test", "TXT"])
    txt_lines = [l for l in out.stdout.splitlines() if "\tTXT\t" in l or " TXT " in l]
    assert out.returncode == 0 and len(txt_lines) == len(BIG_TXT), out.stdout + out.stderr
    out = run_tool([dig_tool("dig"), "@127.0.0.1", "-p", str(d.port), "+tcp", "+short",
                    "+tries=1", "+time=3", "big.example.test", "TXT"])
    assert sorted(out.stdout.split("\n")[:-1]) == full_txt(), out.stdout + out.stderr
    # dig over UDP without EDNS sees the TC bit (and +ignore keeps it from retrying over TCP)
    out = run_tool([dig_tool("dig"), "@127.0.0.1", "-p", str(d.port), "+notcp", "+noedns",
                    "+ignore", "+tries=1", "+time=3", "big.example.test", "TXT"])
    flags = [l for l in out.stdout.splitlines() if l.startswith(";; flags:")]
    assert flags and " tc" in flags[0], out.stdout


def test_knot_upstream_plain_answers(knot_main, moat):
    d = moat(base_config(knot_main))
    r = d.query("www.example.test", "A")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.10"]
    # knotd answers with AA; dnsmoat is no authority, forwarded or from its cache.
    assert not r.flags & dns.flags.AA, "the forwarded answer kept the upstream's AA"
    r = d.query("www.example.test", "A")
    assert answer_values(r, "A") == ["192.0.2.10"] and not r.flags & dns.flags.AA, \
        "the cached answer kept the upstream's AA"
    r = d.query("www.example.test", "AAAA", tcp=True)
    assert answer_values(r, "AAAA") == ["2001:db8::10"]
    r = d.query("missing.example.test", "A")
    assert rcode_name(r) == "NXDOMAIN"
