"""Forwarding: upstream truncation retried over TCP, failover, fastest, conditional forwarding,
all upstreams failing, and forged upstream answers ignored."""

import time

import dns.flags
import dns.query
import pytest

from conftest import answer_values, base_config, closed_port, free_port, make_query, rcode_name

GENUINE_V4 = "192.0.2.70"


def test_upstream_truncation_retried_over_tcp(upstream, moat):
    texts = [f'"from-tcp-{i}"' for i in range(3)]
    upstream.add("tc.example.test", "TXT", *texts)
    upstream.rule("tc.example.test", "tc")   # UDP: TC=1 and nothing; TCP: the whole answer
    d = moat(base_config(upstream))
    r = d.query("tc.example.test", "TXT", use_edns=0, payload=1232)
    assert rcode_name(r) == "NOERROR"
    assert not r.flags & dns.flags.TC, "the client should get the whole answer, not TC"
    assert answer_values(r, "TXT") == sorted(texts)
    assert upstream.queries("tc.example.test", transport="udp"), "expected a UDP attempt first"
    assert upstream.queries("tc.example.test", transport="tcp"), "TC over UDP must be retried over TCP"


@pytest.mark.parametrize("failure", ["silent", "servfail", "refused"])
def test_failover_to_second_upstream(upstream_factory, moat, failure):
    first = upstream_factory("first")
    second = upstream_factory("second")
    first.default = [failure]
    first.add("fo.example.test", "A", "192.0.2.71")
    second.add("fo.example.test", "A", GENUINE_V4)
    d = moat(base_config(first, second, upstream={"strategy": "failover", "timeout": "500ms",
                                                  "total_timeout": "2s"}))
    t0 = time.monotonic()
    r = d.query("fo.example.test", "A", timeout=4)
    elapsed = time.monotonic() - t0
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [GENUINE_V4], \
        f"{failure} first upstream: {rcode_name(r)} {r.answer}"
    assert first.queries("fo.example.test"), "failover tries the first upstream first"
    assert second.queries("fo.example.test")
    assert elapsed < 2.0, f"took {elapsed:.2f}s"
    # more names keep working (the first may now be skipped as unhealthy)
    for i in range(3):
        second.add(f"fo{i}.example.test", "A", GENUINE_V4)
        r = d.query(f"fo{i}.example.test", "A", timeout=4)
        assert answer_values(r, "A") == [GENUINE_V4]


@pytest.mark.parametrize("first_silent", [False, True], ids=["both-healthy", "first-silent"])
def test_fastest_strategy_answers(upstream_factory, moat, first_silent):
    first = upstream_factory("first")
    second = upstream_factory("second")
    if first_silent:
        first.default = ["silent"]
    else:
        first.default = [("delay", 0.05), "answer"]
    for i in range(5):
        first.add(f"f{i}.example.test", "A", GENUINE_V4)
        second.add(f"f{i}.example.test", "A", GENUINE_V4)
    d = moat(base_config(first, second, upstream={"strategy": "fastest", "timeout": "500ms",
                                                  "total_timeout": "2s"}))
    for i in range(5):
        r = d.query(f"f{i}.example.test", "A", timeout=4)
        assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [GENUINE_V4], f"f{i}: {r}"
    assert second.queries(), "the second upstream was never used"


def test_conditional_forwarding(upstream_factory, knot_home, moat):
    main = upstream_factory("main")
    corp = upstream_factory("corp")
    corp.default = ["silent"]
    # would show up if home.arpa names leaked to the default upstream
    main.add("router.home.arpa", "A", "192.0.2.250")
    main.add("x.corp.test", "A", "192.0.2.251")
    main.add("fwd.example.test", "A", GENUINE_V4)
    d = moat(base_config(main, upstream={
        "timeout": "500ms", "total_timeout": "1s",
        "conditional": [{"domains": ["home.arpa"], "servers": [knot_home.address]},
                        {"domains": ["corp.test"], "servers": [corp.address]}]}))
    r = d.query("router.home.arpa", "A")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.168.1.1"]
    r = d.query("NAS.home.arpa", "A", tcp=True)
    assert answer_values(r, "A") == ["192.168.1.10"]
    r = d.query("home.arpa", "SOA")
    assert rcode_name(r) == "NOERROR" and r.answer
    r = d.query("missing.home.arpa", "A")
    assert rcode_name(r) == "NXDOMAIN"
    # other names go to the default upstream
    r = d.query("fwd.example.test", "A")
    assert answer_values(r, "A") == [GENUINE_V4]
    # a silent conditional server: SERVFAIL, never a fallback to the default upstreams
    r = d.query("x.corp.test", "A", timeout=4)
    assert rcode_name(r) == "SERVFAIL", f"x.corp.test: {rcode_name(r)} {r.answer}"
    assert corp.queries("x.corp.test")
    leaked = [q.qname for q in main.queries()
              if q.qname and (q.qname.endswith("home.arpa.") or q.qname.endswith("corp.test."))]
    assert not leaked, f"conditional names reached the default upstream: {leaked}"


@pytest.mark.parametrize("kind", ["silent", "servfail", "closed-ports"])
def test_all_upstreams_failing_servfail(upstream_factory, moat, kind):
    if kind == "closed-ports":
        servers = [f"127.0.0.1:{closed_port()}", f"127.0.0.1:{closed_port()}"]
    else:
        a, b = upstream_factory("a"), upstream_factory("b")
        a.default = b.default = [kind]
        servers = [a, b]
    d = moat(base_config(*servers, upstream={"timeout": "200ms", "total_timeout": "1s"}))
    for name in ("dead1.example.test", "dead2.example.test"):
        t0 = time.monotonic()
        r = d.query(name, "A", timeout=5)
        elapsed = time.monotonic() - t0
        assert rcode_name(r) == "SERVFAIL", f"{kind}: {rcode_name(r)}"
        assert elapsed < 1.6, f"{kind}: SERVFAIL after {elapsed:.2f}s, total_timeout is 1s"
    # and the daemon still answers what it can
    r = d.query("localhost", "A")
    assert answer_values(r, "A") == ["127.0.0.1"]


@pytest.mark.parametrize("forgery", ["wrong_id", "wrong_port", "wrong_question", "garbage"])
def test_forged_upstream_answers_ignored(upstream, moat, forgery):
    name = f"{forgery.replace('_', '-')}.example.test"
    upstream.add(name, "A", GENUINE_V4)
    upstream.rule(name, forgery, ("delay", 0.1), "answer")
    d = moat(base_config(upstream, upstream={"timeout": "1s", "total_timeout": "2s"}),
             log_level="debug")
    r = d.query(name, "A", timeout=4)
    assert rcode_name(r) == "NOERROR", f"{forgery}: {rcode_name(r)}"
    assert answer_values(r, "A") == [GENUINE_V4], f"{forgery}: the forged answer got through: {r.answer}"
    assert len(upstream.queries(name)) == 1, "the genuine answer should have ended the exchange"
    if forgery != "wrong_port":
        # A reply from another port may never reach the daemon (a connected UDP socket drops it
        # in the kernel), so only the others must leave a trace.
        assert d.wait_for_log("ignored", timeout=2), \
            f"{forgery}: no 'ignored' line at --log-level debug; stderr:\n{d.stderr_text()[-2000:]}"
    r = d.query(name, "A")
    assert answer_values(r, "A") == [GENUINE_V4]


def test_forwarded_answers_reach_ipv4_and_ipv6_clients(upstream, moat):
    """The reply to a forwarded query goes back to the client's own address and port, from
    127.0.0.1 and from ::1 (the listener keeps an IPv4 sender packed, an IPv6 one whole)."""
    port = free_port()
    d = moat(base_config(upstream, server={"listen": [f"127.0.0.1:{port}", f"[::1]:{port}"]}))
    for i in range(10):
        for family, server in (("v4", "127.0.0.1"), ("v6", "::1")):
            name = f"{family}-{i}.fwd.example.test"
            address = f"192.0.2.{100 + i}" if family == "v4" else f"192.0.2.{150 + i}"
            upstream.add(name, "A", address)
            # dnspython takes only a reply from the address and port it sent to, with its ID.
            r = dns.query.udp(make_query(name, "A"), server, port=d.port, timeout=3)
            assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [address], \
                f"{name} from {server}: {rcode_name(r)} {r.answer}"
            assert upstream.queries(name), f"{name} should have been forwarded"
