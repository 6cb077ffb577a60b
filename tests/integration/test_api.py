"""The REST API through the real binary, with a real HTTP client (urllib and http.cookiejar, as a
browser keeps cookies): sign-in and its failure paths (wrong password, rate limit, missing CSRF
token, bad token), every endpoint, changes written back to the config file and in effect when
answered, hand edits picked up without SIGHUP, and the backup's round trip."""

import http.cookiejar
import io
import json
import subprocess
import tarfile
import time
import tomllib
import urllib.error
import urllib.request

import pytest

from conftest import REPO, base_config, moat_binary, wait_until, write_file

PASSWORD = "correct horse battery"
_hash_cache: dict[str, str] = {}


def password_hash(password: str = PASSWORD) -> str:
    """The PHC string `dnsmoat password-hash` makes (once per password per test run)."""
    if password not in _hash_cache:
        out = subprocess.run([str(moat_binary()), "password-hash"], input=password + "\n",
                             capture_output=True, text=True, timeout=60, check=True)
        _hash_cache[password] = out.stdout.strip()
    return _hash_cache[password]


class Client:
    """One browser: a cookie jar, the CSRF token from login, JSON in and out."""

    def __init__(self, d, token: str | None = None):
        self.base = f"http://127.0.0.1:{d.api_port}"
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf: str | None = None
        self.token = token

    def call(self, method: str, path: str, body=None, *, csrf: bool = True,
             raw: bytes | None = None, content_type: str = "application/json"):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if csrf and self.csrf:
            req.add_header("X-CSRF-Token", self.csrf)
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with self.opener.open(req, timeout=15) as r:
                payload = r.read()
                return r.status, dict(r.headers), payload
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def json(self, method: str, path: str, body=None, **kw):
        status, headers, payload = self.call(method, path, body, **kw)
        return status, (json.loads(payload) if payload else None)

    def login(self, password: str = PASSWORD):
        status, body = self.json("POST", "/api/auth/login", {"password": password})
        if status == 200:
            self.csrf = body["csrf"]
        return status, body


@pytest.fixture
def api_daemon(upstream, moat, tmp_path):
    """A daemon with a password, a blocklist, a local record and a fast query log."""
    blocklist = write_file(tmp_path / "ads.txt", "ads.a.test\n||track.a.test^\n")
    upstream.add("www.a.test", "A", "192.0.2.7")
    upstream.add("ads.a.test", "A", "192.0.2.66")
    upstream.add("other.a.test", "A", "192.0.2.8")
    cfg = base_config(upstream, blocklists=[{"name": "ads", "path": str(blocklist)}],
                      local={"records": {"nas.a.test": "A 10.0.0.5"}},
                      querylog={"flush_interval": "100ms"},
                      api={"password_hash": password_hash()})
    return moat(cfg)


def signed_in(d) -> Client:
    c = Client(d)
    assert c.login()[0] == 200
    return c


def config_of(d) -> dict:
    return tomllib.loads(d.config_path.read_text())


def test_sign_in_sessions_csrf_and_logout(api_daemon):
    d = api_daemon
    anon = Client(d)
    assert anon.json("GET", "/api/auth") == (200, {"password_set": True, "authenticated": False,
                                                   "csrf": None})
    assert anon.json("GET", "/api/stats/summary")[0] == 401
    assert anon.json("POST", "/api/rules/deny", {"rule": "x.a.test"})[0] == 401
    assert anon.login("wrong password")[0] == 401

    c = Client(d)
    status, headers, _ = c.call("POST", "/api/auth/login", {"password": PASSWORD})
    assert status == 200
    cookie = headers["Set-Cookie"]
    assert cookie.startswith("moat_session=") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    c.login()
    assert c.json("GET", "/api/auth")[1]["authenticated"] is True
    assert c.json("GET", "/api/auth")[1]["csrf"] == c.csrf
    assert c.json("GET", "/api/stats/summary")[0] == 200
    # A change without the CSRF token, or with another session's, is refused.
    assert c.json("POST", "/api/cache/flush", {}, csrf=False) == (
        403, {"error": "missing or wrong X-CSRF-Token"})
    other = signed_in(d)
    saved, c.csrf = c.csrf, other.csrf
    assert c.json("POST", "/api/cache/flush", {})[0] == 403
    c.csrf = saved
    assert c.json("POST", "/api/cache/flush", {})[0] == 200
    # Logout ends the session on the server, not only in the browser.
    stolen = [ck.value for ck in c.jar if ck.name == "moat_session"][0]
    assert c.call("POST", "/api/auth/logout")[0] == 204
    replay = Client(d)
    replay.opener.addheaders = [("Cookie", f"moat_session={stolen}")]
    assert replay.json("GET", "/api/stats/summary")[0] == 401


def test_failed_logins_are_rate_limited(api_daemon):
    d = api_daemon
    c = Client(d)
    for _ in range(5):
        assert c.login("nope nope")[0] == 401
    status, headers, body = c.call("POST", "/api/auth/login", {"password": PASSWORD})
    assert status == 429, body
    assert 1 <= int(headers["Retry-After"]) <= 60
    assert "failed login" in d.stderr_text()


def test_bad_requests_fail_cleanly(api_daemon):
    c = signed_in(api_daemon)
    assert c.call("POST", "/api/rules/deny", raw=b"{not json")[0] == 400
    assert c.call("POST", "/api/rules/deny", raw=b'{"rule": "x.a.test"}',
                  content_type="text/plain")[0] == 415
    assert c.json("POST", "/api/rules/deny", {"rule": "not a rule at all"})[0] == 400
    assert c.json("GET", "/api/querylog?limit=0")[0] == 400
    assert c.json("GET", "/api/querylog?match=fuzzy")[0] == 400
    assert c.json("GET", "/api/querylog?type=BOGUS")[0] == 400
    assert c.json("GET", "/api/querylog?text=%zz")[0] == 400
    assert c.json("GET", "/api/explain?name=" + "a" * 300)[0] == 400
    assert c.json("GET", "/api/nothing")[0] == 404
    status, headers, _ = c.call("DELETE", "/api/stats/summary")
    assert status == 405 and headers["Allow"] == "GET"


def test_api_tokens_for_scripts(api_daemon):
    d = api_daemon
    out = subprocess.run([str(moat_binary()), "api-token", "--config", str(d.config_path)],
                         capture_output=True, text=True, timeout=60, check=True)
    token = out.stdout.split("token: ")[1].split()[0]
    assert config_of(d)["api"]["token_hashes"][0].startswith("$argon2id$")
    script = Client(d, token=token)
    # The daemon picks up the edited file by itself (inotify), then the token works, with no
    # CSRF header (a token is not sent by a browser on its own).
    wait_until(lambda: script.json("GET", "/api/stats/summary")[0] == 200, 10)
    assert script.json("POST", "/api/cache/flush", {})[0] == 200
    assert Client(d, token="0" * 64).json("GET", "/api/stats/summary")[0] == 401


def test_statistics_follow_the_queries(api_daemon):
    d = api_daemon
    c = signed_in(d)
    # The readiness probe asked for localhost (local) before the test began.
    before = wait_until(lambda: (s := c.json("GET", "/api/stats/summary")[1])["queries"] and s, 10)
    d.query("www.a.test")    # forwarded
    d.query("www.a.test")    # cached
    d.query("ads.a.test")    # blocked
    d.query("ads.a.test")    # blocked
    d.query("nas.a.test")    # local
    n = before["queries"] + 5

    def summary():
        s = c.json("GET", "/api/stats/summary")[1]
        return s if s["queries"] >= n else None

    s = wait_until(summary, 10)
    assert s["queries"] == n
    assert (s["forwarded"], s["cached"], s["blocked"], s["local"] - before["local"]) == (1, 1, 2, 1)
    assert s["blocked_percent"] == pytest.approx(200 / n) and s["cache_hit_ratio"] == 0.5
    assert s["clients"] == 1 and s["rules"] == 2
    history = c.json("GET", "/api/stats/history")[1]
    assert history["interval_seconds"] == 600 and len(history["buckets"]) == 144
    last = history["buckets"][-1]
    assert last["queries"] == n and last["blocked"] == 2 and abs(last["time"] - time.time()) <= 600
    top = c.json("GET", "/api/stats/top?count=2")[1]
    assert {"name": "www.a.test", "count": 2} in top["domains"]
    assert {"name": "ads.a.test", "count": 2} in top["domains"]
    assert top["blocked"] == [{"name": "ads.a.test", "count": 2}]
    assert top["clients"] == [{"name": "127.0.0.1", "count": n}]
    clients = c.json("GET", "/api/clients")[1]["clients"]
    assert clients == [{"address": "127.0.0.1", "group": "default", "queries": n}]
    servers = c.json("GET", "/api/upstreams")[1]["servers"]
    assert len(servers) == 1 and servers[0]["queries"] == 1 and servers[0]["answered"] == 1
    assert servers[0]["rtt_ms"] > 0 and servers[0]["healthy"] is True


def test_statistics_are_rebuilt_from_the_log_at_start(upstream, moat, tmp_path):
    upstream.add("www.a.test", "A", "192.0.2.7")
    cfg = base_config(upstream, querylog={"flush_interval": "100ms"})
    d = moat(cfg)
    for _ in range(3):
        d.query("www.a.test")
    first = wait_until(lambda: (s := Client(d).json("GET", "/api/stats/summary")[1])["cached"] == 2
                       and s, 10)
    time.sleep(0.5)  # two flushes: every row is on disk
    d.stop()
    d.start()
    wait_until(lambda: "rebuilt from the query log" in d.stderr_text(), 10)
    s = Client(d).json("GET", "/api/stats/summary")[1]  # no password: no login
    # Everything of the first run, and the new readiness probe (local).
    assert s["cached"] == 2 and s["forwarded"] == 1 and s["queries"] >= first["queries"]
    assert Client(d).json("GET", "/api/stats/top")[1]["domains"][0] == {"name": "www.a.test",
                                                                        "count": 3}


def test_query_log_search_and_paging(api_daemon):
    d = api_daemon
    c = signed_in(d)
    for name in ("www.a.test", "ads.a.test", "other.a.test", "nas.a.test"):
        d.query(name)
    d.query("www.a.test", "AAAA")
    # The readiness probe's "localhost" is logged too: wait for the last query, not a count.
    wait_until(lambda: any(e["type"] == "AAAA"
                           for e in c.json("GET", "/api/querylog")[1]["entries"]), 10)
    entries = c.json("GET", "/api/querylog")[1]["entries"]
    assert [e["name"] for e in entries][:5] == ["www.a.test", "nas.a.test", "other.a.test",
                                                "ads.a.test", "www.a.test"]  # newest first
    blocked = c.json("GET", "/api/querylog?outcome=blocked")[1]["entries"]
    assert len(blocked) == 1
    b = blocked[0]
    assert (b["name"], b["list"], b["line"], b["type"], b["rcode"], b["client"]) == (
        "ads.a.test", "ads", 1, "A", "NOERROR", "127.0.0.1")
    assert b["ede"] == 15 and b["transport"] == "udp" and b["latency_ms"] >= 0
    aaaa = c.json("GET", "/api/querylog?type=AAAA&text=www")[1]["entries"]
    assert [e["name"] for e in aaaa] == ["www.a.test"]
    assert c.json("GET", "/api/querylog?text=a.test&match=suffix&outcome=local")[1][
        "entries"][0]["name"] == "nas.a.test"
    # Paging: two rows a page, the cursor leads through all of them exactly once.
    seen, cursor = [], None
    for _ in range(10):
        page = c.json("GET", "/api/querylog?limit=2" + (f"&before={cursor}" if cursor else ""))[1]
        seen += [e["id"] for e in page["entries"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) >= 5


def test_rules_are_written_back_and_in_effect_when_answered(api_daemon):
    d = api_daemon
    c = signed_in(d)
    assert d.query("other.a.test").answer  # forwarded now
    assert c.json("POST", "/api/rules/deny", {"rule": "other.a.test"}) == (
        201, {"rule": "other.a.test"})
    assert config_of(d)["rules"]["deny"] == ["other.a.test"]
    assert (d.dir / "dnsmoat.toml.bak").exists()
    answer = d.query("other.a.test")
    assert [r.to_text() for rr in answer.answer for r in rr] == ["0.0.0.0"]
    explained = c.json("GET", "/api/explain?name=other.a.test")[1]
    assert (explained["verdict"], explained["list"], explained["line"], explained["rule"]) == (
        "blocked", "deny rules", 1, "other.a.test")
    assert c.json("POST", "/api/rules/deny", {"rule": "other.a.test"})[0] == 409
    # Allowing it moves it from deny to allow; an allow rule beats a blocklist too.
    assert c.json("POST", "/api/rules/allow", {"rule": "||ads.a.test^"})[0] == 201
    assert c.json("POST", "/api/rules/allow", {"rule": "other.a.test"})[0] == 201
    assert c.json("GET", "/api/rules")[1] == {"allow": ["||ads.a.test^", "other.a.test"],
                                              "deny": []}
    assert [r.to_text() for rr in d.query("ads.a.test").answer for r in rr] == ["192.0.2.66"]
    assert c.json("DELETE", "/api/rules/allow", {"rule": "||ads.a.test^"})[0] == 204
    assert c.json("DELETE", "/api/rules/allow", {"rule": "||ads.a.test^"})[0] == 404
    assert [r.to_text() for rr in d.query("ads.a.test").answer for r in rr] == ["0.0.0.0"]
    # The file on disk still loads and is what the daemon runs.
    check = subprocess.run([str(moat_binary()), "check-config", str(d.config_path)],
                           capture_output=True, text=True, timeout=10)
    assert check.returncode == 0, check.stderr


def test_an_api_change_keeps_the_comments_of_the_file(api_daemon):
    # A hand-commented file, then a dashboard change: the comments are still above their lines.
    d = api_daemon
    c = signed_in(d)
    text = d.config_path.read_text()
    assert "\n[server]\n" in text
    commented = ("# notes on this box\n\n" +
                 text.replace("\n[server]\n", "\n# where the test listens\n[server]\n"))
    d.config_path.write_text(commented)
    assert c.json("POST", "/api/rules/deny", {"rule": "other.a.test"}) == (
        201, {"rule": "other.a.test"})
    after = d.config_path.read_text()
    assert after.startswith("# notes on this box\n\n"), after
    assert "\n# where the test listens\n[server]\n" in after, after
    assert config_of(d)["rules"]["deny"] == ["other.a.test"]
    assert (d.dir / "dnsmoat.toml.bak").read_text() == commented


def test_local_records_crud(api_daemon):
    d = api_daemon
    c = signed_in(d)
    assert c.json("GET", "/api/local")[1] == {"records": [
        {"name": "nas.a.test", "type": "A", "value": "10.0.0.5"}]}
    assert c.json("POST", "/api/local", {"name": "nas.a.test", "type": "AAAA",
                                         "value": "fd00:0::5"})[0] == 201
    assert c.json("POST", "/api/local", {"name": "nas.a.test", "type": "AAAA",
                                         "value": "fd00::5"})[0] == 409  # the same, canonical
    assert c.json("POST", "/api/local", {"name": "bad", "type": "A", "value": "::1"})[0] == 400
    r = d.query("nas.a.test", "AAAA")
    assert [x.to_text() for rr in r.answer for x in rr] == ["fd00::5"]
    assert config_of(d)["local"]["records"]["nas.a.test"] == ["A 10.0.0.5", "AAAA fd00::5"]
    assert c.json("DELETE", "/api/local", {"name": "nas.a.test", "type": "A",
                                           "value": "10.0.0.5"})[0] == 204
    assert d.query("nas.a.test").answer == []
    assert c.json("DELETE", "/api/local", {"name": "nas.a.test", "type": "A",
                                           "value": "10.0.0.5"})[0] == 404


def test_lists_add_disable_remove_and_refresh(api_daemon, tmp_path):
    d = api_daemon
    c = signed_in(d)
    extra = write_file(tmp_path / "extra.txt", "www.a.test\n")
    lists = c.json("GET", "/api/lists")[1]
    assert [(l["name"], l["entries"], l["enabled"]) for l in lists["blocklists"]] == [
        ("ads", 2, True)]
    assert c.json("POST", "/api/lists", {"kind": "block", "name": "extra",
                                         "path": str(extra)})[0] == 201
    assert [r.to_text() for rr in d.query("www.a.test").answer for r in rr] == ["0.0.0.0"]
    assert c.json("POST", "/api/lists", {"kind": "block", "name": "extra",
                                         "path": str(extra)})[0] == 409
    bad = c.json("POST", "/api/lists", {"kind": "block", "name": "x", "url": "ftp://x"})
    assert bad[0] == 400 and "blocklists[2].url" in bad[1]["error"]
    assert c.json("PATCH", "/api/lists/block/extra", {"enabled": False})[0] == 200
    assert [r.to_text() for rr in d.query("www.a.test").answer for r in rr] == ["192.0.2.7"]
    assert c.json("DELETE", "/api/lists/block/extra")[0] == 204
    assert c.json("DELETE", "/api/lists/block/extra")[0] == 404
    assert [l["name"] for l in config_of(d)["blocklists"]] == ["ads"]
    assert c.json("POST", "/api/lists/refresh", {})[0] == 202


def test_a_list_keeps_its_comment_when_the_dashboard_edits_or_removes_lists(api_daemon, tmp_path):
    # A note above each [[blocklists]] entry stays with its list, not with its position.
    d = api_daemon
    c = signed_in(d)
    extra = write_file(tmp_path / "extra.txt", "www.a.test\n")
    assert c.json("POST", "/api/lists", {"kind": "block", "name": "extra",
                                         "path": str(extra)})[0] == 201
    text = d.config_path.read_text()
    ads_entry = '[[blocklists]]\nname = "ads"\n'
    extra_entry = '[[blocklists]]\nname = "extra"\n'
    assert ads_entry in text and extra_entry in text, text
    d.config_path.write_text(text.replace(ads_entry, "# the ad list\n" + ads_entry)
                             .replace(extra_entry, "# the kids' list\n" + extra_entry))
    assert c.json("PATCH", "/api/lists/block/extra", {"enabled": False})[0] == 200
    after_patch = d.config_path.read_text()
    assert "# the ad list\n" + ads_entry in after_patch, after_patch
    assert "# the kids' list\n" + extra_entry in after_patch, after_patch
    assert c.json("DELETE", "/api/lists/block/ads")[0] == 204
    after_delete = d.config_path.read_text()
    assert "# the ad list" not in after_delete, after_delete
    assert "# the kids' list\n" + extra_entry in after_delete, after_delete
    assert [(l["name"], l.get("enabled", True)) for l in config_of(d)["blocklists"]] == [
        ("extra", False)]


def test_groups_are_created_edited_and_deleted(api_daemon):
    d = api_daemon
    c = signed_in(d)

    def explain(client):
        return c.json("GET", f"/api/explain?name=ads.a.test&client={client}")[1]

    assert explain("127.0.0.2")["group"] == "default"
    assert c.json("PUT", "/api/groups/kids", {"clients": ["127.0.0.2"], "blocklists": [],
                                              "blocking_mode": "nxdomain"})[0] == 201
    kids = [g for g in c.json("GET", "/api/groups")[1]["groups"] if g["name"] == "kids"][0]
    assert kids["clients"] == ["127.0.0.2/32"] and kids["blocklists"] == []
    assert kids["blocking_mode"] == "nxdomain"
    assert (explain("127.0.0.2")["group"], explain("127.0.0.2")["verdict"]) == ("kids", "none")
    assert explain("127.0.0.1")["verdict"] == "blocked"
    bad = c.json("PUT", "/api/groups/kids", {"blocklists": ["nope"]})
    assert bad[0] == 400 and "groups[0].blocklists[0]" in bad[1]["error"], bad
    assert c.json("PUT", "/api/groups/kids", {"blocklists": None})[0] == 200  # every list again
    assert explain("127.0.0.2")["verdict"] == "blocked"
    assert config_of(d)["groups"][0] == {"name": "kids", "clients": ["127.0.0.2"],
                                         "blocking_mode": "nxdomain"}
    assert c.json("DELETE", "/api/groups/kids")[0] == 204
    assert c.json("DELETE", "/api/groups/kids")[0] == 404
    assert explain("127.0.0.2")["group"] == "default"


def test_groups_blocking_pause_and_cache_flush(api_daemon):
    d = api_daemon
    c = signed_in(d)
    groups = c.json("GET", "/api/groups")[1]["groups"]
    assert [g["name"] for g in groups] == ["default"] and groups[0]["blocking_mode"] is None
    assert c.json("GET", "/api/blocking")[1] == {"enabled": True, "paused_until": None,
                                                 "groups": {}}
    state = c.json("POST", "/api/blocking", {"enabled": False, "seconds": 30})[1]
    assert state["enabled"] is False and 25 <= state["paused_until"] - time.time() <= 31
    assert [r.to_text() for rr in d.query("ads.a.test").answer for r in rr] == ["192.0.2.66"]
    assert c.json("GET", "/api/explain?name=ads.a.test")[1]["paused"] is True
    assert c.json("POST", "/api/blocking", {"enabled": True})[1]["enabled"] is True
    assert [r.to_text() for rr in d.query("ads.a.test").answer for r in rr] == ["0.0.0.0"]
    assert c.json("POST", "/api/blocking", {"enabled": False, "group": "nobody"})[0] == 404
    assert c.json("POST", "/api/blocking", {"enabled": False, "seconds": 0})[0] == 400
    d.query("www.a.test")
    flushed = c.json("POST", "/api/cache/flush", {})[1]["flushed"]
    assert flushed >= 1
    assert c.json("POST", "/api/cache/flush", {})[1]["flushed"] == 0


def test_a_hand_edit_is_picked_up_without_sighup(api_daemon):
    d = api_daemon
    c = signed_in(d)
    text = d.config_path.read_text() + '\n[rules]\ndeny = ["www.a.test"]\n'
    d.config_path.write_text(text)
    wait_until(lambda: [r.to_text() for rr in d.query("www.a.test").answer for r in rr]
               == ["0.0.0.0"], 10)
    # A broken edit: DNS goes on with the running config, the API refuses to write over it.
    d.config_path.write_text(text + "\n[cache\n")
    wait_until(lambda: "reload failed" in d.stderr_text(), 10)
    assert [r.to_text() for rr in d.query("www.a.test").answer for r in rr] == ["0.0.0.0"]
    status, body = c.json("POST", "/api/rules/deny", {"rule": "x.a.test"})
    assert status == 409 and "does not load" in body["error"]


def test_backup_and_restore(api_daemon):
    d = api_daemon
    c = signed_in(d)
    status, headers, archive = c.call("GET", "/api/config/backup")
    assert status == 200 and headers["Content-Type"] == "application/x-tar"
    assert "attachment" in headers["Content-Disposition"]
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:  # what `tar xf` reads
        names = t.getnames()
        original = t.extractfile("config.toml").read().decode()
    assert "config.toml" in names and original == d.config_path.read_text()
    assert c.json("POST", "/api/rules/deny", {"rule": "www.a.test"})[0] == 201
    assert [r.to_text() for rr in d.query("www.a.test").answer for r in rr] == ["0.0.0.0"]
    status, _, body = c.call("POST", "/api/config/restore", raw=archive,
                             content_type="application/x-tar")
    assert status == 200, body
    assert d.config_path.read_text() == original
    assert [r.to_text() for rr in d.query("www.a.test").answer for r in rr] == ["192.0.2.7"]
    # Damaged or hostile archives change nothing.
    assert c.call("POST", "/api/config/restore", raw=b"garbage" * 100,
                  content_type="application/x-tar")[0] == 400
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, content in (("../etc/passwd", b"x"), ("config.toml", b"[cache\n")):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            t.addfile(info, io.BytesIO(content))
    status, _, body = c.call("POST", "/api/config/restore", raw=evil.getvalue(),
                             content_type="application/x-tar")
    assert status == 400 and b"unsafe file name" in body
    broken = io.BytesIO()
    with tarfile.open(fileobj=broken, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("config.toml")
        content = b"[cache]\nsize = \"lots\"\n"
        info.size = len(content)
        t.addfile(info, io.BytesIO(content))
    status, _, body = c.call("POST", "/api/config/restore", raw=broken.getvalue(),
                             content_type="application/x-tar")
    assert status == 400 and b"config.toml:2: cache.size" in body
    assert d.config_path.read_text() == original


def test_the_dashboard_is_served_from_the_binary(api_daemon):
    c = Client(api_daemon)
    status, headers, body = c.call("GET", "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert b"<html" in body.lower() and b"http://" not in body and b"https://" not in body
    csp = headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and headers["X-Frame-Options"] == "DENY"
    status, headers, body = c.call("GET", "/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert c.call("GET", "/../etc/passwd")[0] == 404
    assert c.call("GET", "/%2e%2e/etc/passwd")[0] == 404
    assert c.call("POST", "/app.js")[0] == 405


def test_openapi_describes_every_route_the_daemon_serves(api_daemon):
    """docs/openapi.yaml and the daemon agree: each documented operation is routed (a bad body
    gets 400/415/409, never 404 or 405), and a method the file does not list is refused."""
    import yaml  # python3-yaml

    spec = yaml.safe_load((REPO / "docs" / "openapi.yaml").read_text())
    c = signed_in(api_daemon)
    operations = 0
    for path, item in spec["paths"].items():
        concrete = (path.replace("/api/rules/{kind}", "/api/rules/deny")
                    .replace("{kind}", "block").replace("{name}", "nope"))
        for method in ("get", "post", "put", "patch", "delete"):
            if method not in item:
                continue
            operations += 1
            if method == "get":
                status = c.call("GET", concrete)[0]
            else:  # a body that no route accepts: nothing changes
                status = c.call(method.upper(), concrete, raw=b"[", content_type="text/plain")[0]
            assert status not in (404, 405) or "{name}" in path, (method, path, status)
    assert operations >= 25
    # Every route of the daemon is in the file.
    for method, path in (("GET", "/api/stats/summary"), ("GET", "/api/querylog"),
                         ("POST", "/api/rules/{kind}"), ("DELETE", "/api/local"),
                         ("GET", "/api/config/backup"), ("POST", "/api/config/restore"),
                         ("PATCH", "/api/lists/{kind}/{name}"), ("POST", "/api/auth/login")):
        assert method.lower() in spec["paths"][path], (method, path)
