"""Encrypted upstreams through the real binary: dnsmoat forwarding over DNS over TLS and DNS over
HTTPS to a second dnsmoat's listeners and to Debian's unbound (tls-port, answering from local
data only), one reused connection for many queries, host names resolved through the bootstrap
servers, certificates that are not valid for the name or not signed by a trusted CA refused and
logged (the next upstream answers), public-key pins, TLS session resumption on reconnect, and
the hedge strategy measured against failover on the same slow server."""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import (LOOPBACK, answer_values, base_config, free_port, make_query, rcode_name,
                      wait_until, write_file)
from test_encrypted import NAME, encrypted_config, issue, make_ca, pki, port_of  # noqa: F401
from test_metrics import metric

UNBOUND = "/usr/sbin/unbound"


def front_config(pki, *servers: str, **upstream) -> dict:
    cfg = base_config(*servers)
    cfg["upstream"].update({"tls_ca_file": str(pki["ca"]), "timeout": "1s", "total_timeout": "3s",
                            **upstream})
    return cfg


def backend(moat, upstream, pki, tmp_path, **kw):
    """A dnsmoat serving DoT and DoH with the test certificate, forwarding to `upstream`."""
    sub = tmp_path / f"backend{len(list(tmp_path.glob('backend*')))}"
    sub.mkdir()
    return moat(encrypted_config(upstream, pki, sub, **kw))


def test_dot_upstream_reuses_one_connection_for_many_queries(upstream, moat, pki, tmp_path):
    for i in range(20):
        upstream.add(f"n{i}.up.test", "A", f"192.0.2.{i + 1}")
    back = backend(moat, upstream, pki, tmp_path, idle_timeout="30s")
    front = moat(front_config(pki, f"tls://{LOOPBACK}:{port_of(back, 'dot')}#{NAME}"))
    results = {}

    def ask(i: int) -> None:
        results[i] = front.query(f"n{i}.up.test", "A")

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    for i in range(20):
        assert answer_values(results[i], "A") == [f"192.0.2.{i + 1}"], results.get(i)
    # Every query reached the backend over DoT, on one connection.
    assert metric(back, "dnsmoat_queries_by_transport_total", transport="dot") == 20
    assert metric(back, "dnsmoat_tcp_connections_peak") == 1
    assert len(upstream.queries()) == 20


def test_doh_upstream_by_host_name_through_the_bootstrap_servers(upstream, upstream_factory,
                                                                  moat, pki, tmp_path):
    upstream.add("www.up.test", "A", "192.0.2.70")
    back = backend(moat, upstream, pki, tmp_path)
    boot = upstream_factory("bootstrap")
    boot.add(NAME, "A", LOOPBACK)
    front = moat(front_config(pki, f"https://{NAME}:{port_of(back, 'doh')}/dns-query",
                              bootstrap=[boot.address]))
    r = front.query("www.up.test", "A")
    assert answer_values(r, "A") == ["192.0.2.70"]
    assert boot.queries(NAME, "A"), "the name was not resolved through the bootstrap server"
    assert metric(back, "dnsmoat_queries_by_transport_total", transport="doh") == 1
    # The answer is cached by the front; a second name reuses the HTTP/2 connection.
    upstream.add("two.up.test", "A", "192.0.2.71")
    assert answer_values(front.query("two.up.test", "A"), "A") == ["192.0.2.71"]
    assert metric(back, "dnsmoat_tcp_connections_peak") == 1


def start_unbound(directory: Path, port: int, cert: Path, key: Path) -> subprocess.Popen:
    conf = write_file(directory / "unbound.conf", f"""server:
    interface: {LOOPBACK}@{port}
    tls-port: {port}
    tls-service-pem: "{cert}"
    tls-service-key: "{key}"
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "{directory}"
    pidfile: ""
    use-syslog: no
    logfile: ""
    verbosity: 1
    do-ip6: no
    access-control: 127.0.0.0/8 allow
    module-config: "iterator"
    local-zone: "peer.test." static
    local-data: "www.peer.test. 300 IN A 192.0.2.90"
remote-control:
    control-enable: no
""")
    return subprocess.Popen([UNBOUND, "-d", "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=open(directory / "unbound.log", "wb"))


def test_dot_upstream_against_unbound(moat, pki, tmp_path):
    if not Path(UNBOUND).exists():
        pytest.skip("unbound not installed (scripts/setup.sh test installs it)")
    port = free_port()
    proc = start_unbound(tmp_path, port, *pki["first"])
    try:
        def ready() -> bool:
            try:
                with socket.create_connection((LOOPBACK, port), timeout=0.2):
                    return True
            except OSError:
                return False
        assert wait_until(ready, 10), (tmp_path / "unbound.log").read_text()
        front = moat(front_config(pki, f"tls://{LOOPBACK}:{port}#{NAME}"))
        assert answer_values(front.query("www.peer.test", "A"), "A") == ["192.0.2.90"]
        assert rcode_name(front.query("other.peer.test", "A")) == "NXDOMAIN"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("case", ["wrong name", "untrusted CA", "pin mismatch"])
def test_a_certificate_that_does_not_prove_the_server_is_refused(upstream, upstream_factory, moat,
                                                                 pki, tmp_path, case):
    upstream.add("www.up.test", "A", "192.0.2.70")
    back = backend(moat, upstream, pki, tmp_path)
    plain = upstream_factory("plain")
    plain.add("www.up.test", "A", "192.0.2.99")
    dot = f"tls://{LOOPBACK}:{port_of(back, 'dot')}#{NAME if case != 'wrong name' else 'wrong.test'}"
    extra = {}
    if case == "untrusted CA":
        extra["tls_ca_file"] = str(pki["other_ca"])
    if case == "pin mismatch":
        extra["tls_pins"] = [{"name": NAME, "sha256": ["A" * 43 + "="]}]
    front = moat(front_config(pki, dot, plain.address, **extra))
    # The next upstream answers; the encrypted one never saw the query.
    assert answer_values(front.query("www.up.test", "A"), "A") == ["192.0.2.99"]
    assert not upstream.queries("www.up.test")
    lines = front.wait_for_log("certificate not accepted")
    assert lines, front.stderr_text()[-2000:]
    assert {"wrong name": "hostname mismatch", "untrusted CA": "certificate",
            "pin mismatch": "matches no pin"}[case] in lines[0], lines[0]


def spki_pin(cert: Path) -> str:
    pub = subprocess.run(["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"],
                         capture_output=True, check=True, timeout=10).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub,
                         capture_output=True, check=True, timeout=10).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=der,
                            capture_output=True, check=True, timeout=10).stdout
    import base64
    return base64.b64encode(digest).decode()


def test_a_matching_pin_is_accepted(upstream, moat, pki, tmp_path):
    upstream.add("www.up.test", "A", "192.0.2.70")
    back = backend(moat, upstream, pki, tmp_path)
    pins = [{"name": NAME, "sha256": ["B" * 43 + "=", spki_pin(pki["first"][0])]}]
    front = moat(front_config(pki, f"tls://{LOOPBACK}:{port_of(back, 'dot')}#{NAME}",
                              tls_pins=pins))
    assert answer_values(front.query("www.up.test", "A"), "A") == ["192.0.2.70"]


def test_reconnects_resume_the_tls_session(upstream, moat, pki, tmp_path):
    upstream.add("a.up.test", "A", "192.0.2.1")
    upstream.add("b.up.test", "A", "192.0.2.2")
    back = backend(moat, upstream, pki, tmp_path, idle_timeout="1s")
    front = moat(front_config(pki, f"tls://{LOOPBACK}:{port_of(back, 'dot')}#{NAME}"))
    assert answer_values(front.query("a.up.test", "A"), "A") == ["192.0.2.1"]
    # The backend closes the idle connection after 1 s; the next query reconnects.
    assert back.wait_for_log("closing idle connection", timeout=5)
    time.sleep(0.2)
    assert answer_values(front.query("b.up.test", "A"), "A") == ["192.0.2.2"]
    assert front.wait_for_log("(TLS resumed)"), front.stderr_lines("connected to")


def latency_ms(d, name: str) -> float:
    start = time.monotonic()
    r = d.query(name, "A", timeout=5)
    assert answer_values(r, "A"), r
    return (time.monotonic() - start) * 1000


@pytest.mark.solo
def test_hedge_cuts_the_tail_of_a_slow_server(upstream_factory, moat, tmp_path):
    slow = upstream_factory("slow")
    fast = upstream_factory("fast")
    names = [f"h{i}.up.test" for i in range(10)]
    for n in names:
        slow.add(n, "A", "192.0.2.1")
        slow.rule(n, ("delay", 0.4), "answer")  # answers, but after 400 ms
        fast.add(n, "A", "192.0.2.2")
    common = {"timeout": "2s", "total_timeout": "4s"}
    hedge = moat(base_config(slow, fast, upstream={**common, "strategy": "hedge",
                                                   "hedge_delay": "50ms"}))
    failover = moat(base_config(slow, fast, upstream={**common, "strategy": "failover"}))
    hedged = [latency_ms(hedge, n) for n in names]
    plain = [latency_ms(failover, n) for n in names]
    print(f"median latency over {len(names)} queries, first server 400 ms slow: "
          f"hedge (50 ms) {statistics.median(hedged):.0f} ms, "
          f"failover {statistics.median(plain):.0f} ms")
    assert statistics.median(plain) >= 380
    assert statistics.median(hedged) < 250
    assert metric(hedge, "dnsmoat_upstream_hedged_total") >= len(names)
