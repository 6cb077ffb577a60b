"""The query log through the real binary: every outcome recorded with its details and found by
`dnsmoat log`, the privacy levels and exclusions (changed by a reload), a log that cannot be
opened never stopping DNS, and `kill -9` during heavy logging leaving a sound database that holds
every row the daemon had committed."""

import json
import os
import socket
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import dns.message
import pytest

from conftest import base_config, make_query, moat_binary, wait_until, write_file
from test_metrics import metric

FLUSH = "100ms"


def log(d, *args: str) -> dict:
    out = subprocess.run([str(moat_binary()), "log", "--json", "--config", str(d.config_path),
                          *args], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def rows(d, *args: str) -> list[dict]:
    return log(d, *args)["rows"]


def logged(d, count: int, *args: str) -> list[dict]:
    """The rows once there are at least `count` (the writer flushes every FLUSH)."""
    found = wait_until(lambda: (r := rows(d, *args)) and len(r) >= count and r, 5)
    assert found, f"fewer than {count} rows for {args}: {rows(d, *args)}"
    return found


def config(upstream, tmp_path, **querylog) -> dict:
    lst = write_file(tmp_path / "ads.txt", "# ads\nads.log.test\n/^track[0-9]+\\./\n")
    upstream.add("www.log.test", "A", "192.0.2.10")
    upstream.add("www.log.test", "AAAA", "2001:db8::10")
    return base_config(upstream, blocklists=[{"name": "ads", "path": str(lst)}],
                       local={"records": {"nas.log.test": "A 192.168.1.10"}},
                       querylog={"flush_interval": FLUSH, **querylog})


def test_every_outcome_is_logged_and_searchable(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    d.query("ads.log.test")                    # blocked by a name rule
    d.query("track7.log.test", "AAAA")         # blocked by a regex
    d.query("www.log.test")                    # forwarded
    d.query("www.log.test")                    # cached
    d.query("nas.log.test", tcp=True)          # local, over TCP
    d.query("www.log.test", "AAAA", tcp=True)  # forwarded over TCP
    # (The fixture's readiness probe, localhost, is logged too: leave it out.)
    r = logged(d, 6, "log.test", "--match", "suffix")
    assert [x["domain"] for x in r] == ["www.log.test", "nas.log.test", "www.log.test",
                                        "www.log.test", "track7.log.test", "ads.log.test"]
    assert [x["outcome"] for x in r] == ["forwarded", "local", "cached", "forwarded", "blocked",
                                         "blocked"]
    by_outcome = {(x["domain"], x["type"], x["outcome"]): x for x in r}
    blocked = by_outcome[("ads.log.test", "A", "blocked")]
    assert (blocked["list"], blocked["line"], blocked["ede"]) == ("ads", 2, 15), blocked
    regex = by_outcome[("track7.log.test", "AAAA", "blocked")]
    assert regex["pattern"] == "^track[0-9]+\\." and regex["list"] == "ads", regex
    forwarded = by_outcome[("www.log.test", "A", "forwarded")]
    assert forwarded["upstream"] == upstream.address and forwarded["rcode"] == 0, forwarded
    assert forwarded["latency_us"] > 0 and forwarded["client"] == "127.0.0.1", forwarded
    assert by_outcome[("www.log.test", "A", "cached")]["upstream"] is None
    assert by_outcome[("nas.log.test", "A", "local")]["transport"] == "tcp"
    assert by_outcome[("www.log.test", "AAAA", "forwarded")]["transport"] == "tcp"
    assert all(abs(x["time_us"] / 1e6 - time.time()) < 60 for x in r)

    # Searches: outcome, type, domain suffix / exact / substring, client, paging.
    assert {x["domain"] for x in rows(d, "--outcome", "blocked")} == {"ads.log.test",
                                                                      "track7.log.test"}
    assert [x["domain"] for x in rows(d, "--type", "AAAA")] == ["www.log.test", "track7.log.test"]
    assert len(rows(d, "log.test", "--match", "suffix")) == 6
    assert len(rows(d, "www.log.test", "--match", "exact")) == 3
    assert len(rows(d, "track")) == 1
    assert rows(d, "--client", "127.0.0.9") == []
    page = log(d, "log.test", "--match", "suffix", "--limit", "4")
    assert len(page["rows"]) == 4 and page["next"] is not None
    rest = log(d, "log.test", "--match", "suffix", "--limit", "4", "--before", str(page["next"]))
    assert [x["id"] for x in rest["rows"]] == [x["id"] for x in r[4:]] and rest["next"] is None

    # The plain-text table names the list and line of a blocked query.
    text = subprocess.run([str(moat_binary()), "log", "--config", str(d.config_path),
                           "--outcome", "blocked"], capture_output=True, text=True, timeout=20)
    assert text.returncode == 0 and "ads.log.test  blocked  ads:2" in text.stdout, text.stdout
    bad = subprocess.run([str(moat_binary()), "log", "--config", str(d.config_path),
                          "--type", "NOPE"], capture_output=True, text=True, timeout=20)
    assert bad.returncode == 2 and "not a DNS type" in bad.stderr, bad.stderr


def context_switches(pid: int) -> int:
    """Every time any of the process's threads slept or was preempted, since it started."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        status = (task / "status").read_text()
        total += sum(int(line.split()[1]) for line in status.splitlines()
                     if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
    return total


def test_an_idle_daemon_sleeps_and_the_next_query_is_logged_at_once(upstream, moat, tmp_path):
    """Without queries the log's writer stops polling (it woke ten times a second before), and
    the next query wakes it: its row is there within the flush interval, not at the next
    minute's prune."""
    d = moat(config(upstream, tmp_path))
    d.query("www.log.test")
    logged(d, 1, "www.log.test")
    time.sleep(1.5)  # a second of empty visits, then the writer waits for the next query
    before = context_switches(d.proc.pid)
    time.sleep(3)
    woke = context_switches(d.proc.pid) - before
    # ThreadSanitizer's runtime adds a thread of its own that wakes ten times a second.
    if "thread" not in os.environ.get("MOAT_SANITIZE", ""):
        assert woke <= 3, f"{woke} wake-ups in 3 s of an idle daemon (the writer polling?)"
    d.query("ads.log.test")
    assert [r["domain"] for r in logged(d, 1, "ads.log.test")] == ["ads.log.test"]


def test_privacy_levels_and_exclusions_apply_on_reload(upstream, moat, tmp_path):
    cfg = config(upstream, tmp_path, privacy="anonymous")
    d = moat(cfg)
    assert d.query("ads.log.test").answer  # DNS as usual
    time.sleep(0.5)
    assert rows(d) == [], "anonymous must store no rows"

    cfg["querylog"].update(privacy="hide_domains")
    d.write_config(cfg)
    assert d.reload() == "applied"
    d.query("ads.log.test")
    r = logged(d, 1)
    assert (r[0]["domain"], r[0]["outcome"], r[0]["list"], r[0]["line"]) == \
        ("hidden", "blocked", "ads", None), r[0]

    cfg["querylog"].update(privacy="full", exclude_domains=["log.test"],
                           exclude_clients=["127.0.0.2"])
    d.write_config(cfg)
    assert d.reload() == "applied"
    d.query("nas.log.test")           # excluded domain
    d.query("printer.lan")            # logged (a local-only name, never forwarded)
    q = make_query("other.lan")
    assert d.send_raw(q.to_wire()) is not None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:  # an excluded client
        s.bind(("127.0.0.2", 0))
        s.settimeout(3)
        s.sendto(make_query("kid.lan").to_wire(), ("127.0.0.1", d.port))
        s.recvfrom(65535)
    r = logged(d, 3)
    names = [x["domain"] for x in r]
    assert names[:2] == ["other.lan", "printer.lan"] and "kid.lan" not in names, names
    assert "nas.log.test" not in names, names


def test_a_log_that_cannot_be_opened_never_stops_dns(upstream, moat, tmp_path):
    not_a_dir = write_file(tmp_path / "file", "a file, not a directory\n")
    d = moat(config(upstream, tmp_path, path=str(not_a_dir / "querylog.db")))
    assert d.query("ads.log.test").answer
    assert d.query("www.log.test").answer
    assert d.wait_for_log("query log: off"), d.stderr_text()


@pytest.mark.solo
def test_kill_9_during_heavy_logging_keeps_a_sound_log(upstream, moat, tmp_path):
    # A queue that two seconds of this load cannot fill: a query dropped from a full queue would
    # be a hole in the log that the check below could not tell from a lost row.
    d = moat(config(upstream, tmp_path, queue_size=32768))
    db = tmp_path / "moat1" / "querylog.db"
    answered: list[str] = []
    stop = threading.Event()

    def load() -> None:
        # Blocked names (a regex rule), each new: one row and one new name per query. Bounded in
        # count and time.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(1)
            deadline = time.monotonic() + 10
            for i in range(200_000):
                if stop.is_set() or time.monotonic() > deadline:
                    return
                name = f"track{i}.log.test"
                s.sendto(make_query(name, id=i & 0xFFFF).to_wire(), ("127.0.0.1", d.port))
                try:
                    s.recvfrom(65535)
                except (socket.timeout, ConnectionRefusedError):
                    return
                answered.append(name)

    t = threading.Thread(target=load)
    t.start()
    time.sleep(1.5)
    # What the daemon has committed by now (it counts a batch once SQLite's COMMIT returned)
    # must survive the kill. Wall time is no measure of that: on a loaded machine the writer
    # falls behind the queries, and what is still queued at the kill is lost by design.
    committed = metric(d, "dnsmoat_querylog_written_total")
    time.sleep(0.5)
    d.kill()
    stop.set()
    t.join(timeout=15)
    assert len(answered) > 1000, f"only {len(answered)} queries answered before the kill"
    assert committed >= 50, f"only {committed} rows committed in 1.5 s of load"

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    total = con.execute("SELECT count(*) FROM queries").fetchone()[0]
    stored = {n for (n,) in con.execute("SELECT d.name FROM queries q JOIN domains d ON"
                                        " d.id = q.domain")}
    con.close()
    assert total >= committed, f"{total} rows after the kill, {committed} committed before it"
    # One client asking in turn: the log holds the first queries answered, without a hole.
    kept = sum(1 for n in answered if n in stored)
    holes = [n for n in answered[:kept] if n not in stored]
    assert not holes, f"{len(holes)} of the first {kept} queries missing: {holes[:5]}"

    # Started again, the daemon goes on with the same file.
    d.start()
    d.query("after.log.test")
    r = logged(d, 1, "after.log.test", "--match", "exact")
    assert r[0]["id"] > max(x["id"] for x in rows(d, "track", "--limit", "1000")[-1:])
    assert len(rows(d, "track", "--limit", "1000")) == min(kept, 1000)


def test_stats_summarise_the_log(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    for _ in range(3):
        d.query("ads.log.test")
    d.query("www.log.test")
    d.query("www.log.test")
    logged(d, 6)  # the probe and these five are written
    out = subprocess.run([str(moat_binary()), "stats", "--json", "--since", "1h", "--interval",
                          "10m", "--top", "3", "--config", str(d.config_path)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["total"] == 6 and s["by_outcome"]["blocked"] == 3, s
    assert s["by_outcome"]["forwarded"] == 1 and s["by_outcome"]["cached"] == 1, s
    assert len(s["intervals"]) in (6, 7)  # the first starts on a round ten minutes
    assert sum(sum(i["by_outcome"].values()) for i in s["intervals"]) == 6
    assert s["top_blocked"] == [{"name": "ads.log.test", "count": 3}], s
    assert s["top_domains"][0] == {"name": "ads.log.test", "count": 3}, s
    assert s["top_clients"] == [{"name": "127.0.0.1", "count": 6}], s
    text = subprocess.run([str(moat_binary()), "stats", "--config", str(d.config_path)],
                          capture_output=True, text=True, timeout=20)
    assert text.returncode == 0 and "Last 24h: 6 queries" in text.stdout, text.stdout
    assert "Top blocked:\n  3  ads.log.test" in text.stdout, text.stdout
