#!/bin/sh
# Validation against the published measurements in ../shared/hwdata (or
# $NSIM_HWDATA), driven by scripts/validate.tsv (or $NSIM_VALIDATE_TABLE):
# for each dataset, `ncclsim compare` with the default parameters, and
# -- where its machine has other datasets -- `ncclsim calibrate` on those
# others (leave-one-out) followed by `ncclsim compare --params` on it.
# Prints each comparison, then a table: median |error| for sizes >= 1 MiB
# and < 1 MiB and the bias, default and leave-one-out, and the wall time
# of each calibration.
# Usage: scripts/validate.sh [DATASET-ID ...]
#        (default: 15 16 02 03 04 05 06 23 12 28 43 18 19 07 09)
#        NSIM_VALIDATE_NO_LOO=1: default parameters only
#        NSIM_VALIDATE_FIDELITY=flow|packet: every comparison and fit at
#        that fidelity (default: each machine's, scripts/validate.tsv)
set -e
cd "$(dirname "$0")/.."
hw=${NSIM_HWDATA:-../shared/hwdata}
table=${NSIM_VALIDATE_TABLE:-scripts/validate.tsv}
[ -d "$hw" ] || { echo "validate: no hwdata folder at $hw" >&2; exit 1; }
[ -f "$table" ] || { echo "validate: no table $table" >&2; exit 1; }
fidelity=""
case "${NSIM_VALIDATE_FIDELITY:-}" in
"") ;;
flow | packet) fidelity="--fidelity $NSIM_VALIDATE_FIDELITY" ;;
*) echo "validate: NSIM_VALIDATE_FIDELITY is \"$NSIM_VALIDATE_FIDELITY\"; expected flow or packet" >&2
   exit 1 ;;
esac
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
sim=$PWD/build/ncclsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() { # field N LINE
    printf '%s\n' "$2" | cut -d'|' -f"$1"
}
machine_line() {
    grep "^machine|$1|" "$table" | head -n 1
}
dataset_line() {
    grep "^dataset|$1|" "$table" | head -n 1
}

# the scenario of a machine: its topology and a neutral collective (each
# measurement brings its own)
scenario() {
    _sm=$1
    [ -f "$tmp/$_sm.json" ] && { echo "$tmp/$_sm.json"; return; }
    _st=$(field 3 "$(machine_line "$_sm")")
    case "$_st" in
    build:*)
        # shellcheck disable=SC2086
        "$sim" topo build ${_st#build:} -o "$tmp/$_sm.topo.json" >/dev/null
        _st=$tmp/$_sm.topo.json ;;
    *) _st=$PWD/$_st ;;
    esac
    cat > "$tmp/$_sm.json" <<JSON
{"format": "ncclsim-scenario", "version": 1, "name": "$_sm",
 "topology": "$_st", "collective": "all_reduce_perf", "datatype": "float",
 "op": "sum", "min_bytes": "8", "max_bytes": "1G", "step_factor": 2,
 "seed": 1}
JSON
    echo "$tmp/$_sm.json"
}

measurement() { # imports dataset ID into $tmp/ID.json
    _mid=$1
    [ -f "$tmp/$_mid.json" ] && return 0
    _mf=$(ls "$hw"/"$_mid"_*.txt 2>/dev/null | head -n 1)
    [ -n "$_mf" ] || { echo "validate: no hwdata file ${_mid}_*.txt" >&2; return 1; }
    # shellcheck disable=SC2046
    "$sim" measure import --partial "$_mf" \
        $(field 4 "$(dataset_line "$_mid")") -o "$tmp/$_mid.json" >/dev/null
}

collective_of() {
    "$sim" measure show "$tmp/$1.json" | sed -n 's/^ *collective \([a-z]*\),.*/\1/p' | head -n 1
}

summary_of() { # the numbers of compare's summary line: large small bias
    sed -n 's/^summary: median |error| >= 1 MiB \([-0-9.%]*\) (\([0-9]*\) sizes), < 1 MiB \([-0-9.%]*\) (\([0-9]*\) sizes), bias \([-+0-9.%]*\)$/\1 \3 \5/p' "$1" | tail -n 1
}

run_compare() { # ID MACHINE OUT [--params P]
    _cid=$1 _cm=$2 _co=$3
    shift 3
    _cl=$(machine_line "$_cm")
    _cc=$(collective_of "$_cid")
    [ -n "$_cc" ] || _cc=allreduce
    # shellcheck disable=SC2046
    nice -n 10 "$sim" compare "$(scenario "$_cm")" "$tmp/$_cid.json" \
        --collective "$_cc" $(field 4 "$_cl") $(field 6 "$_cl") $fidelity \
        "$@" > "$_co"
}

: > "$tmp/table"
for id in ${*:-15 16 02 03 04 05 06 23 12 28 43 18 19 07 09}; do
    dl=$(dataset_line "$id")
    [ -n "$dl" ] || { echo "validate: dataset $id is not in $table" >&2; continue; }
    m=$(field 3 "$dl")
    measurement "$id" || continue
    echo "== dataset $id on $m: default parameters"
    run_compare "$id" "$m" "$tmp/$id.default.txt" || true
    cat "$tmp/$id.default.txt"
    def=$(summary_of "$tmp/$id.default.txt")
    [ -n "$def" ] || def="- - -"
    loo="- - -" on="-" wall="-"
    others=$(grep "^dataset|[^|]*|$m|" "$table" | cut -d'|' -f2 | grep -v "^$id\$" | tr '\n' ' ')
    if [ -n "$others" ] && [ -z "$NSIM_VALIDATE_NO_LOO" ]; then
        files=""
        for o in $others; do
            measurement "$o" && files="$files $tmp/$o.json"
        done
        ml=$(machine_line "$m")
        echo "== dataset $id: calibrated on $others"
        # shellcheck disable=SC2046,SC2086
        if nice -n 10 "$sim" calibrate "$(scenario "$m")" $files \
                $(field 4 "$ml") $(field 5 "$ml") $fidelity --timing \
                -o "$tmp/$id.loo.params.json" > "$tmp/$id.cal.txt" \
                2> "$tmp/$id.cal.err"; then
            cat "$tmp/$id.cal.txt"
            wall=$(sed -n 's/^calibrate: wall time \([0-9.]*\) s$/\1/p' "$tmp/$id.cal.err")
            run_compare "$id" "$m" "$tmp/$id.loo.txt" \
                --params "$tmp/$id.loo.params.json" || true
            cat "$tmp/$id.loo.txt"
            loo=$(summary_of "$tmp/$id.loo.txt")
            [ -n "$loo" ] || loo="- - -"
            on=$(echo $others | tr ' ' ',')
        else
            cat "$tmp/$id.cal.txt" "$tmp/$id.cal.err"
            loo="fit failed - -"
        fi
    fi
    echo "$id $m $def $loo $on $wall" >> "$tmp/table"
done
echo "== summary: median |error| (>= 1 MiB, < 1 MiB) and bias; default parameters, then leave-one-out${fidelity:+ ($fidelity)}"
printf "%-4s %-26s %8s %8s %8s | %8s %8s %8s  %-22s %s\n" id machine ">=1MiB" "<1MiB" bias \
    ">=1MiB" "<1MiB" bias "calibrated on" "fit s"
while read -r id m d1 d2 d3 l1 l2 l3 on wall; do
    printf "%-4s %-26s %8s %8s %8s | %8s %8s %8s  %-22s %s\n" "$id" "$m" "$d1" "$d2" "$d3" \
        "$l1" "$l2" "$l3" "$on" "$wall"
done < "$tmp/table"
