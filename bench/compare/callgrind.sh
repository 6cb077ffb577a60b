#!/usr/bin/env bash
# Instructions per operation for each library and fixture, counted by callgrind: the same for the
# same binary and input whatever else the machine does, so they sit beside the (noisy) times in
# docs/benchmarks.md.
#
#   bench/compare/callgrind.sh [BUILD_DIR]      (default build/compare)
#
# For each cell: instructions of N operations minus those of 0 operations (the set-up), over N.
set -euo pipefail
build=${1:-build/compare}
ops="$build/dnsmoat-compare-ops"
[[ -x "$ops" ]] || { echo "callgrind.sh: build $ops first (see bench/compare/README.md)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }

count() {  # LIBRARY OP FIXTURE N -> total instructions
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$ops" "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "| operation | dnsmoat | libknot | ldns |"
echo "|---|---:|---:|---:|"
for fixture in query large pathological; do
    for op in parse validate build build_vec; do
        row="| $op/$fixture"
        for library in dnsmoat libknot ldns; do
            if [[ $library != dnsmoat && ( $op == validate || $op == build_vec ) ]]; then
                row+=" | -"
                continue
            fi
            n=200
            [[ $fixture == pathological ]] && n=20
            [[ $library == ldns && $op == build && $fixture == pathological ]] && n=2
            base=$(count "$library" "$op" "$fixture" 0)
            total=$(count "$library" "$op" "$fixture" "$n")
            row+=" | $(((total - base) / n))"
        done
        echo "$row |"
    done
done
