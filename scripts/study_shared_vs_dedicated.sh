#!/bin/sh
# The seed example's SHARED vs dedicated channel mode (NCCL_NET_SHARED_COMMS)
# for 1, 2 and 4 QPs per connection, 1 MiB .. 1 GiB, in one command: CSV
# and busbw curves. A configuration that stalls (shared mode with few QPs
# could deadlock) is reported by name, not hidden: the sweep goes on with
# the others (--keep-going), the plot shows what ran, and the script exits
# with status 1 after saying which points stalled.
# Usage: scripts/study_shared_vs_dedicated.sh [OUTDIR]
set -e
cd "$(dirname "$0")/.."
out=${1:-results/shared-vs-dedicated-seed}
jobs=${JOBS:-$(nproc)}
ns=build/ncclsim
[ -x $ns ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
mkdir -p "$out"
status=0
$ns sweep scenarios/seed-allreduce.json --set channel_mode=dedicated,shared \
    --set qps_per_connection=1,2,4 -b 1M -e 1G -f 4 -j "$jobs" --keep-going \
    -o "$out/sweep.csv" 2> "$out/sweep.err" || status=$?
cat "$out/sweep.err" >&2
$ns plot "$out/sweep.csv" --kind curves -o "$out/curves.png" \
    --title "seed example (4 GPUs, NVLink + IB): shared vs dedicated NET comms"
if [ "$status" -ne 0 ]; then
    echo "study: STALLED or failed points (see above and $out/sweep.err):" >&2
    grep "point [0-9]" "$out/sweep.err" | sed 's/^/  /' >&2 || true
fi
echo "study: $out/sweep.csv, $out/curves.png"
exit "$status"
