"""A group that names a device by MAC address, through the kernel's real neighbour table: two
network namespaces made by the test, joined by a veth pair; the client's side has a known MAC.
Traffic stays inside the namespaces."""

import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from conftest import moat_binary, write_file

CLIENT_MAC = "02:00:00:00:77:02"


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=10)


@pytest.fixture
def two_namespaces():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and ip(8) to make network namespaces")
    tag = uuid.uuid4().hex[:6]
    srv, cli = f"moat-s-{tag}", f"moat-c-{tag}"
    made = subprocess.run(["ip", "netns", "add", srv], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
    try:
        sh("ip", "netns", "add", cli)
        sh("ip", "link", "add", f"vs{tag}", "netns", srv, "type", "veth", "peer", "name",
           f"vc{tag}", "netns", cli)
        sh("ip", "-n", cli, "link", "set", f"vc{tag}", "address", CLIENT_MAC)
        for ns, dev, addr in ((srv, f"vs{tag}", "10.77.0.1/24"), (cli, f"vc{tag}", "10.77.0.2/24")):
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield srv, cli
    finally:
        for ns in (srv, cli):
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=10)


def dig(ns: str, server: str, name: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "exec", ns, "dig", "+tries=1", "+time=3", f"@{server}",
                          name, "A", "+short"], capture_output=True, text=True, timeout=15)
    return out.stdout.split()


def test_a_group_names_a_device_by_its_mac_address(two_namespaces, tmp_path):
    srv, cli = two_namespaces
    games = write_file(tmp_path / "games.txt", "games.mac.test\n")
    ads = write_file(tmp_path / "ads.txt", "ads.mac.test\n")
    cfg = write_file(tmp_path / "dnsmoat.toml", f"""
[server]
listen = ["10.77.0.1:53", "127.0.0.1:53"]
[upstream]
servers = ["127.0.0.1:9"]
timeout = "200ms"
total_timeout = "500ms"
[[blocklists]]
name = "ads"
path = "{ads}"
[[blocklists]]
name = "games"
path = "{games}"
[[groups]]
name = "tablet"
clients = ["{CLIENT_MAC.upper()}"]
[[groups]]
name = "default"
blocklists = ["ads"]
[querylog]
path = "{tmp_path / 'querylog.db'}"
""")
    # The kernel learns the client's MAC (ARP) before dnsmoat reads its table at start: one
    # datagram from the server's side to the client's discard port.
    sh("ip", "netns", "exec", srv, "python3", "-c",
       "import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
       "s.sendto(b'x', ('10.77.0.2', 9)); time.sleep(0.3)")
    neigh = subprocess.run(["ip", "-n", srv, "neigh"], capture_output=True, text=True, timeout=10)
    assert CLIENT_MAC in neigh.stdout, neigh.stdout
    log = open(tmp_path / "stderr.log", "w")
    proc = subprocess.Popen(["ip", "netns", "exec", srv, str(moat_binary()), "run", "--config",
                             str(cfg)], stderr=log, stdout=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 10
        while dig(srv, "127.0.0.1", "ads.mac.test") != ["0.0.0.0"]:
            assert proc.poll() is None, (tmp_path / "stderr.log").read_text()
            assert time.monotonic() < deadline, "dnsmoat not answering in its namespace"
            time.sleep(0.1)
        # The tablet (by MAC) is in the group with every list; loopback is in the default group.
        assert dig(cli, "10.77.0.1", "games.mac.test") == ["0.0.0.0"], \
            (tmp_path / "stderr.log").read_text()[-2000:]
        assert dig(srv, "127.0.0.1", "games.mac.test") != ["0.0.0.0"]
        assert dig(cli, "10.77.0.1", "ads.mac.test") == ["0.0.0.0"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        log.close()
