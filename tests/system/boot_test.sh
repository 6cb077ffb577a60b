#!/bin/bash
# Boot test of the dnsmoat Debian package: systemd for real, in a container.
#
# Usage: tests/system/boot_test.sh DEB [OLD_DEB]        (as root, on a Debian 12 amd64 host)
#
#   DEB      the dnsmoat .deb to test (cd build/release && cpack -G DEB)
#   OLD_DEB  an older dnsmoat .deb: installed first, then DEB is installed over it and the
#            config edit and the state in /var/lib/dnsmoat must survive the upgrade. One from
#            the same build: cd build/release && cpack -G DEB -B /tmp/old \
#              -D CPACK_PACKAGE_VERSION=0.0.1 -D CPACK_DEBIAN_FILE_NAME=dnsmoat_0.0.1_amd64.deb
#
# What it does: debootstraps a minimal Debian 12 tree with systemd, kdig and everything the
# package Depends on (cached in build/boot-test/rootfs, rebuilt only when that package list
# changes), boots it with `systemd-nspawn --boot --private-network` (loopback only, so the
# packaged upstream resolvers are unreachable) on a throw-away overlay, and lets a oneshot unit
# inside run this same script with --inside. That installs the package, checks the service
# (user, capabilities, answers over loopback with kdig, reload, restart, journal, STATUS=,
# watchdog, upgrade) and powers the container off. Results and the dnsmoat journal come back
# through build/boot-test/run/out; one PASS/FAIL line per check is printed. Exit 0 only when
# every check passed, 1 when one failed, 2 on a usage or setup error.
#
# Environment: BOOT_TEST_DIR (default: build/boot-test in the checkout), BOOT_TEST_TIMEOUT
# (seconds for the whole boot, default 420), BOOT_TEST_MIRROR (default http://deb.debian.org/debian).
#
# Internal: `boot_test.sh --inside DIR` is what runs in the container; never run it on a host.
set -uo pipefail

readonly SUITE=bookworm
readonly BASE_PACKAGES="systemd systemd-sysv dbus knot-dnsutils adduser"
readonly INSIDE_DIR=/boot-test            # the host's run directory, bound into the container
readonly DRIVER_UNIT=dnsmoat-boot-test.service
readonly DRIVER_TIMEOUT=300               # seconds for all checks inside the container

# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------

say() { printf '%s\n' "$*"; }
die() { printf 'boot_test: %s\n' "$*" >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

usage() {
    sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
}

require_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and systemd-nspawn need it)"
}

# systemd-nspawn comes with systemd-container; debootstrap builds the tree.
ensure_host_tools() {
    local missing=()
    command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v flock >/dev/null || missing+=(util-linux)
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
        || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \
                --no-install-recommends "${missing[@]}"; } \
        || die "apt-get install ${missing[*]} failed"
}

# The package must be one this host can boot: amd64 here (or arch all).
check_deb() {
    local deb=$1 arch host_arch
    [ -f "$deb" ] || die "no such file: $deb"
    dpkg-deb -f "$deb" Package >/dev/null 2>&1 || die "not a .deb: $deb"
    arch=$(dpkg-deb -f "$deb" Architecture)
    host_arch=$(dpkg --print-architecture)
    [ "$arch" = "$host_arch" ] || [ "$arch" = all ] \
        || die "$deb is for $arch; this host boots $host_arch only"
}

# "libc6 (>= 2.34), libfmt9 | libfmt10, python3:any" -> "libc6 libfmt9 python3", one a line.
deb_dependency_names() {
    local deb=$1
    { dpkg-deb -f "$deb" Pre-Depends; dpkg-deb -f "$deb" Depends; } | tr ',' '\n' \
        | sed -e 's/|.*//' -e 's/([^)]*)//g' -e 's/\[[^]]*\]//g' -e 's/:.*//' -e 's/[[:space:]]//g' \
        | grep -v '^$'
}

# Names (one a line on stdin) without an installable version: virtual packages.
virtual_packages() {
    # shellcheck disable=SC2046  # one word per package name
    apt-cache policy $(cat) 2>/dev/null | awk '
        /^[^ ].*:$/ { name = substr($0, 1, length($0) - 1) }
        /^  Candidate:/ && $2 == "(none)" { print name }'
}

# The package that provides the virtual package NAME (the first one apt lists), or NAME.
provider_of() {
    local provider
    provider=$(apt-cache showpkg "$1" 2>/dev/null \
        | awk '/^Reverse Provides:/ { found = 1; next } found && NF { print $1; exit }')
    echo "${provider:-$1}"
}

# Everything the tree needs, sorted and comma-separated (the form --include wants).
# debootstrap installs real packages only: a virtual one (libspdlog1.10-fmt9, which
# dpkg-shlibdeps writes for libspdlog.so.1.10) becomes the package that provides it, found in
# the host's apt lists (the host is Debian 12 on the same mirror).
wanted_packages() {
    local deb names virtual name
    names=$(for deb in "$@"; do deb_dependency_names "$deb"; done | sort -u)
    virtual=$(printf '%s\n' "$names" | virtual_packages)
    {
        printf '%s\n' $BASE_PACKAGES
        printf '%s\n' "$names" | grep -vxF -e "${virtual:-}"
        for name in $virtual; do provider_of "$name"; done
    } | grep -v '^$' | sort -u | paste -sd, -
}

# Debootstrap a fresh tree into TREE.new and move it in place; the stamp names its packages.
build_tree() {
    local tree=$1 packages=$2 mirror=$3 started=$SECONDS
    say "building the Debian $SUITE tree in $tree (packages: $packages)"
    rm -rf "$tree.new" "$tree.stamp"
    if ! nice -n 10 debootstrap --variant=minbase --include="$packages" "$SUITE" "$tree.new" \
            "$mirror" >"$tree.debootstrap.log" 2>&1; then
        tail -n 30 "$tree.debootstrap.log" >&2
        die "debootstrap failed (log: $tree.debootstrap.log)"
    fi
    prepare_tree "$tree.new"
    rm -rf "$tree"
    mv "$tree.new" "$tree"
    printf '%s %s %s\n' "$SUITE" "$mirror" "$packages" >"$tree.stamp"
    say "tree built in $((SECONDS - started)) s"
}

# Make the tree boot quietly without a network: a hostname, an empty apt cache, and no units
# that would only wait for a network or a terminal.
prepare_tree() {
    local tree=$1 unit
    echo dnsmoat-boot-test >"$tree/etc/hostname"
    : >"$tree/etc/machine-id"
    for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
            console-getty.service getty@.service systemd-networkd-wait-online.service; do
        ln -sf /dev/null "$tree/etc/systemd/system/$unit"
    done
    chroot "$tree" apt-get clean >/dev/null 2>&1 || true
}

# Reuse the cached tree when it was built for the same suite, mirror and package list.
ensure_tree() {
    local tree=$1 packages=$2 mirror=$3
    if [ -f "$tree.stamp" ] && [ -x "$tree/lib/systemd/systemd" ] \
            && [ "$(cat "$tree.stamp")" = "$SUITE $mirror $packages" ]; then
        say "reusing the cached tree $tree"
        return 0
    fi
    build_tree "$tree" "$packages" "$mirror"
}

# The oneshot unit that runs the checks after boot and then powers the container off, whatever
# happened. Written on every run (cheap) so the cached tree never holds a stale copy.
install_driver_unit() {
    local tree=$1
    cat >"$tree/etc/systemd/system/$DRIVER_UNIT" <<EOF
[Unit]
Description=dnsmoat boot test (tests/system/boot_test.sh --inside)
ConditionPathExists=$INSIDE_DIR/boot_test.sh
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/bash $INSIDE_DIR/boot_test.sh --inside $INSIDE_DIR
# The logs the host prints on failure; runs even when the checks time out.
ExecStopPost=/bin/sh -c 'journalctl -u dnsmoat --no-pager >$INSIDE_DIR/out/dnsmoat-journal.txt 2>&1; \\
    journalctl -b --no-pager >$INSIDE_DIR/out/journal.txt 2>&1; \\
    systemctl status dnsmoat --no-pager >$INSIDE_DIR/out/status.txt 2>&1; true'
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=$DRIVER_TIMEOUT

[Install]
WantedBy=multi-user.target
EOF
    mkdir -p "$tree/etc/systemd/system/multi-user.target.wants"
    ln -sf "../$DRIVER_UNIT" "$tree/etc/systemd/system/multi-user.target.wants/$DRIVER_UNIT"
}

# The directory bound to /boot-test: this script, the packages, and out/ for the results.
prepare_run_dir() {
    local run=$1 deb=$2 old=${3:-}
    rm -rf "$run"
    mkdir -p "$run/out"
    cp "$0" "$run/boot_test.sh"
    cp "$deb" "$run/dnsmoat.deb"
    if [ -n "$old" ]; then cp "$old" "$run/dnsmoat-old.deb"; fi
}

# Boot the tree on a tmpfs overlay (the cached tree stays clean) with loopback only; systemd
# inside powers off when the driver unit ends. `timeout` bounds the whole boot. On a host not
# run by systemd (a VM or CI container) nspawn cannot ask the host's systemd for a scope unit
# ("Failed to open system bus"), so it stays in the cgroup it was started in (--keep-unit).
boot_container() {
    local tree=$1 run=$2 limit=$3 scope=()
    [ -d /run/systemd/system ] || scope=(--keep-unit)
    timeout --kill-after=20 "$limit" systemd-nspawn --quiet --boot --private-network \
        --register=no "${scope[@]}" --volatile=overlay --link-journal=no --console=read-only \
        --machine=dnsmoat-boot-test -D "$tree" --bind="$run:$INSIDE_DIR" \
        >"$run/out/console.log" 2>&1 </dev/null
}

# Print the results the container left; 0 when every check passed and the run completed.
report_results() {
    local run=$1 nspawn_rc=$2 results=$1/out/results.txt failed=0
    if [ -s "$results" ]; then grep -E '^(PASS|FAIL|INFO)' "$results"; fi
    grep -q '^FAIL' "$results" 2>/dev/null && failed=1
    if ! grep -q '^DONE' "$results" 2>/dev/null; then
        say "FAIL the test inside the container ran to the end (systemd-nspawn exit $nspawn_rc)"
        failed=1
    fi
    if [ "$failed" -ne 0 ]; then
        say "---- container console (last 40 lines of $run/out/console.log) ----"
        tail -n 40 "$run/out/console.log" | sed 's/\x1b\[[0-9;]*m//g'
        if [ -s "$run/out/dnsmoat-journal.txt" ]; then
            say "---- journalctl -u dnsmoat in the container (last 200 lines of $run/out/dnsmoat-journal.txt) ----"
            tail -n 200 "$run/out/dnsmoat-journal.txt"
        fi
    fi
    return "$failed"
}

host_main() {
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    case $1 in -h|--help) usage ;; esac
    local deb old="" checkout base tree run packages mirror limit started=$SECONDS rc debs
    require_root
    deb=$(realpath "$1")
    check_deb "$deb"
    debs=("$deb")
    if [ $# -eq 2 ]; then
        old=$(realpath "$2")
        check_deb "$old"
        debs+=("$old")
    fi
    ensure_host_tools
    checkout=$(cd "$(dirname "$0")/../.." && pwd)
    base=${BOOT_TEST_DIR:-$checkout/build/boot-test}
    mirror=${BOOT_TEST_MIRROR:-http://deb.debian.org/debian}
    limit=${BOOT_TEST_TIMEOUT:-$((DRIVER_TIMEOUT + 120))}
    tree=$base/rootfs
    run=$base/run
    mkdir -p "$base"
    exec 9>"$base/.lock"
    flock -n 9 || die "another boot test holds $base/.lock"
    packages=$(wanted_packages "${debs[@]}")
    ensure_tree "$tree" "$packages" "$mirror"
    install_driver_unit "$tree"
    prepare_run_dir "$run" "$deb" "$old"
    say "booting the container (at most $limit s)"
    local boot_started=$SECONDS
    boot_container "$tree" "$run" "$limit"
    rc=$?
    say "container ran $((SECONDS - boot_started)) s"
    [ "$rc" -eq 124 ] && say "FAIL the container powered off within $limit s (killed by timeout)"
    report_results "$run" "$rc"
    rc=$?
    if [ "$rc" -eq 0 ]; then say "boot test: all checks passed ($((SECONDS - started)) s)"
    else say "boot test: FAILED ($((SECONDS - started)) s)"; fi
    return "$rc"
}

# ---------------------------------------------------------------------------------------------
# Inside the container (run by the driver unit after boot)
# ---------------------------------------------------------------------------------------------

OUT=/dev/null       # the results directory, set by inside_main
PORT=53             # the port dnsmoat answers on, from the installed config
CONF=/etc/dnsmoat/dnsmoat.toml
BLOCKLIST=/etc/dnsmoat/blocklist.txt
ADDED_NAME=moat-boot-test.example.org
STARTED_AT=0        # $SECONDS when dnsmoat was last seen started (install, restart, upgrade)

record() { printf '%s\n' "$*" | tee -a "$OUT/results.txt"; }
pass() { record "PASS $1"; }
fail() { record "FAIL $1${2:+ -- $2}"; }
info() { record "INFO $*"; }
# check DESCRIPTION COMMAND...: PASS when the command succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

# Poll COMMAND... once a second for at most SECONDS; 0 as soon as it succeeds.
wait_for() {
    local limit=$1 i; shift
    for ((i = 0; i < limit; i++)); do
        "$@" && return 0
        sleep 1
    done
    "$@"
}

service_active() { systemctl is-active --quiet dnsmoat; }
restart_count() { systemctl show -p NRestarts --value dnsmoat 2>/dev/null || echo 0; }

# Wait at most SECONDS for dnsmoat.service to be active; give up early when systemd restarts
# it three times meanwhile (a start that fails at once loops with RestartSec=2s).
wait_active() {
    local limit=$1 first i
    first=$(restart_count)
    for ((i = 0; i < limit; i++)); do
        service_active && return 0
        [ "$(restart_count)" -ge $((${first:-0} + 3)) ] && return 1
        sleep 1
    done
    service_active
}
main_pid() { systemctl show -p MainPID --value dnsmoat; }
dnsmoat_journal() { journalctl -u dnsmoat --no-pager -o cat 2>/dev/null; }
journal_count() { dnsmoat_journal | grep -c -F -- "$1"; }

# The value of KEY in [SECTION] of the installed config (first line only, quotes removed).
config_value() {
    local section=$1 key=$2
    awk -v s="[$section]" -v k="$key" '
        /^[[:space:]]*\[/ { gsub(/[[:space:]]/, ""); cur = $0; next }
        cur == s && $0 ~ "^[[:space:]]*" k "[[:space:]]*=" {
            sub(/^[^=]*=[[:space:]]*/, ""); sub(/[[:space:]]*#.*$/, ""); gsub(/"/, ""); print; exit
        }' "$CONF"
}

# The port of the first IPv4 (loopback or wildcard) address in [server] listen; 53 if none.
listen_port() {
    local listen port
    listen=$(config_value server listen)
    port=$(printf '%s\n' "$listen" | grep -oE '(127\.0\.0\.1|0\.0\.0\.0):[0-9]+' | head -n1)
    printf '%s\n' "${port##*:}" | grep -E '^[0-9]+$' || echo 53
}

# A name the packaged blocklist blocks: its first plain entry (AdBlock, hosts or domain form).
blocklisted_name() {
    grep -vE '^[[:space:]]*([!#]|$|@@|/)' "$BLOCKLIST" | awk '{ print $NF }' \
        | sed -e 's/^||//' -e 's/\^.*$//' | grep -E '^[A-Za-z0-9.-]+\.[A-Za-z]+$' | head -n1
}

# kdig over loopback; prints "RCODE ADDRESS..." (the A records of the answer).
dns_answer() {
    local name=$1 reply rcode addrs
    reply=$(timeout 15 kdig -p "$PORT" @127.0.0.1 +timeout=6 +retry=0 "$name" A 2>&1)
    rcode=$(printf '%s\n' "$reply" | sed -n 's/.*status: \([A-Z]*\).*/\1/p' | head -n1)
    addrs=$(printf '%s\n' "$reply" | awk '$1 !~ /^;/ && $3 == "IN" && $4 == "A" { print $5 }' \
        | paste -sd' ' -)
    printf '%s %s\n' "${rcode:-NOANSWER}" "$addrs"
}

# The answer a blocked name gets in the configured [blocking] mode (docs/configuration.md).
expected_blocked_answer() {
    local mode custom
    mode=$(config_value blocking mode)
    case ${mode:-null} in
        null) echo "NOERROR 0.0.0.0" ;;
        nxdomain) echo "NXDOMAIN " ;;
        refused) echo "REFUSED " ;;
        custom) custom=$(config_value blocking custom_ipv4); echo "NOERROR ${custom:-0.0.0.0}" ;;
        *) echo "UNKNOWN-MODE-$mode" ;;
    esac
}

answer_is() { [ "$(dns_answer "$1")" = "$2" ]; }
canary_nxdomain() { answer_is use-application-dns.net "NXDOMAIN "; }

# dpkg -i, never asking (a changed conffile keeps the admin's copy, as unattended upgrades do).
install_deb() {
    local deb=$1 log=$2
    DEBIAN_FRONTEND=noninteractive timeout 120 dpkg -i --force-confdef --force-confold "$deb" \
        </dev/null >"$log" 2>&1
}

# --private-network: the packaged config's public upstreams must be unreachable.
step_network() {
    local links
    links=$(ls /sys/class/net | paste -sd' ' -)
    if [ "$links" = lo ]; then pass "the container's only network interface is loopback"
    else fail "the container's only network interface is loopback" "interfaces: $links"; fi
}

step_install() {
    local deb=$1 version
    version=$(dpkg-deb -f "$deb" Version)
    # An admin's drop-in, as `systemctl edit dnsmoat` makes: a short watchdog for step_watchdog.
    mkdir -p /etc/systemd/system/dnsmoat.service.d
    printf '[Service]\nWatchdogSec=3s\n' >/etc/systemd/system/dnsmoat.service.d/boot-test.conf
    check "dpkg -i $(basename "$deb") (version $version) succeeds" install_deb "$deb" "$OUT/dpkg-install.log"
    check "postinst created the user dnsmoat" id -u dnsmoat
    check "dnsmoat.service is enabled" systemctl is-enabled --quiet dnsmoat
    check "dnsmoat.service is active (waited at most 60 s)" wait_active 60
    service_active || info "dnsmoat.service: $(systemctl show dnsmoat --no-pager \
        -p ActiveState -p SubState -p Result -p ExecMainStatus -p NRestarts | paste -sd' ' -)"
    STARTED_AT=$SECONDS
    PORT=$(listen_port)
    info "packaged config listens on port $PORT; blocking mode $(config_value blocking mode)"
}

# The main process runs as dnsmoat (real, effective, saved and fs uid) with no capabilities.
step_process() {
    local pid uid status ids cap
    pid=$(main_pid)
    uid=$(id -u dnsmoat 2>/dev/null)
    if [ -z "$pid" ] || [ "$pid" = 0 ] || [ ! -r "/proc/$pid/status" ]; then
        fail "main process runs as user dnsmoat" "no main process (MainPID '$pid')"
        fail "main process has no effective capabilities (CapEff 0)" "no main process"
        return
    fi
    status=$(cat "/proc/$pid/status")
    ids=$(printf '%s\n' "$status" | awk '/^Uid:/ { print $2, $3, $4, $5 }')
    if [ -n "$uid" ] && [ "$ids" = "$uid $uid $uid $uid" ]; then
        pass "main process $pid runs as user dnsmoat (uid $uid)"
    else
        fail "main process runs as user dnsmoat" "Uid: $ids, dnsmoat is '$uid'"
    fi
    cap=$(printf '%s\n' "$status" | awk '/^CapEff:/ { print $2 }')
    if [ -n "$cap" ] && [ $((16#$cap)) -eq 0 ]; then
        pass "main process has no effective capabilities (CapEff $cap)"
    else
        fail "main process has no effective capabilities (CapEff 0)" "CapEff $cap"
    fi
    info "main process $(printf '%s\n' "$status" | grep -E '^Cap(Prm|Bnd|Amb):' | paste -sd' ' -)"
}

step_dns() {
    local blocked expected got
    got=$(dns_answer use-application-dns.net)
    if [ "$got" = "NXDOMAIN " ]; then pass "kdig use-application-dns.net: NXDOMAIN (Firefox canary)"
    else fail "kdig use-application-dns.net: NXDOMAIN (Firefox canary)" "got '$got'"; fi
    blocked=$(blocklisted_name)
    expected=$(expected_blocked_answer)
    if [ -z "$blocked" ]; then
        fail "a name on $BLOCKLIST is blocked" "found no plain name in the file"
        return
    fi
    got=$(dns_answer "$blocked")
    if [ "$got" = "$expected" ]; then pass "kdig $blocked (on the blocklist): blocked, '$got'"
    else fail "kdig $blocked (on the blocklist) is blocked" "expected '$expected', got '$got'"; fi
}

step_reload() {
    local expected before got
    expected=$(expected_blocked_answer)
    got=$(dns_answer "$ADDED_NAME")
    if [ "$got" != "$expected" ]; then pass "$ADDED_NAME is not blocked before it is listed ('$got')"
    else fail "$ADDED_NAME is not blocked before it is listed" "already '$got'"; fi
    before=$(journal_count 'reload: applied')
    echo "$ADDED_NAME" >>"$BLOCKLIST"
    check "systemctl reload dnsmoat succeeds" timeout 30 systemctl reload dnsmoat
    check "$ADDED_NAME (added to the blocklist) is blocked after the reload" \
        wait_for 20 answer_is "$ADDED_NAME" "$expected"
    reload_logged() { [ "$(journal_count 'reload: applied')" -gt "$before" ]; }
    check "journal says 'reload: applied'" wait_for 10 reload_logged
    check "dnsmoat.service is active after the reload" service_active
}

step_restart() {
    local old_pid
    old_pid=$(main_pid)
    check "systemctl restart dnsmoat succeeds" timeout 60 systemctl restart dnsmoat
    check "dnsmoat.service is active after the restart" wait_active 30
    STARTED_AT=$SECONDS
    new_pid_differs() { [ "$(main_pid)" != "$old_pid" ] && [ "$(main_pid)" != 0 ]; }
    check "the restart started a new main process (was $old_pid, now $(main_pid))" new_pid_differs
    check "kdig use-application-dns.net answers NXDOMAIN after the restart" wait_for 10 canary_nxdomain
}

step_journal() {
    starting_logged() { dnsmoat_journal | grep -qE 'dnsmoat .* starting with '; }
    check "journalctl -u dnsmoat has the start line ('dnsmoat VERSION starting with ...')" \
        starting_logged
}

# STATUS= from the daemon shows up as the "Status:" line of systemctl status.
step_status() {
    status_line_shown() { systemctl status dnsmoat --no-pager 2>/dev/null | grep -q 'Status: "'; }
    if wait_for 15 status_line_shown; then
        pass "systemctl status dnsmoat shows the daemon's STATUS= line: $(systemctl show -p StatusText --value dnsmoat)"
    else
        fail "systemctl status dnsmoat shows the daemon's STATUS= line" "no 'Status:' line"
    fi
}

# The service must outlive several watchdog periods (step_install's drop-in sets WatchdogSec=3s
# instead of the unit's 30 s), so the daemon really sends WATCHDOG=1.
WATCHDOG_WAIT=12
step_watchdog() {
    local pid since=$((SECONDS - STARTED_AT)) watchdog
    pid=$(main_pid)
    watchdog=$(systemctl show -p WatchdogUSec --value dnsmoat)
    if [ "$watchdog" = 3s ]; then
        pass "the drop-in's WatchdogSec=3s is in force"
    else
        fail "the drop-in's WatchdogSec=3s is in force" "WatchdogUSec=$watchdog"
    fi
    if [ "$since" -ge 0 ] && [ "$since" -lt "$WATCHDOG_WAIT" ]; then
        sleep $((WATCHDOG_WAIT - since))
    fi
    watchdog_quiet() { ! dnsmoat_journal | grep -qi 'watchdog timeout' \
        && ! journalctl --no-pager -o cat 2>/dev/null | grep -q 'dnsmoat.service: Watchdog timeout'; }
    same_process() { service_active && [ "$(main_pid)" = "$pid" ]; }
    if watchdog_quiet && same_process; then
        pass "the service outlives WatchdogSec=3s (same main process $pid after >= $WATCHDOG_WAIT s, no watchdog timeout)"
    else
        fail "the service outlives WatchdogSec=3s" \
            "main process $pid -> $(main_pid), $(journalctl --no-pager -o cat | grep -c 'Watchdog timeout') watchdog timeouts"
    fi
}

# Install DEB over the old version: the admin's config edit and the state must survive.
step_upgrade() {
    local deb=$1 marker version installed had_log=no
    marker="boot-test-marker-$$-$RANDOM"
    version=$(dpkg-deb -f "$deb" Version)
    printf '# %s\n' "$marker" >>"$CONF"
    echo "$marker" >/var/lib/dnsmoat/boot-test-marker
    [ -f /var/lib/dnsmoat/querylog.db ] && had_log=yes
    info "before the upgrade /var/lib/dnsmoat holds: $(ls -A /var/lib/dnsmoat | paste -sd' ' -)"
    check "dpkg -i $(basename "$deb") (upgrade to $version) succeeds" install_deb "$deb" "$OUT/dpkg-upgrade.log"
    installed=$(dpkg-query -W -f '${Version}' dnsmoat 2>/dev/null)
    if [ "$installed" = "$version" ]; then pass "dnsmoat $version is installed after the upgrade"
    else fail "dnsmoat $version is installed after the upgrade" "dpkg says '$installed'"; fi
    check "the edit of $CONF survived the upgrade" grep -qF "$marker" "$CONF"
    check "the marker file in /var/lib/dnsmoat survived the upgrade" \
        grep -qF "$marker" /var/lib/dnsmoat/boot-test-marker
    if [ "$had_log" = yes ]; then
        check "the query log /var/lib/dnsmoat/querylog.db survived the upgrade" \
            test -s /var/lib/dnsmoat/querylog.db
    fi
    check "dnsmoat.service is active after the upgrade" wait_active 30
    STARTED_AT=$SECONDS
    check "kdig use-application-dns.net answers NXDOMAIN after the upgrade" wait_for 10 canary_nxdomain
    if grep -q 'dpkg-new\|dpkg-dist\|Configuration file' "$OUT/dpkg-upgrade.log"; then
        info "dpkg asked about a conffile: $(grep -m1 'Configuration file' "$OUT/dpkg-upgrade.log")"
    fi
}

inside_main() {
    local dir=$1 new old first
    OUT=$dir/out
    new=$dir/dnsmoat.deb
    old=$dir/dnsmoat-old.deb
    : >"$OUT/results.txt"
    first=$new
    [ -f "$old" ] && first=$old
    step_network
    step_install "$first"
    if service_active; then
        step_process
        step_dns
        step_reload
        step_restart
        step_journal
        step_status
        [ -f "$old" ] && step_upgrade "$new"
        step_watchdog
    else
        fail "the remaining checks ran" "dnsmoat.service is not active"
    fi
    record "DONE"
}

if [ "${1:-}" = --inside ]; then
    [ -d /run/systemd/system ] && [ -n "${2:-}" ] || die "--inside is for the container only"
    inside_main "$2"
else
    host_main "$@"
fi
