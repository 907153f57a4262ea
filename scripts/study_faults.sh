#!/bin/sh
# What one bad cable costs a cluster, in one command: NCCL's AllReduce of
# 1 GiB on 128 DGX H100 (1,024 GPUs, rail fat tree, flow fidelity) with
# host 3's NIC 0 uplink degraded to 25 .. 400 Gb/s from the start, under
# NCCL's choice (NVLSTree) and a ring; then that NIC's port going down
# (rebind_nic) at 0 .. 20 ms. Each point folds around the struck host
# (README "Fault plan and failover", docs/fold.md "A fault on one host"):
# seconds a point where every host played takes minutes.
# Usage: scripts/study_faults.sh [OUTDIR]   (JOBS=N workers, default all
# cores; re-running resumes an interrupted sweep)
set -e
cd "$(dirname "$0")/.."
out=${1:-results/faults-h100-128node}
jobs=${JOBS:-$(nproc)}
ns=build/ncclsim
[ -x $ns ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
mkdir -p "$out"
cluster='"topology": {"cluster": {"nodes": 128, "node_preset": "dgx-h100", "fabric": "rail-fat-tree"}}'
common='"collective": "all_reduce_perf", "datatype": "float", "op": "sum", "min_bytes": "1G", "max_bytes": "1G", "qps_per_connection": 2, "fidelity": "flow", "seed": 1'
cat >"$out/degraded.json" <<JSON
{"format": "ncclsim-scenario", "version": 1, "name": "h100-128node-degraded-uplink",
 $cluster, $common, "failover": "rebind_qp",
 "faults": [{"at": "0 us", "kind": "link_degraded", "a": "h3.nic0", "b": "leaf.r0.0", "bw": "100 Gb/s"}]}
JSON
cat >"$out/port-down.json" <<JSON
{"format": "ncclsim-scenario", "version": 1, "name": "h100-128node-port-down",
 $cluster, $common, "failover": "rebind_nic",
 "faults": [{"at": "0 us", "kind": "port_down", "nic": "h3.nic0"}]}
JSON
$ns sweep "$out/degraded.json" --set 'faults[0].bw=25Gb/s,50Gb/s,100Gb/s,200Gb/s,400Gb/s' \
    --set algorithm=NVLSTree,Ring -j "$jobs" --resume -o "$out/degraded.csv"
$ns sweep "$out/port-down.json" --set 'faults[0].at=0us,1ms,5ms,10ms,20ms' \
    --set algorithm=NVLSTree,Ring -j "$jobs" --resume -o "$out/port-down.csv"
$ns plot "$out/degraded.csv" --kind heatmap --x 'faults[0].bw' --y algorithm \
    -o "$out/degraded.png" --title "AllReduce 1 GiB, 128 x DGX H100: busbw with h3.nic0's uplink degraded"
$ns plot "$out/port-down.csv" --kind heatmap --x 'faults[0].at' --y algorithm \
    -o "$out/port-down.png" --title "AllReduce 1 GiB, 128 x DGX H100: busbw with h3.nic0 down at a time"
$ns explain "$out/degraded.json" -b 1G > "$out/explain-100Gbps.txt"
echo "study: $out/degraded.csv, $out/port-down.csv, $out/degraded.png, $out/port-down.png, $out/explain-100Gbps.txt"
