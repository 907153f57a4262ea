#!/bin/sh
# Benchmarks (Release build): the event engine alone on the hold model,
# then whole simulations. Prints figures; never fails on speed.
set -e
if [ "${1:-}" = "--scale" ]; then shift; exec sh "$(dirname "$0")/bench_scale.sh" "$@"; fi
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== event engine, hold model (1,000 pending, 10 M events), 5 runs"
# The figure moves with the process's address layout (up to 1.5x from run
# to run on a 2-core VM; it follows the stack's address; setarch -R
# fixes the layout): the median of five is the one to read.
runs=$(for i in 1 2 3 4 5; do ./build/nsim_bench_engine 1000 10000000; done)
echo "$runs"
echo "$runs" | awk '{ for (i = 2; i <= NF; i++) if ($i == "events/cpu-s") print $(i - 2) }' |
    sort -n | awk '{ v[NR] = $1 } END { printf "engine hold model: median %.1f M events/cpu-s (target >= 50)\n", v[int((NR + 1) / 2)] }'
echo "== 1 GiB ring AllReduce, one DGX H100 (8 GPUs), target < 1 s"
./build/ncclsim run scenarios/dgx-h100-allreduce.json -b 1G -e 1G --quiet --timing
echo "== 1 GiB ring AllReduce, two DGX H100 (16 GPUs, NDR rails), target < 5 s"
./build/ncclsim run scenarios/dgx-h100-2node-allreduce.json -b 1G -e 1G --quiet --timing
echo "== the same, 4 QPs per connection"
./build/ncclsim run scenarios/dgx-h100-2node-allreduce.json -b 1G -e 1G --qps 4 --quiet --timing
echo "== packet level at scale (scripts/bench_packet.sh; its --scale adds 64 nodes and AllToAll)"
sh scripts/bench_packet.sh
