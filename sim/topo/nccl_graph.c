/* SPDX-License-Identifier: MIT
 *
 * nccl_graph.c - NCCL graph XML reader (see nccl_graph.h).
 *
 * Graphs and channels go into growable arrays; the channels' rank lists
 * share one rank array, so that pointers handed out are fixed up once the
 * whole file is read.
 */
#include "nccl_graph.h"
#include "sim/core/jread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "xmlread.h"

#define MAX_CHANNELS 1024
#define MAX_GRAPHS 64

typedef struct chan_rec {
    nsim_graph_chan c;
    size_t first; /* in ranks[] */
    uint32_t graph;
} chan_rec;

struct nsim_ncclgraph {
    nsim_graph_info *graphs;
    uint32_t ngraphs;
    chan_rec *chans;
    size_t nchans, ccap;
    uint32_t *ranks;
    size_t nranks, rcap;
    uint32_t *chan0; /* first channel of each graph */
};

typedef struct gctx {
    const char *src;
    const nsim_topo *t;
    nsim_ncclgraph *g;
    nsim_err *err;
} gctx;

static const char *const pattern_names[] = {
    "?", "balanced tree", "split tree", "tree", "ring", "nvls",
    "collnet direct"};

const char *nsim_ncclgraph_pattern_name(int32_t p)
{
    return p >= 1 && p <= 6 ? pattern_names[p] : "?";
}

int nsim_ncclgraph_path_parse(const char *s, nsim_path_type *out)
{
    for (int i = 0; i < NSIM_PATH__COUNT; i++)
        if (strcmp(s, nsim_path_type_name((nsim_path_type)i)) == 0) {
            *out = (nsim_path_type)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

static int fail(const gctx *c, const xmlNode *n, const char *fmt, ...)
    NSIM_PRINTF(3, 4);
static int fail(const gctx *c, const xmlNode *n, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return NSIM_ERR(c->err, NSIM_ECONFIG, "%s:%ld: <%s>: %s", c->src,
                    xmlGetLineNo(n), (const char *)n->name, what);
}

/* Integer attribute (decimal, or hex with 0x); absent: *out untouched
 * unless required. */
static int get_int(const gctx *c, const xmlNode *n, const char *k,
                   int required, int64_t min, int64_t max, int64_t *out)
{
    char buf[64], *end;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return required ? fail(c, n, "no %s", k) : NSIM_OK;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    if (buf[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
        return fail(c, n, "%s=\"%s\": expected an integer in %lld..%lld", k,
                    buf, (long long)min, (long long)max);
    *out = v;
    return NSIM_OK;
}

static int get_double(const gctx *c, const xmlNode *n, const char *k,
                      double *out)
{
    char buf[64], *end;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return NSIM_OK;
    errno = 0;
    double v = strtod(buf, &end);
    if (buf[0] == '\0' || *end != '\0' || errno != 0 || !(v >= 0) ||
        v > 1e9)
        return fail(c, n, "%s=\"%s\": expected a number >= 0", k, buf);
    *out = v;
    return NSIM_OK;
}

static int get_type(const gctx *c, const xmlNode *n, const char *k,
                    nsim_path_type *out)
{
    char buf[32];
    *out = NSIM_PATH_LOC;
    if (!nsim__xml_attr(n, k, buf, sizeof buf))
        return NSIM_OK;
    if (nsim_ncclgraph_path_parse(buf, out) != NSIM_OK)
        return fail(c, n, "%s=\"%s\": expected a path type (LOC NVL NVB "
                          "C2C PIX PXB P2C PXN PHB SYS NET)", k, buf);
    return NSIM_OK;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return NSIM_OK;
    size_t ncap = *cap ? *cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (np == NULL)
        return NSIM_ENOMEM;
    *p = np;
    *cap = ncap;
    return NSIM_OK;
}

/* The device of GPU rank r, or of NVML index dev on host 0. */
static int gpu_rank(const gctx *c, const xmlNode *n, uint32_t *rank)
{
    const nsim_topo *t = c->t;
    int64_t r = -1, dev = -1;
    NSIM_TRY(get_int(c, n, "rank", 0, 0, INT32_MAX, &r));
    NSIM_TRY(get_int(c, n, "dev", 0, 0, INT64_MAX, &dev));
    if (r >= 0) {
        if ((uint64_t)r >= nsim_topo_nranks(t))
            return fail(c, n, "rank %lld does not fit the topology \"%s\" "
                              "(%u ranks)", (long long)r,
                        nsim_topo_name(t), nsim_topo_nranks(t));
        *rank = (uint32_t)r;
        return NSIM_OK;
    }
    if (dev < 0)
        return fail(c, n, "neither rank nor dev");
    char name[NSIM_NAME_MAX];
    uint32_t d;
    snprintf(name, sizeof name, "h%lld.gpu%lld",
             (long long)((uint64_t)dev >> 56),
             (long long)(dev & 0xffffffffffffffll));
    if (nsim_topo_find(t, name, &d) != NSIM_OK ||
        nsim_topo_device(t, d)->type != NSIM_DEV_GPU)
        return fail(c, n, "dev %lld: no GPU \"%s\" in the topology \"%s\"",
                    (long long)dev, name, nsim_topo_name(t));
    *rank = (uint32_t)nsim_topo_device(t, d)->rank;
    return NSIM_OK;
}

/* NIC device of NET dev on host h (see nccl_graph.h), -1 if none. */
static int32_t find_nic(const nsim_topo *t, int32_t h, int64_t dev)
{
    char name[NSIM_NAME_MAX];
    uint32_t d, n = nsim_topo_ndevices(t);
    int32_t by_rail = -1, by_range = -1, by_order = -1;
    int64_t k = 0;
    snprintf(name, sizeof name, "h%d.net%lld", h, (long long)dev);
    if (nsim_topo_find(t, name, &d) == NSIM_OK &&
        nsim_topo_device(t, d)->type == NSIM_DEV_NIC)
        return (int32_t)d;
    for (uint32_t i = 0; i < n; i++) {
        const nsim_device *x = nsim_topo_device(t, i);
        long long d0;
        char tail;
        if (x->type != NSIM_DEV_NIC || x->host != h)
            continue;
        if (x->rail == dev && by_rail < 0)
            by_rail = (int32_t)i;
        const char *dot = strrchr(x->name, '.');
        if (dot && sscanf(dot, ".net%lld%c", &d0, &tail) == 1 &&
            d0 <= dev && dev < d0 + x->nic_ports && by_range < 0)
            by_range = (int32_t)i;
        if (k++ == dev)
            by_order = (int32_t)i;
    }
    return by_rail >= 0 ? by_rail : by_range >= 0 ? by_range : by_order;
}

static int read_net(const gctx *c, const xmlNode *n, chan_rec *ch,
                    int exit_net)
{
    int64_t dev = 0;
    NSIM_TRY(get_int(c, n, "dev", 1, 0, INT64_MAX, &dev));
    int64_t netdev = dev & 0xffffffffffffffll;
    int32_t host = (int32_t)((uint64_t)dev >> 56);
    if (host == 0 && ch->c.ngpus > 0)
        host = nsim_topo_device(c->t, nsim_topo_rank_device(
                                          c->t, c->g->ranks[ch->first]))
                   ->host;
    int32_t nic = find_nic(c->t, host, netdev);
    if (nic < 0)
        return fail(c, n, "net dev %lld: no such NIC on host %d of the "
                          "topology \"%s\"", (long long)netdev, host,
                    nsim_topo_name(c->t));
    if (exit_net) {
        ch->c.net_out = netdev;
        ch->c.nic_out = nic;
    } else {
        ch->c.net_in = netdev;
        ch->c.nic_in = nic;
    }
    return NSIM_OK;
}

static int add_rank(const gctx *c, const xmlNode *n, chan_rec *ch)
{
    nsim_ncclgraph *g = c->g;
    uint32_t r = 0;
    NSIM_TRY(gpu_rank(c, n, &r));
    for (size_t i = 0; i < ch->c.ngpus; i++)
        if (g->ranks[ch->first + i] == r)
            return fail(c, n, "rank %u twice in one channel", r);
    if (grow((void **)&g->ranks, &g->rcap, g->nranks + 1, sizeof r))
        return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
    g->ranks[g->nranks++] = r;
    ch->c.ngpus++;
    return NSIM_OK;
}

/* An entry <net> comes before the GPUs, an exit <net> after them. */
static int read_channel(const gctx *c, const xmlNode *n, uint32_t graph)
{
    chan_rec ch;
    memset(&ch, 0, sizeof ch);
    ch.c.net_in = ch.c.net_out = -1;
    ch.c.nic_in = ch.c.nic_out = -1;
    ch.c.line = (int)xmlGetLineNo(n);
    ch.first = c->g->nranks;
    ch.graph = graph;
    int pending_in = 0;
    const xmlNode *in = NULL;
    for (const xmlNode *k = n->children; k; k = k->next) {
        if (nsim__xml_is(k, "gpu")) {
            NSIM_TRY(add_rank(c, k, &ch));
            if (pending_in) /* the host is known from the first GPU */
                NSIM_TRY(read_net(c, in, &ch, 0));
            pending_in = 0;
        } else if (nsim__xml_is(k, "net")) {
            if (ch.c.ngpus == 0 && in == NULL) {
                in = k;
                pending_in = 1;
            } else if (ch.c.ngpus > 0 && ch.c.net_out < 0)
                NSIM_TRY(read_net(c, k, &ch, 1));
            else
                return fail(c, k, "a <net> must come first or last in its "
                                  "channel, once each");
        }
    }
    if (pending_in)
        NSIM_TRY(read_net(c, in, &ch, 0));
    if (ch.c.ngpus == 0)
        return fail(c, n, "a channel with no <gpu>");
    nsim_ncclgraph *g = c->g;
    if (g->nchans >= MAX_CHANNELS ||
        grow((void **)&g->chans, &g->ccap, g->nchans + 1, sizeof ch))
        return fail(c, n, "too many channels (at most %d)", MAX_CHANNELS);
    g->chans[g->nchans++] = ch;
    return NSIM_OK;
}

static int read_graph_attrs(const gctx *c, const xmlNode *n,
                            nsim_graph_info *gi)
{
    int64_t id = -1, pattern = 0, crossnic = 0, nch = 0, same = 0;
    memset(gi, 0, sizeof *gi);
    gi->line = (int)xmlGetLineNo(n);
    NSIM_TRY(get_int(c, n, "id", 1, 0, 15, &id));
    NSIM_TRY(get_int(c, n, "pattern", 1, 1, 6, &pattern));
    NSIM_TRY(get_int(c, n, "crossnic", 0, 0, 2, &crossnic));
    NSIM_TRY(get_int(c, n, "nchannels", 1, 0, MAX_CHANNELS, &nch));
    NSIM_TRY(get_int(c, n, "samechannels", 0, 0, 1, &same));
    NSIM_TRY(get_double(c, n, "speedintra", &gi->bw_intra));
    NSIM_TRY(get_double(c, n, "speedinter", &gi->bw_inter));
    NSIM_TRY(get_double(c, n, "latencyinter", &gi->lat_inter_us));
    NSIM_TRY(get_type(c, n, "typeintra", &gi->type_intra));
    NSIM_TRY(get_type(c, n, "typeinter", &gi->type_inter));
    gi->id = (int32_t)id;
    gi->pattern = (int32_t)pattern;
    gi->crossnic = (int32_t)crossnic;
    gi->samechannels = (int32_t)same;
    gi->nchannels = (uint32_t)nch;
    gi->bw_intra *= 1e9;
    gi->bw_inter *= 1e9;
    return NSIM_OK;
}

static int read_graph(const gctx *c, const xmlNode *n)
{
    nsim_ncclgraph *g = c->g;
    nsim_graph_info gi;
    if (g->ngraphs == MAX_GRAPHS)
        return fail(c, n, "more than %d graphs", MAX_GRAPHS);
    NSIM_TRY(read_graph_attrs(c, n, &gi));
    for (uint32_t i = 0; i < g->ngraphs; i++)
        if (g->graphs[i].id == gi.id)
            return fail(c, n, "graph id %d already given at line %d", gi.id,
                        g->graphs[i].line);
    g->chan0[g->ngraphs] = (uint32_t)g->nchans;
    uint32_t seen = 0;
    for (const xmlNode *k = n->children; k; k = k->next)
        if (nsim__xml_is(k, "channel")) {
            NSIM_TRY(read_channel(c, k, g->ngraphs));
            seen++;
        }
    if (seen != gi.nchannels)
        return fail(c, n, "nchannels=\"%u\" but %u <channel> elements",
                    gi.nchannels, seen);
    g->graphs[g->ngraphs++] = gi;
    return NSIM_OK;
}

static int read_graphs(const gctx *c, const xmlNode *root)
{
    char ver[32] = "";
    if (!nsim__xml_is(root, "graphs"))
        return fail(c, root, "expected <graphs version=\"1\"> as the root "
                             "element");
    if (!nsim__xml_attr(root, "version", ver, sizeof ver) || strcmp(ver, "1") != 0)
        return fail(c, root, "unknown version \"%s\" (expected 1)", ver);
    for (const xmlNode *k = root->children; k; k = k->next)
        if (nsim__xml_is(k, "graph"))
            NSIM_TRY(read_graph(c, k));
    /* the rank array has stopped moving: hand out pointers */
    for (size_t i = 0; i < c->g->nchans; i++)
        c->g->chans[i].c.ranks = c->g->ranks + c->g->chans[i].first;
    return NSIM_OK;
}

static int parse_doc(gctx *c, const char *text, size_t len)
{
    xmlDocPtr doc = NULL;
    NSIM_TRY(nsim__xml_read(text, len, c->src, &doc, c->err));
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc = root == NULL ? NSIM_ERR(c->err, NSIM_ECONFIG,
                                     "%s: no root element", c->src)
                          : read_graphs(c, root);
    xmlFreeDoc(doc);
    return rc;
}

int nsim_ncclgraph_parse(const char *text, size_t len, const char *source,
                         const nsim_topo *topo, nsim_ncclgraph **out,
                         nsim_err *err)
{
    nsim_ncclgraph *g = calloc(1, sizeof *g);
    if (g != NULL) {
        g->graphs = calloc(MAX_GRAPHS, sizeof *g->graphs);
        g->chan0 = calloc(MAX_GRAPHS + 1, sizeof *g->chan0);
    }
    if (g == NULL || g->graphs == NULL || g->chan0 == NULL) {
        nsim_ncclgraph_destroy(g);
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    gctx c = {source, topo, g, err};
    int rc = parse_doc(&c, text, len);
    if (rc != NSIM_OK) {
        nsim_ncclgraph_destroy(g);
        return rc;
    }
    *out = g;
    return NSIM_OK;
}

int nsim_ncclgraph_load(const char *path, const nsim_topo *topo,
                        nsim_ncclgraph **out, nsim_err *err)
{
    char *buf = NULL;
    size_t n = 0;
    NSIM_TRY(nsim_read_file(path, &buf, &n, err));
    int rc = nsim_ncclgraph_parse(buf, n, path, topo, out, err);
    free(buf);
    return rc;
}

void nsim_ncclgraph_destroy(nsim_ncclgraph *g)
{
    if (g == NULL)
        return;
    free(g->graphs);
    free(g->chans);
    free(g->ranks);
    free(g->chan0);
    free(g);
}

uint32_t nsim_ncclgraph_ngraphs(const nsim_ncclgraph *g)
{
    return g->ngraphs;
}

const nsim_graph_info *nsim_ncclgraph_graph(const nsim_ncclgraph *g,
                                            uint32_t i)
{
    return i < g->ngraphs ? &g->graphs[i] : NULL;
}

const nsim_graph_info *nsim_ncclgraph_find(const nsim_ncclgraph *g,
                                           int32_t id)
{
    for (uint32_t i = 0; i < g->ngraphs; i++)
        if (g->graphs[i].id == id)
            return &g->graphs[i];
    return NULL;
}

const nsim_graph_chan *nsim_ncclgraph_channel(const nsim_ncclgraph *g,
                                              uint32_t i, uint32_t c)
{
    if (i >= g->ngraphs || c >= g->graphs[i].nchannels)
        return NULL;
    return &g->chans[g->chan0[i] + c].c;
}
