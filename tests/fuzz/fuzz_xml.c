/* SPDX-License-Identifier: MIT
 *
 * fuzz_xml.c - libFuzzer harness for the NCCL XML readers: the same bytes
 * go to the topology importer (with or without --gpu-gen/--nic-speed,
 * --gpu-nvlink none) and to the graph reader (against a fixed 2-host
 * topology), which must fail cleanly or succeed, never crash.
 */
#include <stddef.h>
#include <stdint.h>

#include "sim/topo/nccl_graph.h"
#include "sim/topo/nccl_xml.h"
#include "sim/topo/presets.h"
#include "sim/topo/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nsim_topo *graph_topo(void)
{
    static nsim_topo *t; /* built once: the harness's fixed input */
    nsim_err err = {0};
    nsim_fabric_cfg cfg = {.kind = NSIM_FABRIC_RAIL_FAT_TREE, .oversub = 1};
    if (t == NULL && nsim_cluster_build("dgx-h100", 2, &cfg, &t, &err))
        t = NULL;
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    /* the input's length picks the options, so that both the completed
     * and the refused skeletons are reached */
    nsim_xml_opts o = {.gpu_gen = size & 2 ? NULL : "h100",
                       .nic_speed = size & 2 ? 0 : 50e9,
                       .nvlink = size & 1 ? NSIM_XML_NVL_NONE
                                          : NSIM_XML_NVL_AUTO};
    if (nsim_ncclxml_parse((const char *)data, size, "fuzz.xml", &o, &t,
                           &err) == NSIM_OK) {
        for (uint32_t r = 0; r < nsim_topo_nranks(t) && r < 4; r++) {
            const nsim_route *rt;
            if (nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                                nsim_topo_rank_device(t, r), &rt, &err))
                break;
        }
        nsim_topo_destroy(t);
    }
    nsim_ncclgraph *g = NULL;
    nsim_topo *gt = graph_topo();
    if (gt != NULL && nsim_ncclgraph_parse((const char *)data, size,
                                           "fuzz.xml", gt, &g, &err) == 0)
        nsim_ncclgraph_destroy(g);
    return 0;
}
