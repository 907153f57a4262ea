#!/bin/bash
# A sweep split over a Slurm job array: each array task runs one shard of
# the points (--shard I/N) with its CPUs, and a last job merges the shards
# (--from) into the same bytes a single machine writes.
#   sbatch scripts/slurm_sweep_array.sh           # the array, then:
#   sbatch --dependency=afterok:JOBID --export=MERGE=1 scripts/slurm_sweep_array.sh
# Without Slurm (SLURM_ARRAY_TASK_ID unset) it runs the shards one after
# the other here and merges them: the same result, for a try-out.
#SBATCH --job-name=ncclsim-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=4
#SBATCH --output=results/slurm-sweep/%A_%a.log
set -e
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
out=${OUT:-results/slurm-sweep}
ns=${NCCLSIM:-build/ncclsim}
args=(scenarios/dgx-h100-2node-allreduce.json
      --set NCCL_IB_QPS_PER_CONNECTION=1,2,4,8 --set nchannels=2:32:x2
      -b 1K -e 512M -f 2 --quiet)
n=${SLURM_ARRAY_TASK_COUNT:-4}
mkdir -p "$out"
shard() { "$ns" sweep "${args[@]}" -j "${SLURM_CPUS_PER_TASK:-1}" --resume \
              --shard "$1/$n" -o "$out/shard-$1.csv"; }
merge() {
    from=()
    for ((i = 0; i < n; i++)); do from+=(--from "$out/shard-$i.csv"); done
    "$ns" sweep "${args[@]}" "${from[@]}" -o "$out/sweep.csv"
    echo "merged: $out/sweep.csv"
}
if [ -n "$MERGE" ]; then
    merge
elif [ -n "$SLURM_ARRAY_TASK_ID" ]; then
    shard "$SLURM_ARRAY_TASK_ID"
else
    for ((i = 0; i < n; i++)); do shard "$i"; done
    merge
fi
