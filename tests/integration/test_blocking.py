"""Block and allow lists: blocked, allowed, allow beats block, subdomain rules, regex, every
blocking mode."""

import pytest

from conftest import (base_config, answer_values, answer_ttls, dig_tool, rcode_name, run_tool,
                      write_file)

UPSTREAM_V4 = "192.0.2.80"


def lists_config(tmp_path, up, *, blocklists=(), allowlists=(), **sections):
    """blocklists / allowlists: (name, text, extra keys) tuples; files land in tmp_path."""
    cfg = base_config(up, **sections)
    if blocklists:
        cfg["blocklists"] = [
            {"name": name, "path": str(write_file(tmp_path / "lists" / f"block-{name}.txt", text)), **extra}
            for name, text, extra in blocklists]
    if allowlists:
        cfg["allowlists"] = [
            {"name": name, "path": str(write_file(tmp_path / "lists" / f"allow-{name}.txt", text)), **extra}
            for name, text, extra in allowlists]
    return cfg


def serve(up, *names):
    for n in names:
        up.add(n, "A", UPSTREAM_V4)
        up.add(n, "AAAA", "2001:db8::80")
        up.add(n, "TXT", '"from upstream"')


def assert_blocked_null(d, name, blocked_ttl):
    r = d.query(name, "A")
    assert rcode_name(r) == "NOERROR", f"{name}: {rcode_name(r)}"
    assert answer_values(r, "A") == ["0.0.0.0"], f"{name} not blocked: {r.answer}"
    assert answer_ttls(r) == [blocked_ttl]


def assert_forwarded(d, up, name):
    r = d.query(name, "A")
    assert rcode_name(r) == "NOERROR"
    assert answer_values(r, "A") == [UPSTREAM_V4], f"{name} should reach the upstream: {r.answer}"
    assert up.queries(name, "A"), f"upstream never saw {name}"


def test_blocked_name_null_mode(tmp_path, upstream, moat):
    serve(upstream, "ads.example.test", "fine.example.test")
    cfg = lists_config(tmp_path, upstream,
                       blocklists=[("ads", "# a comment\nads.example.test\n", {"format": "domains"})],
                       blocking={"mode": "null", "blocked_ttl": "7s"})
    d = moat(cfg)
    assert_blocked_null(d, "ads.example.test", 7)
    r = d.query("ads.example.test", "AAAA")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "AAAA") == ["::"]
    assert answer_ttls(r) == [7]
    r = d.query("ads.example.test", "TXT")
    assert rcode_name(r) == "NOERROR" and not r.answer, f"NODATA expected, got {r.answer}"
    assert upstream.queries("ads.example.test") == [], "a blocked name must not be forwarded"
    # letter case does not matter
    assert_blocked_null(d, "ADS.Example.TEST", 7)
    # dig sees the same
    out = run_tool([dig_tool("dig"), "@127.0.0.1", "-p", str(d.port), "+short", "+tries=1",
                    "+time=2", "ads.example.test", "A"])
    assert out.stdout.split() == ["0.0.0.0"], out.stdout + out.stderr


def test_not_listed_name_is_forwarded(tmp_path, upstream, moat):
    serve(upstream, "fine.example.test")
    cfg = lists_config(tmp_path, upstream,
                       blocklists=[("ads", "ads.example.test\n", {})])
    d = moat(cfg)
    assert_forwarded(d, upstream, "fine.example.test")


def test_allowlist_beats_blocklist(tmp_path, upstream, moat):
    serve(upstream, "ok.ads.example.test", "cdn.ads.example.test", "also.example.test",
          "good.bad.example.test")
    cfg = lists_config(
        tmp_path, upstream,
        blocklists=[("ads", "||ads.example.test^\nalso.example.test\n", {"format": "adblock"}),
                    ("bad", "bad.example.test\n", {"format": "domains", "subdomains": True})],
        allowlists=[("mine", "ok.ads.example.test\nalso.example.test\n",
                     {"format": "domains", "subdomains": False})])
    d = moat(cfg)
    assert_forwarded(d, upstream, "ok.ads.example.test")
    assert_forwarded(d, upstream, "also.example.test")
    assert_blocked_null(d, "cdn.ads.example.test", 2)
    assert_blocked_null(d, "bad.example.test", 2)
    assert_blocked_null(d, "x.bad.example.test", 2)


def test_adblock_exception_in_blocklist(tmp_path, upstream, moat):
    serve(upstream, "good.track.example.test", "www.good.track.example.test")
    cfg = lists_config(tmp_path, upstream, blocklists=[
        ("adb", "! comment\n||track.example.test^\n@@||good.track.example.test^\n", {"format": "auto"})])
    d = moat(cfg)
    assert_blocked_null(d, "track.example.test", 2)
    assert_blocked_null(d, "pixel.track.example.test", 2)
    assert_forwarded(d, upstream, "good.track.example.test")
    assert_forwarded(d, upstream, "www.good.track.example.test")


def test_subdomain_rules(tmp_path, upstream, moat):
    names = ["sub.hostsexact.example.test", "sub.plain.example.test", "sub.pipe.example.test",
             "example.test", "other.example.test"]
    serve(upstream, *names)
    cfg = lists_config(tmp_path, upstream, blocklists=[
        ("hosts", "0.0.0.0 hostsexact.example.test\n127.0.0.1 hostswide.example.test\n",
         {"format": "hosts"}),
        ("hosts-sub", "0.0.0.0 tree.example.test # trailing comment\n",
         {"format": "hosts", "subdomains": True}),
        ("plain", "plain.example.test\n", {"format": "domains"}),
        ("plain-sub", "deep.example.test\n", {"format": "domains", "subdomains": True}),
        ("wild", "*.wild.example.test\n", {"format": "domains"}),
        ("adblock", "||adb.example.test^\n|pipe.example.test^\n", {"format": "adblock"}),
    ])
    d = moat(cfg)
    # exact entries: the name is blocked, its subdomains are not
    assert_blocked_null(d, "hostsexact.example.test", 2)
    assert_blocked_null(d, "hostswide.example.test", 2)
    assert_forwarded(d, upstream, "sub.hostsexact.example.test")
    assert_blocked_null(d, "plain.example.test", 2)
    assert_forwarded(d, upstream, "sub.plain.example.test")
    assert_blocked_null(d, "pipe.example.test", 2)
    assert_forwarded(d, upstream, "sub.pipe.example.test")
    # subdomains=true, wildcard and ||x^: the name and everything below
    for name in ["tree.example.test", "a.tree.example.test", "deep.example.test",
                 "x.y.deep.example.test", "wild.example.test", "a.wild.example.test",
                 "adb.example.test", "a.b.adb.example.test"]:
        assert_blocked_null(d, name, 2)
    # parents and siblings stay free
    assert_forwarded(d, upstream, "example.test")
    assert_forwarded(d, upstream, "other.example.test")


def test_regex_list(tmp_path, upstream, moat):
    serve(upstream, "ad.example.test", "adx.example.test", "www.evil.test.example.test",
          "evil.tester")
    cfg = lists_config(tmp_path, upstream, blocklists=[
        ("re", "# pi-hole style\n^ad[0-9]+\\.\ntracker\n(^|\\.)evil\\.test$\n", {"format": "regex"})])
    d = moat(cfg)
    assert_blocked_null(d, "ad1.example.test", 2)
    assert_blocked_null(d, "ad123.example.test", 2)
    assert_blocked_null(d, "my-tracker-x.example.test", 2)
    assert_blocked_null(d, "MyTracker.example.test", 2)   # matched on the lower-cased name
    # `$` matches only if the name is matched without its trailing dot
    assert_blocked_null(d, "evil.test", 2)
    assert_blocked_null(d, "www.evil.test", 2)
    assert_forwarded(d, upstream, "ad.example.test")
    assert_forwarded(d, upstream, "adx.example.test")
    assert_forwarded(d, upstream, "www.evil.test.example.test")
    assert_forwarded(d, upstream, "evil.tester")


@pytest.mark.parametrize("mode", ["null", "nxdomain", "refused", "custom"])
def test_blocking_modes(tmp_path, upstream, moat, mode):
    serve(upstream, "free.example.test")
    blocking = {"mode": mode, "blocked_ttl": "5s"}
    if mode == "custom":
        blocking.update(custom_ipv4="192.0.2.200", custom_ipv6="2001:db8::200")
    cfg = lists_config(tmp_path, upstream, blocklists=[("b", "blocked.example.test\n", {})],
                       blocking=blocking)
    d = moat(cfg)
    a = d.query("blocked.example.test", "A")
    aaaa = d.query("blocked.example.test", "AAAA")
    txt = d.query("blocked.example.test", "TXT")
    if mode in ("null", "custom"):
        v4, v6 = ("0.0.0.0", "::") if mode == "null" else ("192.0.2.200", "2001:db8::200")
        assert rcode_name(a) == "NOERROR" and answer_values(a, "A") == [v4]
        assert rcode_name(aaaa) == "NOERROR" and answer_values(aaaa, "AAAA") == [v6]
        assert answer_ttls(a) == [5] and answer_ttls(aaaa) == [5]
        assert rcode_name(txt) == "NOERROR" and not txt.answer, f"NODATA expected: {txt.answer}"
    else:
        want = "NXDOMAIN" if mode == "nxdomain" else "REFUSED"
        for r in (a, aaaa, txt):
            assert rcode_name(r) == want, f"mode {mode}: got {rcode_name(r)}"
            assert not r.answer
    assert upstream.queries("blocked.example.test") == []
    assert_forwarded(d, upstream, "free.example.test")


def test_cname_into_a_blocked_name_is_blocked(tmp_path, upstream, moat):
    # A first-party name that CNAMEs to a tracker (CNAME cloaking): blocked as the tracker is.
    upstream.add("metrics.shop.test", "CNAME", "shop.tracker.test.")
    upstream.add("shop.tracker.test", "CNAME", "edge.cdn.test.")
    upstream.add("edge.cdn.test", "A", UPSTREAM_V4)
    upstream.add("www.shop.test", "CNAME", "edge.cdn.test.")
    cfg = lists_config(tmp_path, upstream,
                       blocklists=[("trackers", "||tracker.test^\n", {})],
                       blocking={"mode": "null", "blocked_ttl": "3s"})
    d = moat(cfg)
    r = d.query("metrics.shop.test", "A", use_edns=0)
    assert rcode_name(r) == "NOERROR"
    assert answer_values(r, "A") == ["0.0.0.0"], f"cloaked tracker answered: {r.answer}"
    assert answer_ttls(r) == [3]
    ede = [o for o in r.options if o.otype == 15]
    assert [(o.code, o.text) for o in ede] == [(15, "trackers")], \
        f"EDE 15 (Blocked) naming the list expected: {ede}"
    assert upstream.queries("metrics.shop.test", "A"), "the chain is only known from upstream"
    # Not cached: asked again, it goes upstream again (and is blocked again).
    upstream.clear()
    assert answer_values(d.query("metrics.shop.test", "A"), "A") == ["0.0.0.0"]
    assert upstream.queries("metrics.shop.test", "A")
    # A chain through unblocked names is answered as upstream gave it.
    r = d.query("www.shop.test", "A")
    assert answer_values(r, "A") == [UPSTREAM_V4]
    assert [rr.rdtype for rr in r.answer][0] == 5  # CNAME first


def test_cname_inspection_off_and_allowlisted_names_pass(tmp_path, upstream, moat):
    upstream.add("metrics.shop.test", "CNAME", "shop.tracker.test.")
    upstream.add("shop.tracker.test", "A", UPSTREAM_V4)
    upstream.add("stats.shop.test", "CNAME", "shop.tracker.test.")
    cfg = lists_config(tmp_path, upstream,
                       blocklists=[("trackers", "||tracker.test^\n", {})],
                       allowlists=[("mine", "stats.shop.test\n", {})])
    d = moat(cfg)
    # The allowlisted name keeps its answer even though it leads to a blocked one.
    assert answer_values(d.query("stats.shop.test", "A"), "A") == [UPSTREAM_V4]
    assert answer_values(d.query("metrics.shop.test", "A"), "A") == ["0.0.0.0"]
    cfg["blocking"] = {"cname_inspection": False}
    d2 = moat(cfg)
    assert answer_values(d2.query("metrics.shop.test", "A"), "A") == [UPSTREAM_V4]


def test_rebinding_protection(tmp_path, upstream, moat):
    upstream.add("evil.test", "A", "192.168.1.1")
    upstream.add("fine.test", "A", UPSTREAM_V4)
    upstream.add("10-0-0-5.abc.plex.test", "A", "10.0.0.5")
    cfg = base_config(upstream, blocking={"rebind_protection": True, "rebind_allow": ["plex.test"]})
    d = moat(cfg)
    r = d.query("evil.test", "A", use_edns=0)
    assert rcode_name(r) == "NOERROR" and not r.answer, f"internal address passed: {r.answer}"
    # (dnspython: otype 15 is the EDE option; its code 17 is Filtered)
    assert any(getattr(o, "code", None) == 17 for o in r.options if o.otype == 15), \
        "EDE 17 (Filtered) expected"
    assert answer_values(d.query("fine.test", "A"), "A") == [UPSTREAM_V4]
    assert answer_values(d.query("10-0-0-5.abc.plex.test", "A"), "A") == ["10.0.0.5"]
    # Off (the default): passed on.
    d2 = moat(base_config(upstream))
    assert answer_values(d2.query("evil.test", "A"), "A") == ["192.168.1.1"]
