"""A real 214,895-entry list (hagezi pro, onlydomains) loads and blocks what it lists."""

from conftest import base_config, answer_values, rcode_name, require_shared, seeded

ENTRIES = 214_895


def test_hagezi_pro_onlydomains(upstream, moat):
    path = require_shared("data", "blocklists", "hagezi-pro.onlydomains.txt")
    entries = [l.strip() for l in path.read_text().splitlines()
               if l.strip() and not l.startswith("#")]
    assert len(entries) == ENTRIES, f"{path} has {len(entries)} entries, MANIFEST says {ENTRIES}"
    listed = set(entries)
    picks = seeded(20260815).sample(entries, 8)
    for name in ("example.test", "www.example.test"):
        assert name not in listed
        upstream.add(name, "A", "192.0.2.5")

    d = moat(base_config(upstream, blocklists=[{"name": "hagezi-pro", "path": str(path),
                                                "format": "domains", "subdomains": True}]),
             ready_timeout=30)
    for name in picks:
        r = d.query(name, "A")
        assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["0.0.0.0"], \
            f"{name} is in the list but answered {rcode_name(r)} {r.answer}"
        r = d.query("sub." + name, "AAAA")
        assert answer_values(r, "AAAA") == ["::"], f"sub.{name} (subdomains=true): {r.answer}"
    for name in ("example.test", "www.example.test"):
        r = d.query(name, "A")
        assert answer_values(r, "A") == ["192.0.2.5"], f"{name} wrongly blocked: {r.answer}"
    blocked_seen = [q.qname for q in upstream.queries() if q.qname and q.qname.rstrip(".") in listed]
    assert not blocked_seen, f"listed names reached the upstream: {blocked_seen}"
