#!/usr/bin/env bash
# Install what dnsmoat needs from Debian 12 (bookworm) packages. Idempotent: a package already
# installed is not touched, and when nothing is missing apt is not called at all.
#
#   scripts/setup.sh [GROUP...]      default group: build
#
# Groups:
#   build    compiler, CMake, Ninja and the libraries the daemon and its tests link, groff for
#            the man page's rendering test
#   test     extras of scripts/test.sh: clang-format, clang-tidy, shellcheck, the peers of the
#            comparison tests (ldns, libknot) and of the integration tests (knotd, kdig, dig,
#            dnspython, pytest, ip for network namespaces, openssl for a test CA, dnsperf,
#            libfaketime for schedules, prometheus_client to parse /metrics, unbound as a DNS-over-TLS
#            peer, curl and python3-h2 for DoH), and the browser
#            test's Chromium with its npm packages (playwright-core, `npm ci` in tests/browser;
#            Node.js and npm from Debian when the machine has none)
#   fuzz     clang-14 with libFuzzer and the sanitizer runtimes, llvm-symbolizer
#   aarch64  cross g++ for arm64, qemu-user, arm64 GoogleTest (adds the arm64 architecture)
#   package  the Debian packages and their checks: dpkg-shlibdeps (dpkg-dev) and file for CPack's
#            Depends, the cross binutils (strip, objdump) for the arm64 package, systemd-analyze,
#            and for tests/system/boot_test.sh debootstrap and systemd-nspawn (systemd-container)
#   bench    valgrind (cachegrind/callgrind for instruction counts), strace for
#            bench/miss_syscalls.py, sqlite3 for bench/querylog_size_cap.py, dnsdist beside
#            which bench/paced_miss_peer.py and bench/encrypted_peers.py measure
#   soak     scripts/soak.sh: matplotlib for its plot, and its load and peers (dnsperf, knotd,
#            kdig, openssl for the DoT test certificate, curl for the API reads)
#   all      every group above
set -euo pipefail

declare -A GROUPS_PKGS=(
    [build]="cmake ninja-build g++ pkg-config libexpected-dev libasio-dev nlohmann-json3-dev \
libspdlog-dev libcli11-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev \
libre2-dev libcurl4-openssl-dev libsqlite3-dev libargon2-dev libssl-dev libnghttp2-dev ca-certificates python3 git \
groff-base"
    [test]="libldns-dev libknot-dev knot knot-dnsutils dnsutils python3-dnspython python3-pytest python3-pytest-xdist \
clang-format clang-tidy shellcheck iproute2 openssl dnsperf faketime python3-prometheus-client \
chromium python3-yaml unbound curl python3-h2"
    [fuzz]="clang-14 libfuzzer-14-dev libclang-rt-14-dev llvm-14"
    [aarch64]="g++-aarch64-linux-gnu qemu-user libgtest-dev:arm64 libgmock-dev:arm64 \
libre2-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libcurl4-openssl-dev:arm64 \
libsqlite3-dev:arm64 libargon2-dev:arm64 libssl-dev:arm64 libnghttp2-dev:arm64"
    [package]="dpkg-dev file binutils-aarch64-linux-gnu systemd systemd-container debootstrap"
    [bench]="valgrind strace sqlite3 dnsdist"
    [soak]="python3-matplotlib dnsperf knot knot-dnsutils openssl curl"
)
ALL_GROUPS=(build test fuzz aarch64 package bench soak)

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

groups=()
for arg in "$@"; do
    case "$arg" in
        -h | --help) usage; exit 0 ;;
        all) groups+=("${ALL_GROUPS[@]}") ;;
        *)
            if [[ -z "${GROUPS_PKGS[$arg]+set}" ]]; then
                echo "setup.sh: unknown group '$arg' (groups: ${ALL_GROUPS[*]} all)" >&2
                exit 2
            fi
            groups+=("$arg")
            ;;
    esac
done
((${#groups[@]})) || groups=(build)

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup.sh: not root and no sudo" >&2; exit 1; }
    SUDO=(sudo)
fi

NATIVE_ARCH=$(dpkg --print-architecture)
# True when the package is installed: for the named architecture ("libgtest-dev:arm64"), else
# for the native one or "all" (dpkg lists one line per installed architecture).
installed() {
    local name=${1%%:*} arch=${1#*:}
    [[ "$arch" == "$1" ]] && arch=$NATIVE_ARCH
    local status
    status=$(dpkg-query -W -f='${Status} ${Architecture}\n' "$name" 2>/dev/null) || return 1
    grep -qxE "install ok installed ($arch|all)" <<<"$status"
}

need_arm64=0
missing=()
declare -A seen=()
for g in "${groups[@]}"; do
    [[ "$g" == aarch64 ]] && need_arm64=1
    for pkg in ${GROUPS_PKGS[$g]}; do
        [[ -n "${seen[$pkg]+set}" ]] && continue
        seen[$pkg]=1
        installed "$pkg" || missing+=("$pkg")
    done
done

if ((need_arm64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "setup.sh: adding the arm64 architecture (dpkg --add-architecture arm64)"
    "${SUDO[@]}" dpkg --add-architecture arm64
fi

# Node.js and npm for the browser test: a machine that has them (from any source) keeps them;
# Debian's are installed only where there are none (they would conflict with NodeSource's).
wants_test=0
for g in "${groups[@]}"; do [[ "$g" == test ]] && wants_test=1; done
if ((wants_test)) && ! command -v npm >/dev/null; then
    missing+=(nodejs npm)
fi

if ((${#missing[@]} == 0)); then
    echo "setup.sh: all packages present (groups: ${groups[*]})"
else
    echo "setup.sh: installing ${missing[*]}"
    # Servers among the packages (knot, unbound) must not start their packaged service (it
    # would take port 53): a policy-rc.d that refuses, for the time of the install only.
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
        "${SUDO[@]}" chmod 755 "$policy"
        own_policy=1
    fi
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
    ((own_policy)) && "${SUDO[@]}" rm -f "$policy"
    echo "setup.sh: done (groups: ${groups[*]})"
fi

# The browser test's npm packages, exactly as tests/browser/package-lock.json pins them (only
# playwright-core, which downloads no browser: it drives /usr/bin/chromium).
if ((wants_test)); then
    browser_dir="$(dirname "$0")/../tests/browser"
    stamp="$browser_dir/node_modules/.package-lock.json"
    if [[ ! -f "$stamp" || "$browser_dir/package-lock.json" -nt "$stamp" ]]; then
        echo "setup.sh: npm ci in tests/browser"
        (cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
fi
