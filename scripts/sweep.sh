#!/bin/sh
# Sweeps QPs per connection and channel counts for one scenario and size,
# and prints a busbw matrix (GB/s): rows = channels, columns = QPs.
# Usage: scripts/sweep.sh SCENARIO SIZE ["QPS LIST"] ["CHANNELS LIST"] [extra run options]
#   e.g. scripts/sweep.sh scenarios/dgx-h100-2node-allreduce.json 1G "1 2 4 8" "2 4 8 16 32"
set -e
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 SCENARIO SIZE [QPS] [CHANNELS] [OPTIONS]" >&2; exit 2; }
scen=$1 size=$2 qps=${3:-"1 2 4 8"} chans=${4:-"2 4 8 16 32"}
shift 2; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
[ -x build/ncclsim ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "# busbw (GB/s), %s, %s bytes\n# %8s" "$(basename "$scen")" "$size" "ch \\ qps"
for q in $qps; do printf " %9s" "$q"; done
printf "\n"
for c in $chans; do
    printf "  %8s" "$c"
    for q in $qps; do
        ./build/ncclsim run "$scen" -b "$size" -e "$size" --nchannels "$c" \
            --qps "$q" --quiet --json "$tmp/r.json" "$@"
        awk -F: '/"busbw"/ { gsub(/[ ,]/, "", $2); printf " %9.2f", $2; exit }' "$tmp/r.json"
    done
    printf "\n"
done
