#!/usr/bin/env bash
# Fuzz dnsmoat's libFuzzer targets (built by the fuzz preset) for a bounded time.
#
#   scripts/fuzz.sh all [SECONDS]       every target, SECONDS each (default 60), MOAT_FUZZ_JOBS
#                                       (default: the CPU count) at a time
#   scripts/fuzz.sh TARGET [SECONDS]    one target, by name (fuzz_pipeline) or path to its binary
#
# Targets (tests/fuzz/CMakeLists.txt says what each checks): fuzz_wire_parse,
# fuzz_wire_validate, fuzz_wire_roundtrip, fuzz_http_request, fuzz_proxy_header, fuzz_h2_server,
# fuzz_doh_exchange, fuzz_pipeline, fuzz_tcp_framing, fuzz_dot_replies, fuzz_list_line,
# fuzz_config. `all` starts them in this order and reports them in it, says which are not built,
# and also runs any other fuzz_* binary it finds.
# Build first: cmake --workflow --preset fuzz (scripts/test.sh does). Targets are the fuzz_*
# executables in build/fuzz/tests/fuzz/ (override with MOAT_FUZZ_DIR).
# Seeds: the dirs listed in <target>.seeds next to the binary (written by moat_add_fuzz_target),
# else tests/fuzz/corpus/<target>/ plus, for the targets that read DNS messages, the real ones in
# $MOAT_SHARED_DIR/data/wire/{extracted,c-ares-fuzzinput,knot-fuzz}. They are copied into a
# working corpus build/fuzz/run/<target>/ (wiped per run), so the repository and shared/ are
# never written; new inputs libFuzzer finds stay there for inspection or `-merge=1`, and
# libFuzzer runs in that directory (its fuzz-N.log files with -jobs land there too).
# A dictionary tests/fuzz/<target>.dict is used when present, and the libFuzzer flags in
# tests/fuzz/<target>.flags (one line, e.g. -max_len=1024). Extra flags for every target:
# MOAT_FUZZ_FLAGS="-max_len=512 -only_ascii=1".
# Crashes, leaks and timeouts go to build/fuzz/artifacts/<target>/; reproduce one with
#   build/fuzz/tests/fuzz/<target> build/fuzz/artifacts/<target>/crash-...
# Exit status: 0 when every target ran clean, 1 when any found a problem, 2 on usage errors.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
fuzz_dir=${MOAT_FUZZ_DIR:-build/fuzz/tests/fuzz}
work_root=$repo/build/fuzz/run
artifact_root=$repo/build/fuzz/artifacts
shared=${MOAT_SHARED_DIR:-$repo/../shared}
# Every target moat_add_fuzz_target defines, in the order `all` runs them.
known_targets=(fuzz_wire_parse fuzz_wire_validate fuzz_wire_roundtrip fuzz_http_request
    fuzz_proxy_header fuzz_h2_server fuzz_doh_exchange fuzz_pipeline fuzz_tcp_framing
    fuzz_dot_replies fuzz_doh_replies fuzz_list_line fuzz_config)
# The targets whose input is a DNS message: the shared wire messages seed them.
wire_targets=" fuzz_wire_parse fuzz_wire_validate fuzz_wire_roundtrip "

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

[[ $# -ge 1 && $# -le 2 ]] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
which=$1
seconds=${2:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a number, not '$seconds'" >&2; exit 2; }

# llvm-symbolizer turns sanitizer reports into file:line stacks.
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" && -x /usr/lib/llvm-14/bin/llvm-symbolizer ]]; then
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

targets=()
if [[ "$which" == all ]]; then
    for name in "${known_targets[@]}"; do
        if [[ -x "$fuzz_dir/$name" ]]; then
            targets+=("$fuzz_dir/$name")
        else
            echo "fuzz.sh: WARNING: $name is not built in $fuzz_dir"
        fi
    done
    if [[ -d "$fuzz_dir" ]]; then
        while IFS= read -r -d '' bin; do
            [[ " ${known_targets[*]} " == *" $(basename "$bin") "* ]] || targets+=("$bin")
        done < <(find "$fuzz_dir" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x -print0 | sort -z)
    fi
    if ((${#targets[@]} == 0)); then
        echo "fuzz.sh: WARNING: no fuzz_* targets in $fuzz_dir (build the fuzz preset first;" \
            "targets come from moat_add_fuzz_target in tests/fuzz/CMakeLists.txt)"
        exit 0
    fi
elif [[ -x "$which" && -f "$which" ]]; then
    targets=("$which")
elif [[ -x "$fuzz_dir/$which" ]]; then
    targets=("$fuzz_dir/$which")
else
    echo "fuzz.sh: no fuzz target '$which' in $fuzz_dir" >&2
    exit 2
fi

seed_dirs() { # target name, binary dir -> seed dirs, one per line
    local name=$1 dir=$2
    if [[ -f "$dir/$name.seeds" ]]; then
        grep -v '^[[:space:]]*$' "$dir/$name.seeds" || true
    else
        echo "$repo/tests/fuzz/corpus/$name"
        if [[ "$wire_targets" == *" $name "* ]]; then
            printf '%s\n' "$shared/data/wire/extracted" "$shared/data/wire/c-ares-fuzzinput" \
                "$shared/data/wire/knot-fuzz"
        fi
    fi
}

# One target: fuzzes it in its own working dir and writes what to report to $work/report and
# its exit status to $work/status (run in the background, several at once).
run_target() {
    local bin=$1 name work artifacts nseeds i d log rc
    name=$(basename "$bin")
    work="$work_root/$name"
    artifacts="$artifact_root/$name"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$artifacts"
    nseeds=0
    i=0
    {
        while IFS= read -r d; do
            [[ -d "$d" ]] || { echo "fuzz.sh: $name: seed dir $d missing, skipped"; continue; }
            i=$((i + 1))
            cp -R "$d" "$work/corpus/seed$i"
            nseeds=$((nseeds + $(find "$d" -type f | wc -l)))
        done < <(seed_dirs "$name" "$(dirname "$bin")")

        local flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
            -print_final_stats=1 -artifact_prefix="$artifacts/")
        [[ -f "tests/fuzz/$name.dict" ]] && flags+=(-dict="$repo/tests/fuzz/$name.dict")
        if [[ -f "tests/fuzz/$name.flags" ]]; then
            # shellcheck disable=SC2207 # one line of flags, split on blanks
            flags+=($(grep -v '^[[:space:]]*#' "tests/fuzz/$name.flags"))
        fi
        # shellcheck disable=SC2206 # word splitting of the extra flags is intended
        [[ -n "${MOAT_FUZZ_FLAGS:-}" ]] && flags+=(${MOAT_FUZZ_FLAGS})

        echo "fuzz.sh: $name for ${seconds}s, $nseeds seed files, corpus $work/corpus"
        log="$work/fuzz.log"
        bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
        rc=0
        (cd "$work" && "$bin" "${flags[@]}" "$work/corpus") >"$log" 2>&1 || rc=$?
        if ((rc == 0)); then
            grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+\s+DONE)' "$log" |
                sed "s/^/fuzz.sh: $name: /" || true
        else
            tail -n 60 "$log"
            echo "fuzz.sh: $name FAILED (exit $rc); log $log; artifacts:"
            find "$artifacts" -type f | sed "s|^|  |"
        fi
        echo "$rc" >"$work/status"
    } >"$work_root/$name.report" 2>&1
}

# Targets run MOAT_FUZZ_JOBS at a time (default: one per CPU); each libFuzzer process is
# single-threaded, so on two cores two targets fuzz in the time of one.
fuzz_jobs=${MOAT_FUZZ_JOBS:-$(nproc)}
[[ "$fuzz_jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: MOAT_FUZZ_JOBS must be a positive number" >&2; exit 2; }
mkdir -p "$work_root"
running=0
for bin in "${targets[@]}"; do
    if ((running >= fuzz_jobs)); then
        wait -n || true
        running=$((running - 1))
    fi
    rm -f "$work_root/$(basename "$bin").report"
    run_target "$bin" &
    running=$((running + 1))
done
wait || true

failed=()
for bin in "${targets[@]}"; do
    name=$(basename "$bin")
    cat "$work_root/$name.report" 2>/dev/null || true
    if [[ "$(cat "$work_root/$name/status" 2>/dev/null)" != 0 ]]; then
        failed+=("$name")
    fi
done

if ((${#failed[@]})); then
    echo "fuzz.sh: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}"
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets ran ${seconds}s each, no crash"
