"""The answer cache: a hit with its TTL aged in whole seconds; negative answers cached."""

import time

import dns.rdatatype

from conftest import base_config, answer_values, rcode_name


def test_cache_hit_ttl_decreases(upstream, moat):
    upstream.add("cached.example.test", "A", "192.0.2.50", ttl=300)
    d = moat(base_config(upstream))
    first = d.query("cached.example.test", "A")
    assert rcode_name(first) == "NOERROR" and answer_values(first, "A") == ["192.0.2.50"]
    ttl1 = first.answer[0].ttl
    assert 299 <= ttl1 <= 300, f"first answer TTL {ttl1}, upstream gave 300"
    t0 = time.monotonic()
    time.sleep(2.2)
    second = d.query("cached.example.test", "A")  # a new ID: the hit is stamped with it
    elapsed = int(time.monotonic() - t0)
    assert answer_values(second, "A") == ["192.0.2.50"]
    ttl2 = second.answer[0].ttl
    assert ttl1 - elapsed - 1 <= ttl2 <= ttl1 - 2, \
        f"TTL after {elapsed}s: {ttl2} (first {ttl1}); expected it lowered by the elapsed seconds"
    third = d.query("Cached.Example.Test", "A", tcp=True)
    assert answer_values(third, "A") == ["192.0.2.50"]
    assert len(upstream.queries("cached.example.test", "A")) == 1, \
        f"upstream saw {len(upstream.queries('cached.example.test', 'A'))} queries, expected 1"


def test_negative_answers_cached(upstream, moat):
    upstream.add("exists.example.test", "A", "192.0.2.51")
    d = moat(base_config(upstream))
    for _ in range(3):
        r = d.query("nope.example.test", "A")
        assert rcode_name(r) == "NXDOMAIN", rcode_name(r)
        soa = [rr for rr in r.authority if rr.rdtype == dns.rdatatype.SOA]
        assert soa and soa[0].ttl <= 60, f"negative answer without its SOA: {r.authority}"
        r = d.query("exists.example.test", "AAAA")  # NODATA
        assert rcode_name(r) == "NOERROR" and not r.answer
        assert [rr for rr in r.authority if rr.rdtype == dns.rdatatype.SOA]
    assert len(upstream.queries("nope.example.test", "A")) == 1, "NXDOMAIN not cached"
    assert len(upstream.queries("exists.example.test", "AAAA")) == 1, "NODATA not cached"
