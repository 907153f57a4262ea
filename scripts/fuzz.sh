#!/bin/sh
# Builds the libFuzzer harnesses (clang, ASan + UBSan) in build-fuzz/ and
# runs each for SECONDS (default 20, seed 1: the same inputs each run) on
# a scratch copy of its corpus
# (tests/fuzz/corpus/NAME). Any crash, leak, sanitizer report or timeout
# fails (exit 1); the input is left in the scratch directory, printed.
#   sh scripts/fuzz.sh [SECONDS] [NAME...]    NAME: xml graph log topo ...
set -e
cd "$(dirname "$0")/.."
secs=${1:-20}
[ $# -gt 0 ] && shift
names=${*:-"xml graph log topo scenario params nccltests perftest measure"}
command -v clang >/dev/null 2>&1 || { echo "fuzz: clang not found"; exit 1; }
CC=clang cmake -S . -B build-fuzz -DNSIM_FUZZ=ON -DNSIM_NO_CUDA=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=""
for h in $names; do targets="$targets nsim_fuzz_$h"; done
# shellcheck disable=SC2086
cmake --build build-fuzz -j"$(nproc)" --target $targets >/dev/null
scratch=$(mktemp -d "${TMPDIR:-/tmp}/nsim-fuzz.XXXXXX")
status=0
for h in $names; do
    mkdir -p "$scratch/$h" "$scratch/$h.crash"
    cp tests/fuzz/corpus/"$h"/* "$scratch/$h/"
    if ./build-fuzz/tests/fuzz/nsim_fuzz_"$h" -max_total_time="$secs" \
           -seed=1 -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
           -artifact_prefix="$scratch/$h.crash/" -print_final_stats=1 \
           "$scratch/$h" >"$scratch/$h.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$h.log")
        echo "fuzz: $h: ${secs} s, $runs runs, no report"
    else
        echo "fuzz: $h: FAILED (log and input in $scratch)"
        tail -40 "$scratch/$h.log"
        status=1
    fi
done
[ $status = 0 ] && rm -rf "$scratch"
exit $status
