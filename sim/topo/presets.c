/* SPDX-License-Identifier: MIT
 *
 * presets.c - the built-in node types (see presets.h). Each preset is a
 * row of figures plus one of three builders: an NVSwitch SXM board with a
 * PCIe switch per GPU+NIC pair, a PCIe-only server, and a GB200 tray.
 * Figures are per direction; sources are the shared fact sheets
 * (hardware-facts.md = hw, nccl-internals.md = nccl).
 */
#include "presets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../core/jread.h"

#define GB 1e9
#define GBIT (1e9 / 8)

typedef struct board {
    const char *gpu_gen, *nic_gen;
    uint32_t gpus, nvlinks;  /* NVLinks per GPU into the NVSwitch fabric */
    double nvlink_bw;        /* per link, bytes/s */
    double pcie_lane_bw;     /* per lane, bytes/s (x16 everywhere) */
    uint32_t nics;           /* compute NICs (one per rail) */
    double nic_bw;           /* per port */
    uint32_t cpus;           /* NUMA nodes holding GPUs */
    double sys_bw;           /* between two of them (nccl 1.3) */
    int two_level;           /* root switch -> 2 switches of GPU+NIC */
    uint32_t nvl_hosts;      /* hosts per NVLink domain */
    int no_p2p;              /* GPUs without peer-to-peer (GeForce) */
} board;

struct nsim_preset {
    const char *name;
    int (*add)(const nsim_preset *p, nsim_topo *t, int32_t host,
               uint32_t rank0, int roce, nsim_err *err);
    board b;
    const char *comment;
};

static const nsim_time NVLINK_LAT = 250000;  /* hw 1.5 (L), as presets */
static const nsim_time PCIE_SW_LAT = 115000; /* hw 2.5, PEX89000 */
static const nsim_time PCIE_RC_LAT = 150000; /* hw 2.5, host share */
static const nsim_time SYS_LAT = 100000;
static const nsim_time C2C_LAT = 100000;

static void dev_init(nsim_device *d, nsim_dev_type type, int32_t host,
                     const char *name)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->type = type;
    d->host = host;
    d->rank = d->rail = -1;
}

static int dev(nsim_topo *t, nsim_dev_type type, int32_t host,
               const char *name, uint32_t *out, nsim_err *err)
{
    nsim_device d;
    dev_init(&d, type, host, name);
    return nsim_topo_add_device(t, &d, out, err);
}

/* The board's NVSwitch; NVLink SHARP (NVLS) from the Hopper generation
 * on (NVSwitch 3 and the Blackwell NVLink Switch; none on A100's:
 * hardware-facts 1.4, "NVLS is a Hopper+ feature"). */
static int nvswitch(nsim_topo *t, const board *b, int32_t host,
                    const char *name, uint32_t *out, nsim_err *err)
{
    nsim_device d;
    dev_init(&d, NSIM_DEV_NVSWITCH, host, name);
    d.nvls = nsim_gpu_gen_sm(b->gpu_gen) >= 90;
    return nsim_topo_add_device(t, &d, out, err);
}

static int gpu(nsim_topo *t, const board *b, int32_t host, uint32_t k,
               uint32_t rank, uint32_t *out, nsim_err *err)
{
    nsim_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "h%d.gpu%u", host, k);
    snprintf(d.gen, sizeof d.gen, "%s", b->gpu_gen);
    d.type = NSIM_DEV_GPU;
    d.host = host;
    d.rank = (int32_t)rank;
    d.rail = -1;
    d.no_p2p = (uint32_t)b->no_p2p;
    return nsim_topo_add_device(t, &d, out, err);
}

static int nic(nsim_topo *t, const board *b, int32_t host, uint32_t k,
               int roce, uint32_t *out, nsim_err *err)
{
    nsim_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "h%d.nic%u", host, k);
    snprintf(d.gen, sizeof d.gen, "%s", b->nic_gen);
    d.type = NSIM_DEV_NIC;
    d.host = host;
    d.rank = -1;
    d.nic_ports = 1;
    d.port_bw = b->nic_bw;
    d.mtu_bytes = 4096;
    d.gdr = 1;
    d.link_layer = roce ? NSIM_LL_ROCE : NSIM_LL_IB;
    d.rail = (int32_t)k;
    return nsim_topo_add_device(t, &d, out, err);
}

/* CPUs (NUMA nodes) joined pairwise, as NCCL joins them. */
static int cpus(nsim_topo *t, const board *b, int32_t host, uint32_t *c,
                nsim_err *err)
{
    char n[NSIM_NAME_MAX];
    for (uint32_t s = 0; s < b->cpus; s++) {
        snprintf(n, sizeof n, "h%d.cpu%u", host, s);
        NSIM_TRY(dev(t, NSIM_DEV_CPU, host, n, &c[s], err));
        for (uint32_t o = 0; o < s; o++)
            NSIM_TRY(nsim_topo_add_link(t, c[o], c[s], NSIM_LINK_SYS,
                                        b->sys_bw, SYS_LAT, 1, NULL, err));
    }
    return NSIM_OK;
}

/* NVSwitch board: GPU k and NIC k under PCIe switch k (hw 6). */
static int add_sxm(const nsim_preset *p, nsim_topo *t, int32_t host,
                   uint32_t rank0, int roce, nsim_err *err)
{
    const board *b = &p->b;
    char n[NSIM_NAME_MAX];
    uint32_t nvs, c[8], g, k, sw, root = 0;
    snprintf(n, sizeof n, "h%d.nvs", host);
    NSIM_TRY(nvswitch(t, b, host, n, &nvs, err));
    NSIM_TRY(cpus(t, b, host, c, err));
    for (uint32_t i = 0; i < b->gpus; i++) {
        uint32_t cpu = c[i * b->cpus / b->gpus];
        if (b->two_level && i % 2 == 0) { /* DGX A100: root per pair */
            snprintf(n, sizeof n, "h%d.pciroot%u", host, i / 2);
            NSIM_TRY(dev(t, NSIM_DEV_PCIE_SWITCH, host, n, &root, err));
            NSIM_TRY(nsim_topo_add_link(t, root, cpu, NSIM_LINK_PCIE,
                                        b->pcie_lane_bw, PCIE_RC_LAT, 16,
                                        NULL, err));
        }
        NSIM_TRY(gpu(t, b, host, i, rank0 + i, &g, err));
        snprintf(n, sizeof n, "h%d.pcisw%u", host, i);
        NSIM_TRY(dev(t, NSIM_DEV_PCIE_SWITCH, host, n, &sw, err));
        NSIM_TRY(nsim_topo_add_link(t, g, nvs, NSIM_LINK_NVLINK,
                                    b->nvlink_bw, NVLINK_LAT, b->nvlinks,
                                    NULL, err));
        NSIM_TRY(nsim_topo_add_link(t, g, sw, NSIM_LINK_PCIE,
                                    b->pcie_lane_bw, PCIE_SW_LAT, 16, NULL,
                                    err));
        NSIM_TRY(nsim_topo_add_link(t, sw, b->two_level ? root : cpu,
                                    NSIM_LINK_PCIE, b->pcie_lane_bw,
                                    b->two_level ? PCIE_SW_LAT : PCIE_RC_LAT,
                                    16, NULL, err));
        if (i >= b->nics)
            continue;
        NSIM_TRY(nic(t, b, host, i, roce, &k, err));
        NSIM_TRY(nsim_topo_add_link(t, k, sw, NSIM_LINK_PCIE,
                                    b->pcie_lane_bw, PCIE_SW_LAT, 16, NULL,
                                    err));
    }
    return NSIM_OK;
}

/* PCIe-only server: the GPUs spread over b->cpus switches (one per CPU),
 * NIC k under switch k. */
static int add_pcie(const nsim_preset *p, nsim_topo *t, int32_t host,
                    uint32_t rank0, int roce, nsim_err *err)
{
    const board *b = &p->b;
    char n[NSIM_NAME_MAX];
    uint32_t c[8], sw[8], g, k;
    NSIM_TRY(cpus(t, b, host, c, err));
    for (uint32_t s = 0; s < b->cpus; s++) {
        snprintf(n, sizeof n, "h%d.pcisw%u", host, s);
        NSIM_TRY(dev(t, NSIM_DEV_PCIE_SWITCH, host, n, &sw[s], err));
        NSIM_TRY(nsim_topo_add_link(t, sw[s], c[s], NSIM_LINK_PCIE,
                                    b->pcie_lane_bw, PCIE_RC_LAT, 16, NULL,
                                    err));
    }
    for (uint32_t i = 0; i < b->gpus; i++) {
        NSIM_TRY(gpu(t, b, host, i, rank0 + i, &g, err));
        NSIM_TRY(nsim_topo_add_link(t, g, sw[i * b->cpus / b->gpus],
                                    NSIM_LINK_PCIE, b->pcie_lane_bw,
                                    PCIE_SW_LAT, 16, NULL, err));
    }
    for (uint32_t i = 0; i < b->nics; i++) {
        NSIM_TRY(nic(t, b, host, i, roce, &k, err));
        NSIM_TRY(nsim_topo_add_link(t, k, sw[i % b->cpus], NSIM_LINK_PCIE,
                                    b->pcie_lane_bw, PCIE_SW_LAT, 16, NULL,
                                    err));
    }
    return NSIM_OK;
}

/* GB200 compute tray: 2 Grace CPUs, each with 2 GPUs over C2C and 2 NICs
 * over PCIe Gen5 x16; the GPUs' NVLinks go to the domain's NVSwitch,
 * created with the domain's first tray. */
static int add_gb200(const nsim_preset *p, nsim_topo *t, int32_t host,
                     uint32_t rank0, int roce, nsim_err *err)
{
    const board *b = &p->b;
    char n[NSIM_NAME_MAX];
    uint32_t c[2], g, k, nvs;
    int32_t first = host - host % (int32_t)b->nvl_hosts;
    snprintf(n, sizeof n, "nvl%d.nvs", first / (int32_t)b->nvl_hosts);
    if (host == first) {
        NSIM_TRY(nvswitch(t, b, host, n, &nvs, err));
    } else if (nsim_topo_find(t, n, &nvs) != NSIM_OK) {
        return NSIM_ERR(err, NSIM_EINVAL, "%s: node %d added before the "
                        "first node of its NVLink domain", p->name, host);
    }
    NSIM_TRY(cpus(t, b, host, c, err));
    for (uint32_t i = 0; i < b->gpus; i++) {
        NSIM_TRY(gpu(t, b, host, i, rank0 + i, &g, err));
        NSIM_TRY(nsim_topo_add_link(t, g, nvs, NSIM_LINK_NVLINK,
                                    b->nvlink_bw, NVLINK_LAT, b->nvlinks,
                                    NULL, err));
        /* 5 C2C links of 44712 MB/s per GPU (oci-gb300 topology dump) */
        NSIM_TRY(nsim_topo_add_link(t, g, c[i / 2], NSIM_LINK_C2C,
                                    44.712 * GB, C2C_LAT, 5, NULL, err));
        NSIM_TRY(nic(t, b, host, i, roce, &k, err));
        NSIM_TRY(nsim_topo_add_link(t, k, c[i / 2], NSIM_LINK_PCIE,
                                    b->pcie_lane_bw, PCIE_RC_LAT, 16, NULL,
                                    err));
    }
    return NSIM_OK;
}

static const nsim_preset presets[] = {
    {"dgx-a100", add_sxm,
     {"a100", "cx6", 8, 12, 25 * GB, 1.969 * GB, 8, 200 * GBIT, 4, 16 * GB,
      1, 1},
     "DGX A100: 8 A100 SXM4, 12 NVLink3 each at 25 GB/s into the NVSwitch "
     "fabric (6 NVSwitch gen2, collapsed into one as NCCL does; hw 1.1, "
     "1.4, 6); 8 ConnectX-6 HDR 200 Gb/s IB compute NICs, one per GPU "
     "(hw 6); PCIe Gen4 x16 at 1.969 GB/s per lane (hw 2.1); per NUMA "
     "node a root switch over 2 switches of 1 GPU + 1 NIC (PIX), 4 NUMA "
     "nodes on 2 AMD EPYC Rome joined at NCCL's AMD 16 GB/s (hw 6, "
     "nvidia-dgxa100 topology file, nccl 1.3)"},
    {"dgx-h100", add_sxm,
     {"h100", "cx7", 8, 18, 25 * GB, 3.938 * GB, 8, 400 * GBIT, 2, 22 * GB,
      0, 1},
     "DGX H100: 8 H100 SXM5, 18 NVLink4 each at 25 GB/s post-FEC into 4 "
     "NVSwitch gen3 (collapsed into one; hw 1.1, 1.4, 6); 8 ConnectX-7 "
     "NDR 400 Gb/s, one per GPU under a shared PCIe Gen5 switch (3.938 "
     "GB/s per lane, hw 2.1, 6); 2 Sapphire Rapids sockets at NCCL's SRP "
     "22 GB/s (nccl 1.3)"},
    {"hgx-h100", add_sxm,
     {"h100", "cx7", 8, 18, 25 * GB, 3.938 * GB, 8, 400 * GBIT, 2, 22 * GB,
      0, 1},
     "HGX H100 8-GPU (OEM): the DGX H100 fabric - 18 NVLink4 at 25 GB/s "
     "per GPU, 4 NVSwitch gen3 collapsed, 1 ConnectX-7 400G per GPU under "
     "a Broadcom PEX890xx PCIe Gen5 switch, 2 sockets at 22 GB/s (hw 1.1, "
     "6; nccl 1.3)"},
    {"hgx-h200", add_sxm,
     {"h200", "cx7", 8, 18, 25 * GB, 3.938 * GB, 8, 400 * GBIT, 2, 22 * GB,
      0, 1},
     "HGX H200 8-GPU: same NVLink4 fabric as H100 (18 links at 25 GB/s, 4 "
     "NVSwitch gen3; hw 6), H200 141 GB; 1 ConnectX-7 400G per GPU under a "
     "PEX890xx Gen5 switch (Supermicro/Azure ND H200 v5; hw 6); 2 Sapphire/"
     "Emerald Rapids sockets at NCCL's SRP 22 GB/s (nccl 1.3)"},
    {"pcie-8xl40s", add_pcie,
     {"l40s", "cx7", 8, 0, 0, 1.969 * GB, 2, 200 * GBIT, 2, 22 * GB, 0, 1},
     "8 L40S PCIe server (no NVLink): 4 GPUs and 1 NIC (200 Gb/s RoCE/IB) "
     "under each of 2 PCIe Gen4 switches (1.969 GB/s per lane, x16; hw "
     "2.1), one switch per socket, sockets at NCCL's SRP 22 GB/s "
     "(nccl 1.3); L40S class as in hwdata file 27"},
    {"pcie-2gpu-nop2p", add_pcie,
     {"rtx2080ti", "", 2, 0, 0, 0.985 * GB, 0, 0, 1, 0, 0, 1, 1},
     "2 GeForce RTX 2080 Ti under one PCIe Gen3 switch (0.985 GB/s per "
     "lane x16, hw 2.1), PIX between them as nvidia-smi reports, but GPU "
     "peer-to-peer is not supported on GeForce, so NCCL stages through "
     "host memory (SHM); no NIC (hwdata file 23)"},
    {"gb200-nvl", add_gb200,
     {"gb200", "cx7", 4, 18, 50 * GB, 3.938 * GB, 4, 400 * GBIT, 2, 6 * GB,
      0, 18},
     "GB200 NVL72 compute tray: 2 Grace + 4 B200; 18 NVLink5 per GPU at "
     "50 GB/s into the rack's NVLink switch trays (18 chips, one link to "
     "each; hw 1.1, 1.4), modelled as one NVSwitch per 18 trays (72 "
     "GPUs); GPU-Grace C2C 5 x 44.712 GB/s (oci-gb300 topology dump); 4 "
     "ConnectX-7 400G per tray on Gen5 x16 to the Grace; Grace-Grace at "
     "NCCL's ARM 6 GB/s (nccl 1.3, no better figure)"},
};

static const char *const names[] = {"dgx-a100", "dgx-h100", "hgx-h100",
                                    "hgx-h200", "pcie-8xl40s",
                                    "pcie-2gpu-nop2p", "gb200-nvl", NULL};

const nsim_preset *nsim_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const char *const *nsim_preset_names(void) { return names; }
const char *nsim_preset_name(const nsim_preset *p) { return p->name; }
const char *nsim_preset_comment(const nsim_preset *p) { return p->comment; }
uint32_t nsim_preset_gpus(const nsim_preset *p) { return p->b.gpus; }
uint32_t nsim_preset_nvl_hosts(const nsim_preset *p)
{
    return p->b.nvl_hosts;
}

int nsim_preset_add_node(const nsim_preset *p, nsim_topo *t, int32_t host,
                         uint32_t rank0, int roce, nsim_err *err)
{
    return p->add(p, t, host, rank0, roce, err);
}

int nsim_topo_save_commented(const nsim_topo *t, const char *comment,
                             const char *path, nsim_err *err)
{
    char *text = NULL;
    NSIM_TRY(nsim_topo_to_json(t, &text, err));
    if (comment == NULL || comment[0] == '\0') {
        int rc = nsim_write_file_atomic(path, text, strlen(text), err);
        free(text);
        return rc;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *c = root ? cJSON_CreateString(comment) : NULL;
    if (c == NULL) {
        cJSON_Delete(root);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    /* after "name", where a reader looks first */
    cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    c->next = name->next;
    c->prev = name;
    if (name->next != NULL)
        name->next->prev = c;
    name->next = c;
    c->string = strdup("comment");
    char *out = c->string ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (out == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    size_t n = strlen(out);
    out[n] = '\n';
    int rc = nsim_write_file_atomic(path, out, n + 1, err);
    free(out);
    return rc;
}
