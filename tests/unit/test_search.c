/* SPDX-License-Identifier: MIT
 *
 * test_search.c - NCCL's channel search (sim/plan/search.c) against the
 * expectations of nccl-internals 2.2 and 2.5: single-host NVSwitch boxes
 * (H100, B200), multi-host DGX H100 and DGX A100, PCIe boxes, the
 * NCCL_CROSS_NIC modes and the NCCL_MIN/MAX_NCHANNELS clamps.
 */
#include <stdlib.h>

#include "nsim_test.h"
#include "sim/plan/search.h"
#include "sim/topo/cluster.h"
#include "sim/plan/plan.h"
#include "sim/topo/nccl_graph.h"
#include "sim/topo/nccl_xml.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"
#define XML NSIM_SOURCE_DIR "/tests/data/xml/"

static nsim_search_graph *search_of(nsim_topo *t, int cross_nic)
{
    nsim_err err = {0};
    nsim_search_graph *g = NULL;
    nsim_search_opts o = {0, cross_nic, 0, 0, -1};
    NSIM_ASSERT_OK(nsim_search_compute(t, &o, &g, &err));
    return g;
}

static nsim_topo *load(const char *name)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(name, &t, &err));
    return t;
}

static nsim_topo *cluster(const char *preset, uint32_t nodes)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_SWITCH, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build(preset, nodes, &cfg, &t, &err));
    return t;
}

/* Every channel holds every GPU of the host once. */
static void check_perms(const nsim_search_graph *g)
{
    for (uint32_t c = 0; c < g->nchannels; c++) {
        uint64_t seen = 0;
        for (uint32_t i = 0; i < g->ngpus; i++)
            seen |= 1ull << (g->intra[c * g->ngpus + i] % 64);
        CU_ASSERT_EQUAL((uint32_t)__builtin_popcountll(seen), g->ngpus);
    }
}

/* 8x H100 + NVSwitch: 18 x 20.6 = 370.8; 6 x 60, duplicated to 12 x 30,
 * 24 communicator channels; rings in index order (PCI order, replayed). */
static void test_h100_one_host(void)
{
    nsim_topo *t = load(SCEN "dgx-h100.topo.json");
    nsim_search_graph *g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->pattern, NSIM_PATTERN_RING);
    CU_ASSERT_EQUAL(g->nchannels, 12);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_intra, 30, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(g->total_bw, 370.8, 1e-3);
    CU_ASSERT_EQUAL(g->type_intra, NSIM_PATH_NVL);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 24);
    for (uint32_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(g->intra[5 * 8 + i], i);
    CU_ASSERT_EQUAL(g->net_in[0], -1);
    check_perms(g);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
}

/* 8x B200 on one NVSwitch (built here): 18 x 40.1 = 721.8; 8 x 90 ->
 * 16 x 45 -> 32 communicator channels. */
static void test_b200_one_host(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    uint32_t nvs, gpu;
    NSIM_ASSERT_OK(nsim_topo_create("b200x8", &t, &err));
    nsim_device d = {.type = NSIM_DEV_NVSWITCH, .host = 0, .rank = -1,
                     .rail = -1};
    snprintf(d.name, sizeof d.name, "h0.nvs");
    NSIM_ASSERT_OK(nsim_topo_add_device(t, &d, &nvs, &err));
    for (int i = 0; i < 8; i++) {
        nsim_device gd = {.type = NSIM_DEV_GPU, .host = 0, .rank = i,
                          .rail = -1};
        snprintf(gd.name, sizeof gd.name, "h0.gpu%d", i);
        snprintf(gd.gen, sizeof gd.gen, "b200");
        NSIM_ASSERT_OK(nsim_topo_add_device(t, &gd, &gpu, &err));
        NSIM_ASSERT_OK(nsim_topo_add_link(t, gpu, nvs, NSIM_LINK_NVLINK,
                                          50e9, 250000, 18, NULL, &err));
    }
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "b200x8", &err));
    nsim_search_graph *g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->nchannels, 16);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_intra, 45, 1e-6);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 32);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
}

/* 2 and 4 DGX H100 with 8 x 400G. NCCL_CROSS_NIC=0: rings enter and leave
 * on one NIC, the last GPU reaching it by PXN through the NIC's GPU, so
 * every GPU's NVLink carries each channel once: 8 x 45 (370.8 / 45, one
 * channel per 50 GB/s NIC), no duplication (sm90, < 50, > 4 channels),
 * 16 communicator channels (the hand count of 2.2). The default (2)
 * also lets odd channels mirror even ones (in on NIC a, out on b and
 * back), where the entry GPU's NVLink is idle: 8 x 48 (PCIe Gen5 x16 =
 * 48 is then the bound), still 16 channels. */
static void test_h100_multi_host(void)
{
    for (uint32_t nodes = 2; nodes <= 4; nodes += 2) {
        nsim_topo *t = cluster("dgx-h100", nodes);
        nsim_search_graph *g = search_of(t, 0);
        CU_ASSERT_EQUAL(g->nchannels, 8);
        CU_ASSERT_DOUBLE_EQUAL(g->bw_inter, 45, 1e-6);
        CU_ASSERT_EQUAL(g->type_inter, NSIM_PATH_PXN);
        CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 16);
        for (uint32_t c = 0; c < 8; c++) { /* channel c on NIC c */
            CU_ASSERT_EQUAL(g->net_in[c], (int32_t)c);
            CU_ASSERT_EQUAL(g->net_out[c], (int32_t)c);
            CU_ASSERT_EQUAL(g->intra[c * 8], c);
        }
        check_perms(g);
        nsim_search_graph_destroy(g);
        g = search_of(t, -1);
        CU_ASSERT_EQUAL(g->nchannels, 8);
        CU_ASSERT_EQUAL(g->crossnic, 2);
        CU_ASSERT_DOUBLE_EQUAL(g->bw_inter, 48, 1e-6);
        CU_ASSERT_EQUAL(g->type_inter, NSIM_PATH_PIX);
        CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 16);
        for (uint32_t c = 1; c < 8; c += 2) { /* odd mirrors even */
            CU_ASSERT_EQUAL(g->net_in[c], g->net_out[c - 1]);
            CU_ASSERT_EQUAL(g->net_out[c], g->net_in[c - 1]);
        }
        check_perms(g);
        nsim_search_graph_destroy(g);
        nsim_topo_destroy(t);
    }
}

/* DGX A100 (12 x 20 NVLink = 240): 6 x 40 fills it, duplicated (sm80) to
 * 12 x 20, 24 channels. Two hosts (8 x 200G, 25 GB/s NETs): one channel
 * per NIC at 24, no duplication (< 25), 16 channels. */
static void test_a100(void)
{
    nsim_topo *t = load(SCEN "dgx-a100.topo.json");
    nsim_search_graph *g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->nchannels, 12);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_intra, 20, 1e-6);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 24);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
    t = cluster("dgx-a100", 2);
    g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->nchannels, 8);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_inter, 24, 1e-6);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 16);
    check_perms(g);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
}

/* PCIe boxes: 8 L40S on two Gen4 switches (24 GB/s), the sockets at 22:
 * one ring at 20 crossing the CPUs once each way (SYS); 2 GPUs under one
 * Gen3 switch: 1 x 12 (PIX). No duplication below 25 GB/s. */
static void test_pcie(void)
{
    nsim_topo *t = load(SCEN "pcie-8xl40s.topo.json");
    nsim_search_graph *g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->nchannels, 1);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_intra, 20, 1e-6);
    CU_ASSERT_EQUAL(g->type_intra, NSIM_PATH_SYS);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 2);
    check_perms(g);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
    t = load(SCEN "pcie-2gpu-nop2p.topo.json");
    g = search_of(t, -1);
    CU_ASSERT_EQUAL(g->nchannels, 1);
    CU_ASSERT_DOUBLE_EQUAL(g->bw_intra, 12, 1e-6);
    CU_ASSERT_EQUAL(g->type_intra, NSIM_PATH_PIX);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 2);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
}

/* NCCL_MIN/MAX_NCHANNELS after the postset (2.5 step 6); the graph's own
 * max channels bound the search; the sm90 multi-host doubling needs a
 * bandwidth above 45. */
static void test_clamps(void)
{
    nsim_err err = {0};
    nsim_topo *t = load(SCEN "dgx-h100.topo.json");
    nsim_search_graph *g = search_of(t, -1);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 16), 16);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 32, 0), 32);
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 4, 8), 8);
    g->nhosts = 2;
    g->nchannels = 4;
    g->bw_intra = 48;
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 16);
    g->bw_intra = 45;
    CU_ASSERT_EQUAL(nsim_search_comm_channels(g, 0, 0), 8);
    nsim_search_graph_destroy(g);
    nsim_search_opts o = {0, -1, 0, 4, -1};
    NSIM_ASSERT_OK(nsim_search_compute(t, &o, &g, &err));
    CU_ASSERT_EQUAL(g->nchannels, 4);
    nsim_search_graph_destroy(g);
    nsim_topo_destroy(t);
}

/* Every host searches, then the channel count is the minimum
 * (ncclTopoPostset). Identical hosts share one search; an OCI H100 host
 * next to a Nebius VM whose XML shows no NVLink (PCIe-only rings, fewer
 * channels) gives two graphs, the VM's count for both, and each host's
 * rings leave on NICs its own search chose. */
static void test_job_hosts(void)
{
    nsim_err err = {0};
    nsim_search_job *j = NULL;
    nsim_topo *t = cluster("dgx-h100", 4);
    NSIM_ASSERT_OK(nsim_search_job_compute(t, NULL, &j, &err));
    CU_ASSERT_EQUAL(nsim_search_job_ngraphs(j), 1);
    CU_ASSERT_EQUAL(nsim_search_job_nchannels(j), 8);
    CU_ASSERT_PTR_EQUAL(nsim_search_job_graph(j, 3), nsim_search_job_graph(j, 0));
    nsim_search_job_destroy(j);
    nsim_topo_destroy(t);

    const char *f[] = {XML "oci-bm.gpu.h100.8-topo.xml",
                       XML "nebius-h100-vm-topo.xml"};
    nsim_fabric_cfg fc = {.kind = NSIM_FABRIC_SWITCH, .oversub = 1};
    /* the Nebius skeleton without NVLink: the weaker host */
    nsim_xml_opts xo = {.nvlink = NSIM_XML_NVL_NONE};
    t = NULL;
    NSIM_ASSERT_OK(nsim_ncclxml_load(f, 2, &xo, &t, NULL, &err));
    NSIM_ASSERT_OK(nsim_cluster_add_fabric(t, &fc, &err));
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "mixed", &err));
    NSIM_ASSERT_OK(nsim_search_job_compute(t, NULL, &j, &err));
    CU_ASSERT_EQUAL(nsim_search_job_ngraphs(j), 2);
    const nsim_search_graph *g0 = nsim_search_job_graph(j, 0);
    const nsim_search_graph *g1 = nsim_search_job_graph(j, 1);
    CU_ASSERT_EQUAL(g0->host, 0);
    CU_ASSERT_EQUAL(g1->host, 1);
    CU_ASSERT(g1->nchannels < g0->nchannels);
    CU_ASSERT_EQUAL(nsim_search_job_nchannels(j), g1->nchannels);
    CU_ASSERT_PTR_EQUAL(nsim_search_job_limiting(j), g1);
    nsim_plan_graph pg;
    nsim_plan_graph_get(t, &pg);
    CU_ASSERT_EQUAL(pg.nchannels, g1->nchannels);
    CU_ASSERT_DOUBLE_EQUAL(pg.bw_intra, g1->bw_intra, 1e-9);

    /* the planner's rings: on host 1 each channel leaves on the NIC of
     * host 1's own graph channel */
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       64u << 20, 4, 0, 1, 4u << 20, NSIM_CHANNEL_DEDICATED,
                       0, 0, NULL, 0, 0};
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, nsim_search_comm_channels(g1, 0, 0));
    uint32_t nch = nsim_search_job_nchannels(j);
    for (uint32_t c = 0; p->ring_nic_out != NULL && c < p->nchannels; c++) {
        uint32_t gc = c % nch;
        if (g1->crossnic == 2 && (gc ^ 1) < nch)
            gc ^= 1; /* host 1 is odd */
        CU_ASSERT_EQUAL(p->ring_nic_out[c * 2 + 1], g1->nic_out[gc]);
    }
    CU_ASSERT_PTR_NOT_NULL(p->ring_nic_out);
    nsim_plan_destroy(p);
    nsim_search_job_destroy(j);
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_search[] = {
    {"8x H100 NVSwitch: 6 x 60 -> 12 x 30, 24 channels", test_h100_one_host},
    {"8x B200 NVSwitch: 8 x 90 -> 16 x 45, 32 channels", test_b200_one_host},
    {"DGX H100 2 and 4 hosts: 8 channels, cross NIC 0 and 2",
     test_h100_multi_host},
    {"DGX A100 one and two hosts", test_a100},
    {"PCIe boxes: 8x L40S, 2 GPUs without P2P", test_pcie},
    {"NCCL_MIN/MAX_NCHANNELS and the doubling rules", test_clamps},
    {"every host searches; channels are the minimum", test_job_hosts},
    CU_TEST_INFO_NULL,
};
