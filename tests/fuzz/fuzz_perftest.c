/* SPDX-License-Identifier: MIT
 *
 * fuzz_perftest.c - libFuzzer harness for the measurement readers, seeded
 * with perftest output (ib_write_bw, ib_read_bw, ib_send_bw,
 * *_lat; raw and markdown summaries): the bytes go through nsim_measure_import
 * as a user's file (see fuzz_measure_util.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_measure_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_measure_import(data, size, "perftest.txt");
    return 0;
}
