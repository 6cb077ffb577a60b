#!/usr/bin/env bash
# The one test command of dnsmoat: what CI runs (.ci/run), and what to run before a commit.
#
#   scripts/test.sh [--only STAGE[,STAGE...]] [--jobs N]
#
# Installs what the selected stages need (scripts/setup.sh), then runs, in this order and
# stopping at the first failure:
#   format    clang-format --dry-run -Werror on src include tests bench; shellcheck on the scripts
#             (scripts/, .ci/, tests/system/ and the package's maintainer scripts in cmake/debian/)
#   layering  cmake/check_layering.py: no upward or same-layer #include between modules
#   dev       cmake --workflow --preset dev          (Debug build, unit + integration tests)
#   tidy      clang-tidy on src/**/*.cpp with build/dev/compile_commands.json, warnings as errors
#   tidy_tests the same over tests/**/*.cpp (unit, fuzz and support sources)
#   asan      cmake --workflow --preset asan         (unit + integration tests under ASan + UBSan)
#   tsan      the daemon built with ThreadSanitizer (build/tsan), the integration tests against it:
#             a data race makes the daemon exit 66, which fails the test that stops it
#   fuzz      cmake --workflow --preset fuzz, then scripts/fuzz.sh all $MOAT_FUZZ_SECONDS (10)
#   aarch64   cmake --workflow --preset aarch64      (cross build, unit tests under qemu-aarch64)
#   pi5       the pi5 preset (aarch64 with -mcpu=cortex-a76): the daemon and the hot path's unit
#             tests (wire, filter, cache, engine: the code the flag changes) under qemu-aarch64 as
#             a Cortex-A76, then the stripped arm64 binaries' sizes: 10 MB or more fails
#   release   the release preset's build (-O3 + LTO binary and benchmarks) and benchmark smoke
#             runs; the binary's end-to-end checks are the soak and systemd stages
#   soak      scripts/soak.sh 2: the release binary under a mixed load for 2 minutes (UDP, TCP,
#             DoT, API reads, a 1,000,000-name list refreshed); RSS, FDs and p99 must stay flat
#   package   cpack: dnsmoat_<version>_amd64.deb from build/release, _arm64.deb from build/aarch64
#             (the binary built first if those stages did not run); contents and scripts checked
#   systemd   systemd-analyze security of config/systemd/dnsmoat.service (above 1.5 fails), then
#             tests/system/boot_test.sh (root, systemd-nspawn): the amd64 .deb installed over the
#             same build packaged as version 0.0.1
#   compare   bench/compare (dnsmoat beside libknot and ldns): agreement tests, benchmark smoke run
# With no --only, every stage but dev, tidy_tests and pi5 runs (that is .ci/run): dev's tests are
# the asan stage's, which runs each of them under the sanitizers, so CI does not build and run
# them a second time; pi5 (a third full build) is run by hand when the Pi 5 build changes, and
# tidy_tests (about 5 minutes on two cores: GoogleTest's macros make each test file a large AST)
# by the workflow's own job beside the main one, to keep .ci/run well inside an hour on two
# cores.
# dev is the quick loop before a commit: scripts/test.sh --only format,dev
#
# Options: --only dev,asan selects stages; --jobs N (default: nproc) for builds, ctest, tidy.
# Environment: MOAT_SHARED_DIR (default: ../shared beside the checkout) is exported to every
# build and test; MOAT_REQUIRE_SHARED=1 (set by CI) turns "shared data missing, test skipped"
# into a failure. Logs: build/logs/<stage>.log.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

ALL_STAGES=(format layering dev tidy tidy_tests asan tsan fuzz aarch64 pi5 release soak package systemd compare)
CI_STAGES=(format layering tidy asan tsan fuzz aarch64 release soak package systemd compare)
declare -A STAGE_GROUPS=(
    [format]="test" [layering]="build" [dev]="build test" [tidy]="build test" [tidy_tests]="build test" [asan]="build test" [tsan]="build test"
    [fuzz]="build fuzz" [aarch64]="build aarch64" [pi5]="build aarch64"
    [release]="build test bench" [soak]="build soak" [package]="build aarch64 package" [systemd]="package"
    [compare]="build test bench"
)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

only=""
jobs=$(nproc)
while (($#)); do
    case "$1" in
        --only) only=${2:?--only needs a list of stages}; shift 2 ;;
        --only=*) only=${1#--only=}; shift ;;
        -j | --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
        --jobs=*) jobs=${1#--jobs=}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "test.sh: --jobs wants a positive number" >&2; exit 2; }

stages=()
if [[ -z "$only" ]]; then
    stages=("${CI_STAGES[@]}")
else
    IFS=', ' read -r -a wanted <<<"$only"
    for w in "${wanted[@]}"; do
        [[ -n "${STAGE_GROUPS[$w]+set}" ]] || {
            echo "test.sh: unknown stage '$w' (stages: ${ALL_STAGES[*]})" >&2
            exit 2
        }
    done
    for s in "${ALL_STAGES[@]}"; do # canonical order, whatever order --only gave
        for w in "${wanted[@]}"; do [[ "$w" == "$s" ]] && stages+=("$s") && break; done
    done
fi

# --- environment shared by every stage -----------------------------------------------------------
export MOAT_SHARED_DIR=${MOAT_SHARED_DIR:-$repo/../shared}
[[ -d "$MOAT_SHARED_DIR" ]] && MOAT_SHARED_DIR=$(cd "$MOAT_SHARED_DIR" && pwd)
export MOAT_REQUIRE_SHARED=${MOAT_REQUIRE_SHARED:-}
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs
export CTEST_PARALLEL_LEVEL=$jobs
export CLICOLOR_FORCE=0

if [[ ! -d "$MOAT_SHARED_DIR" ]]; then
    if [[ -n "$MOAT_REQUIRE_SHARED" && "$MOAT_REQUIRE_SHARED" != 0 ]]; then
        echo "test.sh: shared data $MOAT_SHARED_DIR is missing and MOAT_REQUIRE_SHARED is set" >&2
        exit 1
    fi
    echo "test.sh: note: no shared data at $MOAT_SHARED_DIR; tests that need it will skip"
fi

logs=build/logs
mkdir -p "$logs"

# --- stages --------------------------------------------------------------------------------------
source_files() { # tracked and untracked-not-ignored C++ files under the given dirs, NUL-separated
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z -co --exclude-standard -- "$@" |
            while IFS= read -r -d '' f; do [[ -f "$f" ]] && printf '%s\0' "$f"; done
    else
        find "$@" -type f -print0 2>/dev/null
    fi
}

cxx_files() { source_files "$@" | grep -zE '\.(cpp|hpp|h)$' || true; }

stage_format() {
    local n
    n=$(cxx_files src include tests bench | tr -cd '\0' | wc -c)
    echo "clang-format $(clang-format --version | grep -oE '[0-9]+\.[0-9.]+' | head -n1): $n files"
    if ((n)); then
        cxx_files src include tests bench | xargs -0 clang-format --dry-run -Werror
    fi
    local scripts=()
    while IFS= read -r -d '' f; do scripts+=("$f"); done < <(
        source_files scripts .ci tests/system cmake/debian |
            grep -zE '(\.sh|/run|/postinst|/prerm|/postrm)$' || true)
    if ((${#scripts[@]})); then
        echo "shellcheck: ${#scripts[@]} scripts"
        shellcheck -S warning "${scripts[@]}"
    fi
}

stage_layering() { python3 cmake/check_layering.py; }

stage_dev() { cmake --workflow --preset dev; }

tidy_over() { # clang-tidy, warnings as errors, over the .cpp files under the given dirs
    cmake --preset dev >/dev/null # compile_commands.json only: tidy reads sources, builds nothing
    local n
    n=$(source_files "$@" | grep -zE '\.cpp$' | tr -cd '\0' | wc -c)
    echo "clang-tidy $(clang-tidy --version | grep -oE '[0-9]+\.[0-9.]+' | head -n1): $n files," \
        "$jobs in parallel"
    ((n)) || return 0
    # Bounded: 20 minutes for the whole stage. "N warnings generated" is clang's noise on
    # system headers that the header filter already drops.
    source_files "$@" | grep -zE '\.cpp$' |
        timeout 1200 xargs -0 -P "$jobs" -n 2 \
            clang-tidy -p build/dev --quiet --warnings-as-errors='*' 2>&1 |
        { grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' || true; }
}

stage_tidy() { tidy_over src; }

stage_tidy_tests() { tidy_over tests/unit tests/fuzz tests/support; }

stage_asan() { cmake --workflow --preset asan; }

# Only the daemon is built: its threads (the event loop, the query log's writer, list compiles,
# the API's worker, downloads) meet in the integration tests. The unit tests' threads run under
# ASan already, and building them under TSan too would cost CI another ten minutes. One unit
# test is the exception: the forwarder's zero-allocation check counts pooled flights only in a
# build without ASan (src/upstream/flight_memory.hpp), and this is the x86 one with tests.
stage_tsan() {
    cmake --preset tsan >/dev/null
    cmake --build build/tsan --target dnsmoat upstream_forwarder_alloc_test
    local tsan_options="exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
    TSAN_OPTIONS=$tsan_options ctest --test-dir build/tsan -R '^ForwarderAlloc\.' \
        --output-on-failure --no-tests=error
    TSAN_OPTIONS=$tsan_options ctest --test-dir build/tsan -L integration --output-on-failure \
        --no-tests=error
}

stage_fuzz() {
    cmake --workflow --preset fuzz
    bash scripts/fuzz.sh all "${MOAT_FUZZ_SECONDS:-10}"
}

stage_aarch64() { cmake --workflow --preset aarch64; }

# What a Pi downloads: the stripped binary. The arm64 package ships build/aarch64's (it runs on
# every 64-bit Pi); build/pi5's runs on a Pi 5 only.
ARM64_MAX_BYTES=$((10 * 1000 * 1000))

# The labels of the modules whose unit tests the pi5 stage runs, and their test binaries.
PI5_TEST_LABELS="wire|filter|cache|engine"

stage_pi5() {
    cmake --preset pi5 >/dev/null
    local targets
    targets=$(cmake --build build/pi5 --target help |
        grep -oE "^($PI5_TEST_LABELS)_[a-z0-9_]+_test" | sort -u | tr '\n' ' ')
    # shellcheck disable=SC2086 # one word per target
    cmake --build build/pi5 --target dnsmoat $targets
    ctest --preset pi5 -L "^($PI5_TEST_LABELS)\$" --no-tests=error
    local p bin size
    for p in aarch64 pi5; do
        bin=build/$p/src/app/dnsmoat
        if [[ ! -f "$bin" ]]; then
            echo "size: $bin not built (run the $p stage)"
            continue
        fi
        aarch64-linux-gnu-strip -o "build/$p/dnsmoat.stripped" "$bin"
        size=$(stat -c %s "build/$p/dnsmoat.stripped")
        echo "size: $bin stripped: $size bytes ($((size / 1000)) kB; limit $ARM64_MAX_BYTES)"
        if ((size >= ARM64_MAX_BYTES)); then
            echo "size: the arm64 binary must stay under 10 MB" >&2
            return 1
        fi
    done
}

stage_release() {
    # Without the unit tests, which no stage runs against this build (LTO makes them slow to
    # link); `cmake --preset release` alone turns them on again.
    cmake --preset release -DMOAT_BUILD_TESTS=OFF
    cmake --build --preset release
    # Smoke runs: every benchmark runs and its sanity checks hold. Times on a shared machine
    # judge nothing (--smoke shows timing targets without judging them); allocations per query
    # and the rebuild's peak memory are judged.
    echo "benchmark smoke run: build/release/bench/dnsmoat-bench all --smoke --assert"
    build/release/bench/dnsmoat-bench all --smoke --assert
    # Google Benchmark reports a failed check (SkipWithError) and still exits 0: its line says so.
    local m out
    for m in wire filter cache engine http metrics config querylog-writer; do
        echo "benchmark smoke run: build/release/bench/dnsmoat-bench-$m --benchmark_min_time=0.01"
        out=$("build/release/bench/dnsmoat-bench-$m" --benchmark_min_time=0.01 2>&1) ||
            { echo "$out"; return 1; }
        echo "$out"
        if grep -q "ERROR OCCURRED" <<<"$out"; then
            echo "test.sh: dnsmoat-bench-$m: a benchmark's check failed (ERROR OCCURRED above)" >&2
            return 1
        fi
    done
}

# A short soak of the release binary (docs/reliability.md has the 30-minute run).
stage_soak() { MOAT_BINARY=build/release/src/app/dnsmoat bash scripts/soak.sh 2; }

# The .deb of each architecture, from the build dirs the release and aarch64 stages made.
stage_package() {
    local preset arch deb dir f desc
    for preset in release aarch64; do
        # Configured again (cheap, nothing rebuilt when the stage before did it) so the package
        # is always built with the preset's current settings (MOAT_STATIC_DEPS, flags).
        cmake --preset "$preset" >/dev/null
        cmake --build "build/$preset" --target dnsmoat_package_files
        rm -f "build/$preset"/dnsmoat_*.deb
        (cd "build/$preset" && cpack -G DEB)
    done
    for arch in amd64 arm64; do
        preset=release
        [[ "$arch" == arm64 ]] && preset=aarch64
        deb=$(echo "build/$preset"/dnsmoat_*_"$arch".deb)
        [[ -f "$deb" ]] || { echo "package: no $arch .deb in build/$preset" >&2; return 1; }
        echo
        echo "== $deb: $(stat -c %s "$deb") bytes"
        dpkg-deb --info "$deb"
        dpkg-deb --contents "$deb"
        dir=build/package-check/$arch
        rm -rf "$dir"
        mkdir -p "$dir"
        dpkg-deb --raw-extract "$deb" "$dir"
        for f in etc/dnsmoat/dnsmoat.toml etc/dnsmoat/blocklist.txt etc/dnsmoat/allowlist.txt; do
            [[ -f "$dir/$f" ]] || { echo "package: $arch: /$f missing" >&2; return 1; }
            grep -qx "/$f" "$dir/DEBIAN/conffiles" ||
                { echo "package: $arch: /$f is not a conffile" >&2; return 1; }
        done
        for f in lib/systemd/system/dnsmoat.service lib/systemd/system/dnsmoat.socket \
            usr/share/doc/dnsmoat/copyright usr/share/doc/dnsmoat/changelog.gz \
            usr/share/man/man8/dnsmoat.8.gz; do
            [[ -f "$dir/$f" ]] || { echo "package: $arch: /$f missing" >&2; return 1; }
        done
        for f in postinst prerm postrm; do
            [[ -x "$dir/DEBIAN/$f" ]] || { echo "package: $arch: no $f script" >&2; return 1; }
        done
        desc=$(file -b "$dir/usr/bin/dnsmoat")
        echo "/usr/bin/dnsmoat: $desc"
        [[ "$desc" == *", stripped"* ]] ||
            { echo "package: $arch: /usr/bin/dnsmoat is not stripped" >&2; return 1; }
        # The packaged config loads, checked by the packaged binary (arm64 under qemu).
        if [[ "$arch" == arm64 ]]; then
            qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/usr/bin/dnsmoat" check-config \
                "$dir/etc/dnsmoat/dnsmoat.toml"
        else
            "$dir/usr/bin/dnsmoat" check-config "$dir/etc/dnsmoat/dnsmoat.toml"
        fi
        grep -qxF 'listen = ["0.0.0.0:53", "[::]:53"]' "$dir/etc/dnsmoat/dnsmoat.toml" ||
            { echo "package: $arch: the packaged config does not listen on port 53" >&2; return 1; }
    done
}

# The service's sandbox, judged by systemd; then the package booted for real (tests/system/).
SYSTEMD_MAX_EXPOSURE=1.5

stage_systemd() {
    local overall level deb
    overall=$(systemd-analyze security --offline=true config/systemd/dnsmoat.service |
        grep 'Overall exposure level') || { echo "systemd: systemd-analyze failed" >&2; return 1; }
    echo "$overall"
    level=$(grep -oE '[0-9]+\.[0-9]+' <<<"$overall" | head -n1)
    if awk -v l="$level" -v max="$SYSTEMD_MAX_EXPOSURE" 'BEGIN { exit !(l > max) }'; then
        echo "systemd: exposure $level is above $SYSTEMD_MAX_EXPOSURE" >&2
        return 1
    fi
    if [[ ! -f tests/system/boot_test.sh ]]; then
        echo "systemd: no tests/system/boot_test.sh; boot test skipped"
        return 0
    fi
    deb=$(echo build/release/dnsmoat_*_amd64.deb)
    [[ -f "$deb" ]] || { echo "systemd: no amd64 .deb (run the package stage)" >&2; return 1; }
    # The same build packaged as an older version, installed first: the upgrade to $deb must
    # keep the admin's config and /var/lib/dnsmoat.
    local old=build/package-old
    rm -rf "$old"
    (cd build/release && cpack -G DEB -B "$repo/$old" -D CPACK_PACKAGE_VERSION=0.0.1 \
        -D CPACK_DEBIAN_FILE_NAME=dnsmoat_0.0.1_amd64.deb) >/dev/null
    bash tests/system/boot_test.sh "$deb" "$old/dnsmoat_0.0.1_amd64.deb"
}

stage_compare() {
    cmake -S bench/compare -B build/compare -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DMOAT_SHARED_DIR="$MOAT_SHARED_DIR"
    cmake --build build/compare
    ctest --test-dir build/compare --output-on-failure --no-tests=error
    echo "benchmark smoke run: build/compare/dnsmoat-bench-compare --benchmark_min_time=0.01"
    build/compare/dnsmoat-bench-compare --benchmark_min_time=0.01 \
        --benchmark_filter='/(query|large)/'
}

declare -A STAGE_DESC=(
    [format]="format check (clang-format, shellcheck)"
    [layering]="module layering check"
    [dev]="dev preset: Debug build, unit + integration tests"
    [tidy]="clang-tidy over src/"
    [tidy_tests]="clang-tidy over tests/"
    [asan]="asan preset: unit + integration tests under ASan + UBSan"
    [tsan]="tsan preset: the daemon under ThreadSanitizer, integration tests"
    [fuzz]="fuzz preset: clang-14 + libFuzzer, each target ${MOAT_FUZZ_SECONDS:-10}s"
    [aarch64]="aarch64 preset: cross build, tests under qemu-aarch64"
    [pi5]="pi5 preset: the daemon and the hot path's tests for the Pi 5's Cortex-A76, sizes"
    [release]="release preset: -O3 + LTO binary, benchmark smoke run"
    [soak]="scripts/soak.sh 2: the release binary under a mixed load for 2 minutes"
    [package]="Debian packages (CPack): amd64 from build/release, arm64 from build/aarch64"
    [systemd]="systemd-analyze security of the unit, boot test of the amd64 package"
    [compare]="bench/compare: agreement with libknot and ldns, benchmark smoke run"
)

# --- driver --------------------------------------------------------------------------------------
timings=()
tests_passed=0 tests_failed=0 tests_skipped=0
t_all=$(date +%s)

count_tests() { # add up ctest's closing lines in a stage log
    local log=$1 line total failed skipped
    while IFS= read -r line; do
        [[ "$line" =~ ([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+) ]] || continue
        failed=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
        tests_failed=$((tests_failed + failed))
        tests_passed=$((tests_passed + total - failed))
    done < <(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" || true)
    skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)$' "$log" || true)
    tests_skipped=$((tests_skipped + skipped))
    tests_passed=$((tests_passed - skipped))
}

summary() {
    local joined
    joined=$(printf '%s, ' "${timings[@]}")
    echo
    echo "test.sh: stage timings: ${joined}total $(($(date +%s) - t_all))s"
    if [[ " ${stages[*]} " =~ \ (dev|asan|tsan|fuzz|aarch64|pi5|release|compare)\  ]]; then
        echo "ctest: $tests_passed passed, $tests_failed failed, $tests_skipped skipped"
    fi
}

echo "test.sh: stages: ${stages[*]} (jobs $jobs, MOAT_SHARED_DIR=$MOAT_SHARED_DIR," \
    "MOAT_REQUIRE_SHARED=${MOAT_REQUIRE_SHARED:-unset})"

groups=()
for s in "${stages[@]}"; do
    for g in ${STAGE_GROUPS[$s]}; do
        [[ " ${groups[*]} " == *" $g "* ]] || groups+=("$g")
    done
done
t0=$(date +%s)
bash scripts/setup.sh "${groups[@]}"
timings+=("setup $(($(date +%s) - t0))s")

for s in "${stages[@]}"; do
    echo
    echo "==> [$s] ${STAGE_DESC[$s]}"
    t0=$(date +%s)
    # The stage runs in a subshell with errexit of its own, so any failing command ends it.
    set +e
    (set -e; "stage_$s") 2>&1 | tee "$logs/$s.log"
    rc=${PIPESTATUS[0]}
    set -e
    dt=$(($(date +%s) - t0))
    count_tests "$logs/$s.log"
    if ((rc != 0)); then
        timings+=("$s FAILED ${dt}s")
        echo "==> [$s] FAILED after ${dt}s (exit $rc); log: $logs/$s.log"
        summary
        exit "$rc"
    fi
    timings+=("$s ${dt}s")
    echo "==> [$s] ok in ${dt}s"
done

summary
