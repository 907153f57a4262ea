/* SPDX-License-Identifier: MIT
 *
 * cli_topo.c - "ncclsim topo": check, show (with an nvidia-smi-like
 * matrix), import NCCL XML, build clusters from presets, write Graphviz,
 * and print what an NCCL graph XML holds.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "sim/core/fileio.h"
#include "sim/core/units.h"
#include "sim/topo/cluster.h"
#include "sim/topo/nccl_graph.h"
#include "sim/topo/nccl_xml.h"
#include "sim/topo/presets.h"
#include "sim/topo/topo.h"

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

static void print_note(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "ncclsim: note: %s\n", msg);
}

int nsim_cli_load_topo(const char *path, nsim_topo **out, nsim_err *err)
{
    /* what a vendor skeleton leaves to the machine is said, not hidden */
    nsim_xml_opts o = {.warn = print_note};
    if (has_suffix(path, ".xml"))
        return nsim_ncclxml_load_file(path, &o, out, err);
    return nsim_topo_load(path, out, err);
}

/* topo show's scope: every device, or one host's (host >= 0). */
static int dev_shown(const nsim_topo *t, uint32_t d, int32_t host)
{
    return host < 0 || nsim_topo_device(t, d)->host == host;
}

static void show_devices(const nsim_topo *t, int32_t host)
{
    char bw[48];
    uint32_t n = 0;
    for (uint32_t i = 0; i < nsim_topo_ndevices(t); i++)
        n += dev_shown(t, i, host);
    if (host >= 0)
        printf("Devices of host %d (%u of %u):\n", host, n,
               nsim_topo_ndevices(t));
    else
        printf("Devices (%u):\n", n);
    printf("  %-4s %-16s %-12s %5s %5s  %s\n", "#", "id", "type", "host",
           "rank", "details");
    for (uint32_t i = 0; i < nsim_topo_ndevices(t); i++) {
        const nsim_device *d = nsim_topo_device(t, i);
        char detail[160] = "";
        if (!dev_shown(t, i, host))
            continue;
        switch (d->type) {
        case NSIM_DEV_GPU:
            snprintf(detail, sizeof detail, "%s sm%u", d->gen, d->sm);
            break;
        case NSIM_DEV_NIC:
            nsim_units_format_bw(d->port_bw * 8, bw, sizeof bw);
            snprintf(detail, sizeof detail, "%u port(s) x %.0f Gb/s, MTU %u, "
                     "%s%s", d->nic_ports, d->port_bw * 8 / 1e9, d->mtu_bytes,
                     d->link_layer == NSIM_LL_ROCE ? "RoCE" : "IB",
                     d->gdr ? ", GDR" : "");
            break;
        case NSIM_DEV_SWITCH:
            snprintf(detail, sizeof detail, "radix %u, %.0f ns", d->radix,
                     (double)d->lat_ps / 1e3);
            break;
        case NSIM_DEV_NVSWITCH:
            snprintf(detail, sizeof detail, "%s", d->nvls ? "NVLS" : "");
            break;
        default:
            break;
        }
        char rank[16] = "-";
        if (d->type == NSIM_DEV_GPU)
            snprintf(rank, sizeof rank, "%d", d->rank);
        printf("  %-4u %-16s %-12s %5d %5s  %s\n", i, d->name,
               nsim_dev_type_name(d->type), d->host, rank, detail);
    }
}

static void show_links(const nsim_topo *t, int32_t host)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i += 2) {
        const nsim_link *l = nsim_topo_link(t, i);
        n += dev_shown(t, l->src, host) || dev_shown(t, l->dst, host);
    }
    if (host >= 0)
        printf("\nLinks of host %d (%u of %u, each both ways):\n", host, n,
               nsim_topo_nlinks(t) / 2);
    else
        printf("\nLinks (%u, each both ways):\n", n);
    printf("  %-16s %-16s %-7s %5s %12s %10s\n", "a", "b", "type", "count",
           "GB/s/dir", "latency");
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i += 2) {
        const nsim_link *l = nsim_topo_link(t, i);
        if (!dev_shown(t, l->src, host) && !dev_shown(t, l->dst, host))
            continue;
        char lat[32];
        nsim_units_format_time(l->lat_ps, lat, sizeof lat);
        printf("  %-16s %-16s %-7s %5u %12.2f %10s\n",
               nsim_topo_device(t, l->src)->name,
               nsim_topo_device(t, l->dst)->name,
               nsim_link_type_name(l->type), l->count, l->bw / 1e9, lat);
    }
}

static void print_path(const nsim_topo *t, const nsim_route *r)
{
    if (r->hops == 0)
        return;
    printf("%s", nsim_topo_device(t, nsim_topo_link(t, r->links[0])->src)->name);
    for (uint32_t h = 0; h < r->hops; h++)
        printf(" > %s", nsim_topo_device(t, nsim_topo_link(t, r->links[h])->dst)->name);
}

static int show_routes(nsim_topo *t, int32_t host, nsim_err *err)
{
    uint32_t n = nsim_topo_nranks(t);
    if (host >= 0)
        printf("\nRoutes between the GPUs of host %d (by rank):\n", host);
    else
        printf("\nRoutes between GPUs (by rank):\n");
    printf("  %4s %4s  %-4s %4s %10s %9s %6s  %s\n", "from", "to", "type",
           "hops", "GB/s", "lat(ns)", "paths", "first path");
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++) {
            if (a == b || !dev_shown(t, nsim_topo_rank_device(t, a), host) ||
                !dev_shown(t, nsim_topo_rank_device(t, b), host))
                continue;
            const nsim_route *r;
            NSIM_TRY(nsim_topo_route(t, nsim_topo_rank_device(t, a),
                                     nsim_topo_rank_device(t, b), &r, err));
            printf("  %4u %4u  %-4s %4u %10.2f %9.1f %6u  ", a, b,
                   nsim_path_type_name(r->type), r->hops, r->bw / 1e9,
                   (double)r->lat_ps / 1e3, r->npaths);
            print_path(t, r);
            printf("\n");
        }
    return NSIM_OK;
}


/* ---- the nvidia-smi-topo-like matrix ----------------------------------- */

/* NVLinks on the path's first hop ("NV18"), the path type otherwise. */
static void cell(nsim_topo *t, uint32_t a, uint32_t b, char *buf, size_t n)
{
    const nsim_route *r;
    nsim_err e = {0};
    if (a == b) {
        snprintf(buf, n, "X");
        return;
    }
    if (nsim_topo_route(t, a, b, &r, &e) != NSIM_OK) {
        snprintf(buf, n, "DIS");
        return;
    }
    const nsim_link *l = r->hops ? nsim_topo_link(t, r->links[0]) : NULL;
    if ((r->type == NSIM_PATH_NVL || r->type == NSIM_PATH_NVB) && l)
        snprintf(buf, n, "%s%u", r->type == NSIM_PATH_NVL ? "NV" : "NVB",
                 l->count);
    else
        snprintf(buf, n, "%s", nsim_path_type_name(r->type));
}

static void show_matrix(nsim_topo *t, int32_t host)
{
    uint32_t ids[256], n = 0;
    for (uint32_t i = 0; i < nsim_topo_ndevices(t) && n < 256; i++) {
        const nsim_device *d = nsim_topo_device(t, i);
        if (d->host == host &&
            (d->type == NSIM_DEV_GPU || d->type == NSIM_DEV_NIC))
            ids[n++] = i;
    }
    if (n == 0)
        return;
    printf("GPU/NIC matrix of host %d (NCCL path types; NV# = NVLinks):\n"
           "%-12s", host, "");
    for (uint32_t j = 0; j < n; j++) {
        const nsim_device *d = nsim_topo_device(t, ids[j]);
        const char *s = strrchr(d->name, '.');
        printf(" %7.7s", s ? s + 1 : d->name);
    }
    printf("\n");
    for (uint32_t i = 0; i < n; i++) {
        const nsim_device *d = nsim_topo_device(t, ids[i]);
        const char *s = strrchr(d->name, '.');
        printf("%-12.12s", s ? s + 1 : d->name);
        for (uint32_t j = 0; j < n; j++) {
            char c[16];
            cell(t, ids[i], ids[j], c, sizeof c);
            printf(" %7s", c);
        }
        printf("\n");
    }
    printf("\n");
}

/* ---- dot ----------------------------------------------------------------- */

static int write_dot(const nsim_topo *t, FILE *f)
{
    static const char *const shape[NSIM_DEV__COUNT] = {
        "box", "doubleoctagon", "diamond", "house", "ellipse", "octagon"};
    fprintf(f, "graph \"%s\" {\n  node [fontsize=10];\n", nsim_topo_name(t));
    int32_t host = -2;
    for (uint32_t i = 0; i < nsim_topo_ndevices(t); i++) {
        const nsim_device *d = nsim_topo_device(t, i);
        if (d->host != host) {
            if (host != -2)
                fprintf(f, "  }\n");
            host = d->host;
            if (host >= 0)
                fprintf(f, "  subgraph \"cluster_h%d\" {\n    label=\"host "
                           "%d\";\n", host, host);
            else
                fprintf(f, "  subgraph \"fabric\" {\n");
        }
        fprintf(f, "    \"%s\" [shape=%s", d->name, shape[d->type]);
        if (d->type == NSIM_DEV_GPU)
            fprintf(f, ", label=\"%s\\nrank %d %s\"", d->name, d->rank,
                    d->gen);
        fprintf(f, "];\n");
    }
    if (host != -2)
        fprintf(f, "  }\n");
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i += 2) {
        const nsim_link *l = nsim_topo_link(t, i);
        fprintf(f, "  \"%s\" -- \"%s\" [label=\"%s x%u\\n%.1f GB/s\"];\n",
                nsim_topo_device(t, l->src)->name,
                nsim_topo_device(t, l->dst)->name,
                nsim_link_type_name(l->type), l->count, l->bw / 1e9);
    }
    fprintf(f, "}\n");
    return ferror(f) ? NSIM_EIO : NSIM_OK;
}

/* ---- options shared by the actions -------------------------------------- */

typedef struct topo_opts {
    const char *out;
    int32_t host;
    nsim_xml_opts xml;
    nsim_fabric_cfg fabric;
    uint32_t nodes;
    const char *preset, *topo;
    int quiet;
    int host_given, all; /* topo show --host H / --all */
} topo_opts;

enum { O_GPU_GEN = 256, O_NIC_SPEED, O_BW, O_FABRIC, O_RADIX, O_OVERSUB,
       O_ROCE, O_NODES, O_PRESET, O_HOST, O_TOPO, O_GPU_NVLINK, O_ALL };

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"gpu-gen", required_argument, NULL, O_GPU_GEN},
    {"gpu-nvlink", required_argument, NULL, O_GPU_NVLINK},
    {"nic-speed", required_argument, NULL, O_NIC_SPEED},
    {"bw", required_argument, NULL, O_BW},
    {"fabric", required_argument, NULL, O_FABRIC},
    {"radix", required_argument, NULL, O_RADIX},
    {"oversubscription", required_argument, NULL, O_OVERSUB},
    {"roce", no_argument, NULL, O_ROCE},
    {"nodes", required_argument, NULL, O_NODES},
    {"node-preset", required_argument, NULL, O_PRESET},
    {"host", required_argument, NULL, O_HOST},
    {"topo", required_argument, NULL, O_TOPO},
    {"all", no_argument, NULL, O_ALL},
    {"quiet", no_argument, NULL, 'q'},
    {NULL, 0, NULL, 0},
};

static void print_warn(void *ud, const char *msg)
{
    if (!*(int *)ud)
        fprintf(stderr, "ncclsim: note: %s\n", msg);
}

static int parse_uint(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (s[0] == '\0' || s[0] == '-' || *end != '\0' || v > max)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

static int parse_opt(int c, const char *arg, topo_opts *o)
{
    const char *why;
    uint32_t v;
    char *end;
    switch (c) {
    case 'o': o->out = arg; return 1;
    case 'q': o->quiet = 1; return 1;
    case O_GPU_GEN: o->xml.gpu_gen = arg; return 1;
    case O_GPU_NVLINK:
        o->xml.nvlink = strcmp(arg, "none") == 0 ? NSIM_XML_NVL_NONE
                                                 : NSIM_XML_NVL_AUTO;
        return strcmp(arg, "none") == 0 || strcmp(arg, "auto") == 0;
    case O_NIC_SPEED:
        return nsim_units_parse_bw(arg, &o->xml.nic_speed, &why) == NSIM_OK;
    case O_BW:
        o->xml.bw = strcmp(arg, "nccl") == 0 ? NSIM_XML_BW_NCCL
                                             : NSIM_XML_BW_PHYSICAL;
        return strcmp(arg, "nccl") == 0 || strcmp(arg, "physical") == 0;
    case O_FABRIC: return nsim_fabric_parse(arg, &o->fabric.kind) == 0;
    case O_RADIX: return parse_uint(arg, 65536, &o->fabric.radix);
    case O_OVERSUB:
        o->fabric.oversub = strtod(arg, &end);
        return *end == '\0' && o->fabric.oversub >= 1 &&
               o->fabric.oversub <= 64;
    case O_ROCE: o->fabric.roce = 1; return 1;
    case O_NODES: /* 4x the 16,384-node scale runs */
        return parse_uint(arg, 65536, &o->nodes) && o->nodes;
    case O_PRESET: o->preset = arg; return 1;
    case O_HOST:
        if (!parse_uint(arg, 1u << 24, &v))
            return 0;
        o->host = (int32_t)v;
        o->host_given = 1;
        return 1;
    case O_ALL: o->all = 1; return 1;
    case O_TOPO: o->topo = arg; return 1;
    default: return 0;
    }
}

/* Parses argv (argv[0] is the action); operands are left from optind. */
static int parse_opts(int argc, char **argv, topo_opts *o)
{
    memset(o, 0, sizeof *o);
    o->fabric.oversub = 1;
    o->nodes = 1;
    o->xml.warn = print_warn;
    o->xml.warn_ud = &o->quiet;
    optind = 1;
    opterr = 0;
    int c, li = -1;
    while ((c = getopt_long(argc, argv, "o:q", long_opts, &li)) != -1) {
        if (c == '?' || c == ':')
            return nsim_cli_usage("topo", "unknown or incomplete option "
                                          "'%s'", argv[optind - 1]);
        if (!parse_opt(c, optarg, o))
            return nsim_cli_usage("topo", "bad value '%s' for option %s%s%s",
                                  optarg ? optarg : "",
                                  c == 'o' ? "-o" : "--",
                                  c == 'o' || li < 0 ? "" : long_opts[li].name,
                                  c == O_NODES ? " (1..65536)" : "");
        li = -1;
    }
    return NSIM_EXIT_OK;
}

/* ---- actions ------------------------------------------------------------- */

static int save_or_fail(const nsim_topo *t, const char *comment,
                        const char *out, nsim_err *err)
{
    if (nsim_topo_save_commented(t, comment, out, err) != NSIM_OK)
        return nsim_cli_fail(err);
    return NSIM_EXIT_OK;
}

/* As nsim_cli_load_topo, with the import options for .xml files. */
static int load_topo(const topo_opts *o, const char *file, nsim_topo **t,
                     nsim_err *err)
{
    if (has_suffix(file, ".xml"))
        return nsim_ncclxml_load_file(file, &o->xml, t, err);
    return nsim_topo_load(file, t, err);
}

/* topo show prints everything up to this size (a DGX pair), one host
 * beyond (16 nodes' every GPU pair was 17k lines). */
#define SHOW_ALL_DEVICES 128u
#define SHOW_ALL_RANKS 16u

static int act_check_show(int show, const topo_opts *o, const char *file)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    if (load_topo(o, file, &t, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    int rc = NSIM_OK;
    if (show && o->host_given && (o->host < 0 ||
                                  (uint32_t)o->host >= nsim_topo_nhosts(t))) {
        uint32_t nh = nsim_topo_nhosts(t);
        nsim_topo_destroy(t);
        return nsim_cli_usage("topo", "--host %d: the topology has hosts "
                                      "0..%u", o->host, nh - 1);
    }
    if (show) {
        /* bounded: everything only when small or --all; else one host */
        int small = nsim_topo_ndevices(t) <= SHOW_ALL_DEVICES &&
                    nsim_topo_nranks(t) <= SHOW_ALL_RANKS;
        int32_t scope = o->all || (small && !o->host_given) ? -1 : o->host;
        printf("Topology \"%s\": %u ranks on %u host(s), %u devices, %u "
               "links\n\n",
               nsim_topo_name(t), nsim_topo_nranks(t), nsim_topo_nhosts(t),
               nsim_topo_ndevices(t), nsim_topo_nlinks(t) / 2);
        show_matrix(t, o->host);
        show_devices(t, scope);
        show_links(t, scope);
        rc = show_routes(t, scope, &err);
        if (scope >= 0 && !o->host_given)
            printf("\n(host %d only: --host H shows another host, --all "
                   "every device, link and GPU pair)\n", scope);
    } else {
        printf("%s: ok: \"%s\", %u devices, %u links, %u ranks on %u "
               "host(s)\n",
               file, nsim_topo_name(t), nsim_topo_ndevices(t),
               nsim_topo_nlinks(t) / 2, nsim_topo_nranks(t),
               nsim_topo_nhosts(t));
    }
    nsim_topo_destroy(t);
    return rc == NSIM_OK ? NSIM_EXIT_OK : nsim_cli_fail(&err);
}

static int act_import(topo_opts *o, int n, char **files)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_ncclxml *x = NULL;
    if (n < 1 || o->out == NULL)
        return nsim_cli_usage("topo", "expected: topo import FILE.xml... "
                                      "-o OUT.json");
    if (nsim_ncclxml_load((const char *const *)files, (size_t)n, &o->xml,
                          &t, &x, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    int rc = nsim_cluster_add_fabric(t, &o->fabric, &err);
    if (rc == NSIM_OK)
        rc = nsim_topo_finalize(t, files[0], &err);
    /* the comment: where it came from, and what had to be assumed */
    size_t cap = 512 + nsim_ncclxml_nnotes(x) * (NSIM_XML_NOTE_MAX + 4);
    char *comment = malloc(cap);
    if (comment == NULL) {
        nsim_ncclxml_destroy(x);
        nsim_topo_destroy(t);
        fprintf(stderr, "ncclsim: out of memory\n");
        return NSIM_EXIT_ERR;
    }
    size_t len = (size_t)snprintf(
        comment, cap, "imported from %d NCCL topology file(s) (first: "
        "%.300s), bandwidths: %s; fabric: %s", n, files[0],
        o->xml.bw == NSIM_XML_BW_NCCL ? "NCCL's figures" : "physical",
        nsim_fabric_name(o->fabric.kind));
    for (size_t i = 0; i < nsim_ncclxml_nnotes(x) && len < cap; i++)
        len += (size_t)snprintf(comment + len, cap - len, "%s%s",
                                i ? "; " : "; assumed (not in the file): ",
                                nsim_ncclxml_note(x, i));
    int ex = rc == NSIM_OK ? save_or_fail(t, comment, o->out, &err)
                           : nsim_cli_fail(&err);
    free(comment);
    if (ex == NSIM_EXIT_OK && !o->quiet)
        fprintf(strcmp(o->out, "-") ? stdout : stderr,
               "%s: %u ranks on %u host(s), %u devices, %u links, %zu NET "
               "devices\n", o->out, nsim_topo_nranks(t), nsim_topo_nhosts(t),
               nsim_topo_ndevices(t), nsim_topo_nlinks(t) / 2,
               nsim_ncclxml_nnets(x));
    nsim_ncclxml_destroy(x);
    nsim_topo_destroy(t);
    return ex;
}

static int act_build(topo_opts *o)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    const nsim_preset *p = o->preset ? nsim_preset_find(o->preset) : NULL;
    if (p == NULL) {
        const char *const *nm = nsim_preset_names();
        fprintf(stderr, "ncclsim topo build: --node-preset: one of");
        for (; *nm; nm++)
            fprintf(stderr, " %s", *nm);
        fprintf(stderr, "\n");
        return NSIM_EXIT_USAGE;
    }
    if (o->fabric.kind == NSIM_FABRIC_NONE)
        o->fabric.kind = nsim_cluster_default_fabric(o->preset, o->nodes);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (nsim_cluster_build(o->preset, o->nodes, &o->fabric, &t, &err))
        return nsim_cli_fail(&err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    int ex = o->out ? save_or_fail(t, nsim_preset_comment(p), o->out, &err)
                    : NSIM_EXIT_OK;
    if (ex == NSIM_EXIT_OK && !o->quiet)
        fprintf(o->out && !strcmp(o->out, "-") ? stderr : stdout,
               "%s: %u nodes, %u ranks, %u devices, %u links; built in "
               "%.1f ms\n", nsim_topo_name(t), o->nodes, nsim_topo_nranks(t),
               nsim_topo_ndevices(t), nsim_topo_nlinks(t) / 2, ms);
    nsim_topo_destroy(t);
    return ex;
}

static int act_dot(const topo_opts *o, const char *file)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    char *text = NULL;
    size_t len = 0;
    if (load_topo(o, file, &t, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    FILE *f = open_memstream(&text, &len);
    int rc = f ? write_dot(t, f) : NSIM_ENOMEM;
    if (f != NULL && fclose(f) != 0)
        rc = NSIM_ENOMEM;
    nsim_topo_destroy(t);
    if (rc != NSIM_OK)
        NSIM_ERR(&err, rc, "topo dot: out of memory");
    else
        rc = nsim_write_file_atomic(o->out ? o->out : "-", text, len, &err);
    free(text);
    return rc == NSIM_OK ? NSIM_EXIT_OK : nsim_cli_fail(&err);
}

static void print_chan(const nsim_topo *t, uint32_t c,
                       const nsim_graph_chan *ch)
{
    printf("    %2u :", c);
    if (ch->net_in >= 0)
        printf(" NET/%lld(%s)", (long long)ch->net_in,
               nsim_topo_device(t, (uint32_t)ch->nic_in)->name);
    for (uint32_t i = 0; i < ch->ngpus; i++)
        printf(" %u", ch->ranks[i]);
    if (ch->net_out >= 0)
        printf(" NET/%lld(%s)", (long long)ch->net_out,
               nsim_topo_device(t, (uint32_t)ch->nic_out)->name);
    printf("\n");
}

static int act_graph(const topo_opts *o, const char *file)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_ncclgraph *g = NULL;
    if (o->topo == NULL)
        return nsim_cli_usage("topo", "graph needs --topo TOPOLOGY (the "
                                      "system the graph was built on)");
    if (load_topo(o, o->topo, &t, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    if (nsim_ncclgraph_load(file, t, &g, &err) != NSIM_OK) {
        nsim_topo_destroy(t);
        return nsim_cli_fail(&err);
    }
    printf("%s: %u graph(s) over \"%s\"\n", file,
           nsim_ncclgraph_ngraphs(g), nsim_topo_name(t));
    for (uint32_t i = 0; i < nsim_ncclgraph_ngraphs(g); i++) {
        const nsim_graph_info *gi = nsim_ncclgraph_graph(g, i);
        printf("  graph %d: pattern %d (%s), %u channel(s), bw %g/%g GB/s, "
               "type %s/%s, crossNic %d, sameChannels %d\n", gi->id,
               gi->pattern, nsim_ncclgraph_pattern_name(gi->pattern),
               gi->nchannels, gi->bw_intra / 1e9, gi->bw_inter / 1e9,
               nsim_path_type_name(gi->type_intra),
               nsim_path_type_name(gi->type_inter), gi->crossnic,
               gi->samechannels);
        for (uint32_t c = 0; c < gi->nchannels; c++)
            print_chan(t, c, nsim_ncclgraph_channel(g, i, c));
    }
    nsim_ncclgraph_destroy(g);
    nsim_topo_destroy(t);
    return NSIM_EXIT_OK;
}

static int topo_action(const char *act, topo_opts *o, int nops,
                       char **ops);

int nsim_cmd_topo(int argc, char **argv)
{
    topo_opts o;
    if (argc < 2)
        return nsim_cli_usage("topo", "expected: topo check|show|import|"
                                      "build|dot|graph ...");
    const char *act = argv[1];
    int ex = parse_opts(argc - 1, argv + 1, &o);
    if (ex != NSIM_EXIT_OK)
        return ex;
    int nops = argc - 1 - optind;
    nsim_out_begin(); /* -o: written whole or not at all */
    ex = topo_action(act, &o, nops, argv + 1 + optind);
    return nsim_cli_outputs_done(ex);
}

static int topo_action(const char *act, topo_opts *o, int nops, char **ops)
{
    if (strcmp(act, "import") == 0)
        return act_import(o, nops, ops);
    if (strcmp(act, "build") == 0)
        return nops == 0 ? act_build(o)
                         : nsim_cli_usage("topo", "build takes no operand");
    int known = strcmp(act, "check") == 0 || strcmp(act, "show") == 0 ||
                strcmp(act, "dot") == 0 || strcmp(act, "graph") == 0;
    if (!known)
        return nsim_cli_usage("topo", "unknown action '%s' (check, show, "
                                      "import, build, dot, graph)", act);
    if (nops != 1)
        return nsim_cli_usage("topo", "expected: topo %s FILE", act);
    if (strcmp(act, "dot") == 0)
        return act_dot(o, ops[0]);
    if (strcmp(act, "graph") == 0)
        return act_graph(o, ops[0]);
    return act_check_show(strcmp(act, "show") == 0, o, ops[0]);
}
