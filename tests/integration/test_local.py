"""Local records (authoritative, generated PTR, hosts file) and localhost, never forwarded."""

import dns.flags
import dns.rdatatype
import dns.reversename

from conftest import (base_config, answer_values, answer_ttls, dig_tool, rcode_name, run_tool,
                      write_file)


def local_config(tmp_path, up):
    hosts = write_file(tmp_path / "hosts", "# local hosts\n192.168.1.30 tv.lan tv-alias.lan\n"
                                           "fd00::30 tv.lan\n")
    return base_config(up, local={
        "ttl": "42s",
        "hosts_file": str(hosts),
        "records": {
            "nas.lan": "A 192.168.1.10",
            "printer.lan": ["A 192.168.1.20", "AAAA fd00::20"],
            "media.lan": "CNAME nas.lan",
            "notes.lan": "TXT hello from dnsmoat",
        },
    })


def assert_local(r, name):
    assert rcode_name(r) == "NOERROR", f"{name}: {rcode_name(r)}"
    assert r.flags & dns.flags.AA, f"{name}: local answers are authoritative (AA)"
    assert r.answer, f"{name}: no answer"
    assert answer_ttls(r) == [42] * len(r.answer), f"{name}: TTL {answer_ttls(r)} != local.ttl 42"


def test_local_records(tmp_path, upstream, moat):
    d = moat(local_config(tmp_path, upstream))
    r = d.query("nas.lan", "A")
    assert_local(r, "nas.lan A")
    assert answer_values(r, "A") == ["192.168.1.10"]

    r = d.query("printer.lan", "A")
    assert_local(r, "printer.lan A")
    assert answer_values(r, "A") == ["192.168.1.20"]
    r = d.query("PRINTER.lan", "AAAA", tcp=True)
    assert_local(r, "printer.lan AAAA over TCP")
    assert answer_values(r, "AAAA") == ["fd00::20"]

    r = d.query("media.lan", "A")
    assert_local(r, "media.lan A")
    assert "nas.lan." in answer_values(r, "CNAME")

    r = d.query("notes.lan", "TXT")
    assert_local(r, "notes.lan TXT")
    texts = [b"".join(rd.strings) for rrset in r.answer if rrset.rdtype == dns.rdatatype.TXT
             for rd in rrset]
    assert texts == [b"hello from dnsmoat"], texts

    # names from hosts_file
    r = d.query("tv.lan", "A")
    assert_local(r, "tv.lan A")
    assert answer_values(r, "A") == ["192.168.1.30"]
    r = d.query("tv-alias.lan", "A")
    assert_local(r, "tv-alias.lan A")
    assert answer_values(r, "A") == ["192.168.1.30"]
    r = d.query("tv.lan", "AAAA")
    assert_local(r, "tv.lan AAAA")
    assert answer_values(r, "AAAA") == ["fd00::30"]

    assert not [q for q in upstream.queries() if q.qname and q.qname.endswith(".lan.")], \
        "local names must not be forwarded"


def test_local_ptr_generated(tmp_path, upstream, moat):
    d = moat(local_config(tmp_path, upstream))
    r = d.query("10.1.168.192.in-addr.arpa", "PTR")
    assert_local(r, "PTR 192.168.1.10")
    assert answer_values(r, "PTR") == ["nas.lan."]

    r = d.query(dns.reversename.from_address("fd00::20").to_text(), "PTR")
    assert_local(r, "PTR fd00::20")
    assert answer_values(r, "PTR") == ["printer.lan."]

    r = d.query("30.1.168.192.in-addr.arpa", "PTR")
    assert_local(r, "PTR 192.168.1.30 (hosts file)")
    assert set(answer_values(r, "PTR")) <= {"tv.lan.", "tv-alias.lan."} and answer_values(r, "PTR")

    out = run_tool([dig_tool("kdig"), "@127.0.0.1", "-p", str(d.port), "+short", "+retry=0",
                    "+timeout=2", "-x", "192.168.1.20"])
    assert out.stdout.split() == ["printer.lan."], out.stdout + out.stderr
    leaked = [q.qname for q in upstream.queries()
              if q.qname and (q.qname.endswith("168.192.in-addr.arpa.") or q.qname.endswith("ip6.arpa."))]
    assert not leaked, f"PTR names of local records were forwarded: {leaked}"


def test_localhost_never_forwarded(tmp_path, upstream, moat):
    # the upstream would give another address if it were ever asked
    for name in ("localhost", "foo.localhost", "a.b.localhost"):
        upstream.add(name, "A", "192.0.2.99")
        upstream.add(name, "AAAA", "2001:db8::99")
    d = moat(base_config(upstream))
    for name in ("localhost", "foo.localhost", "a.b.LOCALHOST"):
        for tcp in (False, True):
            r = d.query(name, "A", tcp=tcp)
            assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["127.0.0.1"], \
                f"{name} A: {r.answer}"
            r = d.query(name, "AAAA", tcp=tcp)
            assert rcode_name(r) == "NOERROR" and answer_values(r, "AAAA") == ["::1"], \
                f"{name} AAAA: {r.answer}"
    r = d.query("localhost", "A", use_edns=0, payload=1232)
    assert answer_values(r, "A") == ["127.0.0.1"]
    assert not [q for q in upstream.queries() if q.qname and "localhost" in q.qname], \
        "localhost names must never be forwarded"
