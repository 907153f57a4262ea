#!/bin/sh
# Compares simulated busbw with published nccl-tests results in
# ../shared/hwdata (or $NSIM_HWDATA): for each dataset a preset can
# describe, runs the matching scenario over the dataset's sizes and prints
# size, published busbw (out-of-place), simulated busbw and the error, then
# the median absolute error for sizes >= 1 MiB.
# Also prints the algorithm/protocol ncclsim ran at each size (NCCL's
# tuner unless the dataset forced them).
# Usage: scripts/validate.sh [DATASET-NUMBER ...]
#        (default: 15 16 02 03 04 05 06 23 12 28 43 18 19 07 09)
# Not compared: 39 and 40 (2 x H100 + 8 NDR, the same hardware as the
# dgx-h100-2node preset) record a misbehaving fabric (~12 GB/s per NIC;
# index.json: "use as a bad fabric case, not a calibration target").
set -e
cd "$(dirname "$0")/.."
hw=${NSIM_HWDATA:-../shared/hwdata}
[ -d "$hw" ] || { echo "validate: no hwdata folder at $hw" >&2; exit 1; }
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the published table: size and out-of-place busbw of each data row;
# a vendor markdown table ("| 65K | 2.70 |": in-place busbw under size
# labels rounded by the publisher) gives the nearest power of two
published() {
    # mpirun --tag-output prefixes ("[1,0]<stdout>:", mid-row too) go
    sed 's/\[1,[0-9]*\]<stdout>://g' "$1" |
    awk '$1 ~ /^[0-9]+$/ && $1 > 0 && NF >= 12 && $8 ~ /^[0-9.]+$/ { print $1, $8 }
         /^\| *[0-9]+[KMG] *\| *[0-9.]+ *\|/ {
             split($0, f, "|"); l = f[2]; gsub(/ /, "", l); b = f[3] + 0
             u = substr(l, length(l)); v = substr(l, 1, length(l) - 1) + 0
             v *= (u == "K" ? 1e3 : u == "M" ? 1e6 : 1e9)
             p = 1; while (p * 2 <= v) p *= 2
             if (v - p > 2 * p - v) p *= 2
             printf "%.0f %s\n", p, b }'
}

# scenario for a dataset: echo "scenario-file [extra options]"
# 02-06: single-node H100, no NCCL_* overrides, double (index.json);
# 15, 16: NCCL_ALGO=RING, float, -g 8 (one process drives the 8 GPUs);
# 07: 10 DGX H100 nodes, rail fat tree;
# 23: two RTX 2080 Ti without P2P (SHM), float, -g 2; 12: one DGX A100 (Azure
# ND A100 v4, NCCL's own choice: A100 has no NVLS), float, in-place
# busbw (the only column published), -g 8 as the page's command line;
# 09: as 07, ReduceScatter, double; 28: two hosts with one H100 and one
# 400G RoCE NIC each, no GPUDirect RDMA (the log: "GDR 0"), ring, the
# log's 2 channels (the hosts' PCIe layout is not published, so NCCL's
# channel count is taken from the log rather than searched); 43: two
# A100 SXM4 joined by NV4 (4 NVLink3 links, no NVSwitch), SendRecv,
# NCCL_BUFFSIZE 4 MiB as logged; 18, 19: two hosts with one A100 PCIe
# and one HDR HCA each on the same CPU (PHB), GPUDirect RDMA on (18:
# NCCL_NET_GDR_LEVEL=SYS) and off (19), NCCL's own choices (the log's 2
# channels are what the search finds); 21: AWS p5 (8 H100 + NVSwitch,
# 32 EFA NICs that aws-ofi-nccl groups into 8 400 Gb/s NET devices, as
# the log's 8 NIC groups) on the dgx-h100-2node preset with the log's
# NCCL_BUFFSIZE and NVLS chunk sizes, NCCL's choices; not in the default
# list: EFA (libfabric over SRD; the plugin tells NCCL 75 us of latency)
# is not the preset's IB, so only the large, bandwidth-bound sizes are a
# fair check (NVLSTree's).
scenario_for() {
    sed 's/"protocol": "Simple",//; s/"algorithm": "Ring",//' \
        scenarios/dgx-h100-allreduce.json |
        sed "s#dgx-h100.topo.json#$PWD/scenarios/dgx-h100.topo.json#" \
        > "$tmp/auto.json"
    case "$1" in
    15) echo "$tmp/auto.json --algo Ring -g 8" ;;
    16) echo "$tmp/auto.json --algo Ring -g 8 --collective all_gather_perf" ;;
    02) echo "$tmp/auto.json -d double" ;;
    03) echo "$tmp/auto.json -d double --collective all_gather_perf" ;;
    04) echo "$tmp/auto.json -d double --collective reduce_scatter_perf" ;;
    05) echo "$tmp/auto.json -d double --collective alltoall_perf" ;;
    06) echo "$tmp/auto.json -d double --collective sendrecv_perf" ;;
    23) sed "s#$PWD/scenarios/dgx-h100.topo.json#$PWD/scenarios/pcie-2gpu-nop2p.topo.json#" \
            "$tmp/auto.json" > "$tmp/nop2p.json"
        echo "$tmp/nop2p.json -g 2" ;;
    12) sed "s#$PWD/scenarios/dgx-h100.topo.json#$PWD/scenarios/dgx-a100.topo.json#" \
            "$tmp/auto.json" > "$tmp/a100.json"
        echo "$tmp/a100.json -g 8" ;;
    28) sed "s#$PWD/scenarios/dgx-h100.topo.json#$PWD/tests/data/h100-2host-1gpu-roce-nogdr.topo.json#" \
            "$tmp/auto.json" > "$tmp/nogdr.json"
        echo "$tmp/nogdr.json --algo Ring --nchannels 2" ;;
    43) sed "s#$PWD/scenarios/dgx-h100.topo.json#$PWD/tests/data/a100-nv4-2gpu.topo.json#" \
            "$tmp/auto.json" > "$tmp/nv4.json"
        echo "$tmp/nv4.json --collective sendrecv_perf" ;;
    18|19)
        t=a100pcie-2host-hdr
        [ "$1" = 19 ] && t=a100pcie-2host-hdr-nogdr
        sed "s#$PWD/scenarios/dgx-h100.topo.json#$PWD/tests/data/$t.topo.json#" \
            "$tmp/auto.json" > "$tmp/$t.json"
        echo "$tmp/$t.json" ;;
    21) sed 's/"protocol": "Simple",//; s/"algorithm": "Ring",//' \
            scenarios/dgx-h100-2node-allreduce.json |
            sed "s#dgx-h100-2node.topo.json#$PWD/scenarios/dgx-h100-2node.topo.json#; s#\"seed\"#\"env\": {\"NCCL_BUFFSIZE\": \"8M\", \"NCCL_NVLS_CHUNKSIZE\": \"512K\", \"NCCL_NVLSTREE_MAX_CHUNKSIZE\": \"512K\"}, \"seed\"#" \
            > "$tmp/p5.json"
        echo "$tmp/p5.json" ;;
    07|09)
        ./build/ncclsim topo build --nodes 10 --node-preset dgx-h100 \
            --fabric rail-fat-tree -o "$tmp/h100x10.topo.json" >/dev/null
        sed "s#dgx-h100-2node.topo.json#$tmp/h100x10.topo.json#" \
            scenarios/dgx-h100-2node-allreduce.json > "$tmp/h100x10.json"
        if [ "$1" = 09 ]; then
            echo "$tmp/h100x10.json -d double --collective reduce_scatter_perf"
        else
            echo "$tmp/h100x10.json"
        fi ;;
    *) echo "" ;;
    esac
}

compare() {
    id=$1
    file=$(ls "$hw"/"$id"_*.txt 2>/dev/null | head -n 1)
    scen=$(scenario_for "$id")
    if [ -z "$file" ] || [ -z "$scen" ]; then
        echo "dataset $id: no data file or no preset for it" >&2
        return
    fi
    max=${NSIM_VALIDATE_MAX:-17179869184}
    column=busbw
    grep -q '^| *[0-9]*[KMG] *|' "$file" && column=busbw_inplace
    echo "== dataset $(basename "$file") on $(basename "$scen")"
    printf "%14s %10s %10s %8s  %s\n" size published simulated error algo/proto
    published "$file" | while read -r size bus; do
        [ "$size" -le "$max" ] || continue
        # shellcheck disable=SC2086
        ./build/ncclsim run $scen -b "$size" -e "$size" \
            --json "$tmp/r.json" --quiet
        sim=$(awk -F: -v k="\"$column\"" '$1 ~ k"$" || $1 ~ "\t"k {
                  gsub(/[ ,\t]/, "", $2); print $2; exit }' "$tmp/r.json")
        ap=$(awk -F'"' '/"algorithm"/ { a = $4 }
                        /"protocol"/ { p = $4 }
                        END { print a "/" p }' "$tmp/r.json")
        awk -v s="$size" -v p="$bus" -v m="$sim" -v ap="$ap" 'BEGIN {
            e = p > 0 ? (m - p) / p * 100 : 0;
            printf "%14.0f %10.2f %10.2f %+7.1f%%  %s\n", s, p, m, e, ap }'
    done | tee "$tmp/rows"
    med=$(awk '$1 >= 1048576 { e = $4; sub(/%/, "", e); e = e + 0; if (e < 0) e = -e; print e }' \
        "$tmp/rows" | sort -n | awk '{ a[NR] = $1 } END {
            if (NR) printf "median |error| for sizes >= 1 MiB: %.1f%% (%d sizes)\n",
                (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), NR }')
    [ -n "$med" ] || return 0
    echo "$med"
    echo "$(basename "$file" .txt): $med" >> "$tmp/summary"
}

: > "$tmp/summary"
for id in ${*:-15 16 02 03 04 05 06 23 12 28 43 18 19 07 09}; do compare "$id"; done
echo "== summary"
cat "$tmp/summary"
