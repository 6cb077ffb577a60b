"""The HTTP endpoint under abuse, through the real binary: requests without valid credentials
(no cookie, forged cookies, the token in the wrong header, tricks with the path's case, slashes
and encoding), CSRF bypass attempts, bad API tokens that must not stall DNS, oversized bodies and
heads, path traversal on the dashboard's files, and malformed or hostile JSON on every write
route. Each must fail cleanly with a 4xx (or a clean close) while the daemon keeps answering DNS
and HTTP.

Requests here are written by hand on a raw socket (urllib would normalise the very paths and
headers under test). Already covered elsewhere: the CSRF token missing or of another session and
logout ending the session (test_api.py::test_sign_in_sessions_csrf_and_logout), a bad JSON body
on one route and a wrong Content-Type (test_api.py::test_bad_requests_fail_cleanly), `/../` and
`/%2e%2e/` (test_api.py::test_the_dashboard_is_served_from_the_binary), a 10 KB header line, a
chunked body, bare LF and HTTP/3.0 (test_metrics.py::test_bad_http_is_answered_and_closed)."""

from __future__ import annotations

import json
import re
import secrets
import socket
import statistics
import threading
import time
import tomllib

import pytest

from conftest import REPO, answer_values, base_config, rcode_name, write_file
from test_api import Client, password_hash

TOKEN = "7f" * 32  # a script's API token; only its Argon2id hash is in the config
FORWARDED = ("www.abuse.test", "192.0.2.17")


# --------------------------------------------------------------------------------------------
# Raw HTTP
# --------------------------------------------------------------------------------------------

class Reply:
    def __init__(self, data: bytes, closed: bool):
        self.raw = data
        self.closed = closed  # the server closed the connection (EOF seen)
        head, _, self.body = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3}) ", lines[0]) if lines and lines[0] else None
        self.status = int(m.group(1)) if m else None
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(b":")
            self.headers[k.strip().lower().decode(errors="replace")] = v.strip().decode(
                errors="replace")

    def __repr__(self) -> str:
        return f"<{self.status} closed={self.closed} {self.raw[:160]!r}>"


def raw_http(d, data: bytes, *, source: str = "127.0.0.1", timeout: float = 10.0,
             read_all: bool = True) -> Reply:
    """Sends `data` on a new connection from `source` and reads until the server closes it (or,
    with read_all=False, until one whole response is in). Bounded by `timeout`."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((source, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", d.api_port))
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before it has read everything
        out, closed = b"", False
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            out += chunk
            if not read_all and _complete(out):
                break
        return Reply(out, closed)


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    return m is not None and len(body) >= int(m.group(1))


def request(method: str, target: str, *, headers: dict | None = None, body: bytes | None = None,
            close: bool = True) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


class Session:
    """A signed-in browser: its cookie and CSRF token, as raw headers."""

    def __init__(self, d):
        c = Client(d)
        status, _ = c.login()
        assert status == 200, f"login failed: {status}"
        self.cookie = [ck.value for ck in c.jar if ck.name == "moat_session"][0]
        self.csrf = c.csrf

    def headers(self, csrf: bool = True, json_body: bool = False) -> dict:
        h = {"Cookie": f"moat_session={self.cookie}"}
        if csrf:
            h["X-CSRF-Token"] = self.csrf
        if json_body:
            h["Content-Type"] = "application/json"
        return h


def still_serving(d) -> None:
    """DNS (forwarded and local) and HTTP still answer."""
    assert d.alive(), f"dnsmoat died; stderr:\n{d.stderr_text()[-3000:]}"
    r = d.query(FORWARDED[0], "A")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == [FORWARDED[1]], r
    assert answer_values(d.query("localhost", "A"), "A") == ["127.0.0.1"]
    assert raw_http(d, request("GET", "/health")).status == 200


@pytest.fixture
def abuse_daemon(upstream, moat, tmp_path):
    """A daemon with a password, one API token, a blocklist, and a secret-looking file beside its
    config in its working directory."""
    upstream.add(*FORWARDED[:1], "A", FORWARDED[1])
    upstream.add("victim.abuse.test", "A", "192.0.2.18")
    blocklist = write_file(tmp_path / "ads.txt", "ads.abuse.test\n")
    cfg = base_config(upstream, blocklists=[{"name": "ads", "path": str(blocklist)}],
                      api={"password_hash": password_hash(),
                           "token_hashes": [password_hash(TOKEN)]})
    d = moat(cfg)
    write_file(d.dir / "secret.txt", "TOP-SECRET-CONTENT\n")
    return d


# Protected GET routes (no login needed for none of them).
PROTECTED = ["/api/stats/summary", "/api/stats/history", "/api/stats/top", "/api/upstreams",
             "/api/querylog", "/api/lists", "/api/rules", "/api/local", "/api/groups",
             "/api/clients", "/api/blocking", "/api/explain?name=ads.abuse.test",
             "/api/config/backup"]


# --------------------------------------------------------------------------------------------
# Authentication
# --------------------------------------------------------------------------------------------

def test_requests_without_valid_credentials_are_refused(abuse_daemon):
    d = abuse_daemon
    good = Session(d)
    # The controls: the real cookie and the real token are let in (so a 401 below means refused).
    for path in PROTECTED:
        assert raw_http(d, request("GET", path, headers=good.headers())).status == 200, path
    assert raw_http(d, request("GET", "/api/stats/summary",
                               headers={"Authorization": f"Bearer {TOKEN}"})).status == 200

    forged_cookies = [
        "",                                                   # no cookie at all
        "moat_session=",                                      # empty
        f"moat_session={secrets.token_hex(32)}",              # random, well-formed
        f"moat_session={good.cookie[:-1]}{'0' if good.cookie[-1] != '0' else '1'}",  # one off
        f"moat_session={good.cookie.upper()}",                # case changed
        f"moat_session={good.cookie[:32]}",                   # a prefix
        f"moat_session={good.cookie}00",                      # longer
        f"MOAT_SESSION={good.cookie}",                        # the cookie's name in capitals
        f"session={good.cookie}",                             # another cookie name
        f"moat_session =x; xmoat_session={good.cookie}",      # the value under a longer name
        f"moat_session={good.csrf}",                          # the CSRF token as the session
        f"moat_session={TOKEN}",                              # the API token as the session
        "moat_session=" + "a" * 4000,                         # long
        "moat_session=../../../../etc/passwd",
    ]
    wrong_headers = [
        {"X-API-Token": TOKEN}, {"X-Auth-Token": TOKEN}, {"Api-Key": TOKEN},
        {"Authorization": TOKEN},                             # no scheme
        {"Authorization": f"Token {TOKEN}"},                  # another scheme
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer{TOKEN}"},                  # no space
        {"Proxy-Authorization": f"Bearer {TOKEN}"},
        {"X-CSRF-Token": good.csrf},                          # CSRF token without the cookie
        {"X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1"},
        {"Cookie": f"token={TOKEN}"},
    ]
    refused = []
    for path in PROTECTED:
        for cookie in forged_cookies:
            reply = raw_http(d, request("GET", path, headers={"Cookie": cookie} if cookie else {}))
            if reply.status != 401:
                refused.append((path, cookie[:40], reply))
        for h in wrong_headers:
            reply = raw_http(d, request("GET", path, headers=h))
            if reply.status != 401:
                refused.append((path, h, reply))
    # The token in the query string, in any spelling.
    for q in (f"token={TOKEN}", f"access_token={TOKEN}", f"api_key={TOKEN}", f"csrf={good.csrf}",
              f"moat_session={good.cookie}"):
        reply = raw_http(d, request("GET", f"/api/stats/summary?{q}"))
        if reply.status != 401:
            refused.append(("?" + q[:20], None, reply))
    assert not refused, f"{len(refused)} requests were not refused with 401: {refused[:8]}"
    # Wrong Bearer tokens: refused, and the limiter answers 429 after a few.
    statuses = [raw_http(d, request("GET", "/api/stats/summary",
                                    headers={"Authorization": f"Bearer {t}"})).status
                for t in (TOKEN[:-1] + "0", TOKEN.upper(), TOKEN + "0", "x", TOKEN * 2,
                          TOKEN, TOKEN)]
    assert set(statuses) <= {401, 429} and 429 in statuses, statuses
    # The real session is still good, and nothing was written to the config.
    assert raw_http(d, request("GET", "/api/rules", headers=good.headers())).status == 200
    assert "rules" not in tomllib.loads(d.config_path.read_text())
    still_serving(d)


def test_tricks_with_the_path_never_reach_a_protected_route(abuse_daemon):
    d = abuse_daemon
    good = Session(d)
    summary = raw_http(d, request("GET", "/api/stats/summary", headers=good.headers()))
    assert summary.status == 200 and b'"queries"' in summary.body  # the control
    targets = [
        "/API/stats/summary", "/Api/Stats/Summary", "/api/STATS/summary", "/api/stats/SUMMARY",
        "//api/stats/summary", "/api//stats/summary", "/api/stats//summary", "/api/stats/summary/",
        "/api/stats/summary//", "/./api/stats/summary", "/api/./stats/summary",
        "/api/auth/../stats/summary", "/api/auth/login/../../stats/summary",
        "/api/auth/..%2fstats/summary", "/api/auth%2f..%2fstats/summary", "/api/%73tats/summary",
        "/api/stats/summar%79", "/%61pi/stats/summary", "/api/stats/summary;.js",
        "/api/stats/summary%3b", "/api/stats/summary%00", "/api/stats/summary%20",
        "/api/stats/summary.json", "/app.js/../api/stats/summary",
        "/api/auth/x/../../stats/summary",
        "/api/auth#/../stats/summary", "/api\\stats\\summary", "/api/stats/summary?x=/api/auth",
        "*", "/api/config/backup/", "/api/CONFIG/backup", "/api/auth/../config/backup",
        "/api/./auth/../../api/config/backup",
    ]
    leaked = []
    for target in targets:
        reply = raw_http(d, request("GET", target))
        if reply.status not in (400, 401, 404, 405) or b'"queries"' in reply.body \
                or b"config.toml" in reply.body:
            leaked.append((target, reply))
        # The other methods on the same path are refused too (HEAD, and POST without a token).
        for method in ("HEAD", "POST", "OPTIONS"):
            reply = raw_http(d, request(method, target, body=b"{}" if method == "POST" else None))
            if reply.status is None or reply.status < 400:
                leaked.append((method + " " + target, reply))
    assert not leaked, f"{len(leaked)} path tricks got through: {leaked[:8]}"
    still_serving(d)


def test_csrf_cannot_be_bypassed(abuse_daemon):
    d = abuse_daemon
    s = Session(d)
    other = Session(d)
    before = d.config_path.read_text()
    assert answer_values(d.query("victim.abuse.test"), "A") == ["192.0.2.18"]
    body = json.dumps({"rule": "victim.abuse.test"}).encode()
    jh = {"Content-Type": "application/json"}
    cookie = {"Cookie": f"moat_session={s.cookie}"}
    attempts = [
        ("POST", "/api/rules/deny", {**cookie, **jh}),
        ("POST", f"/api/rules/deny?csrf={s.csrf}", {**cookie, **jh}),
        ("POST", f"/api/rules/deny?X-CSRF-Token={s.csrf}", {**cookie, **jh}),
        ("POST", "/api/rules/deny", {"Cookie": f"moat_session={s.cookie}; csrf={s.csrf}", **jh}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF-Token": ""}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF-Token": other.csrf}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF-Token": s.cookie}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF-Token": s.csrf[:-1]}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF-Token": s.csrf + "0"}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-CSRF": s.csrf}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-XSRF-Token": s.csrf}),
        ("POST", "/api/rules/deny", {**cookie, **jh, "X-HTTP-Method-Override": "GET"}),
        ("post", "/api/rules/deny", {**cookie, **jh}),
        ("Post", "/api/rules/deny", {**cookie, **jh}),
        ("PUT", "/api/rules/deny", {**cookie, **jh}),
        ("POST", "/api/rules/deny", {**cookie, "Content-Type": "text/plain"}),
        ("POST", "/api/rules/deny", {**cookie,
                                     "Content-Type": "application/x-www-form-urlencoded"}),
        ("POST", "/api/blocking", {**cookie, **jh}),
        ("POST", "/api/cache/flush", {**cookie, **jh}),
        ("DELETE", "/api/lists/block/ads", cookie),
        ("POST", "/api/config/restore", {**cookie, "Content-Type": "application/x-tar"}),
    ]
    got = []
    for method, target, headers in attempts:
        payload = json.dumps({"enabled": False, "seconds": 60}).encode() \
            if target == "/api/blocking" else body
        reply = raw_http(d, request(method, target, headers=headers, body=payload))
        if reply.status != 403:
            got.append((method, target, headers.get("X-CSRF-Token"), reply))
    assert not got, f"CSRF checks let these through (expected 403): {got}"
    assert d.config_path.read_text() == before, "the config file changed"
    assert answer_values(d.query("victim.abuse.test"), "A") == ["192.0.2.18"], "the rule applied"
    assert answer_values(d.query("ads.abuse.test"), "A") == ["0.0.0.0"], "blocking was paused"
    still_serving(d)


def test_logout_without_the_csrf_token_is_refused(abuse_daemon):
    """docs/api.md: a cookie-signed request that changes something (POST, ...) must carry
    X-CSRF-Token, else 403; openapi.yaml lists logout with cookieAuth + csrfToken. A forged
    cross-site POST must not end the user's session."""
    d = abuse_daemon
    s = Session(d)
    reply = raw_http(d, request("POST", "/api/auth/logout", headers=s.headers(csrf=False)))
    still_in = raw_http(d, request("GET", "/api/stats/summary", headers=s.headers())).status
    assert reply.status == 403 and still_in == 200, \
        f"logout without X-CSRF-Token answered {reply.status}; the session then got {still_in}"
    assert raw_http(d, request("POST", "/api/auth/logout", headers=s.headers())).status == 204
    assert raw_http(d, request("GET", "/api/stats/summary", headers=s.headers())).status == 401


@pytest.mark.solo
def test_bad_api_tokens_never_stall_dns(abuse_daemon):
    """Each Bearer token is checked against the Argon2id hashes (tens of ms each). Done on the
    event loop, a stream of bad tokens from many addresses (the per-address limiter allows 5 a
    minute each; 127.0.0.0/8 or an IPv6 /64 has plenty) holds up every DNS answer. docs/api.md
    promises that DNS never waits for a login check."""
    d = abuse_daemon
    sources = [f"127.0.0.{i}" for i in range(2, 10)]
    statuses: list[int | None] = []
    latencies: list[float] = []
    stop = threading.Event()

    def attacker(source: str) -> None:
        for i in range(5):
            bad = secrets.token_hex(32)
            reply = raw_http(d, request("GET", "/api/stats/summary",
                                        headers={"Authorization": f"Bearer {bad}"}),
                             source=source, timeout=30)
            statuses.append(reply.status)

    def dns() -> None:
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            t0 = time.monotonic()
            r = d.query("localhost", "A", timeout=10)
            latencies.append(time.monotonic() - t0)
            assert answer_values(r, "A") == ["127.0.0.1"]
            time.sleep(0.01)

    # The baseline on this machine, without the attack.
    for _ in range(20):
        t0 = time.monotonic()
        d.query("localhost", "A")
        latencies.append(time.monotonic() - t0)
    baseline = statistics.median(latencies)
    latencies.clear()
    probe = threading.Thread(target=dns)
    probe.start()
    attackers = [threading.Thread(target=attacker, args=(s,)) for s in sources]
    for t in attackers:
        t.start()
    for t in attackers:
        t.join(60)
    stop.set()
    probe.join(15)
    assert set(statuses) <= {401, 429} and len(statuses) == 40, statuses
    assert len(latencies) >= 5, latencies
    median = statistics.median(latencies)
    print(f"DNS latency: baseline median {baseline * 1000:.1f} ms; during 40 bad tokens "
          f"median {median * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    assert median < 0.02, (
        f"DNS answers waited on the token checks: median {median * 1000:.0f} ms, max "
        f"{max(latencies) * 1000:.0f} ms over {len(latencies)} queries (baseline "
        f"{baseline * 1000:.1f} ms)")
    still_serving(d)


# --------------------------------------------------------------------------------------------
# Oversized requests
# --------------------------------------------------------------------------------------------

def test_oversized_bodies_and_heads_are_refused_and_closed(abuse_daemon):
    d = abuse_daemon
    s = Session(d)
    mib = 1024 * 1024
    cases = [
        # (what, bytes sent, the statuses allowed). Bodies too large are announced and not sent:
        # the server decides on the head (and a close with unread data would be a reset).
        ("body over 1 MiB announced",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": str(mib + 1)},
                 close=False) + b'{"rule": ', {413}),
        ("body of 64 MiB announced",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": str(64 * mib)},
                 close=False) + b"{}", {413}),
        ("body of 64 MiB announced, signed out",
         request("POST", "/api/auth/login", headers={"Content-Type": "application/json",
                                                      "Content-Length": str(64 * mib)},
                 close=False), {413}),
        ("Content-Length beyond 64 bits",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": "9" * 30}), {400, 413}),
        ("negative Content-Length",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": "-1"}), {400}),
        ("Content-Length with a sign",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": "+2"}) + b"{}", {400}),
        ("two Content-Lengths that differ",
         request("POST", "/api/rules/deny", headers={**s.headers(json_body=True),
                                                      "Content-Length": "3"},
                 body=b"{}"), {400}),
        ("restore archive of 2 MiB announced",
         request("POST", "/api/config/restore",
                 headers={**s.headers(), "Content-Type": "application/x-tar",
                          "Content-Length": str(2 * mib)}, close=False) + b"\0" * 512, {413}),
        ("a 9 KiB request target", request("GET", "/" + "a" * 9000), {414, 431, 400}),
        ("a 9 KiB cookie", request("GET", "/api/stats/summary",
                                   headers={"Cookie": "moat_session=" + "b" * 9000}), {431}),
        ("500 small headers", request("GET", "/health",
                                      headers={f"X-H{i}": "v" for i in range(500)}), {400, 431}),
        ("12 KiB of head without its end", b"GET /health HTTP/1.1\r\n" + b"X: y\r\n" * 2000,
         {431}),
    ]
    bad = []
    for what, data, allowed in cases:
        t0 = time.monotonic()
        reply = raw_http(d, data, timeout=15)
        if reply.status not in allowed or not reply.closed:
            bad.append((what, reply))
        elif time.monotonic() - t0 > 5:
            bad.append((what, f"took {time.monotonic() - t0:.1f}s"))
    assert not bad, f"oversized requests not refused with a clean close: {bad}"
    # A body of exactly 1 MiB is read whole and refused for what it is (not JSON).
    reply = raw_http(d, request("POST", "/api/rules/deny", headers=s.headers(json_body=True),
                                body=b"{" * mib), timeout=20)
    assert reply.status == 400, reply
    # Nothing was written, and everything still works, also on a kept-alive connection.
    assert "rules" not in tomllib.loads(d.config_path.read_text())
    reply = raw_http(d, request("GET", "/health", close=False) * 3 +
                     request("GET", "/api/rules", headers=s.headers()))
    assert reply.raw.count(b"HTTP/1.1 200 ") == 4, reply
    still_serving(d)


# --------------------------------------------------------------------------------------------
# Path traversal
# --------------------------------------------------------------------------------------------

TRAVERSALS = [
    "/../../../../etc/passwd", "/..%2f..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E/%2E%2E/etc/passwd", "/.%2e/.%2e/etc/passwd", "/%2e./%2e./etc/passwd",
    "/%252e%252e/%252e%252e/etc/passwd", "/..%252f..%252fetc%252fpasswd",
    "/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd", "/..%c0%af..%c0%afetc%c0%afpasswd",
    "/..\\..\\..\\etc\\passwd", "/..%5c..%5c..%5cetc%5cpasswd", "//etc/passwd", "///etc/passwd",
    "/etc/passwd", "/./etc/passwd", "/app.js/../../../etc/passwd", "/static/../../etc/passwd",
    "/api/../../etc/passwd", "/..;/..;/etc/passwd", "/....//....//etc/passwd",
    "/proc/self/environ", "/proc/self/cmdline", "/%2fproc%2fself%2fenviron",
    "/dnsmoat.toml", "/./dnsmoat.toml", "/%2e/dnsmoat.toml", "/secret.txt", "/querylog.db",
    "/dnsmoat.stderr", "/app.js%00", "/app.js%00.html", "/index.html%00.txt", "/%00",
    "/%00../../etc/passwd", "/app.js%2500", "/index.html/", "/app.js#../../etc/passwd",
]
SECRETS = (b"root:x:0:0", b"root:", b"PATH=", b"TOP-SECRET-CONTENT", b"$argon2id$",
           b"password_hash", b"SQLite format", b"moat_session")


def test_path_traversal_reads_nothing_from_disk(abuse_daemon):
    d = abuse_daemon
    s = Session(d)
    found = []
    for target in TRAVERSALS:
        for headers in ({}, s.headers()):
            reply = raw_http(d, request("GET", target, headers=headers))
            leak = [x for x in SECRETS if x in reply.body]
            if reply.status not in (400, 404) or leak or not reply.closed:
                found.append((target, bool(headers), reply.status, leak))
    assert not found, f"traversals not refused cleanly: {found[:10]}"
    # A raw NUL, a raw backslash path and control characters in the target are malformed.
    for raw_target in (b"/app.js\x00", b"/\x00/etc/passwd", b"/..\x5c..\x5cetc\x5cpasswd",
                       b"/app.js\x7f", b"/\x1b[31m", b"/\xc0\xae\xc0\xae/etc/passwd"):
        reply = raw_http(d, b"GET " + raw_target + b" HTTP/1.1\r\nConnection: close\r\n\r\n")
        assert reply.status in (400, 404) and reply.closed, (raw_target, reply)
        assert not [x for x in SECRETS if x in reply.body], (raw_target, reply)
    # The embedded files themselves are still served.
    assert raw_http(d, request("GET", "/app.js")).status == 200
    assert raw_http(d, request("GET", "/")).status == 200
    still_serving(d)


# --------------------------------------------------------------------------------------------
# Malformed JSON on every write route
# --------------------------------------------------------------------------------------------

def write_routes() -> list[tuple[str, str]]:
    """(method, concrete path) of every operation docs/openapi.yaml gives a JSON body."""
    import yaml  # python3-yaml

    spec = yaml.safe_load((REPO / "docs" / "openapi.yaml").read_text())
    out = []
    for path, item in spec["paths"].items():
        for method in ("post", "put", "patch", "delete"):
            op = item.get(method)
            if op and "application/json" in op.get("requestBody", {}).get("content", {}):
                concrete = (path.replace("{kind}", "block" if "lists" in path else "deny")
                            .replace("{name}", "ads" if "lists" in path else "abuse-group"))
                out.append((method.upper(), concrete))
    assert len(out) >= 9, out
    return out


# Bodies that are not one JSON object, sent as application/json.
MALFORMED = [
    b"", b" ", b"{", b"}", b"{]", b"{\"rule\": ", b"{\"rule\": \"x.test\"", b"{\"rule\" \"x\"}",
    b"{'rule': 'x.test'}", b"{rule: \"x.test\"}", b"{\"rule\": \"x.test\",}", b"[]",
    b"[{\"rule\": \"x.test\"}]", b"\"x.test\"", b"null", b"true", b"0", b"1e999", b"NaN",
    b"{\"enabled\": NaN}", b"{\"seconds\": Infinity}", b"{} {}", b"{}{\"rule\": \"x.test\"}",
    b"{\"a\":1}\x00", b"\x00{}", b"\xef\xbb\xbf{\"password\":1", b"\xff\xfe{\x00}\x00",
    b"{\"rule\": \"\xff\xfe\"}", b"{\"rule\": \"\\ud800\"}", b"{\"rule\": \"\\u0000x.test\"}",
    b"{\"name\": \"\xc0\xae\"}", b"/* c */ {}", b"{\"a\": 01}", b"{\"a\": -}", b"{\"a\": .5}",
    b"\x1f\x8b\x08\x00", b"<xml/>", b"a=1&b=2",
]

# Keys some route reads, each given values of every wrong type.
KEYS = ["kind", "name", "url", "path", "enabled", "format", "rule", "type", "value", "clients",
        "macs", "blocklists", "allowlists", "blocking_mode", "filter_aaaa", "seconds", "group",
        "password"]
WRONG_VALUES = [5, -1, 1.5, 18446744073709551616, True, None, [], ["x"], {}, {"a": 1}, "",
                "\u0000", "x" * 5000]


# The keys each write route reads (a route not listed here gets every key of KEYS).
ROUTE_KEYS = {
    ("POST", "/api/auth/login"): ["password"],
    ("POST", "/api/lists"): ["kind", "name", "url", "path", "enabled", "format"],
    ("PATCH", "/api/lists/block/ads"): ["enabled"],
    ("POST", "/api/rules/deny"): ["rule"],
    ("DELETE", "/api/rules/deny"): ["rule"],
    ("POST", "/api/local"): ["name", "type", "value"],
    ("DELETE", "/api/local"): ["name", "type", "value"],
    ("PUT", "/api/groups/abuse-group"): ["clients", "macs", "blocklists", "allowlists",
                                         "blocking_mode", "filter_aaaa"],
    ("POST", "/api/blocking"): ["enabled", "seconds", "group"],
}


def _send_json(d, s: Session, method: str, path: str, body: bytes) -> Reply:
    headers = s.headers(json_body=True)
    if path == "/api/auth/login":
        headers = {"Content-Type": "application/json"}
    return raw_http(d, request(method, path, headers=headers, body=body), timeout=15)


def test_malformed_json_on_every_write_route_fails_with_4xx(abuse_daemon):
    d = abuse_daemon
    s = Session(d)
    before = d.config_path.read_text()
    not_4xx = []
    for method, path in write_routes():
        for body in MALFORMED:
            reply = _send_json(d, s, method, path, body)
            if reply.status is None or not 400 <= reply.status < 500:
                not_4xx.append((method, path, body[:24], reply.status))
        assert d.alive(), f"{method} {path}: dnsmoat died; stderr:\n{d.stderr_text()[-2000:]}"
    assert not not_4xx, f"{len(not_4xx)} malformed bodies not answered 4xx: {not_4xx[:12]}"
    assert d.config_path.read_text() == before, "a malformed body changed the config file"
    still_serving(d)


def test_wrongly_typed_json_fields_fail_with_4xx(abuse_daemon):
    """Each key a write route reads, with a value of every other type: a 4xx (or a 2xx where
    the value is acceptable, e.g. null meaning "unset"), never a 500 or a crash."""
    d = abuse_daemon
    s = Session(d)
    server_errors = []
    for method, path in write_routes():
        if path == "/api/auth/login":
            continue  # its one key is covered below (failed logins are rate limited)
        for key in KEYS:
            for value in WRONG_VALUES:
                base = {"kind": "block", "name": "n", "path": "/nonexistent", "rule": "a.test",
                        "type": "A", "value": "192.0.2.1", "enabled": False}
                body = json.dumps({**base, key: value}).encode()
                reply = _send_json(d, s, method, path, body)
                if reply.status is None or reply.status >= 500:
                    server_errors.append((method, path, key, repr(value)[:20], reply.status))
                if not d.alive():
                    pytest.fail(f"{method} {path} {{{key!r}: {value!r:.30}}} killed dnsmoat; "
                                f"stderr:\n{d.stderr_text()[-2000:]}")
    for value in WRONG_VALUES[:6]:
        reply = _send_json(d, s, "POST", "/api/auth/login",
                           json.dumps({"password": value}).encode())
        if reply.status != 400:
            server_errors.append(("POST", "/api/auth/login", "password", repr(value), reply.status))
    assert not server_errors, (
        f"{len(server_errors)} wrongly typed fields were not answered 4xx, by route and key: "
        f"{sorted({(m, p, k) for m, p, k, *_ in server_errors})}; e.g. {server_errors[:4]}")
    still_serving(d)


def test_deeply_nested_json_never_crashes_the_daemon(abuse_daemon):
    """A body that nests 50,000 arrays (100 KB, well under the 1 MiB limit) in each field a
    write route reads: answered 4xx, and the daemon lives. Signed in, as the dashboard's user."""
    d = abuse_daemon
    s = Session(d)
    depth = 50_000
    nested = "[" * depth + "]" * depth
    crashes, not_4xx = [], []
    for method, path in write_routes():
        for key in ROUTE_KEYS.get((method, path), KEYS):
            body = ('{"kind": "block", "name": "n", "path": "/x", "enabled": true, "' + key +
                    '": ' + nested + "}").encode()
            reply = _send_json(d, s, method, path, body)
            if not d.alive() or not wait_alive(d):
                crashes.append((method, path, key, d.proc.returncode))
                tail = d.stderr_text()[-600:]
                d.start()  # go on with the other routes
                s = Session(d)
                crashes[-1] += (tail,)
                continue
            if reply.status is None or not 400 <= reply.status < 500:
                not_4xx.append((method, path, key, reply.status))
    assert not crashes, (
        f"deeply nested JSON killed dnsmoat {len(crashes)} times (signal = -returncode): "
        f"{[c[:4] for c in crashes]}")
    assert not not_4xx, f"not answered 4xx: {not_4xx}"
    still_serving(d)


def wait_alive(d, seconds: float = 0.1) -> bool:
    """Still running a moment later (a crash may follow the answer)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not d.alive():
            return False
        time.sleep(0.05)
    return d.alive()
