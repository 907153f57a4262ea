/* SPDX-License-Identifier: MIT
 *
 * test_ncclfiles.c - NCCL topology XML import (bandwidths as NCCL derives
 * them and physical ones, NVSwitch collapse, Broadcom flattening, fused
 * multi-host files, ranks across files), graph XML (channels, NET -> NIC),
 * the NCCL_DEBUG log and nccl-tests readers on the hwdata copies, presets
 * and the cluster builder.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nsim_test.h"
#include "sim/topo/cluster.h"
#include "sim/topo/nccl_graph.h"
#include "sim/topo/nccl_xml.h"
#include "sim/topo/ncclog.h"
#include "sim/topo/presets.h"
#include "sim/topo/topo.h"

#define XML NSIM_TEST_DATA "/xml/"
#define LOGS NSIM_TEST_DATA "/log/"
#define GRAPHS NSIM_TEST_DATA "/graph/"

static const nsim_link *link_between(const nsim_topo *t, const char *a,
                                     const char *b)
{
    uint32_t ia, ib;
    if (nsim_topo_find(t, a, &ia) || nsim_topo_find(t, b, &ib))
        return NULL;
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i++) {
        const nsim_link *l = nsim_topo_link(t, i);
        if (l->src == ia && l->dst == ib)
            return l;
    }
    return NULL;
}

static void test_handmade_nccl_bw(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_xml_opts o = {.bw = NSIM_XML_BW_NCCL};
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(XML "dgx-h100-handmade-host0.xml",
                                          &o, &t, &err));
    CU_ASSERT_EQUAL(nsim_topo_nranks(t), 8);
    const nsim_link *l = link_between(t, "h0.gpu0", "h0.nvs");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->count, 18); /* 5+5+4+4 collapsed into one NVS */
    CU_ASSERT_DOUBLE_EQUAL(l->bw, 370.8e9, 1e6);
    l = link_between(t, "h0.gpu0", "h0.pci0000:15:00.0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_DOUBLE_EQUAL(l->bw, 48e9, 1e6);
    l = link_between(t, "h0.cpu0", "h0.cpu1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_DOUBLE_EQUAL(l->bw, 22e9, 1e6); /* Intel SRP */
    uint32_t nic;
    NSIM_ASSERT_OK(nsim_topo_find(t, "h0.net3", &nic));
    CU_ASSERT_DOUBLE_EQUAL(nsim_topo_device(t, nic)->port_bw, 50e9, 1e3);
    CU_ASSERT_EQUAL(nsim_topo_device(t, nic)->rail, 3);
    const nsim_route *r;
    uint32_t g0 = nsim_topo_rank_device(t, 0);
    NSIM_ASSERT_OK(nsim_topo_route(t, g0, nic, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_PHB);
    nsim_topo_destroy(t);
}

static void test_physical_bw(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(XML "dgx-h100-handmade-host0.xml",
                                          NULL, &t, &err));
    const nsim_link *l = link_between(t, "h0.gpu0", "h0.nvs");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_DOUBLE_EQUAL(l->bw, 450e9, 1e6);
    CU_ASSERT_DOUBLE_EQUAL(nsim_ncclxml_pcie_lane_bw("16 GT/s",
                                                     NSIM_XML_BW_NCCL),
                           1.5e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(nsim_ncclxml_pcie_lane_bw("32 GT/s PCIe/s",
                                                     NSIM_XML_BW_NCCL),
                           0.75e9, 1); /* not NCCL's string: Gen3 */
    CU_ASSERT_DOUBLE_EQUAL(nsim_ncclxml_nvlink_bw(100, NSIM_XML_BW_NCCL),
                           40.1e9, 1);
    nsim_topo_destroy(t);
}

static void test_quirky_files(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    const nsim_route *r;
    /* NVLink bridge: a direct GPU-GPU link of 4 */
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(
        XML "community-2xa6000-nvlinkbridge-topo.xml", NULL, &t, &err));
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                                   nsim_topo_rank_device(t, 1), &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NVL);
    CU_ASSERT_EQUAL(nsim_topo_link(t, r->links[0])->count, 4);
    nsim_topo_destroy(t);
    /* self NVLink ignored: GPUs meet across CPUs */
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(XML "azure-ncv4-topo.xml", NULL,
                                          &t, &err));
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                                   nsim_topo_rank_device(t, 1), &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_SYS);
    nsim_topo_destroy(t);
    /* fused GB300 trays: 2 hosts, one NVLink domain, C2C */
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(
        XML "oci-gb300-nvl72-2tray-fused-topo.xml", NULL, &t, &err));
    CU_ASSERT_EQUAL(nsim_topo_nhosts(t), 2);
    uint32_t a = nsim_topo_rank_device(t, 0), b = nsim_topo_rank_device(t, 7);
    CU_ASSERT_NOT_EQUAL(nsim_topo_device(t, a)->host,
                        nsim_topo_device(t, b)->host);
    NSIM_ASSERT_OK(nsim_topo_route(t, a, b, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NVL);
    nsim_topo_destroy(t);
}

static void test_two_files_one_cluster(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    const char *f[] = {XML "dgx-h100-handmade-host0.xml",
                       XML "dgx-h100-handmade-host1.xml"};
    nsim_fabric_cfg fc = {.kind = NSIM_FABRIC_RAIL_FAT_TREE, .oversub = 1};
    nsim_ncclxml *x = NULL;
    NSIM_ASSERT_OK(nsim_ncclxml_load(f, 2, NULL, &t, &x, &err));
    NSIM_ASSERT_OK(nsim_cluster_add_fabric(t, &fc, &err));
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "pair", &err));
    CU_ASSERT_EQUAL(nsim_topo_nranks(t), 16);
    CU_ASSERT_EQUAL(nsim_ncclxml_nnets(x), 16);
    CU_ASSERT_EQUAL(nsim_ncclxml_net(x, 9)->maxconn, 131072);
    /* ranks 8..15 from the files: rank 8 is host 1's first GPU */
    CU_ASSERT_STRING_EQUAL(
        nsim_topo_device(t, nsim_topo_rank_device(t, 8))->name, "h1.gpu0");
    const nsim_route *r;
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                                   nsim_topo_rank_device(t, 8), &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    nsim_ncclxml_destroy(x);
    nsim_topo_destroy(t);
}

static void test_bad_xml(void)
{
    static const char *const bad[] = {
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
        "class=\"0x030200\"><gpu sm=\"90\" rank=\"0\"><nvlink target=\"0000:"
        "02:00.0\" count=\"2\"/></gpu></pci></cpu></system>",
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
        "class=\"0x030200\"><gpu sm=\"90\" rank=\"0\"/></pci><nic><net "
        "name=\"x\"/></nic></cpu></system>",
        "<system version=\"7\"/>", "<system", "<graphs version=\"1\"/>",
        "<system version=\"1\"><cpu/></system>",
    };
    static const char *const want[] = {"dangling", "no speed",
                                       "unknown version", "malformed",
                                       "<system version", "no numaid"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nsim_err err = {0};
        nsim_topo *t = NULL;
        int rc = nsim_ncclxml_parse(bad[i], strlen(bad[i]), "bad.xml", NULL,
                                    &t, &err);
        CU_ASSERT_EQUAL(rc, NSIM_ECONFIG);
        if (strstr(err.msg, want[i]) == NULL)
            fprintf(stderr, "\n  case %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want[i]));
    }
}

static void test_graph(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_ncclgraph *g = NULL;
    NSIM_ASSERT_OK(nsim_ncclxml_load_file(XML "dgx-h100-handmade-host0.xml",
                                          NULL, &t, &err));
    NSIM_ASSERT_OK(nsim_ncclgraph_load(GRAPHS "two_host_ring.xml", t, &g,
                                       &err));
    const nsim_graph_info *gi = nsim_ncclgraph_find(g, NSIM_GRAPH_RING);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gi);
    CU_ASSERT_EQUAL(gi->pattern, NSIM_PATTERN_RING);
    CU_ASSERT_EQUAL(gi->nchannels, 2);
    CU_ASSERT_DOUBLE_EQUAL(gi->bw_intra, 40e9, 1);
    CU_ASSERT_EQUAL(gi->type_intra, NSIM_PATH_NVL);
    const nsim_graph_chan *c = nsim_ncclgraph_channel(g, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->ngpus, 8);
    CU_ASSERT_EQUAL(c->ranks[0], 1);
    CU_ASSERT_EQUAL(c->ranks[7], 0);
    CU_ASSERT_EQUAL(c->net_in, 1);
    CU_ASSERT_STRING_EQUAL(nsim_topo_device(t, (uint32_t)c->nic_in)->name,
                           "h0.net1");
    CU_ASSERT_STRING_EQUAL(nsim_topo_device(t, (uint32_t)c->nic_out)->name,
                           "h0.net0");
    nsim_ncclgraph_destroy(g);
    int rc = nsim_ncclgraph_load(GRAPHS "rank_out_of_range.xml", t, &g, &err);
    CU_ASSERT_EQUAL(rc, NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":5: <gpu>: rank 9 does not fit"));
    nsim_topo_destroy(t);
}

static void test_log_21(void)
{
    nsim_err err = {0};
    nsim_ncclog *l = NULL;
    NSIM_ASSERT_OK(nsim_ncclog_load(
        LOGS "21_aws-p5-h100-2node-efa-allreduce-nccl2.22.3.txt", &l, &err));
    const nsim_log_info *i = nsim_ncclog_info(l);
    CU_ASSERT_EQUAL(i->nranks, 16);
    CU_ASSERT_EQUAL(i->nnodes, 2);
    CU_ASSERT_EQUAL(i->local_ranks, 8);
    CU_ASSERT_EQUAL(i->coll_channels, 16);
    CU_ASSERT_STRING_EQUAL(i->version, "2.22.3+cuda12.2");
    CU_ASSERT_EQUAL(nsim_ncclog_nrings(l), 16);
    const nsim_log_ring *r = nsim_ncclog_ring(l, 1);
    CU_ASSERT_EQUAL(r->nranks, 16);
    CU_ASSERT_EQUAL(r->ranks[1], 8);
    CU_ASSERT_EQUAL(nsim_ncclog_nranks(l), 16);
    /* every inter-node send of channel 0 leaves on the NIC of its GPU */
    size_t sends = 0;
    for (size_t k = 0; k < nsim_ncclog_nconns(l); k++) {
        const nsim_log_conn *c = nsim_ncclog_conn(l, k);
        if (c->dir != NSIM_LOG_SEND || c->channel != 0)
            continue;
        sends++;
        CU_ASSERT_EQUAL(c->net_dev, c->from % 8);
        CU_ASSERT_STRING_EQUAL(c->transport, "NET");
    }
    CU_ASSERT_EQUAL(sends, 16);
    CU_ASSERT_EQUAL(nsim_ncclog_nrows(l), 32);
    const nsim_nt_row *row = nsim_ncclog_row(l, 0);
    CU_ASSERT_EQUAL(row->size_bytes, 8);
    CU_ASSERT_DOUBLE_EQUAL(row->oop_time_us, 85.70, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(row->ip_time_us, 74.97, 1e-9);
    nsim_ncclog_destroy(l);
}

static void test_tables(void)
{
    static const struct {
        const char *file;
        size_t rows;
        int32_t root;
    } f[] = {
        {"18_a100pcie-2node-ib200-allreduce-gdr-on-1M-1G.txt", 103, -1},
        {"19_a100pcie-2node-ib200-allreduce-gdr-off-1M-1G.txt", 103, -1},
        {"20_a100pcie-2node-ib200-allreduce-gdr-on-smallmsg-1K-steps.txt",
         1024, -1},
        {"28_h100-2node-1gpu-roce400-nogdr-allreduce-moc.txt", 13, -1},
        {"29_h100-2node-4gpu-roce400-nogdr-sendrecv-moc.txt", 13, -1},
        {"43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt", 29, -1},
        {"31_h100-3node-roce200-degraded-allreduce-issue1453.txt", 10, -1},
        {"33_a100-32node-256gpu-4xhdr-allreduce-smallmsg-issue652.txt", 8,
         -1},
        {"39_h100-2node-ndr-allreduce-default-underperf-issue290.txt", 11,
         -1},
        {"12_azure-nd-a100-v4-1node-allreduce-vendor.txt", 0, -1},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        nsim_err err = {0};
        nsim_ncclog *l = NULL;
        char path[512];
        snprintf(path, sizeof path, LOGS "%s", f[i].file);
        NSIM_ASSERT_OK(nsim_ncclog_load(path, &l, &err));
        if (nsim_ncclog_nrows(l) != f[i].rows)
            fprintf(stderr, "\n  %s: %zu rows\n", f[i].file,
                    nsim_ncclog_nrows(l));
        CU_ASSERT_EQUAL(nsim_ncclog_nrows(l), f[i].rows);
        for (size_t k = 0; k < nsim_ncclog_nrows(l); k++) {
            const nsim_nt_row *r = nsim_ncclog_row(l, k);
            CU_ASSERT(r->has_inplace);
            CU_ASSERT(r->oop_time_us > 0);
            CU_ASSERT_EQUAL(r->root, f[i].root);
        }
        nsim_ncclog_destroy(l);
    }
}

static void test_presets_and_cluster(void)
{
    nsim_err err = {0};
    for (const char *const *p = nsim_preset_names(); *p; p++) {
        nsim_topo *t = NULL;
        nsim_fabric_cfg fc = {.kind = NSIM_FABRIC_NONE, .oversub = 1};
        NSIM_ASSERT_OK(nsim_cluster_build(*p, 1, &fc, &t, &err));
        CU_ASSERT_EQUAL(nsim_topo_nranks(t),
                        nsim_preset_gpus(nsim_preset_find(*p)));
        nsim_topo_destroy(t);
    }
    nsim_topo *t = NULL;
    nsim_fabric_cfg fc = {.kind = NSIM_FABRIC_RAIL_FAT_TREE, .oversub = 1};
    clock_t c0 = clock();
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 1024, &fc, &t, &err));
    double s = (double)(clock() - c0) / CLOCKS_PER_SEC;
    CU_ASSERT(s < 2.0); /* ~0.07 s in Release; generous for sanitizers */
    CU_ASSERT_EQUAL(nsim_topo_nranks(t), 8192);
    CU_ASSERT_EQUAL(nsim_topo_nhosts(t), 1024);
    const nsim_route *r;
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 0),
                                   nsim_topo_rank_device(t, 8191), &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    CU_ASSERT(r->npaths > 1); /* equal-cost spine paths kept */
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_ncclfiles[] = {
    {"handmade DGX H100, NCCL bandwidths", test_handmade_nccl_bw},
    {"physical bandwidths, NCCL tables", test_physical_bw},
    {"quirky real files", test_quirky_files},
    {"two host files, one cluster", test_two_files_one_cluster},
    {"bad XML names element and line", test_bad_xml},
    {"graph XML channels and NICs", test_graph},
    {"log of hwdata file 21", test_log_21},
    {"nccl-tests tables of hwdata", test_tables},
    {"presets and the cluster builder", test_presets_and_cluster},
    CU_TEST_INFO_NULL,
};
