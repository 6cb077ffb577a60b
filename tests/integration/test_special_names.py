"""Special-use names answered by dnsmoat itself, never forwarded: the Firefox DoH canary,
iCloud Private Relay (configurable), DDR's resolver.arpa and mDNS's .local."""

from conftest import base_config, rcode_name


def test_special_names_are_answered_here(upstream, moat):
    d = moat(base_config(upstream))
    for name, rdtype, rcode in [("use-application-dns.net", "A", "NXDOMAIN"),
                                ("mask.icloud.com", "AAAA", "NXDOMAIN"),
                                ("mask-h2.icloud.com", "A", "NXDOMAIN"),
                                ("_dns.resolver.arpa", "SVCB", "NOERROR"),
                                ("laptop.local", "A", "NXDOMAIN")]:
        r = d.query(name, rdtype)
        assert rcode_name(r) == rcode, f"{name}: {rcode_name(r)}"
        assert not r.answer, f"{name}: {r.answer}"
    assert upstream.queries() == [], "special-use names must not reach the upstream"


def test_private_relay_names_can_be_forwarded(upstream, moat):
    upstream.add("mask.icloud.com", "A", "192.0.2.77")
    d = moat(base_config(upstream, blocking={"block_icloud_private_relay": False}))
    r = d.query("mask.icloud.com", "A")
    assert rcode_name(r) == "NOERROR" and r.answer, r
    assert upstream.queries("mask.icloud.com")
    assert rcode_name(d.query("use-application-dns.net", "A")) == "NXDOMAIN"
