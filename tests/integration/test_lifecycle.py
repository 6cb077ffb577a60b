"""The daemon's life: SIGHUP reload (applied, and failed with the old config kept), SIGTERM drain
with exit status 0, and `dnsmoat check-config` on good and broken files."""

import json
import re
import signal
import socket
import subprocess
import time

from conftest import (REPO, LOOPBACK, base_config, answer_values, free_port, make_query, moat_binary,
                      parse_reply, rcode_name, to_toml, write_file)

EX_CONFIG = 78


def test_sighup_reload(tmp_path, upstream, moat):
    for n, addr in (("a", "192.0.2.91"), ("b", "192.0.2.92"), ("c", "192.0.2.93")):
        upstream.add(f"{n}.example.test", "A", addr)
    blocklist = write_file(tmp_path / "block.txt", "a.example.test\n")
    cfg = base_config(upstream, blocklists=[{"name": "mine", "path": str(blocklist)}],
                      blocking={"mode": "null", "blocked_ttl": "1s"})
    d = moat(cfg)
    assert answer_values(d.query("a.example.test"), "A") == ["0.0.0.0"]
    assert answer_values(d.query("c.example.test"), "A") == ["192.0.2.93"]   # now cached

    # new list and new mode
    write_file(blocklist, "b.example.test\nc.example.test\n")
    cfg["blocking"]["mode"] = "nxdomain"
    d.write_config(cfg)
    assert d.reload() == "applied", d.stderr_text()[-2000:]
    r = d.query("a.example.test")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.91"], \
        f"a.example.test left the list but is still answered {rcode_name(r)} {r.answer}"
    for name in ("b.example.test", "c.example.test"):
        r = d.query(name)
        assert rcode_name(r) == "NXDOMAIN", f"{name} after reload: {rcode_name(r)} {r.answer}"

    # a broken config: the reload fails, names the file, line and key, and nothing changes
    good_text = d.config_text
    broken = good_text.replace('mode = "nxdomain"', 'mode = "nxdomian"')
    assert broken != good_text
    line = broken.splitlines().index('mode = "nxdomian"') + 1
    write_file(blocklist, "a.example.test\n")  # must not be applied either
    d.write_config(broken)
    assert d.reload() == "failed", d.stderr_text()[-2000:]
    pattern = re.compile(rf"dnsmoat\.toml:{line}: blocking\.mode")
    assert d.wait_for_log("blocking.mode", timeout=2) and pattern.search(d.stderr_text()), \
        f"expected 'dnsmoat.toml:{line}: blocking.mode' in stderr:\n{d.stderr_text()[-2000:]}"
    assert d.alive()
    r = d.query("b.example.test")
    assert rcode_name(r) == "NXDOMAIN", f"old config not kept: {rcode_name(r)}"
    r = d.query("a.example.test")
    assert answer_values(r, "A") == ["192.0.2.91"], f"old lists not kept: {rcode_name(r)} {r.answer}"

    # fixed again: applied
    d.write_config(good_text)
    assert d.reload() == "applied"
    r = d.query("a.example.test")
    assert rcode_name(r) == "NXDOMAIN" and not r.answer, "blocked again, in nxdomain mode"


def test_debug_log_has_a_line_per_query_and_a_reload_turns_it_off(tmp_path, upstream, moat):
    """`[log] level = "debug"` writes a line for every answer, whether given at once (blocked,
    cached) or after the upstream's (forwarded); a reload to "info" stops them from the next
    query on (docs/daemon.md, Logging)."""
    upstream.add("f.example.test", "A", "192.0.2.71")
    upstream.add("g.example.test", "A", "192.0.2.72")
    blocklist = write_file(tmp_path / "block.txt", "b.example.test\n")
    cfg = base_config(upstream, blocklists=[{"name": "mine", "path": str(blocklist)}],
                      log={"level": "debug"})
    d = moat(cfg, log_level=None)
    assert answer_values(d.query("f.example.test"), "A") == ["192.0.2.71"]
    assert answer_values(d.query("f.example.test"), "A") == ["192.0.2.71"]
    d.query("b.example.test")
    line = "query udp {}. type 1 from 127.0.0.1: {}"
    for name, outcome in (("f.example.test", "forwarded"), ("f.example.test", "cached"),
                          ("b.example.test", "blocked")):
        assert d.wait_for_log(line.format(name, outcome), timeout=2), \
            f"no '{line.format(name, outcome)}':\n{d.stderr_text()[-2000:]}"

    cfg["log"]["level"] = "info"
    d.write_config(cfg)
    assert d.reload() == "applied", d.stderr_text()[-2000:]
    assert answer_values(d.query("g.example.test"), "A") == ["192.0.2.72"]
    assert answer_values(d.query("g.example.test"), "A") == ["192.0.2.72"]
    d.query("b.example.test")
    time.sleep(0.3)
    assert not d.stderr_lines("query udp g.example.test."), d.stderr_text()[-2000:]
    assert len(d.stderr_lines(line.format("b.example.test", "blocked"))) == 1


def test_sigterm_drains_in_flight_query(upstream, moat):
    upstream.add("slow.example.test", "A", "192.0.2.77")
    upstream.rule("slow.example.test", ("delay", 0.7), "answer")
    d = moat(base_config(upstream, upstream={"timeout": "2s", "total_timeout": "3s"}))
    q = make_query("slow.example.test", "A")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((LOOPBACK, 0))
        s.sendto(q.to_wire(), (LOOPBACK, d.port))
        time.sleep(0.1)
        t_term = time.monotonic()
        d.signal(signal.SIGTERM)
        s.settimeout(3)
        try:
            data, _ = s.recvfrom(65535)
        except socket.timeout:
            data = None
    r = parse_reply(q, data, "in-flight query across SIGTERM")
    assert rcode_name(r) == "NOERROR" and answer_values(r, "A") == ["192.0.2.77"]
    try:
        rc = d.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        rc = None
    assert rc == 0, f"exit status {rc} after SIGTERM (expected 0); stderr:\n{d.stderr_text()[-2000:]}"
    assert time.monotonic() - t_term < 5
    assert upstream.queries("slow.example.test")


def check_config(path, cwd=None):
    return subprocess.run([str(moat_binary()), "check-config", str(path)], capture_output=True,
                          text=True, timeout=20, stdin=subprocess.DEVNULL, cwd=cwd)


def test_check_config_good(tmp_path, binary):
    blocklist = write_file(tmp_path / "block.txt", "ads.example.test\n")
    allowlist = write_file(tmp_path / "allow.txt", "ok.example.test\n")
    cfg = base_config("127.0.0.1:5399", "[::1]:5399",
                      server={"listen": ["127.0.0.1:5398"]},
                      upstream={"conditional": [{"domains": ["home.arpa"], "servers": ["127.0.0.1:5397"]}]},
                      blocklists=[{"name": "b", "path": str(blocklist), "format": "domains",
                                   "subdomains": True}],
                      allowlists=[{"name": "a", "path": str(allowlist)}],
                      blocking={"mode": "custom", "custom_ipv4": "192.0.2.1", "custom_ipv6": "::1",
                                "blocked_ttl": "2s"},
                      local={"ttl": "5m", "records": {"nas.lan": "A 192.168.1.10"}},
                      cache={"size": "1MiB", "min_ttl": "0s", "max_ttl": "1h", "negative": True,
                             "negative_max_ttl": "5m", "serve_stale": False},
                      access={"allow": ["127.0.0.0/8"]},
                      tcp={"idle_timeout": "5s", "max_connections": 16},
                      edns={"strip_ecs": True}, log={"level": "info"})
    good = write_file(tmp_path / "good.toml", to_toml(cfg))
    res = check_config(good)
    assert res.returncode == 0, f"valid config rejected ({res.returncode}):\n{res.stderr}"
    good_json = write_file(tmp_path / "good.json", json.dumps(cfg, indent=2))
    res = check_config(good_json)
    assert res.returncode == 0, f"valid JSON config rejected ({res.returncode}):\n{res.stderr}"


def test_check_config_shipped_examples(binary):
    repo = REPO
    for name in ("dnsmoat.toml", "dnsmoat.json"):
        res = check_config(repo / "config" / name, cwd=repo)
        assert res.returncode == 0, f"config/{name} rejected ({res.returncode}):\n{res.stderr}"


BROKEN = """\
[server]
listen = ["127.0.0.1:5353"]

[upstream]
servers = ["127.0.0.1:99999"]
timeout = "2s"

[blocking]
mode = "nxdomian"

[cache]
max_ttl = 3600

[upstreams]
servers = []
"""


def test_check_config_broken(tmp_path, binary):
    path = write_file(tmp_path / "broken.toml", BROKEN)
    res = check_config(path)
    assert res.returncode == EX_CONFIG, f"exit {res.returncode}, expected 78; stderr:\n{res.stderr}"
    for line, key in ((5, r"upstream\.servers\[0\]"), (9, r"blocking\.mode"), (12, r"cache\.max_ttl"),
                      (14, r"upstreams")):
        assert re.search(rf"broken\.toml:{line}: {key}: \S", res.stderr), \
            f"missing 'broken.toml:{line}: {key}: ...' in:\n{res.stderr}"

    syntax = write_file(tmp_path / "syntax.toml", '[server]\nlisten = ["127.0.0.1:5353"\n')
    res = check_config(syntax)
    assert res.returncode == EX_CONFIG and re.search(r"syntax\.toml:\d+:", res.stderr), res.stderr

    res = check_config(tmp_path / "missing.toml")
    assert res.returncode == EX_CONFIG and "missing.toml" in res.stderr, res.stderr

    yaml = write_file(tmp_path / "conf.yaml", "server: {}\n")
    res = check_config(yaml)
    assert res.returncode == EX_CONFIG and "conf.yaml" in res.stderr, res.stderr


def test_run_with_broken_config_exits_78(tmp_path, binary):
    port = free_port()
    text = BROKEN.replace("127.0.0.1:5353", f"127.0.0.1:{port}")
    path = write_file(tmp_path / "broken.toml", text)
    res = subprocess.run([str(binary), "run", "--config", str(path)], capture_output=True, text=True,
                         timeout=20, stdin=subprocess.DEVNULL)
    assert res.returncode == EX_CONFIG, f"exit {res.returncode}; stderr:\n{res.stderr[-2000:]}"
    assert re.search(r"broken\.toml:9: blocking\.mode", res.stderr), res.stderr[-2000:]
