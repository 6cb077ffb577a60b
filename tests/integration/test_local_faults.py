"""Local faults through the real binary: the state directory (query log and downloaded lists)
full or read-only, the config file deleted or broken while the daemon runs, list files damaged
on disk (a truncated or garbled downloaded copy, a garbled status file, a local list replaced by
binary junk or removed), the wall clock jumping backwards and forwards under libfaketime, and
SIGKILL at random points (during a list compile at start, a refresh, a reload, heavy logging)
followed by a restart. DNS must go on through all of it, and nothing on disk may be left that a
restart cannot use.

"Full" and "read-only" need a small tmpfs: the tests mount one under their tmp dir when run as
root (and unmount it at teardown), and skip with the reason otherwise.

Already covered elsewhere (not repeated): a query log path that cannot be opened at all
(test_querylog.py::test_a_log_that_cannot_be_opened_never_stops_dns), SIGKILL during heavy
logging leaving a sound database (test_querylog.py::test_kill_9_during_heavy_logging_keeps_a_
sound_log), a broken config refused on SIGHUP with file:line:key
(test_lifecycle.py::test_sighup_reload) and a broken hand edit refused without SIGHUP
(test_api.py::test_a_hand_edit_is_picked_up_without_sighup), a restart with the list server
down serving the copy (test_list_download.py::test_restart_with_the_server_down_serves_the_disk_
copy_at_once)."""

from __future__ import annotations

import errno
import glob
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import (LOOPBACK, answer_values, base_config, make_query, moat_binary, rcode_name,
                      wait_until, write_file)
from list_server import ListServer
from test_metrics import metric

FORWARDED = ("www.local-faults.test", "192.0.2.33")
PATH = "/web.txt"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

def names(prefix: str, n: int, start: int = 0) -> list[str]:
    return [f"{prefix}{i}.lf.test" for i in range(start, start + n)]


def text(ns: list[str]) -> str:
    return "\n".join(ns) + "\n"


def blocked(d, name: str) -> bool:
    return answer_values(d.query(name, "A"), "A") == ["0.0.0.0"]


def forwarded_ok(d) -> bool:
    r = d.query(FORWARDED[0], "A")
    return rcode_name(r) == "NOERROR" and answer_values(r, "A") == [FORWARDED[1]]


LEVEL = re.compile(r"^(?:\S+ \S+ )?(trace|debug|info|warning|error|critical): ")


def lines_at(d, *levels: str) -> list[str]:
    """stderr lines logged at one of `levels` (spdlog's names: warning, error, ...)."""
    return [l for l in d.stderr_text().splitlines()
            if (m := LEVEL.match(l)) and m.group(1) in levels]


def api_json(d, path: str):
    with urllib.request.urlopen(f"http://127.0.0.1:{d.api_port}{path}", timeout=10) as r:
        return json.loads(r.read())


def log_rows(d, *args: str) -> list[dict]:
    out = subprocess.run([str(moat_binary()), "log", "--json", "--config", str(d.config_path),
                          *args], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["rows"]


def status_files(state: Path) -> list[Path]:
    return sorted(state.glob("web-*.json"))


def copy_file(state: Path) -> Path:
    copies = sorted(state.glob("web-*.list"))
    assert len(copies) == 1, f"expected one copy of the list in {state}: {copies}"
    return copies[0]


def children_of(pid: int) -> list[int]:
    out = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            out += [int(x) for x in open(task).read().split()]
        except OSError:
            pass
    return out


def kill9(d) -> None:
    """SIGKILL the daemon; its list fetcher child, if one runs, is left to finish (as after a
    real crash) but waited for, so it cannot race the restart; killed by its pid after 10 s."""
    kids = children_of(d.proc.pid)
    d.kill()
    deadline = time.monotonic() + 10
    for pid in kids:
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)
        if os.path.exists(f"/proc/{pid}"):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def list_server():
    made: list[ListServer] = []

    def make(**kw) -> ListServer:
        made.append(ListServer(**kw))
        return made[-1]

    yield make
    for s in made:
        s.close()


@pytest.fixture
def tmpfs(tmp_path):
    """Factory: tmpfs(name, size) mounts a tmpfs of that size under tmp_path (root only; skips
    otherwise); remount_ro(path) makes it read-only. Unmounted at teardown (lazily if busy)."""
    mounted: list[Path] = []

    def make(name: str, size: str = "2m") -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs for a full / read-only state directory needs root")
        path = tmp_path / name
        path.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755",
                              "moat-test", str(path)], capture_output=True, text=True, timeout=10)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip()}); a full or read-only "
                        f"state directory cannot be made without one")
        mounted.append(path)
        return path

    yield make
    for path in reversed(mounted):
        res = subprocess.run(["umount", str(path)], capture_output=True, timeout=10)
        if res.returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=10)


def remount_ro(path: Path) -> None:
    res = subprocess.run(["mount", "-o", "remount,ro", str(path)], capture_output=True, text=True,
                         timeout=10)
    assert res.returncode == 0, f"remount read-only failed: {res.stderr}"


def fill(path: Path) -> Path:
    """Fills the filesystem of `path` with one file until ENOSPC (bounded by its size)."""
    filler = path / "filler"
    st = os.statvfs(path)
    limit = st.f_blocks * st.f_frsize + (1 << 20)
    written = 0
    with open(filler, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        while written < limit:
            try:
                written += f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
        while True:  # the last few blocks
            try:
                f.write(b"\0" * 512)
            except OSError:
                break
    assert os.statvfs(path).f_bavail == 0, "the tmpfs still has free blocks"
    return filler


def query_many(d, prefix: str, n: int) -> int:
    """n new names (one log row each), every one answered; returns how many."""
    answered = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3)
        for i in range(n):
            name = f"{prefix}-{i}-" + "x" * 40 + ".lf.test"
            q = make_query(name, "A", id=i & 0xFFFF)
            s.sendto(q.to_wire(), (LOOPBACK, d.port))
            data, _ = s.recvfrom(65535)
            assert data[:2] == q.to_wire()[:2]
            answered += 1
    return answered


def reason_of(line: str) -> str:
    """The error of a `list web: ERROR (URL); ...` line."""
    return line.split("list web:", 1)[1].split("(http", 1)[0].strip()


def list_config(upstream, srv: ListServer, state: Path, log_path: Path | None = None, **extra):
    upstream.add(FORWARDED[0], "A", FORWARDED[1])
    cfg = base_config(upstream, blocklists=[{"name": "web", "url": srv.url(PATH)}],
                      lists={"state_dir": str(state), "connect_timeout": "1s", "timeout": "3s"},
                      querylog={"flush_interval": "100ms"}, **extra)
    if log_path is not None:
        cfg["querylog"]["path"] = str(log_path)
    return cfg


# --------------------------------------------------------------------------------------------
# The state directory full or read-only
# --------------------------------------------------------------------------------------------

def test_a_full_state_directory_degrades_the_log_to_counting(upstream, tmpfs, moat, list_server):
    state = tmpfs("state", "2m")
    srv = list_server()
    srv.set(PATH, text(names("a", 300)))
    d = moat(list_config(upstream, srv, state / "lists", state / "querylog.db"))
    assert d.wait_for_log("now serving the new downloads"), d.stderr_text()[-2000:]
    assert blocked(d, "a5.lf.test") and forwarded_ok(d)
    query_many(d, "before", 20)
    assert wait_until(lambda: metric(d, "dnsmoat_querylog_written_total") >= 20, 5)
    good_copy = copy_file(state / "lists").read_text()

    filler = fill(state)
    # Queries go on being answered while the log cannot write; the loss is counted and said.
    queries_before = metric(d, "dnsmoat_queries_total")
    sent = 0
    deadline = time.monotonic() + 30
    for batch in range(60):
        sent += query_many(d, f"full{batch}", 100)
        assert blocked(d, "a7.lf.test") and forwarded_ok(d)
        sent += 2
        if metric(d, "dnsmoat_querylog_lost_total") > 0 or time.monotonic() > deadline:
            break
    lost = metric(d, "dnsmoat_querylog_lost_total")
    assert lost > 0, f"{sent} queries on a full disk and none counted as lost"
    lines = d.wait_for_log("queries not stored", timeout=3)
    assert lines and "DNS is not affected" in lines[0], d.stderr_text()[-2000:]
    assert metric(d, "dnsmoat_queries_total") - queries_before >= sent
    summary = wait_until(lambda: (s := api_json(d, "/api/stats/summary"))["queries"] >= sent + 20
                         and s, 5)
    assert summary, f"the statistics stopped counting: {api_json(d, '/api/stats/summary')}"
    # A list refresh on the full disk fails and keeps the last good copy.
    srv.set(PATH, text(names("b", 400)))
    d.signal(signal.SIGUSR1)
    lines = d.wait_for_log("serving the last good copy", timeout=10)
    assert lines, f"no refresh failure reported:\n{d.stderr_text()[-2000:]}"
    refresh_failure = lines[-1]
    failures_counted = metric(d, "dnsmoat_list_refresh_failures", list="web", kind="block")
    assert copy_file(state / "lists").read_text() == good_copy
    assert blocked(d, "a9.lf.test") and not blocked(d, "b9.lf.test")
    for st in status_files(state / "lists"):
        json.loads(st.read_text())  # still a whole document
    assert not list((state / "lists").glob("*.part")), "a partial download was left behind"

    # Space again: the log writes again, without a restart, and the list refreshes.
    filler.unlink()
    written = metric(d, "dnsmoat_querylog_written_total")
    query_many(d, "after", 20)
    assert wait_until(lambda: metric(d, "dnsmoat_querylog_written_total") >= written + 20, 5), \
        "the log did not write again once there was space"
    assert wait_until(lambda: log_rows(d, "after-19-", "--match", "substring"), 5)
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web: downloaded 400 entries", timeout=10), d.stderr_text()[-2000:]
    assert wait_until(lambda: blocked(d, "b9.lf.test"), 5)
    d.stop()
    con = sqlite3.connect(f"file:{state / 'querylog.db'}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    # The refresh that failed on the full disk said why, and was counted as a failure.
    assert reason_of(refresh_failure) and failures_counted >= 1, (
        f"the refresh failure on the full disk: reason {reason_of(refresh_failure)!r} "
        f"(line {refresh_failure!r}), dnsmoat_list_refresh_failures {failures_counted}")


def test_a_read_only_state_directory_at_start(upstream, tmpfs, moat, list_server):
    state = tmpfs("state", "4m")
    srv = list_server()
    srv.set(PATH, text(names("a", 200)))
    cfg = list_config(upstream, srv, state / "lists", state / "querylog.db")
    first = moat(cfg)
    assert first.wait_for_log("now serving the new downloads"), first.stderr_text()[-2000:]
    query_many(first, "first", 10)
    assert wait_until(lambda: metric(first, "dnsmoat_querylog_written_total") >= 10, 5)
    first.stop()
    remount_ro(state)
    srv.set(PATH, text(names("b", 250)))

    d = moat(cfg)
    # The copy on the read-only disk is served at once; DNS goes on.
    assert blocked(d, "a3.lf.test") and forwarded_ok(d)
    before = metric(d, "dnsmoat_queries_total")
    query_many(d, "ro", 30)
    assert metric(d, "dnsmoat_queries_total") - before >= 30
    # The log either did not open (and said why) or counts what it could not store.
    def log_degraded():
        return d.stderr_lines("query log: off") or \
            metric(d, "dnsmoat_querylog_lost_total") >= 30
    assert wait_until(log_degraded, 5), d.stderr_text()[-2000:]
    # A refresh cannot install the new download: reported, the old copy served.
    d.signal(signal.SIGUSR1)
    lines = d.wait_for_log("list web:", timeout=10)
    assert lines and not d.stderr_lines("list web: downloaded"), d.stderr_text()[-2000:]
    failure = d.wait_for_log("serving the last good copy", timeout=10)
    assert failure, d.stderr_text()[-2000:]
    assert blocked(d, "a4.lf.test") and not blocked(d, "b4.lf.test")
    assert forwarded_ok(d)
    # `dnsmoat lists` still reads the state.
    out = subprocess.run([str(moat_binary()), "lists", "--json", "-c", str(d.config_path)],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and json.loads(out.stdout)[0]["status"]["entries"] == 200, out
    # The reason given is the read-only disk (not a crash of the fetcher).
    assert "Read-only file system" in reason_of(failure[-1]), \
        f"the refresh failure does not name the read-only disk: {failure[-1]!r}"


def test_an_empty_read_only_state_directory_at_start(upstream, tmpfs, moat, list_server):
    state = tmpfs("state", "1m")
    remount_ro(state)
    srv = list_server()
    srv.set(PATH, text(names("a", 50)))
    d = moat(list_config(upstream, srv, state / "lists", state / "log" / "querylog.db"))
    assert forwarded_ok(d) and not blocked(d, "a1.lf.test")
    assert d.wait_for_log("query log: off", timeout=5), d.stderr_text()[-2000:]
    lines = wait_until(lambda: [l for l in lines_at(d, "warning", "error")
                                if ("cannot" in l or "no copy" in l)
                                and ("web" in l or "state directory" in l)], 10)
    assert lines, f"the list that cannot be kept is not reported:\n{d.stderr_text()[-2000:]}"
    before = metric(d, "dnsmoat_queries_total")
    query_many(d, "ro", 20)
    assert metric(d, "dnsmoat_queries_total") - before >= 20
    # The failing download is retried with a back-off (1 min after a failure), not in a loop,
    # and each failure says why.
    time.sleep(3)
    failures = [l for l in lines_at(d, "warning", "error") if "list web:" in l]
    assert len(failures) <= 3, (
        f"{len(failures)} download failures of list web logged within about 3 s (a retry loop, "
        f"a fetcher process each); the first: {failures[:2]}")
    assert all(reason_of(l) for l in failures), f"failures without a reason: {failures[:2]}"


# --------------------------------------------------------------------------------------------
# The config file deleted or broken while running
# --------------------------------------------------------------------------------------------

def running_config(upstream, tmp_path) -> dict:
    upstream.add(FORWARDED[0], "A", FORWARDED[1])
    upstream.add("new.lf.test", "A", "192.0.2.34")
    lst = write_file(tmp_path / "block.txt", "ads.lf.test\n")
    # [upstream] comes first in the file: a cut anywhere leaves it broken, never missing.
    return base_config(upstream, blocklists=[{"name": "ads", "path": str(lst)}],
                       local={"records": {"nas.lf.test": "A 10.1.2.3"}})


def still_running_config(d) -> None:
    assert d.alive(), d.stderr_text()[-2000:]
    assert blocked(d, "ads.lf.test"), "the running blocklist was dropped"
    assert answer_values(d.query("nas.lf.test"), "A") == ["10.1.2.3"], "local records dropped"
    assert forwarded_ok(d)


def test_the_config_file_deleted_while_running(upstream, moat, tmp_path):
    cfg = running_config(upstream, tmp_path)
    d = moat(cfg)
    text_before = d.config_path.read_text()
    d.config_path.unlink()
    time.sleep(0.6)  # what the watcher would do with it (nothing is written)
    # Only names that are never forwarded until the reload is known to have failed.
    assert blocked(d, "ads.lf.test")
    assert d.reload() == "failed", d.stderr_text()[-2000:]
    lines = d.stderr_text().split("reload failed")[-1]
    assert str(d.config_path) in lines and "No such file" in lines, lines[:500]
    still_running_config(d)
    # The file back, with a change: applied.
    d.config_path.write_text(text_before + '\n[rules]\ndeny = ["new.lf.test"]\n')
    assert wait_until(lambda: blocked(d, "new.lf.test"), 5), d.stderr_text()[-2000:]
    still_running_config(d)


def _truncated(text: str) -> bytes:
    cut = text.index("servers = [") + len("servers = [") + 5  # inside the first server's string
    return text[:cut].encode()


BROKEN = {
    "binary junk": lambda text: bytes(random.Random(7).randrange(256) for _ in range(600)),
    "NUL bytes inside": lambda text: text.encode().replace(b"\n[", b"\n\0\0[", 1),
    "cut inside [upstream]": _truncated,
    "invalid UTF-8": lambda text: text.encode().replace(b"ads", b"a\xff\xfeds"),
    "JSON in a .toml file": lambda text: b'{"upstream": {"servers": ["127.0.0.1:1"]}',
}


@pytest.mark.parametrize("damage", list(BROKEN))
def test_the_config_file_broken_while_running(upstream, moat, tmp_path, damage):
    d = moat(running_config(upstream, tmp_path))
    good = d.config_path.read_text()
    failed = len(d.stderr_lines("reload failed"))
    d.config_path.write_bytes(BROKEN[damage](good))
    # The watcher tries it (300 ms after the write) and refuses it.
    assert d.wait_for_log("reload failed", timeout=5, after=failed), \
        f"{damage}: the watcher did not refuse the file:\n{d.stderr_text()[-2000:]}"
    assert not d.stderr_text().split("reload failed")[-1].count("reload: applied")
    assert blocked(d, "ads.lf.test")
    still_running_config(d)
    # The next SIGHUP reports it again, naming the file.
    assert d.reload() == "failed"
    assert d.config_path.name in d.stderr_text().split("reload failed")[-1], \
        d.stderr_text()[-1500:]
    still_running_config(d)
    # Fixed: applied.
    d.config_path.write_text(good + '\n[rules]\ndeny = ["new.lf.test"]\n')
    assert wait_until(lambda: blocked(d, "new.lf.test"), 5), d.stderr_text()[-2000:]
    still_running_config(d)


# --------------------------------------------------------------------------------------------
# List files damaged on disk
# --------------------------------------------------------------------------------------------

def _downloaded(upstream, moat, list_server, tmp_path, n: int = 400):
    srv = list_server()
    srv.set(PATH, text(names("a", n)))
    state = tmp_path / "state"
    cfg = list_config(upstream, srv, state)
    first = moat(cfg)
    assert first.wait_for_log(f"list web: downloaded {n} entries"), first.stderr_text()[-2000:]
    first.stop()
    return srv, state, cfg


DAMAGES = {
    # the copy cut in the middle of a line, about half of it gone
    "truncated": lambda data: data[: len(data) // 2 + 3],
    # its second half overwritten with binary junk (same size)
    "binary junk": lambda data: data[: len(data) // 2] + bytes(
        random.Random(3).randrange(256) for _ in range(len(data) - len(data) // 2)),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_list_copy_is_served_as_far_as_it_reads_reported_and_repaired(
        upstream, moat, list_server, tmp_path, damage):
    srv, state, cfg = _downloaded(upstream, moat, list_server, tmp_path)
    copy = copy_file(state)
    copy.write_bytes(DAMAGES[damage](copy.read_bytes()))
    srv.mode(PATH, "500")  # the list server is down at the restart
    d = moat(cfg)
    # What can be read is served at once; the rest is not invented.
    assert blocked(d, "a3.lf.test") and blocked(d, "a150.lf.test"), d.stderr_text()[-2000:]
    assert not blocked(d, "a391.lf.test")  # (a390, asked only after the repair, is not cached)
    assert forwarded_ok(d)
    # The damage is reported: the copy no longer matches its status (entries, size, hash).
    warned = [l for l in lines_at(d, "warning", "error") if "web" in l]
    assert warned, (f"{damage}: a damaged copy of list web is served without a warning; "
                    f"stderr:\n{d.stderr_text()[-2500:]}")
    # The server is back with the same list (same ETag): the refresh must not take the damaged
    # copy for an unchanged one, and the whole list is served again.
    srv.mode(PATH, "ok")
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web:", timeout=10, after=0)
    repaired = wait_until(lambda: blocked(d, "a390.lf.test"), 8)
    assert repaired, (f"{damage}: after a refresh the list is still served from the damaged copy "
                      f"(server answered {[r.status for r in srv.requests_for(PATH)]}); "
                      f"stderr:\n{d.stderr_text()[-1500:]}")
    assert copy_file(state).read_text() == text(names("a", 400))


def test_a_garbled_list_status_file(upstream, moat, list_server, tmp_path):
    srv, state, cfg = _downloaded(upstream, moat, list_server, tmp_path)
    for st in status_files(state):
        st.write_bytes(b"\x00\xffnot json at all{{{" * 10)
    d = moat(cfg)
    assert blocked(d, "a10.lf.test"), "the copy is not served when its status file is garbled"
    d.signal(signal.SIGUSR1)
    assert d.wait_for_log("list web:", timeout=10), d.stderr_text()[-2000:]
    assert wait_until(lambda: all(json.loads(p.read_text())["entries"] == 400
                                  for p in status_files(state)), 8)
    assert blocked(d, "a399.lf.test") and forwarded_ok(d)


def test_a_local_list_damaged_or_removed_then_reloaded(upstream, moat, tmp_path):
    upstream.add(FORWARDED[0], "A", FORWARDED[1])
    lst = write_file(tmp_path / "block.txt", text(names("a", 100)))
    d = moat(base_config(upstream, blocklists=[{"name": "local", "path": str(lst)}]))
    assert blocked(d, "a50.lf.test")
    # Half of it binary junk: the readable half is served, the junk reported line by line.
    data = lst.read_bytes()
    lst.write_bytes(data[: len(data) // 2] + b"\n" + bytes(random.Random(5).randrange(256)
                                                           for _ in range(3000)) + b"\n")
    assert d.reload() == "applied", d.stderr_text()[-2000:]
    assert blocked(d, "a10.lf.test") and not blocked(d, "a90.lf.test")
    assert d.stderr_lines("cannot parse"), "the junk lines were not reported"
    # Removed: the reload keeps the running lists and names the file.
    lst.unlink()
    d.reload()
    assert d.wait_for_log("cannot open", timeout=3) and \
        str(lst) in d.stderr_lines("cannot open")[-1], d.stderr_text()[-2000:]
    assert d.stderr_lines("the running lists stay")
    assert blocked(d, "a10.lf.test") and forwarded_ok(d)


# --------------------------------------------------------------------------------------------
# The wall clock jumping
# --------------------------------------------------------------------------------------------

def faketime_library() -> str:
    for pattern in ("/usr/lib/*/faketime/libfaketimeMT.so.1",
                    "/usr/lib/*/faketime/libfaketime.so.1"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    pytest.skip("libfaketime not installed (apt-get install faketime)")


def test_the_wall_clock_jumping_back_and_forth(upstream, moat, tmp_path):
    """libfaketime moves the daemon's wall clock (CLOCK_REALTIME) by what a file the test
    rewrites says; the monotonic clock runs on. TTLs and timeouts follow the monotonic clock, the
    query log's times the wall clock, and nothing breaks when it jumps."""
    offset = write_file(tmp_path / "faketime", "+0\n")
    upstream.add("ttl.lf.test", "A", "192.0.2.50", ttl=6)
    upstream.add("ttl2.lf.test", "A", "192.0.2.52", ttl=6)
    upstream.add("long.lf.test", "A", "192.0.2.51", ttl=600)
    upstream.add(FORWARDED[0], "A", FORWARDED[1])
    d = moat(base_config(upstream, querylog={"flush_interval": "100ms"}), start=False)
    env_before = dict(os.environ)
    try:
        os.environ.update({"LD_PRELOAD": faketime_library(),
                           "FAKETIME_TIMESTAMP_FILE": str(offset),
                           "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                           "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                           ":verify_asan_link_order=0"})
        d.start()
    finally:
        os.environ.clear()
        os.environ.update(env_before)

    def row_time(name: str) -> float:
        rows = wait_until(lambda: log_rows(d, name, "--match", "exact"), 5)
        assert rows, f"{name} not in the query log; stderr:\n{d.stderr_text()[-1500:]}"
        return rows[0]["time_us"] / 1e6

    def jump(spec: str, expect_offset: float) -> None:
        offset.write_text(spec + "\n")
        probe = f"probe{spec.replace('+', 'p').replace('-', 'm')}.lf.test"
        def moved():
            d.query(probe)
            rows = log_rows(d, probe, "--match", "exact")
            return rows and abs(rows[0]["time_us"] / 1e6 - time.time() - expect_offset) < 120
        assert wait_until(moved, 6, interval=0.5), \
            f"the daemon's clock did not move to {spec} (libfaketime not picked up?)"

    d.query("long.lf.test")
    assert abs(row_time("long.lf.test") - time.time()) < 60
    # Backwards: an entry cached before the jump is still served, and expires on time.
    t0 = time.monotonic()
    d.query("ttl.lf.test")                                      # cached for 6 s
    jump("-2d", -2 * 86400)
    assert time.monotonic() - t0 < 5.5, "the jump took too long to check the cache across it"
    r = d.query("ttl.lf.test")                                  # from the cache, TTL lowered
    assert answer_values(r, "A") == ["192.0.2.50"] and 0 < r.answer[0].ttl <= 6, r.answer
    assert len(upstream.queries("ttl.lf.test")) == 1, "the cache lost its entry on the jump back"
    time.sleep(max(0.0, t0 + 6.6 - time.monotonic()))
    d.query("ttl.lf.test")                                      # expired by the monotonic clock
    assert len(upstream.queries("ttl.lf.test")) == 2, \
        "an entry did not expire after its TTL when the wall clock went back 2 days"
    r = d.query("long.lf.test")
    assert 560 <= r.answer[0].ttl <= 600 and len(upstream.queries("long.lf.test")) == 1, r.answer
    d.query("back.lf.test")
    assert abs(row_time("back.lf.test") - (time.time() - 2 * 86400)) < 120

    # Forwards by 3 days: nothing cached expires early, and TTLs still run out on time.
    t1 = time.monotonic()
    d.query("ttl2.lf.test")
    jump("+3d", 3 * 86400)
    assert time.monotonic() - t1 < 5.5, "the jump took too long to check the cache across it"
    r = d.query("ttl2.lf.test")
    assert 0 < r.answer[0].ttl <= 6 and len(upstream.queries("ttl2.lf.test")) == 1, \
        "the cache lost its entry on the jump forward"
    r = d.query("long.lf.test")
    assert 540 <= r.answer[0].ttl <= 600 and len(upstream.queries("long.lf.test")) == 1, r.answer
    time.sleep(max(0.0, t1 + 6.6 - time.monotonic()))
    d.query("ttl2.lf.test")
    assert len(upstream.queries("ttl2.lf.test")) == 2
    d.query("ahead.lf.test")
    assert abs(row_time("ahead.lf.test") - (time.time() + 3 * 86400)) < 120

    jump("+0", 0)
    d.query("now.lf.test")
    assert abs(row_time("now.lf.test") - time.time()) < 60
    # The log holds every query, ids rising with arrival whatever the clock said.
    rows = log_rows(d, "lf.test", "--match", "suffix", "-n", "1000")
    by_name = {r["domain"]: r for r in rows}
    for name in ("back.lf.test", "ahead.lf.test", "now.lf.test", "long.lf.test"):
        assert name in by_name, f"{name} missing from the log: {sorted(by_name)}"
    assert by_name["back.lf.test"]["id"] < by_name["ahead.lf.test"]["id"] < \
        by_name["now.lf.test"]["id"]
    assert metric(d, "dnsmoat_querylog_lost_total") == 0
    # The statistics and the history answer, and once the clock is right again they count
    # the queries asked since (the dashboard must not freeze for as long as the jump was).
    assert len(api_json(d, "/api/stats/history")["buckets"]) == 144
    base = api_json(d, "/api/stats/summary")["queries"]
    for i in range(5):
        d.query(f"counted{i}.lf.test")
    counted = wait_until(lambda: api_json(d, "/api/stats/summary")["queries"] >= base + 5, 5)
    assert counted, (f"with the clock right again after a jump 3 days ahead, /api/stats/summary "
                     f"stays at {api_json(d, '/api/stats/summary')['queries']} after 5 more "
                     f"queries (was {base}): queries are no longer counted")
    assert forwarded_ok(d) and d.alive()


# --------------------------------------------------------------------------------------------
# SIGKILL at random points, then a restart
# --------------------------------------------------------------------------------------------

def start_nowait(d) -> None:
    """Starts the daemon without waiting for readiness (to kill it during its start)."""
    d._err = open(d.stderr_path, "ab")
    d._out = open(d.stdout_path, "ab")
    d.proc = subprocess.Popen([str(d.binary), "run", "--config", str(d.config_path), *d.args],
                              stdin=subprocess.DEVNULL, stdout=d._out, stderr=d._err, cwd=d.dir)


def check_state(state: Path, db: Path) -> list[str]:
    """What a restart would find broken on disk."""
    problems = []
    for st in status_files(state):
        try:
            doc = json.loads(st.read_text())
            if not isinstance(doc, dict) or "entries" not in doc:
                problems.append(f"{st.name}: not a status document")
        except ValueError as e:
            problems.append(f"{st.name}: {e}")
    if db.exists():
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            ok = con.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                problems.append(f"querylog.db: {ok}")
        finally:
            con.close()
    return problems


def test_sigkill_at_random_points_then_restart(upstream, moat, list_server, tmp_path):
    rng = random.Random(20261201)
    big = 150_000
    srv = list_server()
    srv.set(PATH, text(names("v0-", big)))
    state = tmp_path / "state"
    local = write_file(tmp_path / "local.txt", text(names("loc0-", 20_000)))
    cfg = list_config(upstream, srv, state)
    cfg["blocklists"].append({"name": "local", "path": str(local)})
    d = moat(cfg, log_level="info", ready_timeout=30)
    assert d.wait_for_log("now serving the new downloads", timeout=30), d.stderr_text()[-2000:]
    db = d.dir / "querylog.db"

    stop_load = threading.Event()

    def load() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(0.5)
            deadline = time.monotonic() + 20
            for i in range(100_000):
                if stop_load.is_set() or time.monotonic() > deadline:
                    return
                s.sendto(make_query(f"load{i}.lf.test", id=i & 0xFFFF).to_wire(),
                         (LOOPBACK, d.port))
                try:
                    s.recvfrom(65535)
                except (socket.timeout, ConnectionRefusedError, OSError):
                    return

    history = []
    for round_ in range(1, 7):
        action = ["start", "refresh", "reload", "logging", "refresh", "reload"][round_ - 1]
        delay = rng.uniform(0.05, 0.6)
        history.append((action, round(delay, 3)))
        if action == "start":
            d.stop()
            d.returncode = None  # the next process's status is the one the teardown checks
            start_nowait(d)
        elif action == "refresh":
            srv.set(PATH, text(names(f"v{round_}-", big)))
            d.signal(signal.SIGUSR1)
        elif action == "reload":
            write_file(local, text(names(f"loc{round_}-", 20_000)))
            d.signal(signal.SIGHUP)
        elif action == "logging":
            stop_load.clear()
            loader = threading.Thread(target=load)
            loader.start()
        time.sleep(delay)
        kill9(d)
        if action == "logging":
            stop_load.set()
            loader.join(10)
        problems = check_state(state, db)
        assert not problems, f"after SIGKILL during {action} ({history}): {problems}"
        # Restarted with the list server down: the copy on disk is served at once.
        srv.mode(PATH, "500")
        copy_lines = copy_file(state).read_text().split()
        assert len(copy_lines) == big, f"the copy on disk has {len(copy_lines)} of {big} lines"
        d.returncode = None
        d.start(ready_timeout=30)
        for name in (copy_lines[0], copy_lines[big // 2], copy_lines[-1]):
            assert blocked(d, name), \
                f"after SIGKILL during {action} ({history}), {name} of the disk copy is not " \
                f"blocked at once; stderr:\n{d.stderr_text()[-1500:]}"
        local_lines = local.read_text().split()
        assert blocked(d, local_lines[-1]), f"the local list is not served after {action}"
        assert forwarded_ok(d)
        srv.mode(PATH, "ok")
    out = subprocess.run([str(moat_binary()), "lists", "--json", "-c", str(d.config_path)],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    print(f"SIGKILL rounds (action, delay s): {history}")
