#!/bin/sh
# Packet-level scaling (issue 12): ring AllReduce 1 GiB (--algo Ring) on
# DGX H100 rail fat trees of 2 and 16 nodes, and 64 with --scale (minutes);
# then the 16-node AllToAll 64 MiB with --scale. Per run: ranks, events,
# wall and CPU seconds, events per CPU second, peak RSS; then the exponent
# of wall (and CPU) time against ranks from a least-squares fit of the logs
# (1: linear in the work). With --scale also the same ring with the same
# work per rank (16 MiB per node: 8 nodes 128 MiB ... 64 nodes 1 GiB, so
# every rank runs the same slices and the same mix of events): where its
# events per CPU second hold and where they fall shows what the cost per
# event follows (docs/scale-packet.md). Prints figures; never fails on
# speed.
#   scripts/bench_packet.sh [--scale] [NCCLSIM]
set -e
cd "$(dirname "$0")/.."
scale=0
if [ "$1" = "--scale" ]; then scale=1; shift; fi
bin=${1:-./build/ncclsim}
nodes="2 16"
[ $scale = 1 ] && nodes="2 16 64"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
have_time=0
[ -x /usr/bin/time ] && have_time=1

# one LABEL RANKS SCENARIO ARGS...: prints "LABEL RANKS EVENTS WALL CPU RSS_MB"
one() {
    label=$1 ranks=$2
    shift 2
    if [ $have_time = 1 ]; then
        /usr/bin/time -f "TIME %e %U %M" "$bin" run "$@" --quiet --timing \
            >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    else
        "$bin" run "$@" --quiet --timing >"$tmp/out" 2>&1 ||
            { cat "$tmp/out"; return 1; }
    fi
    awk -v l="$label" -v r="$ranks" '
        /# timing:/ { w = $5; ev = $8 }
        /^TIME/     { cpu = $3; rss = $4 / 1024 }
        END {
            if (cpu == "") { cpu = w; rss = -1 }
            printf "%s %d %d %.3f %.3f %.1f\n", l, r, ev, w, cpu, rss
        }' "$tmp/out"
}

scenario() { # NODES COLLECTIVE SIZE
    "$bin" topo build --nodes "$1" --node-preset dgx-h100 \
        --fabric rail-fat-tree -o "$tmp/c$1.json" >/dev/null
    cat >"$tmp/$2$1.json" <<JSON
{"format": "ncclsim-scenario", "version": 1, "name": "$2 $1 nodes",
 "topology": "c$1.json", "collective": "$2", "datatype": "float",
 "op": "sum", "min_bytes": "$3", "max_bytes": "$3", "seed": 1,
 "fidelity": "packet"}
JSON
}

for n in $nodes; do
    scenario "$n" all_reduce_perf 1G
    one ring "$((n * 8))" "$tmp/all_reduce_perf$n.json" --algo Ring \
        >>"$tmp/rows"
done
if [ $scale = 1 ]; then
    scenario 16 alltoall_perf 64M
    one alltoall 128 "$tmp/alltoall_perf16.json" >>"$tmp/rows"
    for n in 8 16 32; do
        scenario "$n" all_reduce_perf "$((n * 16))M"
        one same "$((n * 8))" "$tmp/all_reduce_perf$n.json" --algo Ring \
            >>"$tmp/rows"
    done
    grep '^ring 512 ' "$tmp/rows" | sed 's/^ring/same/' >>"$tmp/rows"
fi

echo "== packet level: ring AllReduce 1 GiB and AllToAll 64 MiB, DGX H100 rail fat tree"
[ $scale = 1 ] &&
    echo "   (same: ring AllReduce of 16 MiB per node, the same work per rank)"
awk '
    { printf "%-9s %6d ranks %11d events %9.2f s wall %9.2f s cpu %7.2f M ev/cpu-s %8.1f MB rss\n",
             $1, $2, $3, $4, $5, $3 / ($5 > 0 ? $5 : 1e-9) / 1e6, $6 }
    $1 == "ring" { n++; x = log($2); sx += x; sxx += x * x
                   yw = log($4 > 0 ? $4 : 1e-9); yc = log($5 > 0 ? $5 : 1e-9)
                   sw += yw; sxw += x * yw; sc += yc; sxc += x * yc
                   ev[n] = $3 / ($5 > 0 ? $5 : 1e-9); rk[n] = $2 }
    $1 == "same" { m++; sev[m] = $3 / ($5 > 0 ? $5 : 1e-9); srk[m] = $2 }
    END {
        if (m >= 2) {
            printf "same work per rank: events per cpu second, against %d ranks:", srk[1]
            for (i = 2; i <= m; i++)
                printf " %d ranks %.2f%s", srk[i], sev[i] / sev[1], i < m ? "," : "\n"
        }
        if (n >= 2) {
            d = n * sxx - sx * sx
            printf "ring: wall time ~ ranks^%.2f, cpu time ~ ranks^%.2f (1: linear)\n",
                   (n * sxw - sx * sw) / d, (n * sxc - sx * sc) / d
            printf "ring: events per cpu second at %d ranks / at %d ranks: %.2f (target >= 0.70)\n",
                   rk[n], rk[1], ev[n] / ev[1]
        }
    }' "$tmp/rows"
