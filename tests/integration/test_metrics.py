"""The HTTP endpoint through the real binary: /metrics parsed by Prometheus's own parser
(python3-prometheus-client) with counters that match the queries sent, /health, the security
headers on every response, and HTTP that is malformed, oversized, pipelined or slow."""

import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import answer_values, base_config, free_port, wait_until, write_file

SANITIZED = bool(os.environ.get("MOAT_SANITIZE"))

SECURITY_HEADERS = ("X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy",
                    "Referrer-Policy", "Cache-Control")


def get(d, path: str, method: str = "GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{d.api_port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def scrape(d) -> dict:
    """{(name, frozenset(labels)): value} of every sample, parsed by prometheus_client."""
    status, headers, body = get(d, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    return samples[(name, frozenset(labels.items()))]


def metric(d, name: str, **labels) -> float:
    """The sum of every sample of `name` whose labels include `labels` (0 when there is none)."""
    return sum(v for (n, l), v in scrape(d).items()
               if n == name and all((k, val) in l for k, val in labels.items()))


def raw(d, data: bytes, timeout: float = 5) -> bytes:
    """Sends bytes on a new connection and reads until the server closes it."""
    with socket.create_connection(("127.0.0.1", d.api_port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def config(upstream, tmp_path, logged: bool = True) -> dict:
    lst = write_file(tmp_path / "ads.txt", "ads.m.test\ntracker.m.test\n/^t[0-9]+\\./\n")
    upstream.add("www.m.test", "A", "192.0.2.7")
    return base_config(upstream, blocklists=[{"name": "ads", "path": str(lst)}],
                       local={"records": {"nas.m.test": "AAAA fd00::5"}},
                       querylog={"flush_interval": "100ms"} if logged else {"enabled": False})


# With the query log off, UDP answers given at once are timed per batch of datagrams
# (QueryPath::end_batch); with it on, each with its row.
@pytest.mark.parametrize("logged", [True, False], ids=["log_on", "log_off"])
def test_metrics_count_what_happened(upstream, moat, tmp_path, logged):
    d = moat(config(upstream, tmp_path, logged))
    before = scrape(d)
    d.query("ads.m.test")                   # blocked
    d.query("www.m.test")                   # forwarded
    d.query("www.m.test")                   # cached
    d.query("nas.m.test", "AAAA", tcp=True)  # local, over TCP
    assert d.send_raw(b"\x12\x34\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00") is not None  # FORMERR
    after = scrape(d)

    def delta(name, **labels):
        return value(after, name, **labels) - before.get((name, frozenset(labels.items())), 0)

    assert delta("dnsmoat_queries_total", outcome="blocked") == 1
    assert delta("dnsmoat_queries_total", outcome="forwarded") == 1
    assert delta("dnsmoat_queries_total", outcome="cached") == 1
    assert delta("dnsmoat_queries_total", outcome="local") == 1
    assert delta("dnsmoat_queries_total", outcome="formerr") == 1
    assert delta("dnsmoat_queries_by_type_total", qtype="A") == 3
    assert delta("dnsmoat_queries_by_type_total", qtype="AAAA") == 1
    assert delta("dnsmoat_queries_by_transport_total", transport="tcp") == 1
    assert delta("dnsmoat_responses_total", rcode="FORMERR") == 1
    assert delta("dnsmoat_responses_total", rcode="NOERROR") == 4
    # Every query is in the histogram once, and the buckets are cumulative.
    total = sum(v for (n, l), v in after.items() if n == "dnsmoat_queries_total")
    assert value(after, "dnsmoat_query_duration_seconds_count") == total
    assert value(after, "dnsmoat_query_duration_seconds_bucket", le="+Inf") == total
    assert value(after, "dnsmoat_query_duration_seconds_sum") > 0
    buckets = sorted((float(dict(l)["le"]), v) for (n, l), v in after.items()
                     if n == "dnsmoat_query_duration_seconds_bucket")
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
    # The cache, the lists, connections and the process.
    assert delta("dnsmoat_cache_hits_total") == 1 and value(after, "dnsmoat_cache_entries") >= 1
    assert value(after, "dnsmoat_list_entries", list="ads", kind="block") == 3
    assert value(after, "dnsmoat_filter_rules", type="regex") == 1
    assert value(after, "dnsmoat_tcp_connections_peak") >= 1
    assert value(after, "dnsmoat_queries_in_flight_peak") >= 1
    # The one forwarded query went to the one upstream, which answered it.
    server = {"server": upstream.address, "route": "0"}
    assert delta("dnsmoat_upstream_queries_total", **server) == 1
    assert delta("dnsmoat_upstream_answers_total", **server) == 1
    assert delta("dnsmoat_upstream_errors_total", **server) == 0
    assert delta("dnsmoat_upstream_timeouts_total", **server) == 0
    assert 0 < value(after, "dnsmoat_upstream_rtt_seconds", **server) < 1
    assert value(after, "process_resident_memory_bytes") > 1e6
    assert abs(value(after, "process_start_time_seconds") - time.time()) < 120
    info = [(dict(l), v) for (n, l), v in after.items() if n == "dnsmoat_build_info"]
    assert len(info) == 1 and info[0][1] == 1 and info[0][0]["version"], info
    if not logged:
        return
    # The query log wrote every query.
    written = wait_until(lambda: (v := value(scrape(d), "dnsmoat_querylog_written_total")) >= total
                         and v, 5)
    assert written == total, written
    assert value(after, "dnsmoat_querylog_dropped_total") == 0



def test_forwarder_totals_count_forgeries_and_coalesced_queries(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    upstream.add("forged.m.test", "A", "192.0.2.8")
    # A forged answer (another ID) first, the genuine one 0.2 s later; two clients ask the same
    # question meanwhile, so the second joins the first's upstream query.
    upstream.rule("forged.m.test", "wrong_id", ("delay", 0.2), "answer")
    before = scrape(d)
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(d.query, "forged.m.test")
        time.sleep(0.05)
        second = pool.submit(d.query, "forged.m.test")
        for answer in (first.result(timeout=5), second.result(timeout=5)):
            assert answer_values(answer, "A") == ["192.0.2.8"]
    after = scrape(d)

    def delta(name):
        return value(after, name) - before.get((name, frozenset()), 0)

    assert delta("dnsmoat_upstream_ignored_replies_total") == 1
    assert delta("dnsmoat_upstream_coalesced_total") == 1
    assert delta("dnsmoat_upstream_tcp_retries_total") == 0
    assert delta("dnsmoat_upstream_overloaded_total") == 0
    assert len(upstream.queries("forged.m.test")) == 1

def test_health_errors_and_security_headers(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    status, headers, body = get(d, "/health")
    assert status == 200 and '"status":"ok"' in body
    for path, method, expected in (("/health", "GET", 200), ("/nope", "GET", 404),
                                   ("/metrics", "POST", 405), ("/metrics", "HEAD", 200)):
        status, headers, body = get(d, path, method)
        assert status == expected, (path, method, status)
        for h in SECURITY_HEADERS:
            assert h in headers, (path, h, headers)
    status, headers, body = get(d, "/metrics", "POST")
    assert headers["Allow"] == "GET, HEAD"
    status, headers, body = get(d, "/metrics", "HEAD")
    assert body == "" and int(headers["Content-Length"]) > 1000


def test_bad_http_is_answered_and_closed(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    assert raw(d, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert raw(d, b"GET /health HTTP/1.1\r\nX: " + b"a" * 10000 + b"\r\n\r\n").startswith(
        b"HTTP/1.1 431 ")
    assert raw(d, b"POST /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
               ).startswith(b"HTTP/1.1 501 ")
    assert raw(d, b"GET /health HTTP/1.1\nHost: x\n\n").startswith(b"HTTP/1.1 400 ")
    assert raw(d, b"GET /health HTTP/3.0\r\n\r\n").startswith(b"HTTP/1.1 505 ")
    # Two pipelined requests get two answers in order; the second asked to close.
    out = raw(d, b"GET /health HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert out.count(b"HTTP/1.1 ") == 2 and out.index(b"200 OK") < out.index(b"404 Not Found")
    # The daemon still serves DNS and HTTP.
    assert d.query("ads.m.test").answer
    assert get(d, "/health")[0] == 200


def rss_kib(d) -> int:
    for line in open(f"/proc/{d.proc.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_client_that_pipelines_and_never_reads_holds_little_memory(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    before = rss_kib(d)
    # 20,000 pipelined requests for a ~6 KiB page (about 120 MiB of answers) on one connection
    # that never reads: the server stops reading once a few answers wait to be written.
    with socket.create_connection(("127.0.0.1", d.api_port), timeout=5) as s:
        s.setblocking(False)
        request = b"GET /metrics HTTP/1.1\r\n\r\n" * 1000
        deadline = time.monotonic() + 3
        sent = 0
        while sent < 20 and time.monotonic() < deadline:
            try:
                s.sendall(request)
                sent += 1
            except BlockingIOError:
                time.sleep(0.05)  # the server stopped reading: its receive buffer is full
        time.sleep(0.5)
        grown = rss_kib(d) - before
        # Sanitizer builds keep freed memory in quarantine, so RSS says nothing there.
        assert SANITIZED or grown < 16 * 1024, f"VmRSS grew {grown} KiB"
    assert get(d, "/health")[0] == 200
    assert d.query("ads.m.test").answer


def test_a_slow_client_does_not_hold_up_others(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    slow = [socket.create_connection(("127.0.0.1", d.api_port), timeout=5) for _ in range(5)]
    for s in slow:
        s.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")  # and never the rest
    try:
        started = time.monotonic()
        assert get(d, "/health")[0] == 200
        assert time.monotonic() - started < 1
    finally:
        for s in slow:
            s.close()


def test_the_endpoint_listens_on_lan_addresses_only_with_a_password(upstream, moat, tmp_path):
    # No password: a LAN address in [api] listen is replaced by 127.0.0.1 on the same port, with
    # a warning (DNS starts regardless). Nothing is ever bound to, or sent to, 192.0.2.1.
    port = free_port()
    d = moat(base_config(upstream, api={"listen": [f"192.0.2.1:{port}"]}))
    d.api_port = port
    assert get(d, "/health")[0] == 200
    assert "no password set" in d.stderr_text() and f"127.0.0.1:{port} instead of 192.0.2.1" \
        in d.stderr_text()
