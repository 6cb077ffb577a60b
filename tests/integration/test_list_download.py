"""Downloaded lists (`url`): served from the last good copy at once, refreshed in the background,
304 honoured, and every kind of bad download (HTTP error, timeout, empty, truncated, shrunk, too
big, untrusted certificate) keeps the last good copy. A list server on loopback plays the source."""

import json
import time
import signal
import subprocess

import pytest

from conftest import answer_values, base_config, moat_binary, wait_until
from list_server import ListServer, make_test_ca
from test_metrics import scrape, value

PATH = "/ads.txt"


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}.lists.test" for i in range(n)]


def text(ns: list[str]) -> str:
    return "\n".join(ns) + "\n"


def blocked(d, name: str) -> bool:
    return answer_values(d.query(name, "A"), "A") == ["0.0.0.0"]


def config(upstream, server: ListServer, state_dir, **lists_section) -> dict:
    return base_config(upstream, blocklists=[{"name": "web", "url": server.url(PATH)}],
                       lists={"state_dir": str(state_dir), **lists_section})


def status(state_dir) -> dict:
    files = list(state_dir.glob("web-*.json"))
    assert len(files) == 1, f"expected one status file in {state_dir}: {files}"
    return json.loads(files[0].read_text())


def copy_text(state_dir) -> str:
    return next(state_dir.glob("web-*.list")).read_text()


@pytest.fixture
def list_server():
    servers = []

    def make(**kw) -> ListServer:
        servers.append(ListServer(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def lists_command(d, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(moat_binary()), "lists", "-c", str(d.config_path), *extra],
                          capture_output=True, text=True, timeout=10, cwd=d.dir)


def test_download_is_served_and_a_refresh_replaces_the_set(upstream, moat, list_server, tmp_path):
    srv = list_server()
    srv.set(PATH, text(names("a", 50)))
    state = tmp_path / "state"
    d = moat(config(upstream, srv, state))
    assert d.wait_for_log("list web: downloaded 50 entries"), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "a7.lists.test"), 5), "the downloaded list is not served"
    st = status(state)
    assert st["entries"] == 50 and st["failures"] == 0 and st["etag"], st
    assert copy_text(state) == text(names("a", 50))

    srv.set(PATH, text(names("b", 60)))
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web: downloaded 60 entries"), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "b3.lists.test"), 5), "the refreshed list is not served"
    assert not blocked(d, "a8.lists.test"), "a name of the old download is still blocked"
    listed = json.loads(lists_command(d, "--json").stdout)
    assert listed[0]["name"] == "web" and listed[0]["status"]["entries"] == 60, listed
    # Downloads ran in the fetcher process: the DNS process never mapped libcurl. (It does map
    # libssl, for its own DoT and DoH listeners.)
    maps = open(f"/proc/{d.proc.pid}/maps").read()
    assert "libcurl" not in maps, "the daemon loaded libcurl itself"


def test_the_fetcher_rejects_a_malformed_request(binary):
    for request in ("", "{}", "[1]", '{"state_dir": 5}'):
        res = subprocess.run([str(binary), "fetch-lists"], input=request, capture_output=True,
                             text=True, timeout=10)
        assert res.returncode == 2 and res.stdout == "", (request, res)


def test_unchanged_list_is_neither_downloaded_nor_recompiled(upstream, moat, list_server, tmp_path):
    srv = list_server()
    srv.set(PATH, text(names("a", 20)))
    d = moat(config(upstream, srv, tmp_path / "state"))
    assert d.wait_for_log("now serving the new downloads")
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web: unchanged"), d.stderr_text()[-2000:]
    last = srv.requests_for(PATH)[-1]
    assert last.status == 304, last
    assert last.headers.get("if-none-match") == srv.lists[PATH].etag, last.headers
    # A server without validators sends the same body again: noticed, not recompiled.
    srv.mode(PATH, "no-validators")
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web: unchanged", after=1), d.stderr_text()[-2000:]
    assert srv.requests_for(PATH)[-1].status == 200
    assert len(d.stderr_lines("now serving the new downloads")) == 1, "an unchanged list was recompiled"


BAD_DOWNLOADS = [
    # (what the server does, body, the error logged)
    ("500", None, "HTTP 500"),
    ("hang", None, "timed out"),
    ("ok", "", "the download has no entries"),
    ("ok", "# only a comment\n", "the download has no entries"),
    ("truncate", text(names("t", 80)), "transfer closed"),
    ("ok", text(names("s", 20)), "shrank from 50 to 20 entries"),
    ("ok", text(names("big", 2000)), "larger than lists.max_size"),
]


def test_bad_downloads_keep_the_last_good_copy(upstream, moat, list_server, tmp_path):
    srv = list_server(hang_seconds=5)
    good = text(names("a", 50))
    srv.set(PATH, good)
    state = tmp_path / "state"
    d = moat(config(upstream, srv, state, timeout="2s", connect_timeout="1s", max_size="8KiB"))
    assert d.wait_for_log("now serving the new downloads")
    for n, (mode, body, error) in enumerate(BAD_DOWNLOADS, start=1):
        if body is not None:
            srv.set(PATH, body, mode)
        else:
            srv.mode(PATH, mode)
        warned = len(d.stderr_lines("list web: "))
        d.signal(signal.SIGUSR1)
        lines = d.wait_for_log("serving the last good copy", timeout=8, after=n - 1)
        assert lines and error in lines[-1], f"{mode}: expected '{error}' in {lines[-1:]}"
        assert len(d.stderr_lines("list web: ")) > warned
        assert blocked(d, f"a{10 + n}.lists.test"), f"{mode}: the last good copy is not served"
        st = status(state)
        assert st["failures"] == n and error in st["last_error"], st
        m = scrape(d)
        assert value(m, "dnsmoat_list_refresh_failures", list="web", kind="block") == n
        assert value(m, "dnsmoat_list_last_refresh_ok", list="web", kind="block") == 0
        assert st["entries"] == 50 and copy_text(state) == good, f"{mode}: the copy was replaced"
    out = lists_command(d).stdout
    assert "failing:" in out and "larger than lists.max_size" in out, out
    assert "entries:  50" in out, out
    # The server recovers: the next refresh takes the new list and clears the failure count.
    srv.set(PATH, text(names("c", 45)))
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web: downloaded 45 entries"), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "c1.lists.test"), 5)
    assert status(state)["failures"] == 0
    m = scrape(d)
    assert value(m, "dnsmoat_list_refresh_failures", list="web", kind="block") == 0
    assert value(m, "dnsmoat_list_last_refresh_ok", list="web", kind="block") == 1
    assert abs(value(m, "dnsmoat_list_last_success_timestamp_seconds", list="web",
                     kind="block") - time.time()) < 60


def test_restart_with_the_server_down_serves_the_disk_copy_at_once(upstream, moat, list_server,
                                                                   tmp_path):
    srv = list_server()
    srv.set(PATH, text(names("a", 30)))
    state = tmp_path / "state"
    cfg = config(upstream, srv, state, connect_timeout="500ms", timeout="1s")
    first = moat(cfg)
    assert first.wait_for_log("now serving the new downloads")
    first.stop()
    srv.close()
    second = moat(cfg)
    # No download can happen: the answer comes from the copy compiled at start.
    assert blocked(second, "a5.lists.test"), second.stderr_text()[-2000:]
    # The copy is fresh, so no download is due; asked to refresh, the failure keeps the copy.
    second.signal(signal.SIGUSR1)
    assert second.wait_for_log("serving the last good copy", timeout=8), second.stderr_text()[-2000:]
    assert blocked(second, "a6.lists.test")


def test_redirects_are_followed(upstream, moat, list_server, tmp_path):
    srv = list_server()
    srv.set("/moved.txt", text(names("m", 12)))
    srv.set(PATH, "", "redirect:/moved.txt")
    d = moat(config(upstream, srv, tmp_path / "state"))
    assert d.wait_for_log("list web: downloaded 12 entries"), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "m3.lists.test"), 5)


def test_https_needs_a_trusted_certificate(upstream, moat, list_server, tmp_path):
    ca = make_test_ca(tmp_path / "ca")
    srv = list_server(tls_dir=ca)
    srv.set(PATH, text(names("h", 25)))
    trusted = moat(config(upstream, srv, tmp_path / "state1", ca_file=str(ca / "ca.pem")))
    assert trusted.wait_for_log("list web: downloaded 25 entries"), trusted.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(trusted, "h2.lists.test"), 5)
    untrusted = moat(config(upstream, srv, tmp_path / "state2"))
    lines = untrusted.wait_for_log("no copy yet", timeout=8)
    assert lines and "certificate" in lines[-1], lines
    assert not blocked(untrusted, "h3.lists.test")


def test_a_list_added_by_reload_is_downloaded(upstream, moat, list_server, tmp_path):
    srv = list_server()
    srv.set(PATH, text(names("r", 15)))
    state = tmp_path / "state"
    d = moat(base_config(upstream, lists={"state_dir": str(state)}))
    assert not blocked(d, "r1.lists.test")
    d.write_config(config(upstream, srv, state))
    assert d.reload() == "applied"
    assert d.wait_for_log("list web: downloaded 15 entries"), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "r2.lists.test"), 5)
