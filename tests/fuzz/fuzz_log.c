/* SPDX-License-Identifier: MIT
 *
 * fuzz_log.c - libFuzzer harness for the NCCL_DEBUG=INFO log and
 * nccl-tests reader: any bytes must parse (it never rejects content) and
 * every record handed out must be readable.
 */
#include <stddef.h>
#include <stdint.h>

#include "sim/topo/ncclog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nsim_err err = {0};
    nsim_ncclog *l = NULL;
    volatile uint64_t sink = 0;
    if (nsim_ncclog_parse((const char *)data, size, &l, &err) != 0)
        return 0;
    for (size_t i = 0; i < nsim_ncclog_nrings(l); i++) {
        const nsim_log_ring *r = nsim_ncclog_ring(l, i);
        for (uint32_t k = 0; k < r->nranks; k++)
            sink += r->ranks[k];
    }
    for (size_t i = 0; i < nsim_ncclog_nconns(l); i++)
        sink += (uint64_t)nsim_ncclog_conn(l, i)->net_dev;
    for (size_t i = 0; i < nsim_ncclog_nrows(l); i++)
        sink += nsim_ncclog_row(l, i)->size_bytes;
    nsim_ncclog_destroy(l);
    (void)sink;
    return 0;
}
