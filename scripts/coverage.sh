#!/bin/sh
# Line coverage of sim/ and models/ by the whole test suite (unit suites
# and CLI tests): builds with gcc --coverage (Debug, -O0) in build-cov/,
# runs ctest there, and prints lcov's table per file and the total.
# Needs lcov (scripts/setup.sh installs it). Exit 1 if a test failed.
#   sh scripts/coverage.sh [--html DIR]
set -e
cd "$(dirname "$0")/.."
command -v lcov >/dev/null 2>&1 || {
    echo "coverage: lcov not found (apt-get install lcov)"; exit 1; }
dir=build-cov
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=--coverage \
    -DCMAKE_EXE_LINKER_FLAGS=--coverage >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
lcov -q --zerocounters --directory "$dir"
status=0
(cd "$dir" && ctest -j"$(nproc)" >ctest.log 2>&1) || {
    status=1; echo "coverage: some tests failed (see $dir/ctest.log)"; }
lcov -q --capture --directory "$dir" --output-file "$dir/all.info" \
    >/dev/null 2>&1
src=$(pwd)
lcov -q --extract "$dir/all.info" "$src/sim/*" "$src/models/*" \
    --output-file "$dir/cov.info" >/dev/null
lcov --list "$dir/cov.info" | sed -e "s|$src/||" -e "/^\[\]$/d"
lcov --summary "$dir/cov.info" 2>&1 | sed -n 's/^ *lines\.*: */coverage: sim\/ and models\/ lines: /p'
if [ "$1" = "--html" ] && [ -n "$2" ]; then
    genhtml -q "$dir/cov.info" --output-directory "$2" && echo "coverage: $2/index.html"
fi
exit $status
