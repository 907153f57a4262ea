#!/bin/sh
# Builds ncclsim (Release) and runs every test. With --sanitize, builds
# with AddressSanitizer + UBSan in build-asan/ and runs the suite there.
set -e
cd "$(dirname "$0")/.."
dir=build
opts="-DCMAKE_BUILD_TYPE=Release"
if [ "$1" = "--sanitize" ]; then
    dir=build-asan
    opts="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNSIM_SANITIZE=ON"
fi
cmake -S . -B "$dir" $opts >/dev/null
cmake --build "$dir" -j"$(nproc)"
cd "$dir"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j"$(nproc)"
