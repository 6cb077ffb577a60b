"""Report of scripts/soak.sh: judges the samples, writes the summary and the plot, and exits 0 on
PASS, 1 on FAIL. The criteria (docs/reliability.md):

  failures  failed queries (timeouts, SERVFAIL, REFUSED, ...) over all loads at most 0.01 % of
            those sent; failures in a 5 s interval, or the one after it, in which knotd asked
            directly or the sampler itself waited 1.5 s or more are the stall's (the daemon
            answers SERVFAIL when its upstream is silent for 2 s): listed, not judged
  warm-up   the first 20 % of the run, at least 30 s: it covers the first list refresh and the
            filling of the cache
  RSS       the largest VmRSS of the last half at most 10 % above the median VmRSS after warm-up,
            both without the samples taken from 1 s before to 10 s after a list refresh (while
            the new list is built beside the old one: that peak is VmHWM's to judge)
  HWM       VmHWM at the end at most 10 % above VmHWM at half time (the peaks, list refreshes
            included, do not grow in the last half)
  FDs       the most open descriptors in the last half at most 10 % (and 5) above the median
            after warm-up
  threads   the most threads in the last half at most 2 above the median after warm-up
  p99       the median of the 5 s p99 latencies (UDP) of the last half at most twice that of the
            first half after warm-up (or 1 ms above it, whichever is more), and no 5 s p99 above
            100 ms after warm-up once the interval's longest stall that is not the daemon's is
            taken off: of the machine (how long the sampler's own 0.1 s sleep overran) or of the
            upstream (the longest round trip of a probe that asks knotd directly every 50 ms)
  API       every API read answered 200
  checks    the script's own checks (alive, refreshes applied, answers, clean exit, no error
            logged) all PASS
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics

MAX_FAILED_RATE = 0.0001      # 0.01 %
STALL_EXCUSE_MS = 1500.0      # a stall this long (of knotd or the machine) excuses failures
WARMUP_FRACTION, WARMUP_MIN_S = 0.20, 30.0
RSS_SLACK = 0.10
HWM_SLACK = 0.10
FD_SLACK, FD_SLACK_ABS = 0.10, 5
THREAD_SLACK = 2
P99_DRIFT, P99_DRIFT_ABS_MS = 2.0, 1.0
P99_CEILING_MS = 100.0
REFRESH_WINDOW_S = 10.0


def load_rows(path: str) -> list[dict[str, float]]:
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: (float(v) if v not in ("", None) else math.nan) for k, v in r.items()})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    for name in ("samples", "totals", "api", "refreshes", "checks", "png", "summary"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--metrics", help="the daemon's last /metrics text (for the summary)")
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--ready", type=float, required=True)
    ap.add_argument("--qps", type=int, required=True)
    args = ap.parse_args()

    rows = [r for r in load_rows(args.samples) if not math.isnan(r["rss_kib"])]
    with open(args.totals) as f:
        totals = json.load(f)
    with open(args.refreshes, newline="") as f:  # seconds since the sampler's start
        refreshes = [float(r["epoch"]) - totals["start_epoch"] for r in csv.DictReader(f)]
    duration = args.minutes * 60
    warmup = max(WARMUP_FRACTION * duration, WARMUP_MIN_S)
    after = [r for r in rows if r["t_s"] - r["dt_s"] >= warmup - 0.5]
    last_half = [r for r in rows if r["t_s"] - r["dt_s"] >= duration / 2 - 0.5]
    first_half = [r for r in after if r not in last_half]

    def quiet(rs):  # without the samples near a list refresh (all of them if none is left)
        out = [r for r in rs
               if not any(x - 1 <= r["t_s"] <= x + REFRESH_WINDOW_S for x in refreshes)]
        return out or rs

    lines: list[str] = []
    verdicts: list[tuple[bool, str]] = []

    def judge(ok: bool, text: str) -> None:
        verdicts.append((ok, text))

    # -- queries -----------------------------------------------------------------------------
    sent = failed = 0
    per_feed = []
    for name, feed in totals["feeds"].items():
        d = feed.get("dnsperf", {})
        f_sent = int(d.get("sent", feed["answered"] + feed["interrupted"]))
        # failed: timeouts and bad rcodes seen one by one; dnsperf's lost count also covers
        # queries it gave up on at the end of its time (the interrupted ones), not counted here
        f_failed = feed["failed"]
        sent += f_sent
        failed += f_failed
        codes = ", ".join(f"{k} {v}" for k, v in
                          sorted(feed["rcodes"].items(), key=lambda kv: -kv[1]))
        lat = feed.get("latency", {})
        per_feed.append(f"  {name:4} sent {f_sent:>9,}  failed {f_failed:>5,}  "
                        f"interrupted at the end {feed['interrupted']}  ({codes}); latency "
                        + ", ".join(f"{k[:-3]} {v:.2f}" for k, v in lat.items()) + " ms")

    # Failures while the upstream or the machine stalled (that interval and the next).
    def stalled(r):
        return any(r.get(k, 0) >= STALL_EXCUSE_MS for k in ("hiccup_ms", "upstream_ms"))

    excused, stalls = 0, []
    for i, r in enumerate(rows):
        if stalled(r) or (i and stalled(rows[i - 1])):
            excused += sum(int(r[k]) for k in r if k.endswith("_failed") and not math.isnan(r[k]))
        if stalled(r):
            stalls.append(f"{r['t_s']:.0f} s")
    judged = failed - excused
    rate = judged / sent if sent else 1.0
    judge(sent > 0 and rate <= MAX_FAILED_RATE,
          f"failed queries {judged:,} of {sent:,} ({100 * rate:.4f} %, limit "
          f"{100 * MAX_FAILED_RATE:.2f} %)"
          + (f"; besides, {excused:,} failed while knotd or the machine stalled for "
             f"{STALL_EXCUSE_MS / 1000:g} s or more (at {', '.join(stalls)}), not judged"
             if stalls else ""))

    # -- memory, descriptors, threads -------------------------------------------------------------
    def col(rs, key):
        return [r[key] for r in rs if not math.isnan(r[key])]

    if not after or not last_half:
        judge(False, "too few samples after warm-up to judge")
    else:
        rss_med = statistics.median(col(quiet(after), "rss_kib"))
        rss_max = max(col(quiet(last_half), "rss_kib"))
        judge(rss_max <= rss_med * (1 + RSS_SLACK),
              f"RSS flat: max of the last half {rss_max / 1024:.1f} MiB, median after warm-up "
              f"{rss_med / 1024:.1f} MiB (+{100 * (rss_max / rss_med - 1):.1f} %, limit "
              f"+{100 * RSS_SLACK:.0f} %; samples within a refresh's 11 s left out)")
        hwm_half = [r["hwm_kib"] for r in rows if r["t_s"] <= duration / 2 + 0.5][-1]
        hwm_end = rows[-1]["hwm_kib"]
        judge(hwm_end <= hwm_half * (1 + HWM_SLACK),
              f"VmHWM flat: {hwm_half / 1024:.1f} MiB at half time, {hwm_end / 1024:.1f} MiB at "
              f"the end (+{100 * (hwm_end / hwm_half - 1):.1f} %, limit +{100 * HWM_SLACK:.0f} %)")
        fd_med, fd_max = statistics.median(col(after, "fds")), max(col(last_half, "fds"))
        fd_limit = max(fd_med * (1 + FD_SLACK), fd_med + FD_SLACK_ABS)
        judge(fd_max <= fd_limit,
              f"FDs flat: max of the last half {fd_max:.0f}, median after warm-up {fd_med:.0f} "
              f"(limit {fd_limit:.0f})")
        th_med, th_max = statistics.median(col(after, "threads")), max(col(last_half, "threads"))
        judge(th_max <= th_med + THREAD_SLACK,
              f"threads flat: max of the last half {th_max:.0f}, median after warm-up {th_med:.0f} "
              f"(limit +{THREAD_SLACK})")

        p99_first = statistics.median(col(first_half or after, "udp_p99_ms"))
        p99_last = statistics.median(col(last_half, "udp_p99_ms"))
        p99_limit = max(p99_first * P99_DRIFT, p99_first + P99_DRIFT_ABS_MS)
        judge(p99_last <= p99_limit,
              f"p99 stable: median 5 s p99 {p99_first:.2f} ms in the first half after warm-up, "
              f"{p99_last:.2f} ms in the last half (limit {p99_limit:.2f} ms)")
        def stall(r):  # ms of the interval that were not the daemon's
            return max((0.0 if math.isnan(r.get(k, math.nan)) else r[k])
                       for k in ("hiccup_ms", "upstream_ms"))

        timed = [r for r in after if not math.isnan(r["udp_p99_ms"])]
        worst = max(timed, key=lambda r: r["udp_p99_ms"])
        own = max(timed, key=lambda r: r["udp_p99_ms"] - stall(r))
        own_ms = own["udp_p99_ms"] - stall(own)
        judge(own_ms <= P99_CEILING_MS,
              f"p99 bounded: worst 5 s p99 after warm-up {worst['udp_p99_ms']:.2f} ms at "
              f"{worst['t_s']:.0f} s (machine stall {worst['hiccup_ms']:.0f} ms, upstream "
              f"{worst.get('upstream_ms', math.nan):.0f} ms then); less those at most "
              f"{own_ms:.2f} ms (limit {P99_CEILING_MS:.0f} ms)")

    # -- API reads ------------------------------------------------------------------------------
    with open(args.api, newline="") as f:
        api = list(csv.DictReader(f))
    api_bad = [a for a in api if a["status"] != "200"]
    api_times = sorted(float(a["seconds"]) for a in api)
    api_p99 = (api_times[max(0, math.ceil(0.99 * len(api_times)) - 1)] * 1000 if api_times
               else math.nan)
    judge(bool(api) and not api_bad,
          f"API reads: {len(api) - len(api_bad)} of {len(api)} answered 200 (p99 {api_p99:.1f} ms)"
          + (f"; first failure: {api_bad[0]}" if api_bad else ""))

    # -- the script's checks --------------------------------------------------------------------
    with open(args.checks) as f:
        for line in f:
            status, _, text = line.rstrip("\n").partition("\t")
            judge(status == "PASS", text)

    # -- summary --------------------------------------------------------------------------------
    first, end = rows[0], rows[-1]
    all_p50, all_p99 = col(after, "udp_p50_ms"), col(after, "udp_p99_ms")
    ok = all(v for v, _ in verdicts)
    lines.append(f"dnsmoat soak: {args.minutes:g} min, UDP at {args.qps} qps plus TCP, DoT, DoH "
                 f"and API reads; {len(refreshes)} refreshes of the 1,000,000-name list")
    lines.append(f"ready in {args.ready:.2f} s; warm-up {warmup:.0f} s; {len(rows)} samples")
    lines.extend(per_feed)
    if rows:
        lines.append(f"  RSS {first['rss_kib'] / 1024:.1f} -> {end['rss_kib'] / 1024:.1f} MiB, "
                     f"VmHWM {first['hwm_kib'] / 1024:.1f} -> {end['hwm_kib'] / 1024:.1f} MiB, "
                     f"FDs {first['fds']:.0f} -> {end['fds']:.0f}, threads "
                     f"{first['threads']:.0f} -> {end['threads']:.0f}; CPU "
                     f"{statistics.mean(col(rows, 'cpu_pct')):.1f} % of a core, the machine "
                     f"{statistics.mean(col(rows, 'host_busy_pct')):.0f} % busy")
    if all_p50:
        lines.append(f"  UDP latency after warm-up, median of the 5 s values: p50 "
                     f"{statistics.median(all_p50):.3f} ms, p95 "
                     f"{statistics.median(col(after, 'udp_p95_ms')):.3f} ms, p99 "
                     f"{statistics.median(all_p99):.3f} ms; worst 5 s p99 {max(all_p99):.2f} ms, "
                     f"worst single answer {max(col(after, 'udp_max_ms')):.1f} ms")
    if rows and "upstream_ms" in rows[0]:
        up = col(rows, "upstream_ms") or [math.nan]
        lines.append(f"  not the daemon's: the longest stall of the machine (the sampler's sleep) "
                     f"{max(col(rows, 'hiccup_ms'), default=math.nan):.0f} ms; knotd asked "
                     f"directly: slowest round trip {max(up):.0f} ms, median of the 5 s slowest "
                     f"{statistics.median(up):.1f} ms")
    lines.extend(daemon_metrics(args.metrics))
    for good, text in verdicts:
        lines.append(f"{'PASS' if good else 'FAIL'}  {text}")
    lines.append("RESULT: " + ("PASS" if ok else "FAIL"))
    with open(args.summary, "w") as f:
        f.write("\n".join(lines) + "\n")

    plot(rows, refreshes, warmup, args.png, args.minutes, ok)
    return 0 if ok else 1


def daemon_metrics(path: str | None) -> list[str]:
    """What the daemon says about itself in its last /metrics (informational, not judged)."""
    values: dict[str, float] = {}
    try:
        with open(path or "") as f:
            for line in f:
                if not line.startswith("#") and " " in line:
                    name, _, value = line.rpartition(" ")
                    values[name] = float(value)
    except (OSError, ValueError):
        return []
    if not values:
        return []
    def outcome(o: str) -> int:
        return int(values.get('dnsmoat_queries_total{outcome="' + o + '"}', 0))

    outcomes = ", ".join(f"{o} {outcome(o):,}" for o in
                         ("forwarded", "cached", "blocked", "servfail", "refused", "dropped"))
    get = lambda name: int(values.get(name, -1))  # noqa: E731
    return [f"  dnsmoat's /metrics at the end: {outcomes}; cache {get('dnsmoat_cache_entries'):,} "
            f"entries ({get('dnsmoat_cache_bytes') / 1048576:.1f} MiB, "
            f"{get('dnsmoat_cache_evictions_total'):,} evictions); query log written "
            f"{get('dnsmoat_querylog_written_total'):,}, dropped "
            f"{get('dnsmoat_querylog_dropped_total'):,}, queue peak "
            f"{get('dnsmoat_querylog_queue_depth_peak'):,}; TCP/DoT/DoH connections peak "
            f"{get('dnsmoat_tcp_connections_peak')}; in flight peak "
            f"{get('dnsmoat_queries_in_flight_peak')}"]


def plot(rows, refreshes, warmup, path, minutes, ok) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["t_s"] / 60 for r in rows]
    fig, axes = plt.subplots(3, 1, figsize=(8, 6.4), sharex=True, dpi=80)
    series = [
        ("memory (MiB)", [("VmRSS", "rss_kib", 1 / 1024), ("VmHWM", "hwm_kib", 1 / 1024)]),
        ("open FDs, threads", [("FDs", "fds", 1), ("threads", "threads", 1)]),
        ("UDP latency (ms)", [("p99 of 5 s", "udp_p99_ms", 1), ("p50 of 5 s", "udp_p50_ms", 1)]),
    ]
    for ax, (label, lines) in zip(axes, series):
        for name, key, scale in lines:
            ax.plot(t, [r[key] * scale for r in rows], label=name, linewidth=1)
        for x in refreshes:
            ax.axvline(x / 60, color="grey", linewidth=0.6, linestyle=":")
        ax.axvspan(0, warmup / 60, color="grey", alpha=0.12)
        ax.set_ylabel(label)
        top = max((r[key] * scale for _, key, scale in lines for r in rows
                   if not math.isnan(r[key])), default=1.0)
        ax.set_ylim(0, top * 1.3)  # room for the legend above the lines
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", ncol=2, fontsize=8, framealpha=0.8)
    axes[-1].set_xlabel("minutes (shaded: warm-up; dotted: list refreshes of 1,000,000 names)")
    fig.suptitle(f"dnsmoat soak, {minutes:g} min: {'PASS' if ok else 'FAIL'}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
