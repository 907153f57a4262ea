/* SPDX-License-Identifier: MIT
 *
 * fuzz_graph.c - libFuzzer harness for the NCCL graph XML reader
 * (NCCL_GRAPH_DUMP_FILE, nsim_ncclgraph_parse) against two fixed
 * topologies: 2 DGX H100 on a rail fat tree and 1 DGX A100; every graph
 * and channel handed out is read. (fuzz_xml also feeds its bytes to this
 * reader; this one starts from graph files.)
 */
#include <stddef.h>
#include <stdint.h>

#include "sim/topo/cluster.h"
#include "sim/topo/nccl_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nsim_topo *fixed(int which)
{
    static nsim_topo *t[2]; /* built once: the harness's fixed input */
    nsim_err err = {0};
    nsim_fabric_cfg cfg = {.kind = which ? NSIM_FABRIC_NONE
                                         : NSIM_FABRIC_RAIL_FAT_TREE,
                           .oversub = 1};
    if (t[which] == NULL &&
        nsim_cluster_build(which ? "dgx-a100" : "dgx-h100", which ? 1 : 2,
                           &cfg, &t[which], &err))
        t[which] = NULL;
    return t[which];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int w = 0; w < 2; w++) {
        nsim_err err = {0};
        nsim_ncclgraph *g = NULL;
        nsim_topo *t = fixed(w);
        if (t == NULL || nsim_ncclgraph_parse((const char *)data, size,
                                              "fuzz.xml", t, &g, &err))
            continue;
        volatile uint64_t sink = 0;
        for (uint32_t i = 0; i < nsim_ncclgraph_ngraphs(g); i++) {
            const nsim_graph_info *gi = nsim_ncclgraph_graph(g, i);
            for (uint32_t c = 0; c < gi->nchannels; c++) {
                const nsim_graph_chan *ch = nsim_ncclgraph_channel(g, i, c);
                for (uint32_t k = 0; k < ch->ngpus; k++)
                    sink += ch->ranks[k];
                sink += (uint64_t)(ch->nic_in + ch->nic_out);
            }
        }
        (void)sink;
        nsim_ncclgraph_destroy(g);
    }
    return 0;
}
