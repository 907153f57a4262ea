/* SPDX-License-Identifier: MIT
 *
 * fuzz_nccltests.c - libFuzzer harness for the measurement readers, seeded
 * with nccl-tests output (all_reduce_perf ... tables, with
 * launcher tags) and NCCL_DEBUG=INFO logs: the bytes go through nsim_measure_import
 * as a user's file (see fuzz_measure_util.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_measure_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_measure_import(data, size, "run.txt");
    return 0;
}
