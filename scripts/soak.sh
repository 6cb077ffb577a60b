#!/usr/bin/env bash
# Soak test: the real dnsmoat binary under a steady mixed load on loopback for MINUTES minutes,
# sampled every 5 s, then judged PASS or FAIL (docs/reliability.md).
#
#   scripts/soak.sh MINUTES          e.g. scripts/soak.sh 2 (CI), nice -n 5 scripts/soak.sh 30
#
# The load: dnsperf over UDP at 1000 queries/s (names from the shared data's data/queries: popular
# names, a long tail, blocked names, NXDOMAIN), TCP, DNS over TLS and DNS over HTTPS clients at a
# low rate that reconnect every 20 queries, and REST API reads with a token every 5 s. Upstream: a
# knotd on loopback whose wildcard answers any name. Blocklist: 1,000,000 generated names served
# over HTTP on loopback, changed and refreshed (SIGUSR1) every few minutes. Sampled: VmRSS, VmHWM,
# open FDs, threads, CPU and the UDP latency percentiles of each 5 s. Results in OUT: samples.csv,
# soak.png, summary.txt, dnsmoat.stderr. Exit status 0 on PASS, 1 on FAIL, 2 on a bad setup.
#
# Environment:
#   MOAT_BINARY      the daemon (default build/release/src/app/dnsmoat; nothing is built here)
#   MOAT_SHARED_DIR  shared test data (default ../shared beside the checkout)
#   MOAT_SOAK_OUT    where the results go (default build/soak)
#   MOAT_SOAK_KEEP=1 keep the temporary directory (configs, logs, dnsperf output)
#
# Only 127.0.0.1 and high ports are used; every process started here is stopped on exit.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

case "${1:-}" in
    -h | --help) usage; exit 0 ;;
esac
if [[ $# -ne 1 || ! "$1" =~ ^[0-9]+$ || "$1" -lt 1 || "$1" -gt 1440 ]]; then
    echo "soak.sh: give the run time in whole minutes, 1..1440 (e.g. scripts/soak.sh 2)" >&2
    exit 2
fi
MINUTES=$1
DURATION=$((MINUTES * 60))

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BINARY=${MOAT_BINARY:-$repo/build/release/src/app/dnsmoat}
SHARED=${MOAT_SHARED_DIR:-$repo/../shared}
OUT=${MOAT_SOAK_OUT:-$repo/build/soak}
PY=/usr/bin/python3       # Debian's, with matplotlib (not another python3 on PATH)
KNOTD=/usr/sbin/knotd

QPS=1000                  # the UDP load
SIDE_QPS=20               # each of the TCP and DoT loads (DoH: half of it)
PER_CONN=20               # TCP, DoT: a new connection every PER_CONN queries
API_EVERY=5               # seconds between rounds of API reads
SAMPLE_EVERY=5            # seconds between samples
# A refresh of the blocklist every REFRESH seconds, the first after REFRESH / 2, none in the
# last 15 s: every 180 s in a long run, DURATION / 5 (at least 20 s) in a short one.
REFRESH=$((DURATION / 5))
((REFRESH > 180)) && REFRESH=180
((REFRESH < 20)) && REFRESH=20

die() { echo "soak.sh: $*" >&2; exit 2; }
log() { printf '%s soak: %s\n' "$(date +%H:%M:%S)" "$*"; }

# -- prerequisites -------------------------------------------------------------------------------
[[ -x "$BINARY" ]] ||
    die "dnsmoat binary not found at $BINARY (build the release preset, or set MOAT_BINARY)"
QUERIES_DIR=$SHARED/data/queries
QUERY_FILES=(dns-gen-top-50k-2025.csv faf-dns-bench-top-65535.csv funkhunter-top-100k-2015.csv)
for f in MANIFEST.md "${QUERY_FILES[@]}"; do
    [[ -r "$QUERIES_DIR/$f" ]] || die "shared test data not found: $QUERIES_DIR/$f" \
        "(set MOAT_SHARED_DIR to the directory holding data/queries; see its MANIFEST.md)"
done

tools_ok() {
    local tool
    for tool in dnsperf kdig openssl curl stdbuf timeout; do
        command -v "$tool" >/dev/null || return 1
    done
    [[ -x "$KNOTD" ]] && "$PY" -c 'import matplotlib' 2>/dev/null
}
if ! tools_ok; then
    log "installing what the soak needs (scripts/setup.sh soak)"
    bash "$repo/scripts/setup.sh" soak
    tools_ok || die "dnsperf, kdig, knotd, openssl, curl or python3-matplotlib still missing"
fi

# -- the temporary directory and the cleanup of everything started -------------------------------
work=$(mktemp -d /tmp/moat-soak.XXXXXX)
pids=()       # every background process, stopped in this order's reverse on exit
daemon_pid=""
cleanup() {
    local status=$? i
    trap - EXIT INT TERM
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        stop_tree "${pids[i]}"
    done
    if [[ "${MOAT_SOAK_KEEP:-0}" == 1 ]]; then
        echo "soak.sh: kept $work"
    else
        rm -rf "$work"
    fi
    exit "$status"
}
# SIGTERM to a process, then to its children (found by parent PID before the parent goes);
# SIGKILL after 5 s.
stop_tree() {
    local pid=$1 children child i
    kill -0 "$pid" 2>/dev/null || return 0
    children=$(pgrep -P "$pid" 2>/dev/null || true)
    kill -TERM "$pid" 2>/dev/null || true
    for child in $children; do stop_tree "$child"; done
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Free high ports on 127.0.0.1, each for both UDP and TCP.
read -r DNS_PORT DOT_PORT DOH_PORT API_PORT KNOT_PORT LIST_PORT < <("$PY" - <<'EOF'
import socket
ports = []
while len(ports) < 6:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
        try:
            u.bind(("127.0.0.1", port))
        except OSError:
            continue
        if port >= 10000 and port not in ports:
            ports.append(port)
print(*ports)
EOF
)
[[ -n "${LIST_PORT:-}" ]] || die "found no free ports on 127.0.0.1"

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
    local seconds=$1 i
    shift
    for ((i = 0; i < seconds * 10; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# One answer as kdig +short prints it (empty when none), bounded to 2 s.
ask() {
    timeout 5 kdig @127.0.0.1 -p "$DNS_PORT" +short +time=2 +retry=0 "$@" 2>/dev/null || true
}

# -- upstream: knotd whose wildcard answers every name, and NXDOMAIN under nx.invalid --------------
mkdir -p "$work/knot"
cat >"$work/knot/root.zone" <<'EOF'
$ORIGIN .
$TTL 10
@ SOA ns.soak.test. hostmaster.soak.test. 1 3600 900 86400 10
@ NS ns.soak.test.
* A 192.0.2.1
* AAAA 2001:db8::1
nx.invalid. TXT "no wildcard below this name: NXDOMAIN"
EOF
cat >"$work/knot/knot.conf" <<EOF
server:
    rundir: "$work/knot"
    listen: 127.0.0.1@$KNOT_PORT
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "$work/knot"
log:
  - target: stderr
    any: info
template:
  - id: default
    storage: "$work/knot"
    zonefile-sync: -1
    journal-content: none
zone:
  - domain: .
    file: "$work/knot/root.zone"
EOF
"$KNOTD" -c "$work/knot/knot.conf" </dev/null >"$work/knot/knotd.log" 2>&1 &
pids+=($!)
knot_answers() {
    local got
    got=$(timeout 5 kdig @127.0.0.1 -p "$KNOT_PORT" +short +time=1 +retry=0 probe.soak.test A \
        2>/dev/null || true)
    [[ "$got" == 192.0.2.1 ]]
}
wait_for 10 knot_answers ||
    die "knotd did not answer on 127.0.0.1:$KNOT_PORT: $(tail -5 "$work/knot/knotd.log")"

# -- the blocklist: 1,000,000 names, two versions that differ in 100,000 -------------------------
# Version a and b share n<i>.core<i%97>.test (900,000 names, always blocked); a adds
# a<j>.flip<j%89>.test and b adds b<j>.flip<j%89>.test (100,000 each): after each refresh the
# other set is blocked. Refresh k serves version a when k is odd.
mkdir -p "$work/www" "$work/versions"
for v in a b; do
    awk -v v="$v" 'BEGIN {
        for (i = 0; i < 900000; i++) printf "n%d.core%d.test\n", i, i % 97
        for (j = 0; j < 100000; j++) printf "%s%d.flip%d.test\n", v, j, j % 89
    }' >"$work/versions/$v.txt"
done
cp "$work/versions/b.txt" "$work/www/soak.txt"
(cd "$work/www" &&
    exec "$PY" -m http.server --bind 127.0.0.1 "$LIST_PORT" </dev/null >"$work/http.log" 2>&1) &
pids+=($!)
list_served() { curl -sf -o /dev/null --max-time 2 -r 0-10 "http://127.0.0.1:$LIST_PORT/soak.txt"; }
wait_for 10 list_served || die "the list server did not start: $(tail -5 "$work/http.log")"

# -- the DoT/DoH test certificate -------------------------------------------------------------
mkdir -p "$work/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" >/dev/null 2>&1 ||
    die "openssl could not make the test certificate"

# -- the daemon's config: every address is loopback -----------------------------------------
config=$work/dnsmoat.toml
user_line=""
[[ "$(id -u)" -eq 0 ]] && user_line='user = ""'
cat >"$config" <<EOF
[server]
listen = ["127.0.0.1:$DNS_PORT"]
dot = ["127.0.0.1:$DOT_PORT"]
doh = ["127.0.0.1:$DOH_PORT"]
tls_certificate = "$work/tls/cert.pem"
tls_private_key = "$work/tls/key.pem"
control_socket = "$work/control.sock"
$user_line

[upstream]
servers = ["127.0.0.1:$KNOT_PORT"]

[[blocklists]]
name = "soak"
url = "http://127.0.0.1:$LIST_PORT/soak.txt"
format = "domains"

[lists]
state_dir = "$work/lists"

[cache]
size = "4MiB"

[querylog]
path = "$work/querylog.db"

[api]
listen = ["127.0.0.1:$API_PORT"]

[log]
level = "info"
EOF
# Safety: no address but 127.0.0.1 in the file (no public upstream, list URL or listener).
if grep -oE '[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+|\[[0-9a-fA-F:.]*\]|https?://[^/:"]+' "$config" |
    grep -vxE '127\.0\.0\.1|http://127\.0\.0\.1' >/dev/null; then
    die "the generated config names an address that is not 127.0.0.1: $config"
fi
# A password (never used: it makes the API insist on the token) and the token the reads send.
"$PY" -c 'import secrets; print(secrets.token_hex(16))' |
    timeout 60 "$BINARY" password-hash --config "$config" >/dev/null 2>&1 ||
    die "dnsmoat password-hash failed"
TOKEN=$(timeout 60 "$BINARY" api-token --config "$config" 2>/dev/null |
    awk '$1 == "token:" {print $2}')
[[ -n "$TOKEN" ]] || die "dnsmoat api-token printed no token"
timeout 60 "$BINARY" check-config "$config" >/dev/null ||
    die "the generated config does not load: $config"

# -- the queries (deterministic): 100,000 lines, looped by dnsperf -------------------------------
# 35 % popular (the first 1000 of dns-gen: cache hits), 35 % long tail (any of the ~169,000 names:
# misses, the upstream's TTL is 10 s), 20 % blocked core names, 5 % flip names (blocked in every
# other version), 5 % NXDOMAIN (under nx.invalid); types 70 % A, 25 % AAAA, 5 % TXT.
awk -F, -v pop=1000 'BEGIN { srand(20261201) }
    { name = tolower($NF); if (name == "" || name in seen) next; seen[name] = 1; pool[n++] = name }
    END {
        for (k = 0; k < 100000; k++) {
            r = rand()
            if (r < 0.35) q = pool[int(rand() * pop)]
            else if (r < 0.70) q = pool[int(rand() * n)]
            else if (r < 0.90) { i = int(rand() * 900000); q = "n" i ".core" (i % 97) ".test" }
            else if (r < 0.95) {
                j = int(rand() * 100000); q = (rand() < 0.5 ? "a" : "b") j ".flip" (j % 89) ".test"
            } else { q = pool[int(rand() * n)]; gsub(/\./, "-", q); q = q ".nx.invalid" }
            t = rand()
            print q, (t < 0.70 ? "A" : t < 0.95 ? "AAAA" : "TXT")
        }
    }' "$QUERIES_DIR/dns-gen-top-50k-2025.csv" "$QUERIES_DIR/faf-dns-bench-top-65535.csv" \
    "$QUERIES_DIR/funkhunter-top-100k-2015.csv" >"$work/queries.txt"

# -- start the daemon, wait for the 1,000,000-name list ---------------------------------------
log "dnsmoat $("$BINARY" --version | awk '{print $2}') ($BINARY), $MINUTES min, work dir $work"
started=$(date +%s.%N)
"$BINARY" run --config "$config" </dev/null >"$work/dnsmoat.stdout" 2>"$work/dnsmoat.stderr" &
daemon_pid=$!
pids+=("$daemon_pid")
daemon_log() { tail -20 "$work/dnsmoat.stderr"; }
list_loaded() {
    kill -0 "$daemon_pid" 2>/dev/null || die "dnsmoat exited at start: $(daemon_log)"
    grep -q "lists: now serving the new downloads" "$work/dnsmoat.stderr"
}
wait_for 120 list_loaded || die "the list was not loaded within 120 s: $(daemon_log)"
[[ "$(ask n12.core12.test A)" == 0.0.0.0 ]] || die "n12.core12.test is not blocked: $(daemon_log)"
[[ "$(ask www.example.com A)" == 192.0.2.1 ]] || die "www.example.com is not forwarded to knotd"
ready_s=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
unauthorized=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' \
    "http://127.0.0.1:$API_PORT/api/stats/summary" || true)
log "ready in $ready_s s (1,000,000 names loaded); load for $DURATION s"

# -- the load ----------------------------------------------------------------------------------
stop_file=$work/loads.done
: >"$work/udp.out" && : >"$work/tcp.out" && : >"$work/dot.out" && : >"$work/doh.out"
timeout -k 5 $((DURATION + 120)) "$PY" "$repo/scripts/soak/sample.py" --pid "$daemon_pid" \
    --out "$work/samples.csv" --totals "$work/totals.json" --stop-file "$stop_file" \
    --max-seconds $((DURATION + 60)) --interval "$SAMPLE_EVERY" \
    --feed "udp=$work/udp.out" --feed "tcp=$work/tcp.out" --feed "dot=$work/dot.out" \
    --feed "doh=$work/doh.out" --probe "127.0.0.1:$KNOT_PORT" &
sampler_pid=$!
pids+=("$sampler_pid")
t0=$(date +%s)

# dnsperf, bounded by its own -l and by timeout; -v: one line per answer (rcode and latency).
# Run as `perf OUT TIMEOUT ARGS... &`: the background subshell becomes timeout (exec), whose PID
# $! is. A query unanswered after TIMEOUT seconds is a failure: 3 s (the daemon's SERVFAIL for
# a silent upstream comes after 2 s), but 10 s for DoH, as dnsperf 2.10's DoH client matches no
# answer on its connection again once one query has timed out (docs/reliability.md).
perf() {
    local out=$1 wait=$2
    shift 2
    exec timeout -k 5 $((DURATION + 30)) stdbuf -oL dnsperf -s 127.0.0.1 \
        -d "$work/queries.txt" -l "$DURATION" -t "$wait" -v "$@" </dev/null >"$out" 2>&1
}
perf "$work/udp.out" 3 -p "$DNS_PORT" -Q "$QPS" -c 4 -e &
perf_pids=($!)
perf "$work/tcp.out" 3 -m tcp -p "$DNS_PORT" -Q "$SIDE_QPS" -c 2 \
    -O "num-queries-per-conn=$PER_CONN" &
perf_pids+=($!)
perf "$work/dot.out" 3 -m dot -p "$DOT_PORT" -Q "$SIDE_QPS" -c 2 \
    -O "num-queries-per-conn=$PER_CONN" &
perf_pids+=($!)
perf "$work/doh.out" 10 -m doh -p "$DOH_PORT" -Q $((SIDE_QPS / 2)) -c 1 \
    -O "doh-uri=https://127.0.0.1:$DOH_PORT/dns-query" &
perf_pids+=($!)
pids+=("${perf_pids[@]}")

# API reads with the token every API_EVERY s, until the load ends: t,path,status,seconds in
# api.csv; from /metrics, the daemon's own gauges in metrics.csv (its last text in metrics.txt).
METRICS="dnsmoat_cache_entries dnsmoat_cache_bytes dnsmoat_tcp_connections \
dnsmoat_queries_in_flight_peak dnsmoat_querylog_queue_depth_peak dnsmoat_querylog_dropped_total \
dnsmoat_querylog_lost_total"
api_loop() {
    local end=$((t0 + DURATION)) path line body t
    echo "t_s,path,status,seconds" >"$work/api.csv"
    echo "t_s,${METRICS// /,}" >"$work/metrics.csv"
    : >"$work/metrics.txt"
    while (($(date +%s) < end)); do
        for path in /api/stats/summary "/api/querylog?limit=100" \
            "/api/querylog?text=flip&limit=50" /api/lists /api/upstreams /metrics; do
            body=/dev/null
            [[ "$path" == /metrics ]] && body=$work/metrics.txt
            line=$(curl -s -o "$body" --max-time 5 -H "Authorization: Bearer $TOKEN" \
                -w '%{http_code},%{time_total}' "http://127.0.0.1:$API_PORT$path" || true)
            t=$(($(date +%s) - t0))
            echo "$t,$path,${line:-000,5}" >>"$work/api.csv"
        done
        awk -v t="$t" -v names="$METRICS" 'BEGIN { n = split(names, m, " ") }
            { v[$1] = $2 }
            END { printf "%s", t; for (i = 1; i <= n; i++) printf ",%s", v[m[i]]; print "" }' \
            "$work/metrics.txt" >>"$work/metrics.csv" 2>/dev/null || true
        sleep "$API_EVERY"
    done
}
api_loop &
pids+=($!)

# The list changes every REFRESH s and the daemon is told at once (SIGUSR1): epoch,version.
refresh_loop() {
    local k=0 next=$((t0 + REFRESH / 2)) end=$((t0 + DURATION - 15)) v
    echo "epoch,version" >"$work/refreshes.csv"
    while ((next <= end)); do
        while (($(date +%s) < next)); do sleep 1; done
        k=$((k + 1))
        v=$([[ $((k % 2)) -eq 1 ]] && echo a || echo b)
        cp "$work/versions/$v.txt" "$work/www/.soak.tmp"
        mv -f "$work/www/.soak.tmp" "$work/www/soak.txt"
        kill -USR1 "$daemon_pid" 2>/dev/null || return 0
        echo "$(date +%s.%N),$v" >>"$work/refreshes.csv"
        next=$((next + REFRESH))
    done
}
refresh_loop &
refresh_pid=$!
pids+=("$refresh_pid")

# Progress every minute, until the loads are done (each bounded by timeout above).
next_progress=$((t0 + 60))
while :; do
    running=0
    for p in "${perf_pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
    ((running)) || break
    if (($(date +%s) >= next_progress)); then
        log "$(((next_progress - t0) / 60))/$MINUTES min: $(tail -1 "$work/samples.csv" |
            awk -F, '{printf "RSS %d KiB, HWM %d KiB, %d fds, %d threads", $3, $4, $7, $8}')"
        next_progress=$((next_progress + 60))
    fi
    sleep 1
done
for p in "${perf_pids[@]}"; do wait "$p" || true; done
touch "$stop_file"
wait "$sampler_pid" || true
wait "$refresh_pid" 2>/dev/null || true
log "load done after $(($(date +%s) - t0)) s"

# -- checks at the end: the daemon is alive, the last list version is in force, it stops cleanly --
checks=$work/checks.txt
: >"$checks"
check() {  # check PASS|FAIL TEXT...
    local verdict=$1
    shift
    printf '%s\t%s\n' "$verdict" "$*" >>"$checks"
}
if [[ "$unauthorized" == 401 ]]; then
    check PASS "the API refuses a read without the token (401)"
else
    check FAIL "the API answered $unauthorized, not 401, to a read without the token"
fi
refreshes=$(($(wc -l <"$work/refreshes.csv") - 1))
last=$(tail -1 "$work/refreshes.csv" | cut -d, -f2)
[[ "$last" == version ]] && last=b
other=$([[ "$last" == a ]] && echo b || echo a)
if kill -0 "$daemon_pid" 2>/dev/null; then
    check PASS "dnsmoat ran through the whole load"
    applied=$(grep -c "lists: now serving the new downloads" "$work/dnsmoat.stderr" || true)
    if ((applied == refreshes + 1)); then
        check PASS "every list refresh was applied ($refreshes refreshes, 1,000,000 names each)"
    else
        check FAIL "list refreshes applied: $((applied - 1)) of $refreshes"
    fi
    flip=99999.flip$((99999 % 89)).test
    got=$(ask n899999.core$((899999 % 97)).test A)/$(ask "$last$flip" A)/$(ask "$other$flip" A)
    if [[ "$got" == 0.0.0.0/0.0.0.0/192.0.2.1 ]]; then
        check PASS "the last list version ($last) answers: core and $last names blocked," \
            "$other names forwarded"
    else
        check FAIL "answers after the last refresh ($last): core/$last/$other gave $got," \
            "expected 0.0.0.0/0.0.0.0/192.0.2.1"
    fi
    rss_end=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$daemon_pid/status" || true)
    kill -TERM "$daemon_pid"
    stopped_in=""
    for ((i = 0; i < 150; i++)); do
        kill -0 "$daemon_pid" 2>/dev/null || { stopped_in=$((i / 10)); break; }
        sleep 0.1
    done
    [[ -n "$stopped_in" ]] || kill -KILL "$daemon_pid" 2>/dev/null || true
    status=0
    wait "$daemon_pid" || status=$?
    if [[ -n "$stopped_in" && "$status" -eq 0 ]]; then
        check PASS "SIGTERM: exit status 0 within ${stopped_in} s (VmRSS at the end ${rss_end} KiB)"
    else
        check FAIL "SIGTERM: exit status $status, stopped within 15 s: ${stopped_in:-no}"
    fi
else
    status=0
    wait "$daemon_pid" || status=$?
    check FAIL "dnsmoat died during the load (status $status):" \
        "$(daemon_log | tail -3 | tr '\n' ' ')"
fi
# Errors in the daemon's log fail the run; warnings are listed (running as root is expected).
error_re='^[0-9-]+ [0-9:.]+ (error|critical):'
errors=$(grep -cE "$error_re" "$work/dnsmoat.stderr" || true)
warnings=$(grep -E '^[0-9-]+ [0-9:.]+ warning:' "$work/dnsmoat.stderr" |
    grep -cv 'running as root' || true)
if ((errors == 0)); then
    check PASS "no error in dnsmoat's log ($warnings warnings besides running as root)"
else
    check FAIL "$errors errors in dnsmoat's log, e.g." \
        "$(grep -m1 -E "$error_re" "$work/dnsmoat.stderr")"
fi

# -- report --------------------------------------------------------------------------------------
mkdir -p "$OUT"
rm -f "$OUT/summary.txt" "$OUT/soak.png"
cp "$work/samples.csv" "$work/totals.json" "$work/api.csv" "$work/refreshes.csv" \
    "$work/metrics.csv" "$work/metrics.txt" "$work/dnsmoat.stderr" "$OUT/"
verdict=0
"$PY" "$repo/scripts/soak/report.py" --samples "$work/samples.csv" --totals "$work/totals.json" \
    --api "$work/api.csv" --refreshes "$work/refreshes.csv" --checks "$checks" \
    --metrics "$work/metrics.txt" --minutes "$MINUTES" --ready "$ready_s" --qps "$QPS" \
    --png "$OUT/soak.png" --summary "$OUT/summary.txt" || verdict=$?
cat "$OUT/summary.txt" 2>/dev/null || echo "soak.sh: the report failed (status $verdict)" >&2
log "results in $OUT (summary.txt, samples.csv, soak.png, dnsmoat.stderr)"
exit $((verdict == 0 ? 0 : 1))
