"""The answer cache: a hit with its TTL aged in whole seconds; negative answers cached; a name
asked for near its expiry renewed by prefetch; an expired one answered at once and renewed with
cache.optimistic."""

import time

import dns.edns
import dns.rdatatype

from conftest import answer_values, base_config, rcode_name, wait_until
from test_metrics import metric


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


def test_prefetch_renews_an_answer_asked_for_near_its_expiry(upstream, moat):
    """With prefetch (the default) a query in the last tenth of an answer's TTL is answered
    from the cache and the upstream is asked again meanwhile, so the next query after the first
    answer's expiry is still a cache hit, with the upstream's new answer. With prefetch off the
    same queries let the answer expire and the next one waits for the upstream."""
    ttl = 8  # the last tenth: 0.8 s
    upstream.add("popular.example.test", "A", "192.0.2.60", ttl=ttl)
    upstream.add("plain.example.test", "A", "192.0.2.70", ttl=ttl)
    on = moat(base_config(upstream))
    off = moat(base_config(upstream, cache={"prefetch": False}))
    assert answer_values(on.query("popular.example.test", "A"), "A") == ["192.0.2.60"]
    assert answer_values(off.query("plain.example.test", "A"), "A") == ["192.0.2.70"]
    t0 = time.monotonic()  # both answers were stored before this
    upstream.add("popular.example.test", "A", "192.0.2.61", ttl=ttl)
    upstream.add("plain.example.test", "A", "192.0.2.71", ttl=ttl)

    time.sleep(ttl - 0.6 - (time.monotonic() - t0))  # 0.6 s before expiry
    near_on = on.query("popular.example.test", "A")
    near_off = off.query("plain.example.test", "A")
    assert time.monotonic() - t0 < ttl - 0.1, "too slow to ask inside the last tenth"
    assert answer_values(near_on, "A") == ["192.0.2.60"] and near_on.answer[0].ttl <= 1, \
        f"not the cached answer: {near_on.answer}"
    assert answer_values(near_off, "A") == ["192.0.2.70"] and near_off.answer[0].ttl <= 1
    assert wait_until(lambda: len(upstream.queries("popular.example.test", "A")) == 2, 3), \
        "the hit near expiry did not ask the upstream again"
    assert len(upstream.queries("plain.example.test", "A")) == 1, "prefetch off, yet asked again"

    time.sleep(max(0.0, ttl + 1.0 - (time.monotonic() - t0)))  # past the first answers' expiry
    after_on = on.query("popular.example.test", "A")
    after_off = off.query("plain.example.test", "A")
    assert answer_values(after_on, "A") == ["192.0.2.61"], "the refreshed answer"
    assert 1 <= after_on.answer[0].ttl < ttl, \
        f"TTL {after_on.answer[0].ttl}: not the refreshed entry aged since its refresh"
    assert len(upstream.queries("popular.example.test", "A")) == 2, \
        "the query after expiry went upstream although the answer was refreshed"
    assert answer_values(after_off, "A") == ["192.0.2.71"] and after_off.answer[0].ttl == ttl, \
        "prefetch off: the query after expiry gets the upstream's fresh answer"
    assert len(upstream.queries("plain.example.test", "A")) == 2, \
        "prefetch off: one query at the start, one after expiry, none near it"


def test_optimistic_answers_an_expired_name_at_once_and_renews_it(upstream, moat):
    """With cache.optimistic a query for an expired answer gets it at once, with stale_ttl and
    EDE 3 (Stale Answer), and the upstream is asked again meanwhile; its new answer serves the
    queries after that. Without it the same query waits for the (slow) upstream. A refresh that
    fails leaves the stale answer, and the queries within stale_ttl do not ask again."""
    delay = 1.0
    upstream.add("hot.example.test", "A", "192.0.2.80", ttl=1)
    upstream.add("cold.example.test", "A", "192.0.2.90", ttl=1)
    upstream.add("down.example.test", "A", "192.0.2.100", ttl=1)
    on = moat(base_config(upstream, cache={"optimistic": True, "stale_ttl": "7s"},
                          upstream={"timeout": "2s", "total_timeout": "3s"}))
    off = moat(base_config(upstream, upstream={"timeout": "2s", "total_timeout": "3s"}))
    assert answer_values(on.query("hot.example.test"), "A") == ["192.0.2.80"]
    assert answer_values(on.query("down.example.test"), "A") == ["192.0.2.100"]
    assert answer_values(off.query("cold.example.test"), "A") == ["192.0.2.90"]
    upstream.add("hot.example.test", "A", "192.0.2.81", ttl=300)
    upstream.add("cold.example.test", "A", "192.0.2.91", ttl=300)
    # The upstream answers slowly from now on, within the daemon's timeout.
    upstream.rule("hot.example.test", ("delay", delay), "answer")
    upstream.rule("cold.example.test", ("delay", delay), "answer")
    upstream.rule("down.example.test", "servfail")
    time.sleep(1.3)  # every answer has expired

    t0 = time.monotonic()
    stale = on.query("hot.example.test", use_edns=0)
    elapsed = time.monotonic() - t0
    assert answer_values(stale, "A") == ["192.0.2.80"], f"not the expired answer: {stale.answer}"
    assert stale.answer[0].ttl == 7, f"TTL {stale.answer[0].ttl}, stale_ttl is 7s"
    assert [o.code for o in stale.options if o.otype == dns.edns.EDE] == [3], stale.options
    assert elapsed < delay / 2, f"{elapsed:.2f}s: the stale answer waited for the upstream"

    t0 = time.monotonic()
    waited = off.query("cold.example.test")
    assert time.monotonic() - t0 >= delay * 0.9, "without optimistic the query must wait"
    assert answer_values(waited, "A") == ["192.0.2.91"]

    assert wait_until(lambda: answer_values(on.query("hot.example.test"), "A") == ["192.0.2.81"],
                      delay * 4), "the renewed answer never replaced the stale one"
    renewed = on.query("hot.example.test")
    assert 290 <= renewed.answer[0].ttl <= 300, f"TTL {renewed.answer[0].ttl}: not the new entry"

    # The failing upstream: stale answers, and one refresh for all the queries within 7 s.
    assert answer_values(on.query("down.example.test"), "A") == ["192.0.2.100"]
    assert wait_until(lambda: len(upstream.queries("down.example.test", "A")) >= 2, 2), \
        "the stale answer's refresh never reached the upstream"
    time.sleep(0.3)  # the refresh's attempts are over (the upstream path tries twice)
    asked = len(upstream.queries("down.example.test", "A"))
    for _ in range(5):
        r = on.query("down.example.test")
        assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.100"], r
    time.sleep(0.3)
    assert len(upstream.queries("down.example.test", "A")) == asked, \
        "the queries within stale_ttl of a failed refresh asked the upstream again"
    assert metric(on, "dnsmoat_queries_total", outcome="stale") >= 7
    assert metric(on, "dnsmoat_cache_prefetches_total") == 2, "one refresh per name"
