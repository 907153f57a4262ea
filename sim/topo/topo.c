/* SPDX-License-Identifier: MIT
 *
 * topo.c - topology tables, validation, names and the route search (see
 * topo.h). The JSON reader and writer are in topo_json.c.
 *
 * Route search: for each class of path in NCCL's order of preference a
 * breadth-first search runs over the links and transit devices that class
 * allows; the first class that reaches the destination wins. The BFS
 * layers give every fewest-hop path; those with the best bottleneck
 * bandwidth are kept, up to NSIM_ROUTE_MAX_PATHS. Between NICs of two
 * hosts only network links and switches count (no host is a transit).
 */
#include "topo.h"
#include "sim/core/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct route_entry {
    uint32_t src, dst;
    nsim_route *route; /* NULL: slot empty */
} route_entry;

struct nsim_topo {
    char name[NSIM_NAME_MAX];
    nsim_device *devs;
    uint32_t ndevs, devs_cap;
    nsim_link *links;
    uint32_t nlinks, links_cap;
    /* adjacency, built by finalize */
    uint32_t *out_start; /* ndevs + 1 */
    uint32_t *out_links;
    uint32_t *rank_dev;
    uint32_t nranks, nhosts;
    /* NCCL's nodes: hosts joined into one NVLink domain (MNNVL) */
    uint32_t *host_node; /* nhosts */
    uint32_t nnodes;
    int finalized;
    /* route cache: open addressing on (src, dst) */
    route_entry *routes;
    uint32_t routes_cap, routes_len;
    /* BFS scratch: dist[i] holds for this search only where
     * seen[i] == epoch, so a search costs what it visits */
    uint32_t *dist, *queue, *seen;
    /* the same from the far end (route_search) */
    uint32_t *bdist, *bqueue, *bseen;
    uint32_t epoch;
    /* devices by host: host h's are host_devs[host_start[h] ..
     * host_start[h + 1]), in id order */
    uint32_t *host_start, *host_devs;
    /* name index: open addressing over device indices (UINT32_MAX =
     * empty), so that building a 16k-node cluster is not quadratic */
    uint32_t *name_idx;
    uint32_t name_cap;
    /* nsim_topo_content_hash, kept until a device or link is added */
    uint64_t content_hash;
    int content_hashed;
    /* nsim_topo_hosts_nvlink_whole: -1 not known yet (reset with the
     * content hash) */
    int nvlink_whole;
};

static const char *const dev_type_names[NSIM_DEV__COUNT] = {
    "gpu", "nvswitch", "pcie_switch", "cpu", "nic", "switch",
};
static const char *const link_type_names[NSIM_LINK__COUNT] = {
    "nvlink", "pcie", "c2c", "sys", "ib", "roce", "eth",
};
static const char *const path_type_names[NSIM_PATH__COUNT] = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS",
    "NET", "DIS",
};

const char *nsim_dev_type_name(nsim_dev_type t)
{
    return (unsigned)t < NSIM_DEV__COUNT ? dev_type_names[t] : "?";
}
const char *nsim_link_type_name(nsim_link_type t)
{
    return (unsigned)t < NSIM_LINK__COUNT ? link_type_names[t] : "?";
}
const char *nsim_path_type_name(nsim_path_type t)
{
    return (unsigned)t < NSIM_PATH__COUNT ? path_type_names[t] : "?";
}

int nsim_dev_type_parse(const char *s, nsim_dev_type *out)
{
    for (int i = 0; i < NSIM_DEV__COUNT; i++)
        if (strcmp(s, dev_type_names[i]) == 0) {
            *out = (nsim_dev_type)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

int nsim_link_type_parse(const char *s, nsim_link_type *out)
{
    for (int i = 0; i < NSIM_LINK__COUNT; i++)
        if (strcmp(s, link_type_names[i]) == 0) {
            *out = (nsim_link_type)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

/* GPU generations and their compute capability (NCCL keys its per-link
 * NVLink bandwidth and search speeds on it, nccl-internals.md 1.3, 2.2). */
static const struct {
    const char *gen;
    uint32_t sm;
} gpu_gens[] = {
    {"p100", 60},  {"v100", 70},   {"t4", 75},     {"rtx2080ti", 75},
    {"a100", 80},  {"a30", 80},    {"a10", 86},    {"a10g", 86},
    {"a6000", 86}, {"rtx3090", 86}, {"l4", 89},    {"l40", 89},
    {"l40s", 89},  {"l20", 89},    {"h100", 90},   {"h800", 90},
    {"h200", 90},  {"h20", 90},    {"gh200", 90},  {"b200", 100},
    {"gb200", 100}, {"b300", 103}, {"gb300", 103},
};

uint32_t nsim_gpu_gen_sm(const char *gen)
{
    for (size_t i = 0; i < sizeof gpu_gens / sizeof gpu_gens[0]; i++)
        if (strcmp(gen, gpu_gens[i].gen) == 0)
            return gpu_gens[i].sm;
    return 0;
}

int nsim_topo_create(const char *name, nsim_topo **out, nsim_err *err)
{
    nsim_topo *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->nvlink_whole = -1;
    *out = t;
    return NSIM_OK;
}

static void routes_clear(nsim_topo *t)
{
    for (uint32_t i = 0; i < t->routes_cap; i++)
        free(t->routes[i].route);
    free(t->routes);
    t->routes = NULL;
    t->routes_cap = t->routes_len = 0;
}

void nsim_topo_destroy(nsim_topo *t)
{
    if (t == NULL)
        return;
    routes_clear(t);
    free(t->devs);
    free(t->name_idx);
    free(t->links);
    free(t->out_start);
    free(t->out_links);
    free(t->rank_dev);
    free(t->dist);
    free(t->queue);
    free(t->seen);
    free(t->bdist);
    free(t->bqueue);
    free(t->bseen);
    free(t->host_start);
    free(t->host_devs);
    free(t->host_node);
    free(t);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return NSIM_OK;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, (size_t)ncap * elem);
    if (np == NULL)
        return NSIM_ENOMEM;
    *p = np;
    *cap = ncap;
    return NSIM_OK;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Slot of name in the index: its device, or the empty slot to fill. */
static uint32_t name_slot(const nsim_topo *t, const char *name)
{
    uint32_t mask = t->name_cap - 1, i = name_hash(name) & mask;
    while (t->name_idx[i] != UINT32_MAX &&
           strcmp(t->devs[t->name_idx[i]].name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Keeps the index at most half full (capacity a power of two). */
static int name_index_grow(nsim_topo *t, uint32_t need)
{
    if (need * 2 <= t->name_cap)
        return NSIM_OK;
    uint32_t cap = t->name_cap ? t->name_cap : 64;
    while (cap < need * 2)
        cap *= 2;
    uint32_t *idx = malloc((size_t)cap * sizeof *idx);
    if (idx == NULL)
        return NSIM_ENOMEM;
    free(t->name_idx);
    t->name_idx = idx;
    t->name_cap = cap;
    memset(idx, 0xff, (size_t)cap * sizeof *idx);
    for (uint32_t d = 0; d < t->ndevs; d++)
        idx[name_slot(t, t->devs[d].name)] = d;
    return NSIM_OK;
}

int nsim_topo_find(const nsim_topo *t, const char *name, uint32_t *out)
{
    if (t->name_cap == 0)
        return NSIM_ENOENT;
    uint32_t i = t->name_idx[name_slot(t, name)];
    if (i == UINT32_MAX)
        return NSIM_ENOENT;
    *out = i;
    return NSIM_OK;
}

int nsim_topo_add_device(nsim_topo *t, const nsim_device *d, uint32_t *out,
                         nsim_err *err)
{
    uint32_t dup;
    if (d->name[0] == '\0')
        return NSIM_ERR(err, NSIM_ECONFIG, "device %u: empty id", t->ndevs);
    if (nsim_topo_find(t, d->name, &dup) == NSIM_OK)
        return NSIM_ERR(err, NSIM_ECONFIG, "device \"%s\": duplicate id",
                        d->name);
    if (t->ndevs >= NSIM_TOPO_MAX_DEVICES)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "topology: more than %u devices (the limit)",
                        NSIM_TOPO_MAX_DEVICES);
    if (grow((void **)&t->devs, &t->devs_cap, t->ndevs + 1, sizeof *d) ||
        name_index_grow(t, t->ndevs + 1))
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    nsim_device *nd = &t->devs[t->ndevs];
    *nd = *d;
    t->name_idx[name_slot(t, nd->name)] = t->ndevs;
    if (nd->type == NSIM_DEV_GPU && nd->sm == 0)
        nd->sm = nsim_gpu_gen_sm(nd->gen);
    if (out != NULL)
        *out = t->ndevs;
    t->ndevs++;
    t->finalized = 0;
    t->content_hashed = 0;
    t->nvlink_whole = -1;
    return NSIM_OK;
}

int nsim_topo_add_link(nsim_topo *t, uint32_t a, uint32_t b,
                       nsim_link_type type, double lane_bw, nsim_time lat_ps,
                       uint32_t count, uint32_t *out, nsim_err *err)
{
    if (a >= t->ndevs || b >= t->ndevs)
        return NSIM_ERR(err, NSIM_EINVAL, "link: no such device");
    if (a == b)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "link %s <-> %s: a link to itself", t->devs[a].name,
                        t->devs[b].name);
    if (!(lane_bw > 0))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "link %s <-> %s: bandwidth must be > 0",
                        t->devs[a].name, t->devs[b].name);
    if (!(lane_bw >= NSIM_BW_MIN_BYTES && lane_bw <= NSIM_BW_MAX_BYTES))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "link %s <-> %s: bandwidth %g B/s is outside 1 Mb/s "
                        ".. 1 PB/s",
                        t->devs[a].name, t->devs[b].name, lane_bw);
    if (count > NSIM_TOPO_MAX_LINK_COUNT || lat_ps > NSIM_TOPO_MAX_LAT_PS)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "link %s <-> %s: %s (at most %u lanes, %u s)",
                        t->devs[a].name, t->devs[b].name,
                        count > NSIM_TOPO_MAX_LINK_COUNT ? "too many lanes"
                                                         : "latency too long",
                        NSIM_TOPO_MAX_LINK_COUNT,
                        (unsigned)(NSIM_TOPO_MAX_LAT_PS / 1000000000000ull));
    if (t->nlinks + 2 > NSIM_TOPO_MAX_LINKS)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "topology: more than %u links (the limit)",
                        NSIM_TOPO_MAX_LINKS / 2);
    if (grow((void **)&t->links, &t->links_cap, t->nlinks + 2,
             sizeof *t->links))
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    uint32_t i = t->nlinks;
    if (count == 0)
        count = 1;
    double bw = lane_bw * count;
    t->links[i] = (nsim_link){a, b, type, bw, lane_bw, lat_ps, count, i + 1};
    t->links[i + 1] = (nsim_link){b, a, type, bw, lane_bw, lat_ps, count, i};
    t->nlinks += 2;
    t->finalized = 0;
    t->content_hashed = 0;
    t->nvlink_whole = -1;
    if (out != NULL)
        *out = i;
    return NSIM_OK;
}

/* Which device types may sit at the ends of each link type. */
static int link_endpoint_ok(nsim_link_type lt, nsim_dev_type d)
{
    switch (lt) {
    case NSIM_LINK_NVLINK:
        return d == NSIM_DEV_GPU || d == NSIM_DEV_NVSWITCH ||
               d == NSIM_DEV_CPU;
    case NSIM_LINK_PCIE:
        return d == NSIM_DEV_GPU || d == NSIM_DEV_PCIE_SWITCH ||
               d == NSIM_DEV_CPU || d == NSIM_DEV_NIC ||
               d == NSIM_DEV_NVSWITCH;
    case NSIM_LINK_C2C:
        return d == NSIM_DEV_GPU || d == NSIM_DEV_CPU;
    case NSIM_LINK_SYS:
        return d == NSIM_DEV_CPU;
    case NSIM_LINK_IB:
    case NSIM_LINK_ROCE:
    case NSIM_LINK_ETH:
        return d == NSIM_DEV_NIC || d == NSIM_DEV_SWITCH;
    default:
        return 0;
    }
}

static int is_network_link(nsim_link_type lt)
{
    return lt == NSIM_LINK_IB || lt == NSIM_LINK_ROCE || lt == NSIM_LINK_ETH;
}

static int build_adjacency(nsim_topo *t)
{
    free(t->out_start);
    free(t->out_links);
    t->out_start = calloc((size_t)t->ndevs + 1, sizeof *t->out_start);
    t->out_links = malloc(((size_t)t->nlinks + 1) * sizeof *t->out_links);
    if (t->out_start == NULL || t->out_links == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < t->nlinks; i++)
        t->out_start[t->links[i].src + 1]++;
    for (uint32_t d = 0; d < t->ndevs; d++)
        t->out_start[d + 1] += t->out_start[d];
    uint32_t *fill = calloc(t->ndevs + 1, sizeof *fill);
    if (fill == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < t->nlinks; i++) {
        uint32_t s = t->links[i].src;
        t->out_links[t->out_start[s] + fill[s]++] = i;
    }
    free(fill);
    return NSIM_OK;
}

static int check_links(nsim_topo *t, const char *what, nsim_err *err)
{
    for (uint32_t i = 0; i < t->nlinks; i += 2) {
        const nsim_link *l = &t->links[i];
        const nsim_device *a = &t->devs[l->src], *b = &t->devs[l->dst];
        if (!link_endpoint_ok(l->type, a->type) ||
            !link_endpoint_ok(l->type, b->type))
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: links[%u]: a %s link cannot join %s \"%s\" "
                            "and %s \"%s\"",
                            what, i / 2, nsim_link_type_name(l->type),
                            nsim_dev_type_name(a->type), a->name,
                            nsim_dev_type_name(b->type), b->name);
        if (l->type == NSIM_LINK_NVLINK && a->type == NSIM_DEV_NVSWITCH &&
            b->type == NSIM_DEV_NVSWITCH)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: links[%u]: NVSwitch to NVSwitch links are "
                            "not modelled; describe one NVSwitch per host",
                            what, i / 2);
    }
    return NSIM_OK;
}

static int check_ports(nsim_topo *t, const char *what, nsim_err *err)
{
    for (uint32_t d = 0; d < t->ndevs; d++) {
        const nsim_device *dv = &t->devs[d];
        uint32_t nnet = 0;
        for (uint32_t k = t->out_start[d]; k < t->out_start[d + 1]; k++)
            if (is_network_link(t->links[t->out_links[k]].type))
                nnet++;
        if (dv->type == NSIM_DEV_NIC && nnet > dv->nic_ports)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: nic \"%s\": %u network links but only %u "
                            "ports",
                            what, dv->name, nnet, dv->nic_ports);
        if (dv->type == NSIM_DEV_SWITCH && nnet > dv->radix)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: switch \"%s\": %u links exceed its radix %u",
                            what, dv->name, nnet, dv->radix);
        if (dv->type == NSIM_DEV_GPU &&
            t->out_start[d] == t->out_start[d + 1])
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: gpu \"%s\" has no links: it reaches nothing",
                            what, dv->name);
    }
    return NSIM_OK;
}

/* Union-find over all links: every GPU must share a component with GPU 0. */
static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static int check_connected(nsim_topo *t, const char *what, nsim_err *err)
{
    uint32_t *p = malloc(t->ndevs * sizeof *p);
    if (p == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    for (uint32_t i = 0; i < t->ndevs; i++)
        p[i] = i;
    for (uint32_t i = 0; i < t->nlinks; i += 2)
        p[uf_find(p, t->links[i].src)] = uf_find(p, t->links[i].dst);
    int rc = NSIM_OK;
    uint32_t g0 = t->rank_dev[0];
    for (uint32_t r = 1; r < t->nranks && rc == NSIM_OK; r++)
        if (uf_find(p, t->rank_dev[r]) != uf_find(p, g0))
            rc = NSIM_ERR(err, NSIM_ECONFIG,
                          "%s: gpu \"%s\" reaches no path to gpu \"%s\"",
                          what, t->devs[t->rank_dev[r]].name,
                          t->devs[g0].name);
    free(p);
    return rc;
}

static int assign_ranks(nsim_topo *t, const char *what, nsim_err *err)
{
    uint32_t ngpu = 0, given = 0;
    for (uint32_t d = 0; d < t->ndevs; d++)
        if (t->devs[d].type == NSIM_DEV_GPU) {
            ngpu++;
            given += t->devs[d].rank >= 0;
        }
    if (ngpu == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: devices: no gpu", what);
    if (given != 0 && given != ngpu)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: rank: given for %u of %u gpus; give it for all "
                        "or none",
                        what, given, ngpu);
    free(t->rank_dev);
    t->rank_dev = malloc(ngpu * sizeof *t->rank_dev);
    if (t->rank_dev == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    for (uint32_t i = 0; i < ngpu; i++)
        t->rank_dev[i] = UINT32_MAX;
    uint32_t next = 0;
    for (uint32_t d = 0; d < t->ndevs; d++) {
        nsim_device *dv = &t->devs[d];
        if (dv->type != NSIM_DEV_GPU)
            continue;
        if (given == 0)
            dv->rank = (int32_t)next++;
        if ((uint32_t)dv->rank >= ngpu)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: gpu \"%s\": rank %d out of range 0..%u",
                            what, dv->name, dv->rank, ngpu - 1);
        if (t->rank_dev[dv->rank] != UINT32_MAX)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: gpu \"%s\": rank %d already taken by \"%s\"",
                            what, dv->name, dv->rank,
                            t->devs[t->rank_dev[dv->rank]].name);
        t->rank_dev[dv->rank] = d;
    }
    t->nranks = ngpu;
    return NSIM_OK;
}

/* NCCL's nodes (nccl-internals 1.1, 6.5): a host, or the hosts whose
 * devices NVLink joins (an MNNVL domain: trays on one NVLink fabric).
 * Union-find over NVLink links; nodes numbered by their lowest host. */
static uint32_t host_key(const nsim_device *d)
{
    return d->host < 0 ? 0 : (uint32_t)d->host + 1;
}

/* Devices by host (counting sort on host + 1: the devices of no host,
 * -1, come first), for nsim_topo_host_devices. */
static int index_hosts(nsim_topo *t)
{
    uint32_t nkeys = t->nhosts + 1;
    free(t->host_start);
    free(t->host_devs);
    t->host_start = calloc(nkeys + 1, sizeof *t->host_start);
    t->host_devs = malloc((t->ndevs ? t->ndevs : 1) * sizeof *t->host_devs);
    uint32_t *pos = malloc(nkeys * sizeof *pos);
    if (t->host_start == NULL || t->host_devs == NULL || pos == NULL) {
        free(pos);
        return NSIM_ENOMEM;
    }
    for (uint32_t d = 0; d < t->ndevs; d++)
        t->host_start[host_key(&t->devs[d]) + 1]++;
    for (uint32_t k = 1; k <= nkeys; k++)
        t->host_start[k] += t->host_start[k - 1];
    memcpy(pos, t->host_start, nkeys * sizeof *pos);
    for (uint32_t d = 0; d < t->ndevs; d++)
        t->host_devs[pos[host_key(&t->devs[d])]++] = d;
    free(pos);
    return NSIM_OK;
}

static int assign_nodes(nsim_topo *t)
{
    uint32_t *up = malloc(t->ndevs * sizeof *up);
    free(t->host_node);
    t->host_node = malloc((t->nhosts ? t->nhosts : 1) * sizeof *t->host_node);
    if (up == NULL || t->host_node == NULL) {
        free(up);
        return NSIM_ENOMEM;
    }
    for (uint32_t d = 0; d < t->ndevs; d++)
        up[d] = d;
    /* every device of a host is in its host's set; NVLinks join sets */
    uint32_t *first = t->host_node; /* reused: first device per host */
    for (uint32_t h = 0; h < t->nhosts; h++)
        first[h] = UINT32_MAX;
    for (uint32_t d = 0; d < t->ndevs; d++) {
        int32_t h = t->devs[d].host;
        if (h < 0)
            continue;
        if (first[h] == UINT32_MAX)
            first[h] = d;
        else
            up[uf_find(up, d)] = uf_find(up, first[h]);
    }
    for (uint32_t i = 0; i < t->nlinks; i++)
        if (t->links[i].type == NSIM_LINK_NVLINK) {
            uint32_t a = uf_find(up, t->links[i].src);
            uint32_t b = uf_find(up, t->links[i].dst);
            up[a] = b;
        }
    /* number the sets in order of their lowest host */
    uint32_t *root_node = malloc(t->ndevs * sizeof *root_node);
    if (root_node == NULL) {
        free(up);
        return NSIM_ENOMEM;
    }
    for (uint32_t d = 0; d < t->ndevs; d++)
        root_node[d] = UINT32_MAX;
    t->nnodes = 0;
    for (uint32_t h = 0; h < t->nhosts; h++) {
        if (first[h] == UINT32_MAX) { /* a host id without devices */
            first[h] = t->nnodes++;
            continue;
        }
        uint32_t r = uf_find(up, first[h]);
        if (root_node[r] == UINT32_MAX)
            root_node[r] = t->nnodes++;
        first[h] = root_node[r];
    }
    free(root_node);
    free(up);
    return NSIM_OK;
}

int nsim_topo_finalize(nsim_topo *t, const char *what, nsim_err *err)
{
    if (what == NULL)
        what = t->name;
    routes_clear(t);
    if (t->ndevs == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: devices: empty", what);
    NSIM_TRY(check_links(t, what, err));
    if (build_adjacency(t) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    NSIM_TRY(assign_ranks(t, what, err));
    NSIM_TRY(check_ports(t, what, err));
    NSIM_TRY(check_connected(t, what, err));
    int32_t maxhost = -1;
    for (uint32_t d = 0; d < t->ndevs; d++)
        if (t->devs[d].host > maxhost)
            maxhost = t->devs[d].host;
    t->nhosts = (uint32_t)(maxhost + 1);
    if (assign_nodes(t) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    free(t->dist);
    free(t->queue);
    free(t->seen);
    free(t->bdist);
    free(t->bqueue);
    free(t->bseen);
    t->dist = malloc(t->ndevs * sizeof *t->dist);
    t->queue = malloc(t->ndevs * sizeof *t->queue);
    t->seen = calloc(t->ndevs, sizeof *t->seen);
    t->bdist = malloc(t->ndevs * sizeof *t->bdist);
    t->bqueue = malloc(t->ndevs * sizeof *t->bqueue);
    t->bseen = calloc(t->ndevs, sizeof *t->bseen);
    t->epoch = 0;
    if (t->dist == NULL || t->queue == NULL || t->seen == NULL ||
        t->bdist == NULL || t->bqueue == NULL || t->bseen == NULL ||
        index_hosts(t) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology: out of memory");
    t->finalized = 1;
    return NSIM_OK;
}

const char *nsim_topo_name(const nsim_topo *t) { return t->name; }
uint32_t nsim_topo_ndevices(const nsim_topo *t) { return t->ndevs; }
uint32_t nsim_topo_nlinks(const nsim_topo *t) { return t->nlinks; }
const nsim_device *nsim_topo_device(const nsim_topo *t, uint32_t i)
{
    return &t->devs[i];
}
const nsim_link *nsim_topo_link(const nsim_topo *t, uint32_t i)
{
    return &t->links[i];
}
uint32_t nsim_topo_nout(const nsim_topo *t, uint32_t dev)
{
    return t->out_start[dev + 1] - t->out_start[dev];
}
const uint32_t *nsim_topo_out(const nsim_topo *t, uint32_t dev)
{
    return &t->out_links[t->out_start[dev]];
}
uint32_t nsim_topo_nranks(const nsim_topo *t) { return t->nranks; }
uint32_t nsim_topo_nhosts(const nsim_topo *t) { return t->nhosts; }
uint32_t nsim_topo_nnodes(const nsim_topo *t) { return t->nnodes; }
uint32_t nsim_topo_host_node(const nsim_topo *t, int32_t host)
{
    return host >= 0 && (uint32_t)host < t->nhosts ? t->host_node[host]
                                                   : UINT32_MAX;
}
static uint32_t rank_node(const nsim_topo *t, uint32_t r)
{
    return nsim_topo_host_node(t, t->devs[t->rank_dev[r]].host);
}

int nsim_topo_group_ranks(const nsim_topo *t, uint32_t **ranks,
                          uint32_t **start, uint32_t *ngroups)
{
    uint32_t n = t->nranks, nn = nsim_topo_nnodes(t), ng = 0;
    uint32_t *slot = malloc((nn + 1) * sizeof *slot); /* node -> group */
    uint32_t *count = calloc(n + 1, sizeof *count);
    uint32_t *rk = malloc((n ? n : 1) * sizeof *rk);
    uint32_t *st = calloc(n + 1, sizeof *st);
    if (slot == NULL || count == NULL || rk == NULL || st == NULL) {
        free(slot);
        free(count);
        free(rk);
        free(st);
        return NSIM_ENOMEM;
    }
    for (uint32_t i = 0; i <= nn; i++)
        slot[i] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) { /* groups in order of first rank */
        uint32_t h = rank_node(t, r), i = h < nn ? h : nn;
        if (slot[i] == UINT32_MAX)
            slot[i] = ng++;
        count[slot[i]]++;
    }
    for (uint32_t g = 0; g < ng; g++)
        st[g + 1] = st[g] + count[g];
    memset(count, 0, (n + 1) * sizeof *count);
    for (uint32_t r = 0; r < n; r++) { /* ranks in order within a group */
        uint32_t h = rank_node(t, r), g = slot[h < nn ? h : nn];
        rk[st[g] + count[g]++] = r;
    }
    free(slot);
    free(count);
    *ranks = rk;
    *start = st;
    *ngroups = ng;
    return NSIM_OK;
}

uint32_t nsim_topo_rank_device(const nsim_topo *t, uint32_t rank)
{
    return t->rank_dev[rank];
}
const uint32_t *nsim_topo_host_devices(const nsim_topo *t, int32_t host,
                                       uint32_t *n)
{
    if (host < -1 || host >= (int32_t)t->nhosts) {
        *n = 0;
        return NULL;
    }
    *n = t->host_start[host + 2] - t->host_start[host + 1];
    return &t->host_devs[t->host_start[host + 1]];
}

/* ---- routes ---------------------------------------------------------- */

/* One class of path: the links it may use and the devices it may pass
 * through (endpoints are always allowed). */
typedef struct path_class {
    nsim_path_type type;
    uint32_t link_mask; /* bit per nsim_link_type */
    uint32_t transit_mask; /* bit per nsim_dev_type */
} path_class;

#define LB(x) (1u << NSIM_LINK_##x)
#define DB(x) (1u << NSIM_DEV_##x)
static const path_class path_classes[] = {
    {NSIM_PATH_NVL, LB(NVLINK), DB(NVSWITCH)},
    {NSIM_PATH_NVB, LB(NVLINK), DB(NVSWITCH) | DB(GPU)},
    {NSIM_PATH_C2C, LB(C2C), 0},
    {NSIM_PATH_PXB, LB(PCIE), DB(PCIE_SWITCH)},
    {NSIM_PATH_PHB, LB(PCIE), DB(PCIE_SWITCH) | DB(CPU)},
    {NSIM_PATH_SYS, LB(PCIE) | LB(SYS) | LB(C2C),
     DB(PCIE_SWITCH) | DB(CPU)},
    {NSIM_PATH_NET,
     LB(PCIE) | LB(SYS) | LB(C2C) | LB(IB) | LB(ROCE) | LB(ETH),
     DB(PCIE_SWITCH) | DB(CPU) | DB(NIC) | DB(SWITCH)},
};
#undef LB
#undef DB

/* The last search's distance to i (UINT32_MAX: not reached). */
static uint32_t dist_of(const nsim_topo *t, uint32_t i)
{
    return t->seen[i] == t->epoch ? t->dist[i] : UINT32_MAX;
}

static void set_dist(nsim_topo *t, uint32_t i, uint32_t d)
{
    t->seen[i] = t->epoch;
    t->dist[i] = d;
}

/* A new search: marks of earlier ones no longer match (both ends'). */
static void next_epoch(nsim_topo *t)
{
    if (++t->epoch == 0) { /* wrapped: no stale mark may match */
        memset(t->seen, 0, t->ndevs * sizeof *t->seen);
        memset(t->bseen, 0, t->ndevs * sizeof *t->bseen);
        t->epoch = 1;
    }
}

/* Every device src reaches within class pc (dist_of): a device that
 * does not forward is reached but not passed through. Routes use
 * route_search. */
static void reach(nsim_topo *t, uint32_t src, const path_class *pc)
{
    next_epoch(t);
    uint32_t head = 0, tail = 0;
    set_dist(t, src, 0);
    t->queue[tail++] = src;
    while (head < tail) {
        uint32_t u = t->queue[head++];
        if (u != src && !(pc->transit_mask & (1u << t->devs[u].type)))
            continue;
        for (uint32_t k = t->out_start[u]; k < t->out_start[u + 1]; k++) {
            const nsim_link *l = &t->links[t->out_links[k]];
            if (!(pc->link_mask & (1u << l->type)) ||
                dist_of(t, l->dst) != UINT32_MAX)
                continue;
            set_dist(t, l->dst, t->dist[u] + 1);
            t->queue[tail++] = l->dst;
        }
    }
}

/* The fewest hops src -> dst within class pc, searched from both ends a
 * level at a time (the end with the smaller frontier first), where a
 * search from src alone reached every switch of a cluster's fabric
 * before dst (4 ms a route on 16,384 nodes). Leaves dist_of exact for
 * every device on a fewest-hop path, as a search from src alone would:
 * those src's side reached have their distance; those only dst's side
 * reached, at distance k from dst, get hops - k where no shorter
 * distance from src is possible (beyond what src's side covered).
 * walk_back then follows only fewest-hop paths to src: a device given
 * hops - k that is not on one leads to no device src's side reached at
 * the right distance. */
static void route_search(nsim_topo *t, uint32_t src, uint32_t dst,
                         const path_class *pc)
{
    next_epoch(t);
    const uint32_t ep = t->epoch;
    uint32_t fh = 0, ft = 0, bh = 0, bt = 0, flevels = 0;
    uint32_t best = UINT32_MAX;
    set_dist(t, src, 0);
    t->queue[ft++] = src;
    t->bseen[dst] = ep;
    t->bdist[dst] = 0;
    t->bqueue[bt++] = dst;
    if (src == dst)
        return;
    while (best == UINT32_MAX && fh < ft && bh < bt) {
        int forward = ft - fh <= bt - bh;
        uint32_t end = forward ? ft : bt;
        while (forward ? fh < end : bh < end) {
            uint32_t u = forward ? t->queue[fh++] : t->bqueue[bh++];
            for (uint32_t k = t->out_start[u]; k < t->out_start[u + 1];
                 k++) {
                const nsim_link *l = &t->links[t->out_links[k]];
                /* backwards: the link into u is l's reverse */
                const nsim_link *in = forward ? l : &t->links[l->reverse];
                uint32_t v = l->dst, far = forward ? dst : src;
                if (!(pc->link_mask & (1u << in->type)) ||
                    (v != far &&
                     !(pc->transit_mask & (1u << t->devs[v].type))))
                    continue;
                if (forward) {
                    if (t->seen[v] == ep)
                        continue;
                    set_dist(t, v, t->dist[u] + 1);
                    t->queue[ft++] = v;
                    if (t->bseen[v] == ep && t->dist[v] + t->bdist[v] < best)
                        best = t->dist[v] + t->bdist[v];
                } else {
                    if (t->bseen[v] == ep)
                        continue;
                    t->bseen[v] = ep;
                    t->bdist[v] = t->bdist[u] + 1;
                    t->bqueue[bt++] = v;
                    if (t->seen[v] == ep && t->dist[v] + t->bdist[v] < best)
                        best = t->dist[v] + t->bdist[v];
                }
            }
        }
        flevels += (uint32_t)forward;
    }
    if (best == UINT32_MAX)
        return; /* dst not reached: dist_of(dst) stays unknown */
    /* src's side covered every device within flevels hops of src */
    for (uint32_t i = 0; i < bt; i++) {
        uint32_t v = t->bqueue[i];
        if (t->seen[v] != ep && t->bdist[v] <= best &&
            best - t->bdist[v] > flevels)
            set_dist(t, v, best - t->bdist[v]);
    }
}

typedef struct path_walk {
    nsim_topo *t;
    const path_class *pc;
    uint32_t src, hops;
    uint32_t *stack;  /* hops links, filled from the end */
    uint32_t *paths;  /* NSIM_ROUTE_MAX_PATHS x hops */
    double *bws;
    uint32_t npaths;
} path_walk;

/* Enumerates fewest-hop paths backwards from dev (at BFS distance d). */
static void walk_back(path_walk *w, uint32_t dev, uint32_t d, double bw)
{
    nsim_topo *t = w->t;
    if (w->npaths == NSIM_ROUTE_MAX_PATHS)
        return;
    if (d == 0) {
        memcpy(&w->paths[(size_t)w->npaths * w->hops], w->stack,
               w->hops * sizeof *w->stack);
        w->bws[w->npaths++] = bw;
        return;
    }
    /* incoming links of dev are the reverses of its outgoing links; the
     * distance is tested first, from the outgoing link's far end (the
     * incoming one's source), so that the incoming link is read only
     * where it may be on a path: a spine of a large fabric has thousands
     * of links and one or two lead back toward src */
    for (uint32_t k = t->out_start[dev]; k < t->out_start[dev + 1]; k++) {
        const nsim_link *rev = &t->links[t->out_links[k]];
        uint32_t prev = rev->dst;
        if (dist_of(t, prev) != d - 1)
            continue;
        const nsim_link *in = &t->links[rev->reverse];
        if (!(w->pc->link_mask & (1u << in->type)))
            continue;
        if (prev != w->src &&
            !(w->pc->transit_mask & (1u << t->devs[prev].type)))
            continue;
        w->stack[d - 1] = rev->reverse;
        walk_back(w, prev, d - 1, in->bw < bw ? in->bw : bw);
    }
}

/* PIX/PXB and NVL/NVB are told apart by what the path passes through. */
static nsim_path_type refine_type(const nsim_topo *t, const path_class *pc,
                                  const uint32_t *links, uint32_t hops)
{
    uint32_t nsw = 0, ngpu = 0;
    for (uint32_t h = 0; h + 1 < hops; h++) {
        nsim_dev_type dt = t->devs[t->links[links[h]].dst].type;
        nsw += dt == NSIM_DEV_PCIE_SWITCH;
        ngpu += dt == NSIM_DEV_GPU;
    }
    if (pc->type == NSIM_PATH_PXB)
        return nsw <= 1 ? NSIM_PATH_PIX : NSIM_PATH_PXB;
    if (pc->type == NSIM_PATH_NVB)
        return ngpu == 0 ? NSIM_PATH_NVL : NSIM_PATH_NVB;
    return pc->type;
}

/* Between NICs of different hosts only the network carries packets: a
 * NIC that receives one writes it to memory, it does not forward it
 * through its host to another NIC. */
static const path_class network_class = {
    NSIM_PATH_NET, (1u << NSIM_LINK_IB) | (1u << NSIM_LINK_ROCE) |
                       (1u << NSIM_LINK_ETH),
    1u << NSIM_DEV_SWITCH};

static int make_route(nsim_topo *t, uint32_t src, uint32_t dst,
                      nsim_route **out)
{
    const nsim_device *a = &t->devs[src], *b = &t->devs[dst];
    int nic_pair = a->type == NSIM_DEV_NIC && b->type == NSIM_DEV_NIC &&
                   a->host != b->host;
    const size_t nclass =
        nic_pair ? 1 : sizeof path_classes / sizeof path_classes[0];
    for (size_t c = 0; c < nclass; c++) {
        const path_class *pc = nic_pair ? &network_class : &path_classes[c];
        route_search(t, src, dst, pc);
        if (dist_of(t, dst) == UINT32_MAX)
            continue;
        uint32_t hops = dist_of(t, dst);
        uint32_t stack[256];
        if (hops > 256)
            return NSIM_ENOTSUP;
        uint32_t *paths = malloc((size_t)NSIM_ROUTE_MAX_PATHS * hops *
                                 sizeof *paths);
        double bws[NSIM_ROUTE_MAX_PATHS];
        if (paths == NULL)
            return NSIM_ENOMEM;
        path_walk w = {t, pc, src, hops, stack, paths, bws, 0};
        walk_back(&w, dst, hops, 1e300);
        double best = 0;
        for (uint32_t i = 0; i < w.npaths; i++)
            best = bws[i] > best ? bws[i] : best;
        nsim_route *r = malloc(sizeof *r + (size_t)w.npaths * hops *
                                               sizeof(uint32_t));
        if (r == NULL) {
            free(paths);
            return NSIM_ENOMEM;
        }
        uint32_t *dstl = (uint32_t *)(r + 1);
        uint32_t kept = 0;
        for (uint32_t i = 0; i < w.npaths; i++)
            if (bws[i] >= best)
                memcpy(&dstl[(size_t)kept++ * hops], &paths[(size_t)i * hops],
                       hops * sizeof *dstl);
        free(paths);
        nsim_time lat = 0;
        for (uint32_t h = 0; h < hops; h++) {
            const nsim_link *l = &t->links[dstl[h]];
            lat += l->lat_ps;
            if (h + 1 < hops && t->devs[l->dst].type == NSIM_DEV_SWITCH)
                lat += t->devs[l->dst].lat_ps;
        }
        *r = (nsim_route){refine_type(t, pc, dstl, hops), best, lat, hops,
                          kept, dstl};
        *out = r;
        return NSIM_OK;
    }
    return NSIM_ENOENT;
}

static uint32_t route_slot(const nsim_topo *t, uint32_t src, uint32_t dst)
{
    uint64_t h = ((uint64_t)src * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)dst * 0xc2b2ae3d27d4eb4full);
    uint32_t mask = t->routes_cap - 1, i = (uint32_t)(h >> 20) & mask;
    while (t->routes[i].route != NULL &&
           (t->routes[i].src != src || t->routes[i].dst != dst))
        i = (i + 1) & mask;
    return i;
}

static int routes_grow(nsim_topo *t)
{
    route_entry *old = t->routes;
    uint32_t oldcap = t->routes_cap;
    t->routes_cap = oldcap ? oldcap * 2 : 256;
    t->routes = calloc(t->routes_cap, sizeof *t->routes);
    if (t->routes == NULL) {
        t->routes = old;
        t->routes_cap = oldcap;
        return NSIM_ENOMEM;
    }
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].route != NULL)
            t->routes[route_slot(t, old[i].src, old[i].dst)] = old[i];
    free(old);
    return NSIM_OK;
}

int nsim_topo_route(nsim_topo *t, uint32_t src, uint32_t dst,
                    const nsim_route **out, nsim_err *err)
{
    if (!t->finalized)
        return NSIM_ERR(err, NSIM_ESTATE, "topology not finalized");
    if (src >= t->ndevs || dst >= t->ndevs)
        return NSIM_ERR(err, NSIM_EINVAL, "route: no such device");
    if (src == dst) {
        static const nsim_route loc = {NSIM_PATH_LOC, 1e300, 0, 0, 1, NULL};
        *out = &loc;
        return NSIM_OK;
    }
    if ((t->routes_len + 1) * 2 > t->routes_cap && routes_grow(t) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "route: out of memory");
    uint32_t slot = route_slot(t, src, dst);
    if (t->routes[slot].route == NULL) {
        nsim_route *r = NULL;
        int rc = make_route(t, src, dst, &r);
        if (rc == NSIM_ENOENT)
            return NSIM_ERR(err, NSIM_ENOENT, "no route from %s to %s",
                            t->devs[src].name, t->devs[dst].name);
        if (rc != NSIM_OK)
            return NSIM_ERR(err, rc, "route %s -> %s: %s", t->devs[src].name,
                            t->devs[dst].name, nsim_strerror(rc));
        t->routes[slot] = (route_entry){src, dst, r};
        t->routes_len++;
    }
    *out = t->routes[slot].route;
    return NSIM_OK;
}

/* One search per rank's GPU in the NVB class (NVLinks, through
 * NVSwitches and GPUs) and a look at where it reached: what
 * nsim_topo_route would say of every pair (its type NVL or NVB exactly
 * where this class reaches) without building and keeping a route for
 * each of a cluster's GPU pairs (917,504 routes on 16,384 DGX H100:
 * half a second of the run's set-up and 88 MB). */
int nsim_topo_hosts_nvlink_whole(nsim_topo *t)
{
    if (!t->finalized)
        return 0;
    if (t->nvlink_whole >= 0)
        return t->nvlink_whole;
    const path_class *nvb = &path_classes[1];
    int whole = 1;
    for (uint32_t r = 0; whole && r < t->nranks; r++) {
        uint32_t g = t->rank_dev[r];
        uint32_t nd;
        const uint32_t *hd = nsim_topo_host_devices(t, t->devs[g].host, &nd);
        reach(t, g, nvb);
        for (uint32_t j = 0; j < nd; j++)
            if (t->devs[hd[j]].type == NSIM_DEV_GPU &&
                dist_of(t, hd[j]) == UINT32_MAX) {
                whole = 0;
                break;
            }
    }
    t->nvlink_whole = whole;
    return whole;
}

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull; /* FNV-1a */
    return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    return fnv_bytes(h, &v, sizeof v);
}

static uint64_t fnv_f64(uint64_t h, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return fnv_u64(h, bits);
}

/* Field by field (no padding): a field added to nsim_device or nsim_link
 * belongs here too. */
int nsim_topo_content_hash(const nsim_topo *t, uint64_t *out)
{
    if (!t->content_hashed) {
        uint64_t h = fnv_bytes(14695981039346656037ull, t->name,
                               strlen(t->name) + 1);
        for (uint32_t i = 0; i < t->ndevs; i++) {
            const nsim_device *d = &t->devs[i];
            h = fnv_bytes(h, d->name, strlen(d->name) + 1);
            h = fnv_bytes(h, d->gen, strnlen(d->gen, sizeof d->gen));
            h = fnv_u64(h, (uint64_t)d->type);
            h = fnv_u64(h, (uint64_t)(int64_t)d->host);
            h = fnv_u64(h, (uint64_t)(int64_t)d->rank);
            h = fnv_u64(h, d->sm);
            h = fnv_u64(h, d->no_p2p);
            h = fnv_u64(h, d->nvls);
            h = fnv_u64(h, d->nic_ports);
            h = fnv_f64(h, d->port_bw);
            h = fnv_u64(h, d->mtu_bytes);
            h = fnv_u64(h, d->gdr);
            h = fnv_u64(h, (uint64_t)d->link_layer);
            h = fnv_u64(h, (uint64_t)(int64_t)d->rail);
            h = fnv_u64(h, d->radix);
            h = fnv_u64(h, d->lat_ps);
        }
        for (uint32_t i = 0; i < t->nlinks; i++) {
            const nsim_link *l = &t->links[i];
            h = fnv_u64(h, (uint64_t)l->src << 32 | l->dst);
            h = fnv_u64(h, (uint64_t)l->type);
            h = fnv_f64(h, l->bw);
            h = fnv_f64(h, l->lane_bw);
            h = fnv_u64(h, l->lat_ps);
            h = fnv_u64(h, (uint64_t)l->count << 32 | l->reverse);
        }
        nsim_topo *m = (nsim_topo *)t; /* a cache of t's content */
        m->content_hash = h;
        m->content_hashed = 1;
    }
    *out = t->content_hash;
    return NSIM_OK;
}

int nsim_topo_nearest(nsim_topo *t, uint32_t dev, nsim_dev_type type,
                      uint32_t *out)
{
    uint32_t best = UINT32_MAX, best_hops = UINT32_MAX, n;
    const uint32_t *on = nsim_topo_host_devices(t, t->devs[dev].host, &n);
    for (uint32_t k = 0; k < n; k++) { /* in id order: ties, the lowest */
        uint32_t d = on[k];
        const nsim_route *r;
        if (t->devs[d].type != type ||
            nsim_topo_route(t, dev, d, &r, NULL) != NSIM_OK)
            continue;
        if (r->hops < best_hops) {
            best = d;
            best_hops = r->hops;
        }
    }
    if (best == UINT32_MAX)
        return NSIM_ENOENT;
    *out = best;
    return NSIM_OK;
}

/* PXN (nccl-internals 1.4): when a GPU's own path to the send NIC is
 * worse than PXN (through the CPU) and a GPU of the same host has an
 * NVLink path to it and a PCIe path under one switch tree (<= PXB) to the
 * NIC, NCCL sends through that GPU: the slices are written over NVLink
 * into a buffer in its memory, which the NIC reads. Returns that GPU, or
 * UINT32_MAX. */
uint32_t nsim_topo_pxn_gpu(nsim_topo *t, uint32_t gpu, uint32_t nic)
{
    const nsim_route *own, *r, *best = NULL;
    uint32_t via = UINT32_MAX, n;
    if (nsim_topo_route(t, gpu, nic, &own, NULL) != NSIM_OK ||
        own->type <= NSIM_PATH_PXN)
        return UINT32_MAX;
    /* the GPUs of its host (not every rank: a NET connection of a
     * 131,072-GPU AllToAll asks this), the best path to the NIC, ties
     * to the lowest rank */
    const uint32_t *on = nsim_topo_host_devices(t, t->devs[gpu].host, &n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t g = on[k];
        if (g == gpu || t->devs[g].type != NSIM_DEV_GPU ||
            nsim_topo_route(t, gpu, g, &r, NULL) != NSIM_OK ||
            r->type != NSIM_PATH_NVL ||
            nsim_topo_route(t, g, nic, &r, NULL) != NSIM_OK ||
            r->type > NSIM_PATH_PXB)
            continue;
        if (best == NULL || r->type < best->type ||
            (r->type == best->type &&
             (r->bw > best->bw ||
              (r->bw == best->bw && t->devs[g].rank < t->devs[via].rank)))) {
            best = r;
            via = g;
        }
    }
    return via;
}
