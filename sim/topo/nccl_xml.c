/* SPDX-License-Identifier: MIT
 *
 * nccl_xml.c - NCCL topology XML import (see nccl_xml.h for the mapping).
 *
 * Two passes. Reading walks the libxml2 tree of each file into a flat
 * table of "xdev" records (cpu, switch, gpu, nic) with their parent, the
 * PCIe link to it and their line, plus "xref" records for the links that
 * name another element (nvlink, c2c, pcilink). Emitting then trims
 * branches with no GPU or NIC, flattens Broadcom switches, resolves the
 * references and ranks, and adds devices and links to the topology.
 */
#include "nccl_xml.h"
#include "sim/core/jread.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "xmlread.h"

#define GBPS 1e9
#define LOC_BW (5000.0 * GBPS)
#define MAX_DEPTH 48
#define MAX_HOSTS 256
#define MAX_ASSUMED 8
#define NEED_MAX 800
#define PCIE_SW_LAT_PS 115000ull   /* PEX89000 cut-through (hw-facts 2.5) */
#define PCIE_RC_LAT_PS 150000ull   /* host share of end-host PCIe latency */
#define SYS_LAT_PS 100000ull
#define NVLINK_LAT_PS 250000ull    /* as the presets (hw-facts 1.5, L) */
#define C2C_LAT_PS 100000ull

enum { XK_CPU, XK_SW, XK_GPU, XK_NIC };
enum { XR_NVLINK, XR_C2C, XR_PCILINK };

typedef struct xdev {
    int kind;
    int32_t parent; /* xdev index, -1 for a CPU */
    int32_t host;   /* host within the file */
    int line;
    char busid[32];
    uint64_t pciid; /* vendor<<48 | device<<32 | subvendor<<16 | subdev */
    double lane_bw; /* link to the parent */
    uint32_t width;
    int keep, gone;
    int32_t numaid; /* cpu */
    double sys_bw;
    int32_t rank, gdr; /* gpu; gdr also nic */
    uint32_t sm, order;
    char gen[16];
    uint32_t ports; /* nic */
    double speed;
    int32_t netdev;
    nsim_link_layer ll;
    uint32_t idx; /* device index in the topology */
} xdev;

typedef struct xref {
    int kind;
    int32_t from; /* xdev index */
    char target[32];
    uint32_t tclass, count;
    double bw; /* c2c per link, bytes/s */
    int line;
} xref;

typedef struct xfile {
    char src[256];
    xdev *devs;
    size_t ndevs, dcap;
    xref *refs;
    size_t nrefs, rcap;
    uint64_t hash[MAX_HOSTS];
    int32_t nhosts, host_base;
    uint32_t ngpus;
    /* what NCCL would fill in from the machine and we had to assume: one
     * entry per distinct assumption, with the number of devices */
    struct {
        char what[320];
        uint32_t n;
    } assumed[MAX_ASSUMED];
    uint32_t nassumed;
    /* the first element that needs --gpu-gen / --nic-speed / --gpu-nvlink,
     * and how many do: reported together after the whole file is read */
    char need_gen[NEED_MAX], need_speed[NEED_MAX], need_nvl[NEED_MAX];
    uint32_t nneed_gen, nneed_speed, nneed_nvl;
} xfile;

struct nsim_ncclxml {
    nsim_xml_net *nets;
    size_t nnets, cap;
    char (*notes)[NSIM_XML_NOTE_MAX];
    size_t nnotes, ncap;
};

typedef struct xctx {
    xfile *f;
    const nsim_xml_opts *o;
    nsim_ncclxml *x;
    nsim_err *err;
    int32_t host; /* host of the cpu being read */
} xctx;

static const nsim_xml_opts default_opts = {NSIM_XML_BW_PHYSICAL, NULL, 0,
                                           NSIM_XML_NVL_AUTO, NULL, NULL};

/* ---- small helpers ---------------------------------------------------- */

static void warnf(const xctx *c, const char *fmt, ...) NSIM_PRINTF(2, 3);
static void warnf(const xctx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    if (c->o->warn == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->o->warn(c->o->warn_ud, msg);
}

/* "FILE:LINE: <elem key="v">: what" - the element is named by the first
 * identifying attribute it has. */
/* "FILE:LINE: <elem key="v">" into buf. */
static void describe(const xctx *c, const xmlNode *n, char *buf,
                     size_t len)
{
    static const char *const ids[] = {"busid", "name", "target", "numaid",
                                      "dev", "id", NULL};
    char ident[96] = "";
    for (int i = 0; ids[i] != NULL; i++) {
        xmlChar *v = xmlGetProp(n, (const xmlChar *)ids[i]);
        if (v != NULL) {
            snprintf(ident, sizeof ident, " %s=\"%.60s\"", ids[i],
                     (const char *)v);
            xmlFree(v);
            break;
        }
    }
    snprintf(buf, len, "%.200s:%ld: <%s%s>", c->f->src, xmlGetLineNo(n),
             (const char *)n->name, ident);
}

static int failn(const xctx *c, const xmlNode *n, const char *fmt, ...)
    NSIM_PRINTF(3, 4);
static int failn(const xctx *c, const xmlNode *n, const char *fmt, ...)
{
    char what[300], where[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    describe(c, n, where, sizeof where);
    return NSIM_ERR(c->err, NSIM_ECONFIG, "%s: %s", where, what);
}

/* Notes the first element that lacks what only a flag can give (need is
 * one of f->need_*), so that every missing flag is named at once. */
static void need(const xctx *c, const xmlNode *n, char *need, size_t len,
                 uint32_t *count, const char *what)
{
    char where[320];
    if ((*count)++ > 0)
        return;
    describe(c, n, where, sizeof where);
    snprintf(need, len, "%.300s: %.480s", where, what);
}

/* Records one device's assumption (counted per distinct text). */
static void assume(xctx *c, const char *what)
{
    xfile *f = c->f;
    for (uint32_t i = 0; i < f->nassumed; i++)
        if (strcmp(f->assumed[i].what, what) == 0) {
            f->assumed[i].n++;
            return;
        }
    if (f->nassumed == MAX_ASSUMED)
        return; /* a file of more than 8 kinds of skeleton: seen by then */
    snprintf(f->assumed[f->nassumed].what, sizeof f->assumed[0].what, "%s",
             what);
    f->assumed[f->nassumed++].n = 1;
}

static int get_int(const xctx *c, const xmlNode *n, const char *k,
                   int64_t min, int64_t max, int64_t *out)
{
    char buf[64], *end;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return NSIM_OK;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    while (isspace((unsigned char)*end))
        end++;
    if (buf[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
        return failn(c, n, "%s=\"%s\": expected an integer in %lld..%lld",
                     k, buf, (long long)min, (long long)max);
    *out = v;
    return NSIM_OK;
}

static int get_hex(const xctx *c, const xmlNode *n, const char *k,
                   uint64_t *out)
{
    char buf[64], *end;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return NSIM_OK;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 16);
    if (buf[0] == '\0' || buf[0] == '-' || *end != '\0' || errno != 0)
        return failn(c, n, "%s=\"%s\": expected a hexadecimal number", k,
                     buf);
    *out = v;
    return NSIM_OK;
}

static int get_double(const xctx *c, const xmlNode *n, const char *k,
                      double *out)
{
    char buf[64], *end;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return NSIM_OK;
    errno = 0;
    double v = strtod(buf, &end);
    if (buf[0] == '\0' || *end != '\0' || errno != 0 || !(v == v) ||
        v > 1e15 || v < -1e15)
        return failn(c, n, "%s=\"%s\": expected a number", k, buf);
    *out = v;
    return NSIM_OK;
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static int new_dev(xctx *c, int kind, int32_t parent, const xmlNode *n,
                   xdev **out)
{
    xfile *f = c->f;
    if (f->ndevs == f->dcap) {
        size_t cap = f->dcap ? f->dcap * 2 : 64;
        xdev *d = realloc(f->devs, cap * sizeof *d);
        if (d == NULL)
            return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory",
                            f->src);
        f->devs = d;
        f->dcap = cap;
    }
    xdev *d = &f->devs[f->ndevs++];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->parent = parent;
    d->host = c->host;
    d->line = (int)xmlGetLineNo(n);
    d->rank = d->netdev = d->numaid = -1;
    *out = d;
    return NSIM_OK;
}

static int new_ref(xctx *c, int kind, int32_t from, const xmlNode *n,
                   xref **out)
{
    xfile *f = c->f;
    if (f->nrefs == f->rcap) {
        size_t cap = f->rcap ? f->rcap * 2 : 64;
        xref *r = realloc(f->refs, cap * sizeof *r);
        if (r == NULL)
            return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory",
                            f->src);
        f->refs = r;
        f->rcap = cap;
    }
    xref *r = &f->refs[f->nrefs++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->from = from;
    r->line = (int)xmlGetLineNo(n);
    *out = r;
    return NSIM_OK;
}

/* ---- NCCL's figures (nccl-internals.md 1.3) ---------------------------- */

double nsim_ncclxml_nvlink_bw(uint32_t sm, nsim_xml_bw mode)
{
    if (mode == NSIM_XML_BW_NCCL) {
        if (sm == 60)
            return 18.0 * GBPS;
        if (sm == 86)
            return 12.0 * GBPS;
        if (sm == 90)
            return 20.6 * GBPS;
        if (sm >= 100)
            return 40.1 * GBPS;
        return 20.0 * GBPS; /* sm70, sm80, and NCCL's fallback */
    }
    /* Physical per link per direction (hardware-facts 1.1): NVLink1 20,
     * NVLink2-4 25 (NVLink4 post-FEC), NVLink5 50; the sm86 bridge
     * (A6000/3090) 112.5 GB/s both ways over 4 links. */
    if (sm < 70)
        return 20.0 * GBPS;
    if (sm == 86)
        return 14.0625 * GBPS;
    if (sm >= 100)
        return 50.0 * GBPS;
    return 25.0 * GBPS;
}

double nsim_ncclxml_pcie_lane_bw(const char *s, nsim_xml_bw mode)
{
    /* NCCL's kvDictPciGen: exact strings; rate in 100 Mb/s per lane. */
    static const struct {
        const char *s;
        int rate;
    } gens[] = {
        {"2.5 GT/s", 15},         {"5 GT/s", 30},
        {"8 GT/s", 60},           {"16 GT/s", 120},
        {"32 GT/s", 240},         {"2.5 GT/s PCIe", 15},
        {"5.0 GT/s PCIe", 30},    {"8.0 GT/s PCIe", 60},
        {"16.0 GT/s PCIe", 120},  {"32.0 GT/s PCIe", 240},
        {"64.0 GT/s PCIe", 480},
    };
    int rate = 60;
    for (size_t i = 0; s != NULL && i < sizeof gens / sizeof gens[0]; i++)
        if (strcmp(s, gens[i].s) == 0)
            rate = gens[i].rate;
    if (mode == NSIM_XML_BW_NCCL)
        return rate / 80.0 * GBPS;
    switch (rate) { /* hardware-facts 2.1; Gen6 counts 242 of 256 bytes */
    case 15:
        return 0.25 * GBPS;
    case 30:
        return 0.5 * GBPS;
    case 120:
        return 1.969 * GBPS;
    case 240:
        return 3.938 * GBPS;
    case 480:
        return 7.563 * GBPS;
    default:
        return 0.985 * GBPS;
    }
}

/* NCCL's ncclTopoGetInterCpuBw, GB/s. */
static double inter_cpu_bw(const char *arch, const char *vendor, int64_t fam,
                           int64_t model)
{
    if (strcmp(arch, "ppc64") == 0)
        return 32.0;
    if (strcmp(arch, "arm64") == 0)
        return 6.0;
    if (strcmp(arch, "x86_64") != 0)
        return 5000.0;
    if (strcmp(vendor, "GenuineIntel") == 0) {
        if (fam == 6 && model >= 0xCF)
            return 40.0;
        if (fam == 6 && model >= 0x8F)
            return 22.0;
        if (fam == 6 && model >= 0x55)
            return 10.0;
        return 6.0;
    }
    if (strcmp(vendor, "AuthenticAMD") == 0)
        return 16.0;
    if (strstr(vendor, "Shanghai") != NULL || strcmp(vendor, "CentaurHauls") == 0)
        return fam == 7 && model == 0x5B ? 9.0 : 6.0;
    return 5000.0;
}

/* What NVML reports on the machine for a GPU the file lists without its
 * <gpu> (vendor skeletons): the board the part sits on. */
enum {
    FORM_UNKNOWN,  /* not known here: --gpu-nvlink none, or a <gpu> */
    FORM_PCIE,     /* a PCIe card: no NVLink (bridges are not in the file) */
    FORM_NVSWITCH, /* SXM on an NVSwitch board: links GPU -> NVSwitch */
    FORM_MESH,     /* SXM2 GPU-to-GPU mesh (DGX-1): needs NVML's order */
};

typedef struct gpu_part {
    uint32_t dev; /* NVIDIA PCI device id */
    const char *gen, *name;
    int form;
} gpu_part;

/* PCI device ids as the vendor files and dumps of ../shared/topologies
 * carry them (0x20b0 p4d, 0x20b2 p4de/HPE/SimCCL, 0x20b5 NCv4, 0x2330
 * Nebius/IBM/OCI H100, 0x2335 HGX H200 dump, 0x2901 Modal B200, 0x3182
 * OCI B300, 0x31c2 OCI GB300, 0x26ba L20, 0x2204 3090, 0x2230 A6000) and
 * the PCI id list for the others. */
static const gpu_part gpu_parts[] = {
    {0x1db1, "v100", "V100 SXM2 16GB", FORM_MESH},
    {0x1db5, "v100", "V100 SXM2 32GB", FORM_MESH},
    {0x1db4, "v100", "V100 PCIe 16GB", FORM_PCIE},
    {0x1db6, "v100", "V100 PCIe 32GB", FORM_PCIE},
    {0x1df6, "v100", "V100S PCIe", FORM_PCIE},
    {0x1e04, "rtx2080ti", "RTX 2080 Ti", FORM_PCIE},
    {0x1e07, "rtx2080ti", "RTX 2080 Ti", FORM_PCIE},
    {0x20b0, "a100", "A100 SXM4 40GB", FORM_NVSWITCH},
    {0x20b2, "a100", "A100 SXM4 80GB", FORM_NVSWITCH},
    {0x20b3, "a100", "A100 SXM4 64GB", FORM_NVSWITCH},
    {0x20b5, "a100", "A100 PCIe 80GB", FORM_PCIE},
    {0x20f1, "a100", "A100 PCIe 40GB", FORM_PCIE},
    {0x20b7, "a30", "A30", FORM_PCIE},
    {0x2236, "a10", "A10", FORM_PCIE},
    {0x2237, "a10g", "A10G", FORM_PCIE},
    {0x2204, "rtx3090", "RTX 3090", FORM_PCIE},
    {0x2230, "a6000", "RTX A6000", FORM_PCIE},
    {0x26b5, "l40", "L40", FORM_PCIE},
    {0x26b9, "l40s", "L40S", FORM_PCIE},
    {0x26ba, "l20", "L20", FORM_PCIE},
    {0x27b8, "l4", "L4", FORM_PCIE},
    {0x2324, "h800", "H800 SXM5", FORM_UNKNOWN},
    {0x2330, "h100", "H100 SXM5 80GB", FORM_NVSWITCH},
    {0x2331, "h100", "H100 PCIe", FORM_PCIE},
    {0x2339, "h100", "H100 (0x2339)", FORM_UNKNOWN},
    {0x233a, "h100", "H100 (0x233a)", FORM_UNKNOWN},
    {0x2321, "h100", "H100 NVL", FORM_PCIE},
    {0x2335, "h200", "H200 SXM 141GB", FORM_NVSWITCH},
    {0x233b, "h200", "H200 NVL", FORM_PCIE},
    {0x2329, "h20", "H20", FORM_UNKNOWN},
    {0x2342, "gh200", "GH200", FORM_UNKNOWN},
    {0x2901, "b200", "B200", FORM_NVSWITCH},
    {0x2941, "gb200", "GB200", FORM_NVSWITCH},
    {0x3182, "b300", "B300", FORM_NVSWITCH},
    {0x31c2, "gb300", "GB300", FORM_NVSWITCH},
};

/* The boards of a generation named by --gpu-gen or sm alone (no device
 * id): NVLinks per GPU into the NVSwitch fabric as the presets build
 * them (presets.c: dgx-a100 12, dgx-h100/hgx-h100/hgx-h200 18, gb200-nvl
 * 18; hardware-facts 1.1 and 1.4: A100 12 NVLink3 to 6 NVSwitches,
 * H100/H200 18 NVLink4 to 4, B200 18 NVLink5 to 2 NVLink Switch chips);
 * generations that exist only as PCIe cards; V100 SXM2's mesh. */
typedef struct gen_board {
    const char *gen;
    int form;
    uint32_t links;
    const char *board;
} gen_board;

static const gen_board gen_boards[] = {
    {"v100", FORM_MESH, 6, "V100 SXM2 (DGX-1 hybrid cube-mesh)"},
    {"a100", FORM_NVSWITCH, 12, "A100 SXM4 on an HGX A100 board: 12 NVLink3 "
                                "to 6 NVSwitches"},
    {"h100", FORM_NVSWITCH, 18, "H100 SXM5 on an HGX H100 board: 18 NVLink4 "
                                "to 4 NVSwitches"},
    {"h200", FORM_NVSWITCH, 18, "H200 SXM on an HGX H200 board: 18 NVLink4 "
                                "to 4 NVSwitches"},
    {"b200", FORM_NVSWITCH, 18, "B200 on an HGX B200 board: 18 NVLink5 to "
                                "2 NVLink Switch chips"},
    {"b300", FORM_NVSWITCH, 18, "B300 on an HGX B300 board: 18 NVLink5 to "
                                "2 NVLink Switch chips"},
    {"gb200", FORM_NVSWITCH, 18, "GB200: 18 NVLink5 to the rack's NVLink "
                                 "switches"},
    {"gb300", FORM_NVSWITCH, 18, "GB300: 18 NVLink5 to the rack's NVLink "
                                 "switches"},
    {"t4", FORM_PCIE, 0, "T4 (PCIe card)"},
    {"rtx2080ti", FORM_PCIE, 0, "RTX 2080 Ti (PCIe card)"},
    {"a10", FORM_PCIE, 0, "A10 (PCIe card)"},
    {"a10g", FORM_PCIE, 0, "A10G (PCIe card)"},
    {"a30", FORM_PCIE, 0, "A30 (PCIe card)"},
    {"l4", FORM_PCIE, 0, "L4 (PCIe card)"},
    {"l40", FORM_PCIE, 0, "L40 (PCIe card)"},
    {"l40s", FORM_PCIE, 0, "L40S (PCIe card)"},
    {"l20", FORM_PCIE, 0, "L20 (PCIe card)"},
};

static const gpu_part *gpu_part_of(uint64_t pciid)
{
    if ((pciid >> 48) != 0x10de)
        return NULL;
    for (size_t i = 0; i < sizeof gpu_parts / sizeof gpu_parts[0]; i++)
        if (((pciid >> 32) & 0xffff) == gpu_parts[i].dev)
            return &gpu_parts[i];
    return NULL;
}

static const gen_board *gen_board_of(const char *gen)
{
    for (size_t i = 0; i < sizeof gen_boards / sizeof gen_boards[0]; i++)
        if (strcmp(gen, gen_boards[i].gen) == 0)
            return &gen_boards[i];
    return NULL;
}

/* GPU generation from the PCI device id (NVIDIA), else from sm. */
static const char *gpu_gen_of(uint64_t pciid, uint32_t sm)
{
    const gpu_part *p = gpu_part_of(pciid);
    if (p != NULL)
        return p->gen;
    switch (sm) {
    case 60: return "p100";
    case 70: return "v100";
    case 75: return "t4";
    case 80: return "a100";
    case 86: return "a10";
    case 89: return "l40s";
    case 90: return "h100";
    case 100: return "b200";
    case 103: return "b300";
    default: return NULL;
    }
}

static const char *nic_gen_of(uint64_t pciid)
{
    if ((pciid >> 48) != 0x15b3)
        return "";
    switch ((pciid >> 32) & 0xffff) {
    case 0x101b: case 0x101c: return "cx6";
    case 0x101d: return "cx6dx";
    case 0x1021: return "cx7";
    case 0x1023: case 0x2100: return "cx8";
    default: return "";
    }
}

/* ---- reading ----------------------------------------------------------- */

static int find_busid(const xfile *f, int32_t host, const char *busid,
                      int kind)
{
    for (size_t i = 0; i < f->ndevs; i++)
        if (f->devs[i].host == host && f->devs[i].busid[0] &&
            strcmp(f->devs[i].busid, busid) == 0 &&
            (kind < 0 || f->devs[i].kind == kind))
            return (int)i;
    return -1;
}

/* Reads busid, ids and link attributes of a <pci> into d. */
static int read_pci_attrs(xctx *c, const xmlNode *n, xdev *d,
                          uint64_t *cls)
{
    char speed[64] = "";
    uint64_t v = 0, dv = 0, sv = 0, sd = 0;
    int64_t width = 16;
    if (!nsim__xml_attr(n, "busid", d->busid, sizeof d->busid) || d->busid[0] == 0)
        return failn(c, n, "no busid");
    lower(d->busid);
    NSIM_TRY(get_hex(c, n, "class", cls));
    NSIM_TRY(get_hex(c, n, "vendor", &v));
    NSIM_TRY(get_hex(c, n, "device", &dv));
    NSIM_TRY(get_hex(c, n, "subsystem_vendor", &sv));
    NSIM_TRY(get_hex(c, n, "subsystem_device", &sd));
    d->pciid = (v & 0xffff) << 48 | (dv & 0xffff) << 32 |
               (sv & 0xffff) << 16 | (sd & 0xffff);
    NSIM_TRY(get_int(c, n, "link_width", 0, 64, &width));
    nsim__xml_attr(n, "link_speed", speed, sizeof speed);
    d->width = width == 0 ? 16 : (uint32_t)width; /* NCCL: 0 -> 16 */
    d->lane_bw = nsim_ncclxml_pcie_lane_bw(speed, c->o->bw);
    return NSIM_OK;
}

static int check_dup_busid(xctx *c, const xmlNode *n, const char *busid)
{
    int other = find_busid(c->f, c->host, busid, -1);
    if (other >= 0)
        return failn(c, n, "bus id %s already used at line %d", busid,
                     c->f->devs[other].line);
    return NSIM_OK;
}

static int read_nvlink(xctx *c, const xmlNode *n, int32_t gpu)
{
    xref *r;
    int64_t count = 1;
    uint64_t tclass = 0;
    NSIM_TRY(new_ref(c, XR_NVLINK, gpu, n, &r));
    if (!nsim__xml_attr(n, "target", r->target, sizeof r->target))
        return failn(c, n, "no target");
    lower(r->target);
    NSIM_TRY(get_int(c, n, "count", 1, 1024, &count));
    NSIM_TRY(get_hex(c, n, "tclass", &tclass));
    r->count = (uint32_t)count;
    r->tclass = (uint32_t)tclass;
    return NSIM_OK;
}

static int read_c2c(xctx *c, const xmlNode *n, int32_t gpu)
{
    xref *r;
    int64_t count = 1;
    double bw = 0;
    NSIM_TRY(new_ref(c, XR_C2C, gpu, n, &r));
    NSIM_TRY(get_int(c, n, "count", 1, 1024, &count));
    NSIM_TRY(get_double(c, n, "bw", &bw));
    if (!(bw > 0))
        return failn(c, n, "bw: expected a positive number (MB/s per link)");
    r->count = (uint32_t)count;
    r->bw = bw * 1e6;
    return NSIM_OK;
}

/* A GPU the file lists as a bare <pci> (no <gpu>): NCCL takes its sm,
 * NVML index and NVLinks from the machine. Assumes what NVML reports for
 * the part (PCI device id) or the generation (--gpu-gen) and records it;
 * a shape that needs NVML's GPU order (V100 mesh) or is not known here
 * is left to --gpu-nvlink none. */
static int complete_gpu(xctx *c, const xmlNode *pci, size_t di)
{
    xdev *d = &c->f->devs[di];
    const gpu_part *part = gpu_part_of(d->pciid);
    const gen_board *b = gen_board_of(part ? part->gen : d->gen);
    int form = part ? part->form : b ? b->form : FORM_UNKNOWN;
    char name[128], what[320];
    if (part != NULL)
        snprintf(name, sizeof name, "%s (PCI device 0x%04x), sm %u",
                 part->name, part->dev, d->sm);
    else
        snprintf(name, sizeof name, "%s (--gpu-gen; the file gives no PCI "
                 "device id), sm %u", d->gen, d->sm);
    if (c->o->nvlink == NSIM_XML_NVL_NONE)
        form = FORM_PCIE;
    switch (form) {
    case FORM_PCIE:
        snprintf(what, sizeof what, "GPU(s) listed without <gpu> (NCCL "
                 "fills them in from NVML): assumed %s, GDR, no NVLink (%s)",
                 name, c->o->nvlink == NSIM_XML_NVL_NONE
                           ? "--gpu-nvlink none"
                           : "a PCIe card; bridges would come from NVML");
        assume(c, what);
        return NSIM_OK;
    case FORM_NVSWITCH: {
        xref *r;
        NSIM_TRY(new_ref(c, XR_NVLINK, (int32_t)di, pci, &r));
        snprintf(r->target, sizeof r->target, "fffffff:ff:ff.0");
        r->tclass = 0x068000;
        r->count = b->links;
        snprintf(what, sizeof what, "GPU(s) listed without <gpu> (NCCL "
                 "fills them in from NVML): assumed %s, GDR, as %s (one "
                 "NVSwitch node, as NCCL collapses them)", name, b->board);
        assume(c, what);
        return NSIM_OK;
    }
    default:
        snprintf(what, sizeof what, "a %s without <gpu>: NCCL reads its "
                 "NVLinks from NVML, and %s: not completed; give "
                 "--gpu-nvlink none to import it without NVLink, or use "
                 "the machine's NCCL_TOPO_DUMP_FILE",
                 part ? part->name : d->gen,
                 form == FORM_MESH
                     ? "they join GPU pairs (hybrid cube-mesh) that the "
                       "file cannot name"
                     : "the NVLink shape of this part is not known here");
        need(c, pci, c->f->need_nvl, sizeof c->f->need_nvl,
             &c->f->nneed_nvl, what);
        return NSIM_OK;
    }
}

/* A GPU: pci is its <pci> (already in d), g its <gpu> child or NULL. */
static int read_gpu(xctx *c, const xmlNode *pci, const xmlNode *g,
                    size_t di)
{
    int64_t rank = -1, sm = 0, gdr = 1;
    const xmlNode *n = g ? g : pci;
    if (g != NULL) {
        NSIM_TRY(get_int(c, g, "rank", 0, 1 << 24, &rank));
        NSIM_TRY(get_int(c, g, "sm", 0, 1000, &sm));
        NSIM_TRY(get_int(c, g, "gdr", 0, 1, &gdr));
    }
    xdev *d = &c->f->devs[di];
    d->rank = (int32_t)rank;
    d->sm = (uint32_t)sm;
    d->gdr = (int32_t)gdr;
    d->order = c->f->ngpus++;
    const char *gen = gpu_gen_of(d->pciid, d->sm);
    if (gen == NULL)
        gen = c->o->gpu_gen;
    if (gen == NULL || (d->sm == 0 && nsim_gpu_gen_sm(gen) == 0)) {
        need(c, n, c->f->need_gen, sizeof c->f->need_gen, &c->f->nneed_gen,
             d->sm ? "a GPU with an sm and PCI id not known here: give its "
                     "generation (--gpu-gen GEN)"
                   : "a GPU with no sm and no known PCI device id: give its "
                     "generation (--gpu-gen GEN: v100, a100, h100, h200, "
                     "b200, b300, l40s, ...)");
        return NSIM_OK; /* the file fails once it is read */
    }
    snprintf(d->gen, sizeof d->gen, "%s", gen);
    if (d->sm == 0)
        d->sm = nsim_gpu_gen_sm(gen);
    if (g == NULL)
        return complete_gpu(c, pci, di);
    for (const xmlNode *k = g->children; k; k = k->next) {
        if (nsim__xml_is(k, "nvlink"))
            NSIM_TRY(read_nvlink(c, k, (int32_t)di));
        else if (nsim__xml_is(k, "c2c"))
            NSIM_TRY(read_c2c(c, k, (int32_t)di));
    }
    return NSIM_OK;
}

static int add_net_record(xctx *c, const nsim_xml_net *nr)
{
    nsim_ncclxml *x = c->x;
    if (x->nnets == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        nsim_xml_net *p = realloc(x->nets, cap * sizeof *p);
        if (p == NULL)
            return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
        x->nets = p;
        x->cap = cap;
    }
    x->nets[x->nnets++] = *nr;
    return NSIM_OK;
}

/* One <net>: checks its attributes and fills nr. */
static int read_net(xctx *c, const xmlNode *n, nsim_xml_net *nr)
{
    int64_t dev = -1, port = 1, gdr = 0, coll = 0, maxconn = 0;
    double speed = -1, lat = 0;
    memset(nr, 0, sizeof *nr);
    nsim__xml_attr(n, "name", nr->name, sizeof nr->name);
    NSIM_TRY(get_int(c, n, "dev", 0, 1 << 20, &dev));
    NSIM_TRY(get_int(c, n, "port", 0, 255, &port));
    NSIM_TRY(get_int(c, n, "gdr", 0, 1, &gdr));
    NSIM_TRY(get_int(c, n, "coll", 0, 1, &coll));
    NSIM_TRY(get_int(c, n, "maxconn", 0, INT64_C(1) << 40, &maxconn));
    NSIM_TRY(get_hex(c, n, "guid", &nr->guid));
    NSIM_TRY(get_double(c, n, "latency", &lat));
    NSIM_TRY(get_double(c, n, "speed", &speed));
    if (speed < 0 && c->o->nic_speed > 0) {
        char what[200];
        speed = c->o->nic_speed * 8 / 1e6;
        snprintf(what, sizeof what, "NET device(s) without speed (NCCL asks "
                 "the network plugin): assumed %.0f Mb/s (--nic-speed)",
                 speed);
        assume(c, what);
    } else if (speed < 0) {
        need(c, n, c->f->need_speed, sizeof c->f->need_speed,
             &c->f->nneed_speed, "no speed (Mb/s): NCCL would ask the "
             "network plugin; give it in the file or with --nic-speed BW (e.g. --nic-speed \"200 Gb/s\" for HDR "
             "InfiniBand, \"400 Gb/s\" for NDR)");
        speed = 10000; /* the file fails once it is read */
    } else if (speed == 0) {
        warnf(c, "%s:%ld: <net name=\"%s\">: speed 0 taken as 10000 Mb/s, "
                 "as NCCL does", c->f->src, xmlGetLineNo(n), nr->name);
        speed = 10000;
    }
    nr->host = c->host;
    nr->dev = (int32_t)dev;
    nr->port = (int32_t)port;
    nr->gdr = (int32_t)gdr;
    nr->coll = (int32_t)coll;
    nr->maxconn = maxconn;
    nr->speed = speed * 1e6 / 8;
    nr->latency_us = lat;
    return NSIM_OK;
}

/* The nets of a <nic> hang off parent over (lane_bw x width); nets of the
 * same speed share one NIC device (its ports). */
static int read_nic(xctx *c, const xmlNode *nic, int32_t parent,
                    const xdev *link, uint64_t cls)
{
    size_t first = c->f->ndevs;
    for (const xmlNode *k = nic->children; k; k = k->next) {
        if (!nsim__xml_is(k, "net"))
            continue;
        nsim_xml_net nr;
        NSIM_TRY(read_net(c, k, &nr));
        xdev *d = NULL;
        for (size_t i = first; i < c->f->ndevs; i++)
            if (c->f->devs[i].speed == nr.speed)
                d = &c->f->devs[i];
        if (d == NULL) {
            NSIM_TRY(new_dev(c, XK_NIC, parent, k, &d));
            d->lane_bw = link ? link->lane_bw : LOC_BW;
            d->width = link ? link->width : 1;
            d->pciid = link ? link->pciid : 0;
            d->speed = nr.speed;
            d->netdev = nr.dev;
            d->gdr = nr.gdr;
            snprintf(d->gen, sizeof d->gen, "%s", nic_gen_of(d->pciid));
            d->ll = (cls >> 8) == 0x0207 ? NSIM_LL_IB
                    : (cls >> 8) == 0x0200 ? NSIM_LL_ROCE
                    : strncmp(nr.name, "mlx5", 4) == 0 ? NSIM_LL_IB
                                                       : NSIM_LL_ROCE;
        }
        d->ports++;
        d->gdr = d->gdr && nr.gdr;
        nr.nic = (uint32_t)(d - c->f->devs);
        NSIM_TRY(add_net_record(c, &nr));
    }
    if (first == c->f->ndevs)
        warnf(c, "%s:%ld: <nic> holds no <net>: ignored", c->f->src,
              xmlGetLineNo(nic));
    return NSIM_OK;
}

/* A NIC PCI function listed without <nic>/<net> (vendor skeletons). */
static int read_bare_nic(xctx *c, const xmlNode *pci, size_t di,
                         uint64_t cls)
{
    xdev *d = &c->f->devs[di];
    char what[240];
    d->kind = XK_NIC;
    d->speed = c->o->nic_speed;
    d->ports = 1;
    d->gdr = 1;
    d->ll = (cls >> 8) == 0x0207 ? NSIM_LL_IB : NSIM_LL_ROCE;
    if (!(c->o->nic_speed > 0)) {
        need(c, pci, c->f->need_speed, sizeof c->f->need_speed,
             &c->f->nneed_speed, "a NIC (class 0x02...) with no <net> and "
             "so no speed: give --nic-speed BW (e.g. --nic-speed \"200 Gb/s\" for HDR "
             "InfiniBand, \"400 Gb/s\" for NDR)");
        d->speed = 1e9; /* the file fails once it is read */
    } else {
        snprintf(what, sizeof what, "NIC(s) listed without <nic>/<net> "
                 "(NCCL asks the network plugin): assumed 1 port of %.0f "
                 "Gb/s (--nic-speed), GDR, %s (class 0x%06llx)",
                 d->speed * 8 / 1e9, d->ll == NSIM_LL_IB ? "InfiniBand"
                                                         : "Ethernet/RoCE",
                 (unsigned long long)cls);
        assume(c, what);
    }
    snprintf(d->gen, sizeof d->gen, "%s", nic_gen_of(d->pciid));
    nsim_xml_net nr = {.host = c->host, .dev = -1, .port = 1, .gdr = 1,
                       .speed = d->speed, .nic = (uint32_t)di};
    snprintf(nr.name, sizeof nr.name, "pci:%s", d->busid);
    return add_net_record(c, &nr);
}

static int read_pci(xctx *c, const xmlNode *n, int32_t parent, int depth);

static int read_pci_children(xctx *c, const xmlNode *n, size_t di,
                             int depth)
{
    for (const xmlNode *k = n->children; k; k = k->next) {
        if (nsim__xml_is(k, "pci"))
            NSIM_TRY(read_pci(c, k, (int32_t)di, depth + 1));
        else if (nsim__xml_is(k, "nic"))
            NSIM_TRY(read_nic(c, k, (int32_t)di, NULL, 0));
        else if (nsim__xml_is(k, "pcilink")) {
            xref *r;
            NSIM_TRY(new_ref(c, XR_PCILINK, (int32_t)di, k, &r));
            if (!nsim__xml_attr(k, "target", r->target, sizeof r->target))
                return failn(c, k, "no target");
            lower(r->target);
        } else if (k->type == XML_ELEMENT_NODE)
            warnf(c, "%s:%ld: <%s> inside <pci> ignored", c->f->src,
                  xmlGetLineNo(k), (const char *)k->name);
    }
    return NSIM_OK;
}

static const xmlNode *child(const xmlNode *n, const char *name, int *npci)
{
    const xmlNode *found = NULL;
    *npci = 0;
    for (const xmlNode *k = n->children; k; k = k->next) {
        if (nsim__xml_is(k, "pci"))
            (*npci)++;
        if (found == NULL && nsim__xml_is(k, name))
            found = k;
    }
    return found;
}

static int read_pci(xctx *c, const xmlNode *n, int32_t parent, int depth)
{
    uint64_t cls = 0;
    xdev tmp;
    int npci;
    if (depth > MAX_DEPTH)
        return failn(c, n, "nested deeper than %d levels", MAX_DEPTH);
    memset(&tmp, 0, sizeof tmp);
    NSIM_TRY(read_pci_attrs(c, n, &tmp, &cls));
    NSIM_TRY(check_dup_busid(c, n, tmp.busid));
    const xmlNode *gpu = child(n, "gpu", &npci);
    const xmlNode *nic = child(n, "nic", &npci);
    if ((cls >> 8) == 0x0680 && (cls & 0xff) == 0)
        return NSIM_OK; /* an NVSwitch: NCCL reaches it through nvlink */
    if (nic != NULL && npci == 0) /* the NIC's own PCI function */
        return read_nic(c, nic, parent, &tmp, cls);
    xdev *d;
    int kind = gpu != NULL || (cls >> 16) == 0x03 ? XK_GPU : XK_SW;
    NSIM_TRY(new_dev(c, kind, parent, n, &d));
    size_t di = (size_t)(d - c->f->devs);
    int line = d->line;
    *d = tmp;
    d->kind = kind;
    d->parent = parent;
    d->host = c->host;
    d->line = line;
    d->rank = d->netdev = d->numaid = -1;
    if (kind == XK_GPU)
        return read_gpu(c, n, gpu, di);
    if ((cls >> 16) == 0x02 && n->children == NULL)
        return read_bare_nic(c, n, di, cls);
    return read_pci_children(c, n, di, depth);
}

static int host_of(xctx *c, const xmlNode *n)
{
    uint64_t h = 0;
    NSIM_TRY(get_hex(c, n, "host_hash", &h));
    for (int32_t i = 0; i < c->f->nhosts; i++)
        if (c->f->hash[i] == h) {
            c->host = i;
            return NSIM_OK;
        }
    if (c->f->nhosts == MAX_HOSTS)
        return failn(c, n, "more than %d hosts in one file", MAX_HOSTS);
    c->f->hash[c->f->nhosts] = h;
    c->host = c->f->nhosts++;
    return NSIM_OK;
}

static int read_cpu(xctx *c, const xmlNode *n)
{
    char arch[32] = "", vendor[48] = "";
    int64_t numa = INT64_MIN, fam = 0, model = 0;
    xdev *d;
    NSIM_TRY(host_of(c, n));
    NSIM_TRY(get_int(c, n, "numaid", -1, 1 << 20, &numa));
    if (numa == INT64_MIN)
        return failn(c, n, "no numaid");
    NSIM_TRY(get_int(c, n, "familyid", 0, 1 << 20, &fam));
    NSIM_TRY(get_int(c, n, "modelid", 0, 1 << 20, &model));
    nsim__xml_attr(n, "arch", arch, sizeof arch);
    nsim__xml_attr(n, "vendor", vendor, sizeof vendor);
    for (size_t i = 0; i < c->f->ndevs && numa >= 0; i++)
        if (c->f->devs[i].kind == XK_CPU && c->f->devs[i].host == c->host &&
            c->f->devs[i].numaid == numa)
            return failn(c, n, "numaid %lld already used at line %d",
                         (long long)numa, c->f->devs[i].line);
    NSIM_TRY(new_dev(c, XK_CPU, -1, n, &d));
    d->numaid = (int32_t)numa;
    d->sys_bw = inter_cpu_bw(arch, vendor, fam, model) * GBPS;
    size_t di = (size_t)(d - c->f->devs);
    for (const xmlNode *k = n->children; k; k = k->next) {
        if (nsim__xml_is(k, "pci"))
            NSIM_TRY(read_pci(c, k, (int32_t)di, 1));
        else if (nsim__xml_is(k, "nic"))
            NSIM_TRY(read_nic(c, k, (int32_t)di, NULL, 0));
        else if (k->type == XML_ELEMENT_NODE)
            warnf(c, "%s:%ld: <%s> inside <cpu> ignored", c->f->src,
                  xmlGetLineNo(k), (const char *)k->name);
    }
    return NSIM_OK;
}

static int read_system(xctx *c, const xmlNode *root)
{
    char ver[32] = "";
    if (!nsim__xml_is(root, "system"))
        return failn(c, root, "expected <system version=\"1\"> as the "
                              "root element (a graph file? use topo graph)");
    if (!nsim__xml_attr(root, "version", ver, sizeof ver))
        return failn(c, root, "no version (expected version=\"1\")");
    if (strcmp(ver, "1") != 0)
        return failn(c, root, "unknown version \"%s\": this importer reads "
                              "NCCL's version 1 (RCCL's dialect is not "
                              "supported)", ver);
    for (const xmlNode *k = root->children; k; k = k->next) {
        if (nsim__xml_is(k, "cpu"))
            NSIM_TRY(read_cpu(c, k));
        else if (k->type == XML_ELEMENT_NODE)
            warnf(c, "%s:%ld: <%s> inside <system> ignored", c->f->src,
                  xmlGetLineNo(k), (const char *)k->name);
    }
    return NSIM_OK;
}

/* Parses text with libxml2 (no network, no entity expansion) and reads
 * the tree into f. */
static int read_text(xctx *c, const char *text, size_t len)
{
    xmlDocPtr doc = NULL;
    NSIM_TRY(nsim__xml_read(text, len, c->f->src, &doc, c->err));
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc = root == NULL ? NSIM_ERR(c->err, NSIM_ECONFIG,
                                     "%s: no root element", c->f->src)
                          : read_system(c, root);
    xmlFreeDoc(doc);
    return rc;
}

/* ---- emitting ---------------------------------------------------------- */

/* NCCL's getBcmGen: Broadcom PEX Gen4/Gen5 switches whose second level
 * NCCL merges into the first. */
static int bcm_gen(uint64_t id, int level)
{
    if ((id & 0xfffffffffffff000ull) == 0x1000c0101000a000ull)
        return 4;
    if ((id & 0xfffffffffffff000ull) ==
        (0x1000c03010000000ull | (uint64_t)level * 0x1000))
        return 5;
    return 0;
}

static int32_t eff_parent(const xfile *f, size_t i)
{
    int32_t p = f->devs[i].parent;
    while (p >= 0 && f->devs[p].gone)
        p = f->devs[p].parent;
    return p;
}

static void trim_and_flatten(xfile *f)
{
    for (size_t i = 0; i < f->ndevs; i++) {
        xdev *d = &f->devs[i];
        if (d->kind == XK_GPU || d->kind == XK_NIC)
            for (int32_t p = (int32_t)i; p >= 0; p = f->devs[p].parent)
                f->devs[p].keep = 1;
    }
    for (size_t s = 0; s < f->ndevs; s++) {
        int gen = bcm_gen(f->devs[s].pciid, 0);
        if (f->devs[s].kind != XK_SW || f->devs[s].gone || gen == 0)
            continue;
        for (size_t j = s + 1; j < f->ndevs; j++)
            if (f->devs[j].parent == (int32_t)s &&
                f->devs[j].kind == XK_SW &&
                bcm_gen(f->devs[j].pciid, 1) == gen)
                f->devs[j].gone = 1;
    }
}

static int fail_line(const xctx *c, int line, const char *fmt, ...)
    NSIM_PRINTF(3, 4);
static int fail_line(const xctx *c, int line, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return NSIM_ERR(c->err, NSIM_ECONFIG, "%s:%d: %s", c->f->src, line,
                    what);
}

/* Gives NICs without a dev the next free NET index of their host and
 * rejects two NICs claiming one index. */
static int assign_netdevs(xctx *c)
{
    xfile *f = c->f;
    for (size_t i = 0; i < f->ndevs; i++) {
        xdev *d = &f->devs[i];
        if (d->kind != XK_NIC)
            continue;
        for (size_t j = 0; j < i && d->netdev >= 0; j++) {
            const xdev *o = &f->devs[j];
            if (o->kind == XK_NIC && o->host == d->host && o->netdev >= 0 &&
                d->netdev < o->netdev + (int32_t)o->ports &&
                o->netdev < d->netdev + (int32_t)d->ports)
                return fail_line(c, d->line,
                                 "<net dev=\"%d\">: NET device index "
                                 "already used at line %d",
                                 d->netdev, o->line);
        }
    }
    for (size_t i = 0; i < f->ndevs; i++) {
        xdev *d = &f->devs[i];
        if (d->kind != XK_NIC || d->netdev >= 0)
            continue;
        int32_t next = 0;
        for (size_t j = 0; j < f->ndevs; j++) {
            const xdev *o = &f->devs[j];
            if (j != i && o->kind == XK_NIC && o->host == d->host &&
                o->netdev + (int32_t)o->ports > next)
                next = o->netdev + (int32_t)o->ports;
        }
        d->netdev = next;
    }
    for (size_t k = 0; k < c->x->nnets; k++) {
        nsim_xml_net *nr = &c->x->nets[k];
        if (nr->dev < 0 && nr->nic < f->ndevs)
            nr->dev = f->devs[nr->nic].netdev;
    }
    return NSIM_OK;
}

static void dev_name(const xfile *f, size_t i, uint32_t local,
                     char *buf, size_t len)
{
    const xdev *d = &f->devs[i];
    int32_t h = f->host_base + d->host;
    switch (d->kind) {
    case XK_CPU:
        if (d->numaid >= 0)
            snprintf(buf, len, "h%d.cpu%d", h, d->numaid);
        else
            snprintf(buf, len, "h%d.cpu-%zu", h, i);
        break;
    case XK_SW:
        snprintf(buf, len, "h%d.pci%s", h, d->busid);
        break;
    case XK_GPU:
        snprintf(buf, len, "h%d.gpu%u", h, local);
        break;
    default:
        snprintf(buf, len, "h%d.net%d", h, d->netdev);
        break;
    }
}

static int emit_devices(xctx *c, nsim_topo *t)
{
    static const nsim_dev_type types[] = {NSIM_DEV_CPU, NSIM_DEV_PCIE_SWITCH,
                                          NSIM_DEV_GPU, NSIM_DEV_NIC};
    xfile *f = c->f;
    uint32_t ngpu[MAX_HOSTS] = {0};
    for (size_t i = 0; i < f->ndevs; i++) {
        xdev *d = &f->devs[i];
        if (d->gone || (d->kind != XK_CPU && !d->keep))
            continue;
        nsim_device dv;
        memset(&dv, 0, sizeof dv);
        dev_name(f, i, ngpu[d->host], dv.name, sizeof dv.name);
        dv.type = types[d->kind];
        dv.host = f->host_base + d->host;
        dv.rank = d->kind == XK_GPU ? d->rank : -1;
        dv.rail = d->kind == XK_NIC ? d->netdev : -1;
        snprintf(dv.gen, sizeof dv.gen, "%s", d->gen);
        if (d->kind == XK_GPU) {
            dv.sm = d->sm;
            ngpu[d->host]++;
        } else if (d->kind == XK_NIC) {
            dv.nic_ports = d->ports;
            dv.port_bw = d->speed;
            dv.mtu_bytes = 4096;
            dv.gdr = (uint32_t)d->gdr;
            dv.link_layer = d->ll;
        }
        NSIM_TRY(nsim_topo_add_device(t, &dv, &d->idx, c->err));
    }
    return NSIM_OK;
}

static int32_t cpu_of(const xfile *f, int32_t i)
{
    while (i >= 0 && f->devs[i].kind != XK_CPU)
        i = f->devs[i].parent;
    return i;
}

static int emit_tree_links(xctx *c, nsim_topo *t)
{
    xfile *f = c->f;
    for (size_t i = 0; i < f->ndevs; i++) {
        const xdev *d = &f->devs[i];
        if (d->kind == XK_CPU) {
            for (size_t j = i + 1; j < f->ndevs; j++)
                if (f->devs[j].kind == XK_CPU && f->devs[j].host == d->host)
                    NSIM_TRY(nsim_topo_add_link(t, d->idx, f->devs[j].idx,
                                                NSIM_LINK_SYS, d->sys_bw,
                                                SYS_LAT_PS, 1, NULL,
                                                c->err));
            continue;
        }
        if (d->gone || !d->keep)
            continue;
        int32_t p = eff_parent(f, i);
        int to_cpu = f->devs[p].kind == XK_CPU;
        nsim_time lat = d->lane_bw >= LOC_BW ? 0
                        : to_cpu              ? PCIE_RC_LAT_PS
                                              : PCIE_SW_LAT_PS;
        NSIM_TRY(nsim_topo_add_link(t, d->idx, f->devs[p].idx,
                                    NSIM_LINK_PCIE, d->lane_bw, lat,
                                    d->width, NULL, c->err));
    }
    return NSIM_OK;
}

/* The file's NVSwitch, created at its first use. */
static int nvs_dev(xctx *c, nsim_topo *t, const xdev *g, uint32_t *nvs)
{
    if (*nvs != UINT32_MAX)
        return NSIM_OK;
    nsim_device dv;
    memset(&dv, 0, sizeof dv);
    snprintf(dv.name, sizeof dv.name, "h%d.nvs", c->f->host_base + g->host);
    dv.type = NSIM_DEV_NVSWITCH;
    dv.host = c->f->host_base + g->host;
    dv.rank = dv.rail = -1;
    dv.nvls = g->sm >= 90;
    return nsim_topo_add_device(t, &dv, nvs, c->err);
}

static int gpu_pair_done(const xfile *f, size_t upto, const xref *r,
                         int32_t peer)
{
    for (size_t k = 0; k < upto; k++) {
        const xref *o = &f->refs[k];
        if (o->kind != XR_NVLINK || o->from != peer)
            continue;
        if (strcmp(o->target, f->devs[r->from].busid) == 0)
            return 1;
    }
    return 0;
}

static int emit_nvlink(xctx *c, nsim_topo *t, size_t k, uint32_t *nvs_cnt)
{
    xfile *f = c->f;
    const xref *r = &f->refs[k];
    const xdev *g = &f->devs[r->from];
    double lane = nsim_ncclxml_nvlink_bw(g->sm, c->o->bw);
    int peer = find_busid(f, g->host, r->target, XK_GPU);
    if (peer == r->from) {
        warnf(c, "%s:%d: <nvlink target=\"%s\">: the GPU itself: ignored",
              f->src, r->line, r->target);
        return NSIM_OK;
    }
    if (peer >= 0) {
        if (gpu_pair_done(f, k, r, peer))
            return NSIM_OK; /* given from the other side already */
        return nsim_topo_add_link(t, g->idx, f->devs[peer].idx,
                                  NSIM_LINK_NVLINK, lane, NVLINK_LAT_PS,
                                  r->count, NULL, c->err);
    }
    if (r->tclass == 0x068001) {
        int32_t cpu = cpu_of(f, r->from);
        return nsim_topo_add_link(t, g->idx, f->devs[cpu].idx,
                                  NSIM_LINK_NVLINK, lane, NVLINK_LAT_PS,
                                  r->count, NULL, c->err);
    }
    if (r->tclass == 0x068000 || strncmp(r->target, "fffffff", 7) == 0) {
        nvs_cnt[r->from] += r->count;
        return NSIM_OK;
    }
    return fail_line(c, r->line,
                     "<nvlink target=\"%s\">: dangling NVLink target: no "
                     "GPU with that bus id in this host, and tclass "
                     "0x%06x is not an NVSwitch (0x068000) or CPU "
                     "(0x068001)",
                     r->target, r->tclass);
}

static int emit_refs(xctx *c, nsim_topo *t)
{
    xfile *f = c->f;
    uint32_t nvs = UINT32_MAX;
    uint32_t *cnt = calloc(f->ndevs + 1, sizeof *cnt);
    if (cnt == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
    int rc = NSIM_OK;
    for (size_t k = 0; k < f->nrefs && rc == NSIM_OK; k++) {
        const xref *r = &f->refs[k];
        const xdev *d = &f->devs[r->from];
        if (r->kind == XR_NVLINK)
            rc = emit_nvlink(c, t, k, cnt);
        else if (r->kind == XR_C2C)
            rc = nsim_topo_add_link(t, d->idx,
                                    f->devs[cpu_of(f, r->from)].idx,
                                    NSIM_LINK_C2C, r->bw, C2C_LAT_PS,
                                    r->count, NULL, c->err);
        else {
            int o = find_busid(f, d->host, r->target, XK_SW);
            if (o < 0 || !d->keep || d->gone || !f->devs[o].keep ||
                f->devs[o].gone)
                warnf(c, "%s:%d: <pcilink target=\"%s\">: no such switch "
                         "in use: ignored", f->src, r->line, r->target);
            else
                rc = nsim_topo_add_link(t, d->idx, f->devs[o].idx,
                                        NSIM_LINK_PCIE, LOC_BW, 0, 1, NULL,
                                        c->err);
        }
    }
    for (size_t i = 0; i < f->ndevs && rc == NSIM_OK; i++) {
        if (cnt[i] == 0)
            continue;
        const xdev *g = &f->devs[i];
        rc = nvs_dev(c, t, g, &nvs);
        if (rc == NSIM_OK)
            rc = nsim_topo_add_link(
                t, g->idx, nvs, NSIM_LINK_NVLINK,
                nsim_ncclxml_nvlink_bw(g->sm, c->o->bw), NVLINK_LAT_PS,
                cnt[i], NULL, c->err);
    }
    free(cnt);
    return rc;
}

/* ---- ranks across files ------------------------------------------------ */

static int keep_given_ranks(xfile *fs, size_t n, uint32_t total)
{
    uint8_t *seen = calloc(total + 1, 1);
    int ok = seen != NULL;
    for (size_t i = 0; i < n && ok; i++)
        for (size_t j = 0; j < fs[i].ndevs && ok; j++) {
            const xdev *d = &fs[i].devs[j];
            if (d->kind != XK_GPU)
                continue;
            ok = d->rank >= 0 && (uint32_t)d->rank < total && !seen[d->rank];
            if (ok)
                seen[d->rank] = 1;
        }
    free(seen);
    return ok;
}

static int rank_less(const xdev *a, const xdev *b)
{
    int64_t ra = a->rank < 0 ? INT64_MAX : a->rank;
    int64_t rb = b->rank < 0 ? INT64_MAX : b->rank;
    return ra != rb ? ra < rb : a->order < b->order;
}

/* Renumbers each file's GPUs in (rank, document) order after the GPUs of
 * the files before it. Insertion sort: a file has a few dozen GPUs. */
static int renumber_ranks(xfile *fs, size_t n, nsim_err *err)
{
    uint32_t base = 0;
    for (size_t i = 0; i < n; i++) {
        xfile *f = &fs[i];
        xdev **g = malloc((f->ngpus + 1) * sizeof *g);
        if (g == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        uint32_t m = 0;
        for (size_t j = 0; j < f->ndevs; j++)
            if (f->devs[j].kind == XK_GPU)
                g[m++] = &f->devs[j];
        for (uint32_t a = 1; a < m; a++)
            for (uint32_t b = a; b > 0 && rank_less(g[b], g[b - 1]); b--) {
                xdev *tmp = g[b];
                g[b] = g[b - 1];
                g[b - 1] = tmp;
            }
        for (uint32_t a = 0; a < m; a++)
            g[a]->rank = (int32_t)(base + a);
        base += m;
        free(g);
    }
    return NSIM_OK;
}

/* ---- entry points ------------------------------------------------------ */

static void xfile_free(xfile *f)
{
    free(f->devs);
    free(f->refs);
}

void nsim_ncclxml_destroy(nsim_ncclxml *x)
{
    if (x == NULL)
        return;
    free(x->nets);
    free(x->notes);
    free(x);
}

size_t nsim_ncclxml_nnets(const nsim_ncclxml *x) { return x->nnets; }
size_t nsim_ncclxml_nnotes(const nsim_ncclxml *x) { return x->nnotes; }
const char *nsim_ncclxml_note(const nsim_ncclxml *x, size_t i)
{
    return x->notes[i];
}
const nsim_xml_net *nsim_ncclxml_net(const nsim_ncclxml *x, size_t i)
{
    return &x->nets[i];
}

static int add_note(nsim_ncclxml *x, const char *text, nsim_err *err)
{
    if (x->nnotes == x->ncap) {
        size_t cap = x->ncap ? x->ncap * 2 : 8;
        char(*p)[NSIM_XML_NOTE_MAX] = realloc(x->notes, cap * sizeof *p);
        if (p == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        x->notes = p;
        x->ncap = cap;
    }
    snprintf(x->notes[x->nnotes++], NSIM_XML_NOTE_MAX, "%s", text);
    return NSIM_OK;
}

/* The file needed options it was not given: one error naming each. */
static int missing_flags(xctx *c)
{
    const xfile *f = c->f;
    const struct {
        const char *msg;
        uint32_t n;
    } need[] = {{f->need_gen, f->nneed_gen},
                {f->need_speed, f->nneed_speed},
                {f->need_nvl, f->nneed_nvl}};
    char out[3 * NEED_MAX + 64] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (need[i].n == 0)
            continue;
        int w = snprintf(out + len, sizeof out - len, "%s%s", len ? "; " : "",
                         need[i].msg);
        if (w > 0 && (size_t)w < sizeof out - len)
            len += (size_t)w;
        if (need[i].n > 1 && len < sizeof out) {
            w = snprintf(out + len, sizeof out - len, " (%u such elements)",
                         need[i].n);
            if (w > 0 && (size_t)w < sizeof out - len)
                len += (size_t)w;
        }
    }
    return len ? NSIM_ERR(c->err, NSIM_ECONFIG, "%s", out) : NSIM_OK;
}

/* Says, per distinct assumption, what the file left to the machine. */
static int report_assumed(xctx *c)
{
    const xfile *f = c->f;
    char text[NSIM_XML_NOTE_MAX];
    for (uint32_t i = 0; i < f->nassumed; i++) {
        snprintf(text, sizeof text, "%.180s: %u %.300s", f->src,
                 f->assumed[i].n, f->assumed[i].what);
        NSIM_TRY(add_note(c->x, text, c->err));
        if (c->o->warn != NULL)
            c->o->warn(c->o->warn_ud, text);
    }
    return NSIM_OK;
}

/* Reads the XML of one file (text given, or read from path) into f. */
static int read_one(xfile *f, const char *path, const char *text,
                    size_t len, const nsim_xml_opts *o, nsim_ncclxml *x,
                    nsim_err *err)
{
    char *buf = NULL;
    snprintf(f->src, sizeof f->src, "%s", path);
    if (text == NULL) {
        NSIM_TRY(nsim_read_file(path, &buf, &len, err));
        text = buf;
    }
    xctx c = {f, o, x, err, 0};
    int rc = read_text(&c, text, len);
    free(buf);
    if (rc == NSIM_OK && f->ngpus == 0)
        rc = NSIM_ERR(err, NSIM_ECONFIG,
                      "%s: no GPU: the file lists no <gpu> and no GPU-class "
                      "<pci> (a skeleton: NCCL adds the GPUs it finds on the "
                      "machine, and where they sit is not in the file; no "
                      "option completes it: use the machine's "
                      "NCCL_TOPO_DUMP_FILE, or topo build --node-preset)",
                      path);
    if (rc == NSIM_OK)
        rc = missing_flags(&c);
    if (rc == NSIM_OK)
        rc = report_assumed(&c);
    /* net records hold the file's local host and xdev index until
     * emit_file turns them into topology ones */
    if (rc == NSIM_OK)
        rc = assign_netdevs(&c);
    return rc;
}

static int emit_file(xfile *f, const nsim_xml_opts *o, nsim_ncclxml *x,
                     size_t net0, size_t net1, nsim_topo *t, nsim_err *err)
{
    xctx c = {f, o, x, err, 0};
    trim_and_flatten(f);
    NSIM_TRY(emit_devices(&c, t));
    NSIM_TRY(emit_tree_links(&c, t));
    NSIM_TRY(emit_refs(&c, t));
    for (size_t k = net0; k < net1; k++) {
        x->nets[k].host += f->host_base;
        x->nets[k].nic = f->devs[x->nets[k].nic].idx;
    }
    return NSIM_OK;
}

static void topo_name(const char *path, size_t n, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t l = strcspn(b, ".");
    if (n > 1)
        snprintf(buf, len, "%.*s+%zu", (int)(l > 40 ? 40 : l), b, n - 1);
    else
        snprintf(buf, len, "%.*s", (int)(l > 60 ? 60 : l), b);
}

static int load_all(xfile *fs, const char *const *files, size_t n,
                    const char *text, size_t len, const nsim_xml_opts *o,
                    nsim_ncclxml *x, size_t *net_at, nsim_topo **out,
                    nsim_err *err)
{
    uint32_t total = 0;
    for (size_t i = 0; i < n; i++) {
        net_at[i] = x->nnets;
        NSIM_TRY(read_one(&fs[i], files[i], text, len, o, x, err));
        fs[i].host_base = i ? fs[i - 1].host_base + fs[i - 1].nhosts : 0;
        total += fs[i].ngpus;
    }
    net_at[n] = x->nnets;
    if (!keep_given_ranks(fs, n, total)) {
        static const char renum[] = "GPU ranks missing or not 0..N-1 across "
                                    "the files: renumbered file by file "
                                    "(GPUs in rank, then document order)";
        NSIM_TRY(add_note(x, renum, err));
        if (o->warn != NULL)
            o->warn(o->warn_ud, renum);
        NSIM_TRY(renumber_ranks(fs, n, err));
    }
    char name[NSIM_NAME_MAX];
    topo_name(files[0], n, name, sizeof name);
    NSIM_TRY(nsim_topo_create(name, out, err));
    for (size_t i = 0; i < n; i++)
        NSIM_TRY(emit_file(&fs[i], o, x, net_at[i], net_at[i + 1], *out,
                           err));
    return NSIM_OK;
}

static int load_impl(const char *const *files, size_t n, const char *text,
                     size_t len, const nsim_xml_opts *o, nsim_topo **out,
                     nsim_ncclxml **xout, nsim_err *err)
{
    if (n == 0)
        return NSIM_ERR(err, NSIM_EINVAL, "no topology file given");
    if (o == NULL)
        o = &default_opts;
    xfile *fs = calloc(n, sizeof *fs);
    size_t *net_at = calloc(n + 1, sizeof *net_at);
    nsim_ncclxml *x = calloc(1, sizeof *x);
    nsim_topo *t = NULL;
    int rc = fs && net_at && x
                 ? load_all(fs, files, n, text, len, o, x, net_at, &t, err)
                 : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    for (size_t i = 0; fs != NULL && i < n; i++)
        xfile_free(&fs[i]);
    free(fs);
    free(net_at);
    if (rc != NSIM_OK) {
        nsim_topo_destroy(t);
        nsim_ncclxml_destroy(x);
        return rc;
    }
    *out = t;
    if (xout != NULL)
        *xout = x;
    else
        nsim_ncclxml_destroy(x);
    return NSIM_OK;
}

int nsim_ncclxml_load(const char *const *files, size_t n,
                      const nsim_xml_opts *opts, nsim_topo **out,
                      nsim_ncclxml **xml, nsim_err *err)
{
    return load_impl(files, n, NULL, 0, opts, out, xml, err);
}

static int finalize_or_free(nsim_topo *t, const char *what, nsim_topo **out,
                            nsim_err *err)
{
    int rc = nsim_topo_finalize(t, what, err);
    if (rc != NSIM_OK) {
        nsim_topo_destroy(t);
        return rc;
    }
    *out = t;
    return NSIM_OK;
}

int nsim_ncclxml_parse(const char *text, size_t len, const char *source,
                       const nsim_xml_opts *opts, nsim_topo **out,
                       nsim_err *err)
{
    nsim_topo *t = NULL;
    NSIM_TRY(load_impl(&source, 1, text, len, opts, &t, NULL, err));
    return finalize_or_free(t, source, out, err);
}

int nsim_ncclxml_load_file(const char *path, const nsim_xml_opts *opts,
                           nsim_topo **out, nsim_err *err)
{
    nsim_topo *t = NULL;
    NSIM_TRY(load_impl(&path, 1, NULL, 0, opts, &t, NULL, err));
    return finalize_or_free(t, path, out, err);
}
