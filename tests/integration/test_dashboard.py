"""The web dashboard in a real browser: tests/browser/dashboard.mjs drives Debian's Chromium
(through playwright-core) against the real daemon with a password, a loopback fake upstream and
kdig: sign in, counters, query log, one-click Block, pause and resume (that script's header
lists every step). Needs /usr/bin/chromium and `npm ci` in tests/browser; without them the test
skips, and under MOAT_REQUIRE_SHARED=1 (CI) it fails instead."""

import os
import shutil
import subprocess

import pytest

from conftest import REPO, base_config, dig_tool, moat_binary, write_file

BROWSER_DIR = REPO / "tests" / "browser"
SCRIPT = BROWSER_DIR / "dashboard.mjs"
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "moat-dashboard-test"
# The names dashboard.mjs queries (its DEFAULT_NAMES, passed explicitly); the first gets blocked.
NAMES = ("www.dashboard.test", "cdn.dashboard.test", "api.dashboard.test")


def require_browser() -> str:
    """The node binary, or skip (fail under MOAT_REQUIRE_SHARED=1) when a piece is missing."""
    node = shutil.which("node")
    missing = [what for what, ok in (
        (f"{CHROMIUM} (apt-get install chromium)", os.path.exists(CHROMIUM)),
        ("node (apt-get install nodejs npm)", node is not None),
        (f"{BROWSER_DIR / 'node_modules'} (run `npm ci` in tests/browser)",
         (BROWSER_DIR / "node_modules" / "playwright-core").is_dir()),
    ) if not ok]
    if missing:
        msg = "browser test needs " + ", ".join(missing)
        if os.environ.get("MOAT_REQUIRE_SHARED") == "1":
            pytest.fail(msg + "; MOAT_REQUIRE_SHARED=1 makes this a failure")
        pytest.skip(msg)
    return node


def password_hash(password: str) -> str:
    """`dnsmoat password-hash` reads the password on stdin and prints its Argon2id PHC string."""
    res = subprocess.run([str(moat_binary()), "password-hash"], input=password, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, f"dnsmoat password-hash failed ({res.returncode}): {res.stderr}"
    phc = res.stdout.strip()
    assert phc.startswith("$argon2id$"), f"not an Argon2id PHC string: {phc!r}"
    return phc


def test_dashboard_in_chromium(upstream, moat, tmp_path):
    node = require_browser()
    kdig = dig_tool("kdig")
    for name in NAMES:
        upstream.add(name, "A", "192.0.2.1")
    ads = write_file(tmp_path / "ads.txt", "ads.dashboard.test\ntracker.dashboard.test\n")
    cfg = base_config(upstream, blocklists=[{"name": "ads", "path": str(ads)}],
                      local={"records": {"nas.dashboard.test": "A 192.168.1.10"}},
                      groups=[{"name": "kids", "clients": ["127.0.0.2"]}],
                      api={"password_hash": password_hash(PASSWORD)},
                      # Rows reach the log (and its statistics) within 100 ms, not a minute.
                      querylog={"flush_interval": "100ms"})
    d = moat(cfg)

    screenshots = os.environ.get("MOAT_SCREENSHOTS") or str(tmp_path / "screenshots")
    env = {
        **os.environ,
        "MOAT_URL": f"http://127.0.0.1:{d.api_port}",
        "MOAT_PASSWORD": PASSWORD,
        "MOAT_DNS_PORT": str(d.port),
        "MOAT_NAMES": ",".join(NAMES),
        "MOAT_SCREENSHOTS": screenshots,
        # kdig from the same place dig_tool found it.
        "PATH": f"{os.path.dirname(kdig)}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    try:
        res = subprocess.run([node, str(SCRIPT)], cwd=BROWSER_DIR, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"dashboard.mjs did not finish within 120 s; output:\n{e.stdout}\n{e.stderr}\n"
                    f"dnsmoat stderr tail:\n{d.stderr_text()[-3000:]}")
    assert res.returncode == 0, (
        f"dashboard.mjs exited with {res.returncode} (screenshots in {screenshots}):\n"
        f"{res.stdout}\n{res.stderr}\ndnsmoat stderr tail:\n{d.stderr_text()[-3000:]}")
