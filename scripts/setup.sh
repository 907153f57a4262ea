#!/bin/sh
# Installs what ncclsim needs on Debian 12 (as root), when missing.
# Build: cmake, gcc, pkg-config; libraries: GSL, cJSON, CUnit, libxml2;
# run time: gnuplot (optional: plots are skipped without it); MPI
# (optional: sweep --mpi): libopenmpi-dev openmpi-bin; libibverbs-dev builds
# validate's verbs backend (CUDA and NCCL are optional, not installed here);
# tools: clang (libFuzzer harnesses, scripts/fuzz.sh), lcov
# (scripts/coverage.sh).
set -e
pkgs="build-essential cmake pkg-config libgsl-dev libcjson-dev libcunit1-dev libxml2-dev gnuplot-nox libopenmpi-dev openmpi-bin libibverbs-dev clang lcov"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing
fi
