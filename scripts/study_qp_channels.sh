#!/bin/sh
# The QP x channel study on the two-node DGX H100 preset, in one command:
# AllReduce (Ring/Simple) for 4 QP counts x 5 channel counts x 20 sizes
# (1 KiB .. 512 MiB), as CSV and JSON, then busbw curves, channels x QPs
# heatmaps at 16 MiB and 512 MiB, and what bounds the largest size.
# Usage: scripts/study_qp_channels.sh [OUTDIR]   (JOBS=N workers, default
# all cores; re-running resumes an interrupted sweep)
set -e
cd "$(dirname "$0")/.."
out=${1:-results/qp-channels-h100-2node}
jobs=${JOBS:-$(nproc)}
ns=build/ncclsim
[ -x $ns ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
mkdir -p "$out"
scen=scenarios/dgx-h100-2node-allreduce.json
$ns sweep $scen --set NCCL_IB_QPS_PER_CONNECTION=1,2,4,8 --set nchannels=2:32:x2 \
    -b 1K -e 512M -f 2 -j "$jobs" --resume -o "$out/sweep.csv" -o "$out/sweep.json"
$ns plot "$out/sweep.csv" --kind curves -o "$out/curves.png" \
    --title "AllReduce on 2 x DGX H100 (16 GPUs, NDR rails): QPs per connection x channels"
for s in 16M 512M; do
    $ns plot "$out/sweep.csv" --kind heatmap --x nchannels \
        --y NCCL_IB_QPS_PER_CONNECTION --size $s -o "$out/heatmap-$s.png"
done
$ns explain $scen -b 512M --nchannels 32 --qps 1 > "$out/explain-512M.txt"
echo "study: $out/sweep.csv, $out/curves.png, $out/heatmap-16M.png, $out/heatmap-512M.png, $out/explain-512M.txt"
