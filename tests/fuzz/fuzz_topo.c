/* SPDX-License-Identifier: MIT
 *
 * fuzz_topo.c - libFuzzer harness for the topology JSON reader
 * (nsim_topo_parse, which also finalizes): on success, a few routes, the
 * nearest NIC of rank 0 and the JSON writer run on what was read, and the
 * written text must read back.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    if (nsim_topo_parse((const char *)data, size, "fuzz.json", &t, &err) !=
        NSIM_OK)
        return 0;
    uint32_t n = nsim_topo_nranks(t);
    for (uint32_t r = 1; r < n && r < 4; r++) {
        const nsim_route *rt;
        if (nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                            nsim_topo_rank_device(t, r), &rt, &err))
            break;
    }
    uint32_t nic;
    if (n > 0)
        (void)nsim_topo_nearest(t, nsim_topo_rank_device(t, 0), NSIM_DEV_NIC,
                                &nic);
    char *text = NULL;
    if (nsim_topo_to_json(t, &text, &err) == NSIM_OK) {
        nsim_topo *back = NULL;
        /* what we write we must read */
        if (nsim_topo_parse(text, strlen(text), "written", &back, &err) !=
            NSIM_OK)
            abort();
        nsim_topo_destroy(back);
        free(text);
    }
    nsim_topo_destroy(t);
    return 0;
}
