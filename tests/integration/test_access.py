"""Access control: a client outside [access] allow gets REFUSED and nothing is forwarded."""

from conftest import base_config, answer_values, rcode_name


def test_client_outside_allow_is_refused(upstream, moat):
    upstream.add("acl.example.test", "A", "192.0.2.20")
    d = moat(base_config(upstream, access={"allow": ["10.0.0.0/8", "fd00::/8"]},
                         local={"records": {"nas.lan": "A 192.168.1.10"}}))
    for name in ("acl.example.test", "nas.lan", "localhost"):
        for tcp in (False, True):
            r = d.query(name, "A", tcp=tcp)
            assert rcode_name(r) == "REFUSED", f"{name} tcp={tcp}: {rcode_name(r)} {r.answer}"
            assert not r.answer
    assert upstream.queries() == [], "a refused client's query reached the upstream"


def test_client_inside_allow_is_served(upstream, moat):
    upstream.add("acl.example.test", "A", "192.0.2.20")
    d = moat(base_config(upstream, access={"allow": ["10.0.0.0/8", "127.0.0.1/32"]}))
    r = d.query("acl.example.test", "A")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.20"]
