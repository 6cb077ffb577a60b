"""Pausing blocking through the control socket: `dnsmoat pause` for everyone or for one group,
back by itself when the time is up, `dnsmoat resume` ends it early, and bad requests fail."""

import os
import stat
import subprocess
import time

from conftest import answer_values, base_config, moat_binary, udp_exchange, make_query, \
    parse_reply, wait_until, write_file

KIDS = "127.0.0.2"


def blocked(d, name: str, source: str = "127.0.0.1") -> bool:
    q = make_query(name, "A")
    r = parse_reply(q, udp_exchange(q.to_wire(), d.port, source=source), name)
    return answer_values(r, "A") == ["0.0.0.0"]


def cli(d, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(moat_binary()), *args, "--socket", d.control_socket],
                          capture_output=True, text=True, timeout=10)


def config(upstream, tmp_path) -> dict:
    """One blocklist, and a group "kids" on 127.0.0.2; the same control socket each time."""
    lst = write_file(tmp_path / "ads.txt", "ads.pause.test\nads2.pause.test\n")
    for n in ("ads.pause.test", "ads2.pause.test"):
        upstream.add(n, "A", "192.0.2.90")
    return base_config(upstream, blocklists=[{"name": "ads", "path": str(lst)}],
                       groups=[{"name": "kids", "clients": [KIDS]}])


def test_pause_for_everyone_ends_by_itself(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    assert stat.S_IMODE(os.stat(d.control_socket).st_mode) == 0o660
    assert blocked(d, "ads.pause.test")
    res = cli(d, "pause", "2s")
    assert res.returncode == 0 and "paused for everyone for 2 s" in res.stdout, res
    assert not blocked(d, "ads.pause.test") and not blocked(d, "ads2.pause.test", KIDS)
    assert wait_until(lambda: blocked(d, "ads.pause.test"), 4), "the pause did not end"
    assert d.stderr_lines("blocking paused for everyone for 2 s")


def test_pause_one_group_and_resume_early(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    res = cli(d, "pause", "10m", "--group", "kids")
    assert res.returncode == 0, res
    assert not blocked(d, "ads.pause.test", KIDS), "paused for kids"
    assert blocked(d, "ads.pause.test"), "the default group still blocks"
    res = cli(d, "resume", "--group", "kids")
    assert res.returncode == 0 and "resumed for group kids" in res.stdout, res
    assert blocked(d, "ads2.pause.test", KIDS)


def test_bad_pause_requests_fail_clearly(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    res = cli(d, "pause", "5m", "--group", "nobody")
    assert res.returncode == 1 and 'no group named "nobody"' in res.stderr, res
    res = cli(d, "pause", "3d")
    assert res.returncode == 78 and "not a duration from 1s to 1d" in res.stderr, res
    for request in (b"pause\n", b"pause -5\n", b"jump 10\n", b"x" * 300):
        out = subprocess.run(["python3", "-c",
                              "import socket,sys; s=socket.socket(socket.AF_UNIX); "
                              f"s.connect({d.control_socket!r}); s.sendall(sys.stdin.buffer.read()); "
                              "s.shutdown(socket.SHUT_WR); print(s.recv(512).decode())"],
                             input=request, capture_output=True, timeout=10)
        assert out.stdout.startswith(b"error:"), (request, out)
    assert blocked(d, "ads.pause.test"), "nothing was paused"
    res = subprocess.run([str(moat_binary()), "pause", "1m", "--socket", str(tmp_path / "none.sock")],
                         capture_output=True, text=True, timeout=10)
    assert res.returncode == 1 and "cannot reach the daemon" in res.stderr, res


def test_a_group_added_by_reload_can_be_paused(upstream, moat, tmp_path):
    d = moat(config(upstream, tmp_path))
    cfg = config(upstream, tmp_path)
    cfg["groups"].append({"name": "guests", "clients": ["127.0.0.5"]})
    d.write_config(cfg)
    assert d.reload() == "applied"
    res = cli(d, "pause", "5m", "--group", "guests")
    assert res.returncode == 0, res
    assert not blocked(d, "ads.pause.test", "127.0.0.5")
    assert blocked(d, "ads.pause.test", KIDS)
