#!/bin/sh
# gpu_validate.sh OUTDIR [BUILD_DIR]
#
# validate's cuda and nccl backends on this machine's first GPU, in one
# short run (a few minutes): builds ncclsim with nvcc (sm_90 and sm_80),
# then writes under OUTDIR
#   gpu.txt                  what nvidia-smi says of the GPU
#   microbench.json          validate --backend cuda --microbench: one
#                            block's copy/reduce rate vs blocks, launch
#                            cost, pinned PCIe rates; also a params file
#   cuda-<coll>.json         the executor's kernels on real data: the
#                            8 ranks of an HGX H200 ring all on this GPU
#                            (checks slots, flags and #wrong; not NVLink)
#   nccl-1gpu.json           NCCL's AllReduce with one rank, 8 B - 1 GiB
#   nccl-1gpu.log            NCCL's INFO log of that run
#   log.txt                  everything printed
# NCCL is libnccl.so.2 of the nvidia-nccl wheel (NCCL_LIB overrides).
# Needs cmake, a C compiler, nvcc, and GSL, cJSON, CUnit, libxml2 where
# cmake finds them. Exit status: the number of steps that failed.
set -u
out=${1:?usage: scripts/gpu_validate.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
mkdir -p "$out" || exit 1
fails=0
step() { # step NAME COMMAND...: run it, log it, count a failure
    name=$1
    shift
    echo "== $name: $*" | tee -a "$out/log.txt"
    start=$(date +%s)
    "$@" >>"$out/log.txt" 2>&1
    rc=$?
    echo "== $name: exit $rc after $(($(date +%s) - start)) s" |
        tee -a "$out/log.txt"
    [ $rc -eq 0 ] || fails=$((fails + 1))
    return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max \
    --format=csv >"$out/gpu.txt" 2>&1
nvcc --version | tail -2 >>"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

step configure cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CUDA_ARCHITECTURES=80;90" || exit 1
step build cmake --build "$build" -j "$(nproc)" --target ncclsim || exit 1
sim=$build/ncclsim

lib=${NCCL_LIB:-}
if [ -z "$lib" ]; then
    lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
fi
[ -f "$lib" ] || lib=$(find / -xdev -name 'libnccl.so.2' 2>/dev/null | head -1)
echo "NCCL: $lib" | tee -a "$out/log.txt"

step microbench "$sim" validate --backend cuda --microbench \
    -o "$out/microbench.json"
for coll in all_reduce_perf all_gather_perf reduce_scatter_perf; do
    step "cuda $coll" "$sim" validate --backend cuda --collective $coll \
        tests/data/validate/h200-8rank-ring.json -o "$out/cuda-$coll.json"
done
rm -f /tmp/ncclsim-nccl-*.log
step "nccl 1 rank" "$sim" validate --backend nccl --nccl-lib "$lib" \
    tests/data/validate/h200-1gpu-allreduce.json -o "$out/nccl-1gpu.json"
cat /tmp/ncclsim-nccl-*.log >"$out/nccl-1gpu.log" 2>/dev/null
echo "== $fails step(s) failed" | tee -a "$out/log.txt"
exit $fails
