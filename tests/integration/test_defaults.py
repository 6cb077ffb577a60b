"""The embedded defaults, end to end: `dnsmoat run` with no config file, as the README's quick
start runs it. The defaults forward to public resolvers, so the daemon runs inside a network
namespace of its own with only loopback up: its upstream traffic cannot leave this machine (it
fails at once with "network unreachable"). Also `dnsmoat query` on the built-in list."""

import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import moat_binary

DEFAULT_CONFIG = Path("/etc/dnsmoat/dnsmoat.toml")


def netns_available() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create a network namespace"
    if shutil.which("ip") is None:
        return "needs ip(8) (Debian iproute2)"
    if DEFAULT_CONFIG.exists():
        return f"{DEFAULT_CONFIG} exists, so `dnsmoat run` would not use the embedded defaults"
    return None


@pytest.fixture
def netns():
    why = netns_available()
    if why:
        pytest.skip(why)
    name = f"moat-{uuid.uuid4().hex[:10]}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:  # e.g. a container without CAP_SYS_ADMIN
        pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True,
                       timeout=10)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], timeout=10)


def dig(ns: str, *args: str) -> str:
    out = subprocess.run(["ip", "netns", "exec", ns, "dig", "+tries=1", "+time=8", *args],
                         capture_output=True, text=True, timeout=20)
    return out.stdout


def test_embedded_defaults_in_a_namespace(netns, tmp_path):
    stderr = open(tmp_path / "stderr.log", "w")
    # The defaults keep the query log in /var/lib/dnsmoat: a tmpfs mounted there inside the
    # namespace's own mounts (`ip netns exec` gives the command a private mount namespace) takes
    # it, so the test leaves nothing in the machine's state directory.
    os.makedirs("/var/lib/dnsmoat", exist_ok=True)
    proc = subprocess.Popen(["ip", "netns", "exec", netns, "sh", "-c",
                             "mount -t tmpfs -o size=64m,mode=0750 moat-test /var/lib/dnsmoat && "
                             f"exec {moat_binary()} run"],
                            cwd=tmp_path, stderr=stderr, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        # Exactly the address: dig's "connection refused to 127.0.0.1#5353" must not count.
        while dig(netns, "@127.0.0.1", "-p", "5353", "localhost", "+short").split() != ["127.0.0.1"]:
            assert proc.poll() is None, (tmp_path / "stderr.log").read_text()
            assert time.monotonic() < deadline, "not answering on 127.0.0.1:5353 after 10 s"
            time.sleep(0.1)
        # The built-in starter list blocks a well-known ad domain and its subdomains.
        assert dig(netns, "@127.0.0.1", "-p", "5353", "doubleclick.net", "+short").split() == ["0.0.0.0"]
        assert dig(netns, "@::1", "-p", "5353", "ad.doubleclick.net", "AAAA", "+short").split() == ["::"]
        # Anything else goes to the default upstreams, unreachable in here: a prompt SERVFAIL.
        started = time.monotonic()
        out = dig(netns, "@127.0.0.1", "-p", "5353", "example.com")
        assert "status: SERVFAIL" in out, out
        assert time.monotonic() - started < 6, "SERVFAIL took longer than the total timeout"
        log = (tmp_path / "stderr.log").read_text()
        assert "embedded defaults" in log and "listening on [::1]:5353" in log, log
        assert "query log: /var/lib/dnsmoat/querylog.db" in log, log
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        stderr.close()


def test_query_command_explains_the_built_in_list(tmp_path):
    if DEFAULT_CONFIG.exists():
        pytest.skip(f"{DEFAULT_CONFIG} exists; `dnsmoat query` would read its lists")
    out = subprocess.run([str(moat_binary()), "query", "ads.doubleclick.net"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert 'blocked by list "built-in"' in out.stdout and "||doubleclick.net^" in out.stdout, out.stdout
    out = subprocess.run([str(moat_binary()), "query", "example.org"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0 and "not blocked" in out.stdout, out.stdout


def test_query_command_with_a_config(tmp_path):
    block = tmp_path / "block.txt"
    block.write_text("# my list\n0.0.0.0 tracker.example\n/^ads?[0-9]*\\./\n")
    allow = tmp_path / "allow.txt"
    allow.write_text("good.tracker.example\n")
    cfg = tmp_path / "dnsmoat.toml"
    cfg.write_text(f'[[blocklists]]\nname = "mine"\npath = "{block}"\nsubdomains = true\n'
                   f'[[allowlists]]\nname = "ok"\npath = "{allow}"\n')
    def query(name):
        out = subprocess.run([str(moat_binary()), "query", name, "--config", str(cfg)],
                             capture_output=True, text=True, timeout=20)
        assert out.returncode == 0, out.stderr
        return out.stdout
    assert f'blocked by list "mine" ({block}:2: 0.0.0.0 tracker.example)' in query("x.tracker.example")
    assert 'allowed by list "ok"' in query("good.tracker.example")
    assert "regex" in query("ads1.example.net")
    assert "not blocked" in query("example.net")
