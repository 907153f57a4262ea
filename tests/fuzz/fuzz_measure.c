/* SPDX-License-Identifier: MIT
 *
 * fuzz_measure.c - libFuzzer harness for the measurement readers, seeded
 * with measurement JSON ("ncclsim-measurement" v1) and
 * vendor markdown busbw tables: the bytes go through nsim_measure_import
 * as a user's file (see fuzz_measure_util.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_measure_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_measure_import(data, size, "m.json");
    return 0;
}
