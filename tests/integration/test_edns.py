"""EDNS: OPT in, OPT out; the DO bit carried upstream and part of the cache key; BADVERS for
EDNS version 1; ECS stripped before forwarding."""

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rrset

from conftest import base_config, answer_values, rcode_name

ECS_CODE = 8


def test_opt_answered_with_opt(upstream, moat):
    upstream.add("e.example.test", "A", "192.0.2.30")
    d = moat(base_config(upstream, local={"records": {"nas.lan": "A 192.168.1.10"}}))
    for name in ("e.example.test", "nas.lan", "localhost"):
        r = d.query(name, "A", use_edns=0, payload=1232)
        assert r.answer, f"{name}: {r}"
        assert r.edns == 0, f"{name}: a query with OPT gets OPT (version 0) back, got edns={r.edns}"
        r = d.query(name, "A", tcp=True, use_edns=0, payload=1232)
        assert r.edns == 0, f"{name} over TCP: no OPT in the answer"
        r = d.query(name, "A")
        assert r.edns == -1, f"{name}: no OPT in the query, yet OPT in the answer"


def test_do_bit_forwarded_and_cached_separately(upstream, moat):
    def by_do(q, transport):
        r = dns.message.make_response(q, recursion_available=True)
        do = q.edns >= 0 and bool(q.ednsflags & dns.flags.DO)
        if q.edns >= 0:
            r.use_edns(0, dns.flags.DO if do else 0, 1232)
        r.answer.append(dns.rrset.from_text(q.question[0].name, 300, "IN", "A",
                                            "192.0.2.2" if do else "192.0.2.1"))
        return r

    upstream.rule("do.example.test", by_do)
    d = moat(base_config(upstream))
    for round_ in range(2):
        plain = d.query("do.example.test", "A", use_edns=0, payload=1232)
        assert answer_values(plain, "A") == ["192.0.2.1"], f"round {round_}: non-DO query got {plain.answer}"
        dnssec = d.query("do.example.test", "A", use_edns=0, payload=1232, want_dnssec=True)
        assert answer_values(dnssec, "A") == ["192.0.2.2"], f"round {round_}: DO query got {dnssec.answer}"
    seen = upstream.queries("do.example.test")
    assert [q.do for q in seen] == [False, True], \
        f"upstream saw DO flags {[q.do for q in seen]}; expected one query without DO, one with"


def test_badvers(upstream, moat):
    upstream.add("v.example.test", "A", "192.0.2.31")
    d = moat(base_config(upstream))
    for name in ("v.example.test", "localhost"):
        r = d.query(name, "A", use_edns=1, payload=1232)
        assert r.rcode() == dns.rcode.BADVERS, f"{name}: rcode {dns.rcode.to_text(r.rcode())}"
        assert r.edns == 0, "BADVERS comes with an OPT of the version we speak (0)"
        assert not r.answer
    assert upstream.queries("v.example.test") == [], "a BADVERS query must not be forwarded"
    r = d.query("v.example.test", "A", use_edns=0)
    assert answer_values(r, "A") == ["192.0.2.31"]


def test_ecs_stripped(upstream, moat):
    upstream.add("ecs.example.test", "A", "192.0.2.32")
    upstream.add("ecs6.example.test", "A", "192.0.2.33")
    d = moat(base_config(upstream, edns={"strip_ecs": True}))
    opts = [dns.edns.ECSOption("198.51.100.0", 24)]
    r = d.query("ecs.example.test", "A", use_edns=0, payload=1232, options=opts)
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.32"]
    opts6 = [dns.edns.ECSOption("2001:db8:1234::", 48), dns.edns.GenericOption(65001, b"keep?")]
    r = d.query("ecs6.example.test", "A", use_edns=0, payload=1232, options=opts6, want_dnssec=True)
    assert answer_values(r, "A") == ["192.0.2.33"]
    for name in ("ecs.example.test", "ecs6.example.test"):
        seen = upstream.queries(name)
        assert seen, f"{name} never reached the upstream"
        for q in seen:
            assert ECS_CODE not in q.option_codes(), f"{name}: ECS forwarded: {q.msg.options}"
