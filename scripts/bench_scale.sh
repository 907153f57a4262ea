#!/bin/sh
# Scale benchmarks in flow fidelity (issue 12 item 4): clusters of DGX H100
# nodes on a rail fat tree, built from the scenario's cluster spec. Prints, per
# run: ranks, wall seconds, CPU seconds, engine events, peak RSS and the
# hosts played where it folds, then the exponents of wall time, CPU time,
# events and wall time per host played vs ranks (least squares on
# log-log) for the ring series; then SimGrid's ring on the same shape of
# cluster where SimGrid is installed (scripts/simgrid_ring.c). Never fails
# on speed; a run over its time limit is "cut".
#
#   sh scripts/bench.sh --scale            the targets, and the ring with
#                                          every host played (minutes)
#   sh scripts/bench.sh --scale --quick    the ring series, 128-4,096 ranks
#   NSIM_SCALE_LIMIT=600                   seconds per run before the cut
set -e
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
quick=0
for a in "$@"; do [ "$a" = "--quick" ] && quick=1; done
limit=${NSIM_SCALE_LIMIT:-600}
dir=$(mktemp -d /tmp/ncclsim-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT
bin=./build/ncclsim
keys= # scenario keys the next runs add (a fault plan), or none

# scenario NODES COLL SIZE -> path of a scenario on that cluster (the
# cluster built in memory from the scenario, as `ncclsim topo build`
# builds it: no topology file to write or read)
scenario() {
    s="$dir/c$1-$2-$3${keys:+-keys}.json"
    printf '{"format": "ncclsim-scenario", "version": 1, "name": "c%s", ' \
        "$1" >"$s"
    printf '"topology": {"cluster": {"nodes": %s, "node_preset": ' "$1" >>"$s"
    printf '"dgx-h100", "fabric": "rail-fat-tree"}}, ' >>"$s"
    printf '"collective": "%s", "datatype": "float", ' "$2" >>"$s"
    printf '"op": "sum", "min_bytes": "%s", "max_bytes": "%s", ' "$3" "$3" >>"$s"
    printf '%s"fidelity": "flow"}\n' "$keys" >>"$s"
    echo "$s"
}

# run LABEL NODES COLL SIZE TARGET_S [run options...]
run() {
    label=$1 nodes=$2 coll=$3 size=$4 target=$5
    shift 5
    s=$(scenario "$nodes" "$coll" "$size")
    ranks=$((nodes * 8))
    out="$dir/out"
    if timeout "$limit" /usr/bin/time -f "%e %U %M" -o "$dir/time" \
        $bin run "$s" --quiet --timing "$@" 2>"$out"; then
        set -- $(cat "$dir/time")
        ev=$(sed -n 's/.* \([0-9]*\) events.*/\1/p' "$out" | tail -1)
        # hosts played where the run folds (README "Folding")
        played=$(sed -n 's/.*folded: \([0-9]*\) of [0-9]* hosts.*/\1/p' \
            "$out" | tail -1)
        printf '%-34s %7d %9.2f %9.2f %12s %8.0f MB %6s  (target < %s s)\n' \
            "$label" "$ranks" "$1" "$2" "$ev" "$(($3 / 1024))" \
            "${played:--}" "$target"
        [ "$label" = ring ] &&
            echo "$ranks $1 $2 $ev $(awk -v w="$1" -v p="${played:-1}" \
                'BEGIN { printf "%.6f", w / p }')" >>"$dir/fit"
    else
        printf '%-34s %7d %9s %9s %12s %11s %6s  (target < %s s): %s\n' \
            "$label" "$ranks" "cut" "-" "-" "-" "-" "$target" \
            "$(tail -1 "$out" | cut -c1-100)"
    fi
    return 0
}

printf '%-34s %7s %9s %9s %12s %11s %6s\n' "# run (flow fidelity)" ranks \
    "wall s" "cpu s" events "peak RSS" played
# the ring series: NCCL's protocol, folded onto a few hosts (README
# "Folding"); the targets are issue 12's
for n in 16 32 64; do run ring "$n" all_reduce_perf 1G - --algo Ring; done
run ring 128 all_reduce_perf 1G 3 --algo Ring
run ring 512 all_reduce_perf 1G 7 --algo Ring
# rank counts that are not powers of two: the size does not divide evenly
# over the ranks' chunks (positions share one op array, with patches; the
# fold plays every chunk at its largest, docs/fold.md)
run "ring, uneven split" 192 all_reduce_perf 1G - --algo Ring
run "ring, uneven split" 768 all_reduce_perf 1G - --algo Ring
run "ring, uneven split" 1536 all_reduce_perf 1G - --algo Ring
run "ring 64 MiB, uneven split" 384 all_reduce_perf 64M - --algo Ring
if [ $quick = 0 ]; then
    # every host played, beside the folded runs above
    for n in 16 32 64; do
        run "ring, --fold off" "$n" all_reduce_perf 1G - --algo Ring --fold off
    done
    run "alltoall 64 MiB" 128 alltoall_perf 64M 30
    # NCCL's default (NVLSTree on these), folded onto one host per role
    # in the two trees; beside it every host played at 16 nodes
    run "NCCL default allreduce 1 GiB" 16 all_reduce_perf 1G -
    run "NCCL default, --fold off" 16 all_reduce_perf 1G - --fold off
    run "NCCL default allreduce 1 GiB" 128 all_reduce_perf 1G -
    run "NCCL default allreduce 1 GiB" 16384 all_reduce_perf 1G 60
    # nccl-tests' SendRecv (rank r to r + 1), folded onto the pair of
    # hosts with the slowest route (docs/fold.md, "SendRecv")
    run "sendrecv 1 GiB" 2048 sendrecv_perf 1G -
    # Broadcast: a chain from the root, played on 64 hosts and again on
    # 32, each other host adding the delay of one (docs/fold.md,
    # "Broadcast and Reduce")
    run "broadcast 1 GiB" 16384 broadcast_perf 1G -
    # one NIC uplink at 100 Gb/s: the run folds around the struck host
    # (docs/fold.md, "A fault on one host"; every host played at 128
    # nodes took 224 s there)
    keys='"qps_per_connection": 2, "faults": [{"at": "100 us", '
    keys="$keys"'"kind": "link_degraded", "a": "h3.nic0", '
    keys="$keys"'"b": "leaf.r0.0", "bw": "100 Gb/s"}], '
    run "NCCL default, h3.nic0 degraded" 128 all_reduce_perf 1G -
    run "NCCL default, h3.nic0 degraded" 16384 all_reduce_perf 1G -
    keys=
fi
# SimGrid's S4U ring AllReduce 1 GiB on the same shape of cluster (8 GPUs
# a host, 300 GB/s NVLink, a 50 GB/s NIC per GPU; scripts/simgrid_ring.c),
# where SimGrid is installed (Debian: libsimgrid-dev): its wall time beside
# the ring series above, 1 ring and 8 (one per NIC); a run past
# NSIM_SIMGRID_LIMIT seconds (default 60) is cut.
simgrid() {
    sglimit=${NSIM_SIMGRID_LIMIT:-60}
    sgbin=./build/nsim_simgrid_ring # CMake builds it where SimGrid is
    if [ ! -x "$sgbin" ]; then
        echo "# SimGrid: not installed (apt-get install libsimgrid-dev to" \
            "run scripts/simgrid_ring.c beside these)"
        return 0
    fi
    cut_rings=" "
    for spec in "16 1" "64 1" "128 1" "512 1" "16 8" "64 8"; do
        set -- $spec
        label="SimGrid S4U ring, $2 ring(s)"
        case "$cut_rings" in
        *" $2 "*)
            # a smaller cluster with as many rings was cut already
            printf '%-34s %7d %9s %9s %12s %11s %6s  (not run: past %s s on fewer ranks)\n' \
                "$label" "$(($1 * 8))" cut - - - - "$sglimit"
            continue ;;
        esac
        if timeout "$sglimit" /usr/bin/time -f "%e %U %M" -o "$dir/time" \
            "$sgbin" "$1" 1073741824 "$2" >"$dir/sgout" \
            2>"$dir/sgerr"; then
            msgs=$(sed -n 's/.* \([0-9]*\) messages.*/\1/p' "$dir/sgout")
            sim=$(sed -n 's/.*bytes: \([0-9.]*\) us.*/\1/p' "$dir/sgout")
            bw=$(sed -n 's/.*busbw \([0-9.]*\) GB.*/\1/p' "$dir/sgout")
            t=$(cat "$dir/time")
            printf '%-34s %7d %9.2f %9.2f %12s %8.0f MB %6s  (%s us simulated, busbw %s GB/s; messages, not events)\n' \
                "$label" "$(($1 * 8))" $(echo "$t" | cut -d' ' -f1,2) \
                "$msgs" "$(($(echo "$t" | cut -d' ' -f3) / 1024))" - \
                "$sim" "$bw"
            if [ "$2" = 1 ]; then
                echo "$(($1 * 8)) $(echo "$t" | cut -d' ' -f1)" >>"$dir/sgfit"
            fi
        else
            printf '%-34s %7d %9s %9s %12s %11s %6s  (past %s s)\n' \
                "$label" "$(($1 * 8))" cut - - - - "$sglimit"
            cut_rings="$cut_rings$2 "
        fi
    done
}
simgrid

# exponent of column c against ranks: least squares on log-log
#   fit COLUMN WHAT [FILE [WHO]]
fit() {
    awk -v c="$1" -v what="$2" -v who="${4:-ring}" '{x = log($1); y = log($c); n++; sx += x
          sy += y; sxx += x * x; sxy += x * y}
         END {if (n > 1) printf "# %s: %s ~ ranks^%.2f over %d runs (least squares, log-log)\n", who, what, (n * sxy - sx * sy) / (n * sxx - sx * sx), n}' "${3:-$dir/fit}"
}
if [ -f "$dir/fit" ]; then
    fit 2 "wall"
    fit 3 "cpu"
    fit 4 "events"
    # a latency-bound ring across leaves plays more hosts (README
    # "Folding"): per host played, the work is linear in the ranks
    fit 5 "wall per host played"
fi
if [ -f "$dir/sgfit" ]; then
    fit 2 "wall" "$dir/sgfit" "SimGrid, 1 ring"
fi
