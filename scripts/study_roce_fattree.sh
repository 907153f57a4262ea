#!/bin/sh
# The QP x channel study on a RoCE fat tree with ECMP, in one command: two
# DGX H100 nodes on a two-level fat tree of radix-8 switches (`topo build
# --fabric fat-tree --roce`: RoCE, ECMP hashing of each QP over the
# equal-cost paths), AllReduce for 4 QP counts x 5 channel counts x
# 1 KiB .. 512 MiB, as CSV, then curves and heatmaps. With ECMP, QPs are
# what spreads a connection over the spine paths.
# Usage: scripts/study_roce_fattree.sh [OUTDIR]   (JOBS=N, RADIX=K)
set -e
cd "$(dirname "$0")/.."
out=${1:-results/qp-channels-roce-fattree}
jobs=${JOBS:-$(nproc)}
ns=build/ncclsim
[ -x $ns ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
mkdir -p "$out"
$ns topo build --nodes 2 --node-preset dgx-h100 --fabric fat-tree \
    --radix "${RADIX:-8}" --roce -o "$out/topo.json"
cat > "$out/scenario.json" <<JSON
{
  "format": "ncclsim-scenario",
  "version": 1,
  "name": "dgx-h100-2node-roce-fattree-allreduce",
  "comment": "Ring AllReduce (Simple) on two DGX H100 over a RoCE fat tree with ECMP",
  "topology": "topo.json",
  "collective": "all_reduce_perf",
  "datatype": "float",
  "op": "sum",
  "min_bytes": "1K",
  "max_bytes": "512M",
  "step_factor": 2,
  "protocol": "Simple",
  "algorithm": "Ring",
  "seed": 1
}
JSON
$ns sweep "$out/scenario.json" --set NCCL_IB_QPS_PER_CONNECTION=1,2,4,8 \
    --set nchannels=2:32:x2 -j "$jobs" --resume -o "$out/sweep.csv"
$ns plot "$out/sweep.csv" --kind curves -o "$out/curves.png" \
    --title "AllReduce on 2 x DGX H100, RoCE fat tree (ECMP): QPs x channels"
for s in 16M 512M; do
    $ns plot "$out/sweep.csv" --kind heatmap --x nchannels \
        --y NCCL_IB_QPS_PER_CONNECTION --size $s -o "$out/heatmap-$s.png"
done
$ns explain "$out/scenario.json" -b 512M --nchannels 16 --qps 1 > "$out/explain-512M.txt"
echo "study: $out/sweep.csv, $out/curves.png, $out/heatmap-16M.png, $out/heatmap-512M.png"
