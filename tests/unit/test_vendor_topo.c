/* SPDX-License-Identifier: MIT
 *
 * test_vendor_topo.c - every vendor and community NCCL topology file of
 * the test bed (tests/data/xml, copies of ../shared/topologies) either
 * imports and runs a ring AllReduce of 1 GiB at a busbw in its
 * generation's range, or is refused with a message naming the option or
 * the defect; skeletons that leave GPUs to NVML are completed with their
 * board's NVLinks and say so in a note.
 *
 * Ranges (ring, Simple, 8 GPUs in one node): H100/H200 SXM 340-375 GB/s
 * (hardware-facts 1.3: ~370 app-level per direction; the dgx-h100 preset
 * gives 354.85), A100 SXM 200-245 (1.3: ~230 for 12 links), B200/B300
 * 650-760 (1.3: Ring 698); PCIe-only boxes 1-45 GB/s.
 */
#include <stdio.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"
#include "sim/topo/nccl_xml.h"

#define XML NSIM_TEST_DATA "/xml/"

typedef struct vendor_case {
    const char *file;
    const char *gpu_gen;
    double nic_gbit;
    int no_nvlink;
    double lo, hi;       /* busbw range, GB/s; 0, 0: refused */
    const char *expect;  /* refused: in the message; else: in a note */
} vendor_case;

static const vendor_case cases[] = {
    {"nebius-h100-vm", NULL, 0, 0, 340, 375,
     "H100 SXM5 80GB (PCI device 0x2330), sm 90, GDR, as H100 SXM5 on an "
     "HGX H100 board: 18 NVLink4 to 4 NVSwitches"},
    {"azure-ndv5", "h100", 400, 0, 340, 375, "18 NVLink4 to 4 NVSwitches"},
    {"azure-ndv4", "a100", 200, 0, 200, 245, "12 NVLink3 to 6 NVSwitches"},
    {"aws-p4d.24xlarge", NULL, 100, 0, 200, 245, "PCI device 0x20b0"},
    {"aws-p4de.24xlarge", NULL, 100, 0, 200, 245, "PCI device 0x20b2"},
    {"nvidia-dgxa100-mlperf", "a100", 200, 0, 200, 245, "12 NVLink3"},
    {"oci-bm.gpu.b4.8-a100-flattened", "a100", 100, 0, 200, 245,
     "12 NVLink3"},
    {"azure-ndv2", "v100", 100, 1, 1, 45, "--gpu-nvlink none"},
    {"alibaba-simccl-8xa100", NULL, 0, 0, 200, 245, NULL},
    {"hpe-xl675d-8xa100", NULL, 0, 0, 200, 245, NULL},
    {"ibmcloud-gx3d-h100x8", NULL, 0, 0, 340, 375, NULL},
    {"oci-bm.gpu.h100.8", NULL, 0, 0, 340, 375, NULL},
    {"modal-b200-vm", NULL, 0, 0, 650, 760, NULL},
    {"oci-hgx-b300", NULL, 0, 0, 650, 760, NULL},
    {"alibaba-rtpllm-8xl20-cx8", NULL, 400, 0, 1, 45, NULL},
    {"azure-ncv4", NULL, 0, 0, 1, 45, NULL},
    {"community-2xa100pcie-nccl2.30", NULL, 0, 0, 1, 45, NULL},
    {"community-2xa6000-nvlinkbridge", NULL, 0, 0, 1, 45, NULL},
    {"community-8xrtx3090-pcie", NULL, 0, 0, 1, 45, NULL},
    /* refused, each naming what completes it or what is wrong */
    {"azure-ndv4", NULL, 0, 0, 0, 0,
     "a GPU with no sm and no known PCI device id: give its generation "
     "(--gpu-gen GEN"},
    {"azure-ndv5", "h100", 0, 0, 0, 0, "give --nic-speed BW"},
    {"azure-ndv2", "v100", 100, 0, 0, 0,
     "(hybrid cube-mesh) that the file cannot name: not completed; give "
     "--gpu-nvlink none"},
    {"aws-p5.48xlarge", NULL, 400, 0, 0, 0, "no GPU: the file lists no"},
    {"aws-g5.48xlarge", NULL, 100, 0, 0, 0, "no GPU: the file lists no"},
    {"amd-rccl-8xmi300x", NULL, 0, 0, 0, 0, "unknown version \"2\""},
    {"community-hgx-h200-baremetal-partial", NULL, 0, 0, 0, 0,
     "malformed XML: Premature end"},
    {"dell-xe8545-4xa100-mlperf", "a100", 200, 0, 0, 0,
     "bus id 0000:ba:00.0 already used"},
};

/* Ring AllReduce, Simple, of 1 GiB on t (taken over). */
static double allreduce_busbw(nsim_topo *t)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_run_row row;
    nsim_run_opts o = {0};
    NSIM_ASSERT_OK(nsim_scenario_load(
        NSIM_SOURCE_DIR "/scenarios/dgx-h100-allreduce.json", &s, &err));
    nsim_topo_destroy(s->topo);
    s->topo = t;
    s->nchannels = 0; /* the scenario gives none: the new topology's */
    s->nchannels_given = 0;
    s->channels_resolved = 0;
    nsim_scenario_resolve_channels(s);
    memset(&row, 0, sizeof row);
    int rc = nsim_run_size(s, &o, nsim_run_test_bytes(s, 1u << 30), &row,
                           NULL, NULL, &err);
    if (rc != NSIM_OK)
        fprintf(stderr, "\n  run: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, NSIM_OK);
    nsim_scenario_destroy(s);
    return row.busbw; /* GB/s */
}

static void test_every_file(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const vendor_case *k = &cases[i];
        nsim_err err = {0};
        nsim_topo *t = NULL;
        nsim_ncclxml *x = NULL;
        char path[512];
        snprintf(path, sizeof path, XML "%s-topo.xml", k->file);
        const char *files[] = {path};
        nsim_xml_opts o = {.gpu_gen = k->gpu_gen,
                           .nic_speed = k->nic_gbit * 1e9 / 8,
                           .nvlink = k->no_nvlink ? NSIM_XML_NVL_NONE
                                                  : NSIM_XML_NVL_AUTO};
        int rc = nsim_ncclxml_load(files, 1, &o, &t, &x, &err);
        if (rc == NSIM_OK)
            rc = nsim_topo_finalize(t, path, &err);
        if (k->hi == 0) {
            if (rc == NSIM_OK || strstr(err.msg, k->expect) == NULL)
                fprintf(stderr, "\n  %s: expected a refusal with '%s', "
                        "got: %s\n", k->file, k->expect,
                        rc ? err.msg : "ok");
            CU_ASSERT_NOT_EQUAL(rc, NSIM_OK);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, k->expect));
            nsim_topo_destroy(t);
            continue;
        }
        if (rc != NSIM_OK)
            fprintf(stderr, "\n  %s: %s\n", k->file, err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, NSIM_OK);
        int noted = k->expect == NULL;
        for (size_t n = 0; n < nsim_ncclxml_nnotes(x); n++)
            noted |= k->expect && strstr(nsim_ncclxml_note(x, n),
                                         k->expect) != NULL;
        if (!noted)
            fprintf(stderr, "\n  %s: no note says '%s'\n", k->file,
                    k->expect);
        CU_ASSERT(noted);
        nsim_ncclxml_destroy(x);
        double bw = allreduce_busbw(t);
        if (bw < k->lo || bw > k->hi)
            fprintf(stderr, "\n  %s: busbw %.2f GB/s, expected %.0f-%.0f\n",
                    k->file, bw, k->lo, k->hi);
        CU_ASSERT(bw >= k->lo && bw <= k->hi);
    }
}

/* A file that gives every GPU its <gpu> says nothing was assumed; the
 * Nebius skeleton gets exactly the preset's NVLink: 18 links of 25 GB/s
 * from each GPU into one NVSwitch with NVLS. */
static void test_completion_shape(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_ncclxml *x = NULL;
    const char *full[] = {XML "oci-bm.gpu.h100.8-topo.xml"};
    NSIM_ASSERT_OK(nsim_ncclxml_load(full, 1, NULL, &t, &x, &err));
    CU_ASSERT_EQUAL(nsim_ncclxml_nnotes(x), 0);
    nsim_ncclxml_destroy(x);
    nsim_topo_destroy(t);
    const char *neb[] = {XML "nebius-h100-vm-topo.xml"};
    NSIM_ASSERT_OK(nsim_ncclxml_load(neb, 1, NULL, &t, &x, &err));
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "nebius", &err));
    CU_ASSERT_EQUAL(nsim_ncclxml_nnotes(x), 2); /* NVLink, ranks */
    nsim_ncclxml_destroy(x);
    uint32_t nvs, gpus = 0;
    NSIM_ASSERT_OK(nsim_topo_find(t, "h0.nvs", &nvs));
    CU_ASSERT(nsim_topo_device(t, nvs)->nvls);
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i++) {
        const nsim_link *l = nsim_topo_link(t, i);
        if (l->dst != nvs)
            continue;
        CU_ASSERT_EQUAL(nsim_topo_device(t, l->src)->type, NSIM_DEV_GPU);
        CU_ASSERT_EQUAL(l->count, 18);
        CU_ASSERT_DOUBLE_EQUAL(l->lane_bw, 25e9, 1);
        gpus++;
    }
    CU_ASSERT_EQUAL(gpus, 8);
    nsim_topo_destroy(t);
    /* --gpu-nvlink none: the same file without NVLink, said so */
    nsim_xml_opts o = {.nvlink = NSIM_XML_NVL_NONE};
    NSIM_ASSERT_OK(nsim_ncclxml_load(neb, 1, &o, &t, &x, &err));
    CU_ASSERT_NOT_EQUAL(nsim_topo_find(t, "h0.nvs", &nvs), NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(nsim_ncclxml_note(x, 0),
                                  "no NVLink (--gpu-nvlink none)"));
    nsim_ncclxml_destroy(x);
    nsim_topo_destroy(t);
}

/* Every flag a file lacks is named in one message. */
static void test_all_missing_flags_named(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    int rc = nsim_ncclxml_load_file(XML "azure-ndv4-topo.xml", NULL, &t,
                                    &err);
    CU_ASSERT_NOT_EQUAL(rc, NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--gpu-gen GEN"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--nic-speed BW"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(8 such elements)"));
    CU_ASSERT_PTR_NULL(t);
}

CU_TestInfo nsim_test_vendor_topo[] = {
    {"every vendor file imports and runs, or is refused",
     test_every_file},
    {"skeleton completion: the preset's NVLink, a note",
     test_completion_shape},
    {"every missing flag named at once", test_all_missing_flags_named},
    CU_TEST_INFO_NULL,
};
