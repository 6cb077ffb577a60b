"""Client groups through the real binary: each group's lists, blocking mode and AAAA filtering,
matched by address and prefix (clients on 127.0.0.0/8 addresses of their own), schedules under
libfaketime's clock (windows that cross midnight), and groups changed by a reload."""

import glob
import os
import subprocess

import dns.message
import pytest

from conftest import (answer_values, base_config, make_query, parse_reply, rcode_name,
                      udp_exchange, write_file)

KIDS = "127.0.0.2"
BROKEN_V6 = "127.0.1.9"  # in 127.0.1.0/24
ADULT = "127.0.0.1"


def ask(d, name: str, rdtype: str = "A", source: str = ADULT) -> dns.message.Message:
    q = make_query(name, rdtype)
    return parse_reply(q, udp_exchange(q.to_wire(), d.port, source=source),
                       f"{name} {rdtype} from {source}")


def lists(tmp_path) -> dict:
    ads = write_file(tmp_path / "ads.txt", "ads.groups.test\ntracker.groups.test\n")
    games = write_file(tmp_path / "games.txt", "games.groups.test\nchat.groups.test\n")
    allow = write_file(tmp_path / "allow.txt", "tracker.groups.test\n")
    return {"blocklists": [{"name": "ads", "path": str(ads)},
                           {"name": "games", "path": str(games)}],
            "allowlists": [{"name": "adult-allow", "path": str(allow)}]}


def groups_config(upstream, tmp_path, groups: list) -> dict:
    for name in ("games.groups.test", "tracker.groups.test", "web.groups.test"):
        upstream.add(name, "A", "192.0.2.80")
        upstream.add(name, "AAAA", "2001:db8::80")
    return base_config(upstream, **lists(tmp_path), groups=groups)


KIDS_GROUPS = [
    {"name": "kids", "clients": [KIDS], "blocklists": ["ads", "games"], "allowlists": [],
     "blocking_mode": "nxdomain"},
    {"name": "broken-v6", "clients": ["127.0.1.0/24"], "filter_aaaa": True},
    {"name": "default", "blocklists": ["ads"]},
]


def test_each_group_gets_its_lists_and_blocking_mode(upstream, moat, tmp_path):
    d = moat(groups_config(upstream, tmp_path, KIDS_GROUPS))
    # The default group: ads only, its allowlist applies, blocking mode "null".
    assert answer_values(ask(d, "ads.groups.test"), "A") == ["0.0.0.0"]
    assert answer_values(ask(d, "games.groups.test"), "A") == ["192.0.2.80"]
    assert answer_values(ask(d, "tracker.groups.test"), "A") == ["192.0.2.80"], "allowlisted"
    # Kids: ads and games, no allowlist, NXDOMAIN.
    for name in ("ads.groups.test", "games.groups.test", "tracker.groups.test"):
        r = ask(d, name, source=KIDS)
        assert rcode_name(r) == "NXDOMAIN", f"{name} for kids: {rcode_name(r)} {r.answer}"
    assert answer_values(ask(d, "web.groups.test", source=KIDS), "A") == ["192.0.2.80"]
    # A group without list choices uses every list: the allowlist too.
    assert answer_values(ask(d, "games.groups.test", source=BROKEN_V6), "A") == ["0.0.0.0"]
    assert answer_values(ask(d, "tracker.groups.test", source=BROKEN_V6), "A") == ["192.0.2.80"]


def test_aaaa_filtering_per_group(upstream, moat, tmp_path):
    d = moat(groups_config(upstream, tmp_path, KIDS_GROUPS))
    r = ask(d, "web.groups.test", "AAAA", source=BROKEN_V6)
    assert rcode_name(r) == "NOERROR" and not r.answer, f"AAAA should be empty: {r.answer}"
    assert not upstream.queries("web.groups.test", "AAAA"), "the filtered AAAA went upstream"
    assert answer_values(ask(d, "web.groups.test", "A", source=BROKEN_V6), "A") == ["192.0.2.80"]
    assert answer_values(ask(d, "web.groups.test", "AAAA"), "AAAA") == ["2001:db8::80"]


def test_a_reload_moves_a_client_to_another_group(upstream, moat, tmp_path):
    d = moat(groups_config(upstream, tmp_path, KIDS_GROUPS))
    assert rcode_name(ask(d, "games.groups.test", source=KIDS)) == "NXDOMAIN"
    d.write_config(groups_config(upstream, tmp_path, [{"name": "kids", "clients": ["127.0.0.3"],
                                                       "blocklists": ["games"]}]))
    assert d.reload() == "applied"
    assert answer_values(ask(d, "chat.groups.test", source=KIDS), "A") == ["0.0.0.0"], \
        "127.0.0.2 is in the default group now, which has every list"
    upstream.add("ads.groups.test", "A", "192.0.2.81")
    r = ask(d, "ads.groups.test", source="127.0.0.3")
    assert answer_values(r, "A") == ["192.0.2.81"], \
        f"the new kids group uses the games list only: {rcode_name(r)} {r.answer}"


def test_a_group_naming_an_unknown_list_is_a_config_error(binary, tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[[blocklists]]\nname = "ads"\npath = "ads.txt"\n\n'
                   '[[groups]]\nname = "kids"\nclients = ["192.168.1.50"]\n'
                   'blocklists = ["ads", "gamez"]\n')
    res = subprocess.run([str(binary), "check-config", str(cfg)], capture_output=True, text=True,
                         timeout=10)
    assert res.returncode == 78, res
    assert "bad.toml:8: groups[0].blocklists[1]" in res.stderr and "gamez" in res.stderr, res.stderr


SCHEDULED = [
    {"name": "kids", "clients": [KIDS], "blocklists": ["ads", "games"],
     "schedule": [{"lists": ["games"], "days": ["mon", "tue", "wed", "thu", "sun"],
                   "from": "21:00", "to": "07:00"}]},
]


@pytest.mark.parametrize("when,blocked", [
    ("2026-11-30 21:30:00", True),   # Monday evening, inside
    ("2026-12-01 06:59:00", True),   # Tuesday morning: Monday's window crosses midnight
    ("2026-12-01 07:01:00", False),  # after it
    ("2026-12-01 12:00:00", False),  # midday
    ("2026-12-04 22:00:00", False),  # Friday: no window starts on Friday
    ("2026-12-05 06:00:00", False),  # Saturday morning: Friday had no window
    ("2026-12-07 05:00:00", True),   # Monday morning: Sunday's window
])
def test_schedules_switch_lists_by_local_time(upstream, moat, tmp_path, when, blocked):
    preload = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    if not preload:
        pytest.fail("libfaketime not installed (scripts/setup.sh test installs it)")
    cfg = groups_config(upstream, tmp_path, SCHEDULED)
    d = moat(cfg, start=False)
    env_before = dict(os.environ)
    try:
        # libfaketime: the daemon's wall clock starts at `when` (UTC) and runs on from there.
        os.environ.update({"LD_PRELOAD": preload[0],
                           "FAKETIME": "@" + when, "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                           "TZ": "UTC", "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                           ":verify_asan_link_order=0"})
        d.start()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    r = ask(d, "games.groups.test", source=KIDS)
    got = answer_values(r, "A") == ["0.0.0.0"]
    assert got == blocked, f"at {when}: games {'blocked' if got else 'not blocked'}: {r.answer}"
    assert answer_values(ask(d, "ads.groups.test", source=KIDS), "A") == ["0.0.0.0"], \
        "an unscheduled list counts at any time"
    assert answer_values(ask(d, "games.groups.test"), "A") == ["0.0.0.0"], \
        "the default group is not scheduled"


def test_a_group_with_its_own_upstreams_never_shares_cached_answers(upstream_factory, moat,
                                                                     tmp_path):
    main = upstream_factory("main")
    family = upstream_factory("family")
    main.add("video.groups.test", "A", "192.0.2.10", ttl=3600)
    family.add("video.groups.test", "A", "192.0.2.99", ttl=3600)  # a family-safe resolver's answer
    d = moat(base_config(main, **lists(tmp_path), groups=[
        {"name": "kids", "clients": [KIDS], "upstreams": [family.address]}]))
    assert answer_values(ask(d, "video.groups.test"), "A") == ["192.0.2.10"]
    assert answer_values(ask(d, "video.groups.test", source=KIDS), "A") == ["192.0.2.99"], \
        "the kids got the default upstreams' cached answer"
    assert answer_values(ask(d, "video.groups.test", source=KIDS), "A") == ["192.0.2.99"]
    assert answer_values(ask(d, "video.groups.test"), "A") == ["192.0.2.10"]
    assert len(main.queries("video.groups.test")) == 1 and len(family.queries("video.groups.test")) == 1, \
        "each group's answer is cached in its own partition"
    # Lists still apply to the group with its own upstreams.
    assert answer_values(ask(d, "ads.groups.test", source=KIDS), "A") == ["0.0.0.0"]
    assert not family.queries("ads.groups.test")
