/* SPDX-License-Identifier: MIT
 *
 * search.c - NCCL's channel search, ported from NCCL's src/graph/search.cc
 * as nccl-internals.md 1.3, 1.4 and 2.1-2.6 describe it (see search.h).
 *
 * Models: one host's "system": its GPUs (local index = rank order in the
 * host, NCCL's NVML order), one NET per NIC port (NCCL's net devices, in
 * device order), every directed link's bandwidth in NCCL's units, all
 * NVSwitches of a host collapsed into one (per GPU an up and a down
 * counter, as NCCL's single NVS node), paths from the topology's routes
 * (first equal-cost path) plus PXN (1.4). A channel is a DFS that follows
 * the paths and subtracts its bandwidth from every link crossed (SUB_ROUND
 * to 1/1000 as NCCL), NCCL's GPU order heuristics, NET choice, relaxation,
 * pass 2, ncclTopoDupChannels, and the communicator's channel count (2.5).
 * Does not model: Intel P2P overhead (the topology has no CPU vendor),
 * POWER NVLink-to-CPU, NVLS/CollNet patterns, host-memory staging without
 * GDR, NCCL_GRAPH_FILE (the CLI's --graph does that).
 * Units: GB/s (float, as NCCL, so that 370.8 - 6 x 60 rounds as NCCL's).
 * Workload: once per topology; a few thousand DFS steps per attempt.
 */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/topo/nccl_graph.h"

/* ---- NCCL's constants (nccl-internals 1.3, 2.2) ---------------------- */

/* NCCL counts a PCIe lane at width x rate / 80 GB/s (Gen3 0.75, Gen4 1.5,
 * Gen5 3), 0.762 of the raw 128b/130b rate (hardware-facts 2.1); values
 * are snapped to NCCL's 3/16 GB/s steps per lane. */
#define NCCL_PCI_PER_RAW 0.762
#define NCCL_PCI_LANE_STEP 0.1875
#define LOC_BW 5000.0f

/* Search budgets (nccl-internals 2.2). */
#define SEARCH_TIMEOUT (1 << 14)
#define SEARCH_TIMEOUT_SAME (1 << 8)
#define SEARCH_TIMEOUT_GLOBAL (1 << 19)
#define PCI_ORDER_TIMEOUT (1 << 10)

#define FORCED_ORDER_PCI 1
#define FORCED_ORDER_REPLAY 2

/* Speed arrays by the lowest sm, intra (single host) and inter (2.2). */
static const float sp80[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const float sp90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const float sp100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19,
                              18};
static const float in80[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6,
                             5,  4,  3,  2.4f, 1.2f, 0.24f, 0.12f};
static const float in90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5f, 15, 12,
                             6,  3,  2.4f, 1.2f, 0.24f, 0.12f};
static const float in100[] = {96, 86, 80, 48, 45.1f, 42, 40, 30, 24, 22, 20,
                              17.5f, 15, 12, 6, 3, 2.4f, 1.2f, 0.24f,
                              0.12f};
#define NSP(a) ((int)(sizeof(a) / sizeof(a[0])))

double nsim_search_nvlink_bw(uint32_t sm)
{
    if (sm >= 100)
        return 40.1;
    if (sm == 90)
        return 20.6;
    if (sm == 86)
        return 12.0;
    if (sm >= 60 && sm < 70)
        return 18.0;
    return 20.0;
}

double nsim_search_link_bw(const nsim_topo *t, uint32_t link)
{
    const nsim_link *l = nsim_topo_link(t, link);
    const nsim_device *a = nsim_topo_device(t, l->src);
    const nsim_device *b = nsim_topo_device(t, l->dst);
    uint32_t count = l->count ? l->count : 1;
    if (l->type == NSIM_LINK_NVLINK && (a->type == NSIM_DEV_GPU ||
                                        b->type == NSIM_DEV_GPU)) {
        uint32_t sm = a->type == NSIM_DEV_GPU ? a->sm : b->sm;
        return (float)count * (float)nsim_search_nvlink_bw(sm);
    }
    if (l->type == NSIM_LINK_PCIE) {
        double lane = l->lane_bw / 1e9 * NCCL_PCI_PER_RAW;
        double steps = floor(lane / NCCL_PCI_LANE_STEP + 0.5);
        if (steps < 1)
            return l->bw / 1e9 * NCCL_PCI_PER_RAW;
        return count * steps * NCCL_PCI_LANE_STEP;
    }
    return l->bw / 1e9;
}

double nsim_search_gpu_total_bw(const nsim_topo *t, uint32_t dev)
{
    double nvl = 0, pci = 0;
    const uint32_t *out = nsim_topo_out(t, dev);
    for (uint32_t k = 0; k < nsim_topo_nout(t, dev); k++) {
        const nsim_link *l = nsim_topo_link(t, out[k]);
        if (l->type == NSIM_LINK_NVLINK)
            nvl += nsim_search_link_bw(t, out[k]);
        else if (l->type == NSIM_LINK_PCIE)
            pci = nsim_search_link_bw(t, out[k]);
    }
    return nvl > pci ? nvl : pci;
}

/* ---- the search-time system ------------------------------------------ */

typedef struct spath {
    int type;       /* nsim_path_type; NSIM_PATH_DIS: none */
    float bw;       /* bottleneck at build time */
    uint32_t hops;  /* NCCL's link count */
    uint32_t n;     /* counters charged */
    float **slot;   /* n counters (links, NVS up/down, NET links) */
    float **rev;    /* n reverse counters charged 1/8 (pre-sm80), or NULL */
} spath;

typedef struct snet {
    uint32_t nic, port;
    float bw, in_bw, out_bw; /* net.bw, NET->NIC and NIC->NET links */
} snet;

typedef struct sgraph {
    int pattern, crossnic, same;
    int nch, min_ch, max_ch, nhops;
    float bw_intra, bw_inter;
    int type_intra, type_inter;
    int *intra; /* MAXCHANNELS x ng GPU indices */
    int *inter; /* MAXCHANNELS x 2 NET indices */
} sgraph;

typedef struct ssys {
    nsim_topo *t;
    int ng, nn, has_nvs;
    uint32_t *gdev, *grank, *gsm;
    snet *net;
    float *lbw;             /* per topology directed link */
    float *nvs_up, *nvs_down;
    spath *gg, *gn, *ngp;   /* ng x ng, ng x nn, nn x ng */
    uint64_t *used;
    float max_bw, total_bw;
    uint32_t sm_min;
} ssys;

#define GG(s, a, b) (&(s)->gg[(a) * (s)->ng + (b)])
#define GN(s, g, n) (&(s)->gn[(g) * (s)->nn + (n)])
#define NG(s, n, g) (&(s)->ngp[(n) * (s)->ng + (g)])

static int gpu_index(const ssys *s, uint32_t dev)
{
    for (int g = 0; g < s->ng; g++)
        if (s->gdev[g] == dev)
            return g;
    return -1;
}

/* The counter a link of a path charges: NVLinks to and from NVSwitches
 * go to the GPU's collapsed NVS counters (NULL for switch-to-switch). */
static float *link_slot(ssys *s, uint32_t l)
{
    const nsim_link *lk = nsim_topo_link(s->t, l);
    nsim_dev_type ta = nsim_topo_device(s->t, lk->src)->type;
    nsim_dev_type tb = nsim_topo_device(s->t, lk->dst)->type;
    int ga = gpu_index(s, lk->src), gb = gpu_index(s, lk->dst);
    if (lk->type == NSIM_LINK_NVLINK && tb == NSIM_DEV_NVSWITCH)
        return ga >= 0 ? &s->nvs_up[ga]
               : ta == NSIM_DEV_NVSWITCH ? NULL : &s->lbw[l];
    if (lk->type == NSIM_LINK_NVLINK && ta == NSIM_DEV_NVSWITCH)
        return gb >= 0 ? &s->nvs_down[gb]
               : tb == NSIM_DEV_NVSWITCH ? NULL : &s->lbw[l];
    return &s->lbw[l];
}

static int path_alloc(spath *p, uint32_t n)
{
    p->slot = calloc(n ? n : 1, sizeof *p->slot);
    p->rev = calloc(n ? n : 1, sizeof *p->rev);
    return p->slot && p->rev ? NSIM_OK : NSIM_ENOMEM;
}

static void path_push(spath *p, float *slot, float *rev)
{
    if (slot == NULL)
        return;
    p->slot[p->n] = slot;
    p->rev[p->n++] = rev;
    if (*slot < p->bw)
        p->bw = *slot;
}

/* A path from a topology route, with NET links before (pre) or after
 * (post) it for NET paths. rev_gpu >= 0: the pre-sm80 rule applies to the
 * last link into that GPU (nccl-internals 1.3). */
static int path_from_route(ssys *s, uint32_t a, uint32_t b, float *pre,
                           float *post, int rev_gpu, spath *p)
{
    const nsim_route *r;
    p->type = NSIM_PATH_DIS;
    p->bw = LOC_BW;
    if (nsim_topo_route(s->t, a, b, &r, NULL) != NSIM_OK ||
        r->type >= NSIM_PATH_NET)
        return path_alloc(p, 0);
    NSIM_TRY(path_alloc(p, r->hops + 2));
    p->type = r->type;
    p->hops = r->hops + (pre != NULL) + (post != NULL);
    path_push(p, pre, NULL);
    for (uint32_t k = 0; k < r->hops; k++) {
        float *rev = NULL;
        if (rev_gpu >= 0 && k + 1 == r->hops && s->gsm[rev_gpu] < 80)
            rev = link_slot(s, nsim_topo_link(s->t, r->links[k])->reverse);
        path_push(p, link_slot(s, r->links[k]), rev);
    }
    path_push(p, post, NULL);
    return NSIM_OK;
}

static void path_free(spath *p)
{
    free(p->slot);
    free(p->rev);
}

/* ncclTopoGetLocal: the targets with the best path bw, then type. */
static int get_local(const spath *paths, int n, int *out, int *type)
{
    float best = 0;
    int min_type = NSIM_PATH_DIS, count = 0;
    for (int i = 0; i < n; i++) {
        if (paths[i].bw > best ||
            (paths[i].bw == best && paths[i].type < min_type)) {
            best = paths[i].bw;
            min_type = paths[i].type;
            count = 0;
        }
        if (paths[i].bw == best && paths[i].type == min_type)
            out[count++] = i;
    }
    if (type)
        *type = min_type;
    return count;
}

static int mirror_bits(int val, int pow2)
{
    int m = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            m |= mb;
    return m;
}

/* ncclTopoGetLocalNet (nccl-internals 2.6): the NET GPU g uses for
 * channel c; -1 if none. */
static int local_net(const ssys *s, int g, int c, int *scratch)
{
    int *nets = scratch, *gpus = scratch + s->nn, type;
    int nl = get_local(GN(s, g, 0), s->nn, nets, &type);
    if (nl == 0 || type >= NSIM_PATH_DIS)
        return -1;
    int ngl = get_local(NG(s, nets[0], 0), s->ng, gpus, NULL);
    ngl = ngl ? ngl : 1;
    int start = g % ngl;
    if ((nl & (nl - 1)) == 0)
        start = mirror_bits(start, nl);
    int per = (nl + ngl - 1) / ngl;
    return nets[(start + c % per) % nl];
}

/* ncclTopoGetLocalGpu: the GPU that would use NET n first. */
static int local_gpu(const ssys *s, int n, int *scratch)
{
    int *gpus = scratch + s->nn + s->ng;
    int ngl = get_local(NG(s, n, 0), s->ng, gpus, NULL);
    for (int c = 0; c < NSIM_SEARCH_MAXCHANNELS; c++)
        for (int i = 0; i < ngl; i++)
            if (local_net(s, gpus[i], c, scratch) == n)
                return gpus[i];
    return -1;
}

/* PXN (nccl-internals 1.4): GPU g reaches NET n through the NIC's local
 * GPU lg over NVLink when lg is PCIe-close (<= P2C, NCCL_PXN_C2C=1) to
 * the NIC and has more bandwidth to it or g's own path crosses a CPU. */
static int add_pxn(ssys *s, int *scratch)
{
    for (int n = 0; n < s->nn; n++) {
        int lg = local_gpu(s, n, scratch);
        if (lg < 0 || !nsim_topo_device(s->t, s->net[n].nic)->gdr)
            continue;
        const spath *peer = GN(s, lg, n);
        for (int g = 0; g < s->ng; g++) {
            spath *own = GN(s, g, n), *hop = GG(s, g, lg);
            if (g == lg || peer->type > NSIM_PATH_P2C ||
                hop->type > NSIM_PATH_NVL ||
                !(peer->bw > own->bw || own->type > NSIM_PATH_P2C))
                continue;
            spath p = {NSIM_PATH_PXN, LOC_BW, hop->hops + peer->hops, 0,
                       NULL, NULL};
            NSIM_TRY(path_alloc(&p, hop->n + peer->n));
            for (uint32_t k = 0; k < hop->n; k++)
                path_push(&p, hop->slot[k], hop->rev[k]);
            for (uint32_t k = 0; k < peer->n; k++)
                path_push(&p, peer->slot[k], peer->rev[k]);
            p.bw = hop->bw < peer->bw ? hop->bw : peer->bw;
            path_free(own);
            *own = p;
        }
    }
    return NSIM_OK;
}

static int sys_gpus(ssys *s, int32_t host)
{
    uint32_t nr = nsim_topo_nranks(s->t);
    s->gdev = calloc(nr, sizeof *s->gdev);
    s->grank = calloc(nr, sizeof *s->grank);
    s->gsm = calloc(nr, sizeof *s->gsm);
    if (!s->gdev || !s->grank || !s->gsm)
        return NSIM_ENOMEM;
    s->sm_min = UINT32_MAX;
    for (uint32_t r = 0; r < nr; r++) {
        uint32_t d = nsim_topo_rank_device(s->t, r);
        const nsim_device *dv = nsim_topo_device(s->t, d);
        if (dv->host != host)
            continue;
        s->gdev[s->ng] = d;
        s->grank[s->ng] = r;
        s->gsm[s->ng++] = dv->sm;
        s->sm_min = dv->sm < s->sm_min ? dv->sm : s->sm_min;
    }
    return NSIM_OK;
}

/* NETs: one per NIC port of the host, in device order; none when the
 * job has one host (ncclTopoTrimSystem removes them). */
static int sys_nets(ssys *s, int32_t host)
{
    uint32_t nd = nsim_topo_ndevices(s->t), cap = 0;
    for (uint32_t d = 0; d < nd; d++) {
        const nsim_device *dv = nsim_topo_device(s->t, d);
        if (dv->type == NSIM_DEV_NIC && dv->host == host)
            cap += dv->nic_ports ? dv->nic_ports : 1;
    }
    s->net = calloc(cap ? cap : 1, sizeof *s->net);
    if (s->net == NULL)
        return NSIM_ENOMEM;
    if (nsim_topo_nnodes(s->t) < 2)
        return NSIM_OK;
    for (uint32_t d = 0; d < nd; d++) {
        const nsim_device *dv = nsim_topo_device(s->t, d);
        if (dv->type != NSIM_DEV_NIC || dv->host != host)
            continue;
        for (uint32_t p = 0; p < (dv->nic_ports ? dv->nic_ports : 1); p++) {
            float bw = (float)(dv->port_bw / 1e9); /* speed / 8000 */
            s->net[s->nn++] = (snet){d, p, bw, bw, bw};
        }
    }
    return NSIM_OK;
}

static int sys_links(ssys *s)
{
    uint32_t nl = nsim_topo_nlinks(s->t);
    s->lbw = calloc(nl ? nl : 1, sizeof *s->lbw);
    s->nvs_up = calloc((size_t)s->ng, sizeof *s->nvs_up);
    s->nvs_down = calloc((size_t)s->ng, sizeof *s->nvs_down);
    s->used = calloc((size_t)s->ng, sizeof *s->used);
    if (!s->lbw || !s->nvs_up || !s->nvs_down || !s->used)
        return NSIM_ENOMEM;
    for (uint32_t l = 0; l < nl; l++) {
        const nsim_link *lk = nsim_topo_link(s->t, l);
        s->lbw[l] = (float)nsim_search_link_bw(s->t, l);
        int ga = gpu_index(s, lk->src), gb = gpu_index(s, lk->dst);
        nsim_dev_type ta = nsim_topo_device(s->t, lk->src)->type;
        nsim_dev_type tb = nsim_topo_device(s->t, lk->dst)->type;
        if (lk->type == NSIM_LINK_NVLINK && tb == NSIM_DEV_NVSWITCH && ga >= 0)
            s->nvs_up[ga] += s->lbw[l];
        if (lk->type == NSIM_LINK_NVLINK && ta == NSIM_DEV_NVSWITCH && gb >= 0)
            s->nvs_down[gb] += s->lbw[l];
        s->has_nvs |= ga >= 0 && tb == NSIM_DEV_NVSWITCH;
    }
    return NSIM_OK;
}

static int sys_paths(ssys *s, int *scratch)
{
    s->gg = calloc((size_t)s->ng * s->ng, sizeof *s->gg);
    s->gn = calloc((size_t)s->ng * s->nn + 1, sizeof *s->gn);
    s->ngp = calloc((size_t)s->nn * s->ng + 1, sizeof *s->ngp);
    if (!s->gg || !s->gn || !s->ngp)
        return NSIM_ENOMEM;
    for (int a = 0; a < s->ng; a++)
        for (int b = 0; b < s->ng; b++) {
            spath *p = GG(s, a, b);
            if (a == b) {
                *p = (spath){NSIM_PATH_LOC, LOC_BW, 0, 0, NULL, NULL};
                continue;
            }
            NSIM_TRY(path_from_route(s, s->gdev[a], s->gdev[b], NULL, NULL,
                                     -1, p));
        }
    for (int g = 0; g < s->ng; g++)
        for (int n = 0; n < s->nn; n++) {
            snet *nt = &s->net[n];
            NSIM_TRY(path_from_route(s, s->gdev[g], nt->nic, NULL,
                                     &nt->out_bw, -1, GN(s, g, n)));
            NSIM_TRY(path_from_route(s, nt->nic, s->gdev[g], &nt->in_bw,
                                     NULL, g, NG(s, n, g)));
        }
    return add_pxn(s, scratch);
}

/* ncclTopoSearchInit: maxBw (best GPU->NET or GPU->GPU path) and totalBw
 * (max over GPUs of max(NVLink sum, PCIe)). */
static void sys_summary(ssys *s)
{
    s->max_bw = s->total_bw = 0;
    if (s->nn == 0 && s->ng == 1) {
        s->max_bw = s->total_bw = LOC_BW;
        return;
    }
    for (int g = 0; g < s->ng; g++) {
        int nt = s->nn ? s->nn : s->ng;
        for (int j = 0; j < nt; j++) {
            const spath *p = s->nn ? GN(s, g, j) : GG(s, g, j);
            if ((s->nn || j != g) && p->type < NSIM_PATH_DIS &&
                p->bw > s->max_bw)
                s->max_bw = p->bw;
        }
        float tot = (float)nsim_search_gpu_total_bw(s->t, s->gdev[g]);
        s->total_bw = tot > s->total_bw ? tot : s->total_bw;
    }
}

static void sys_free(ssys *s)
{
    for (int i = 0; s->gg && i < s->ng * s->ng; i++)
        path_free(&s->gg[i]);
    for (int i = 0; s->gn && i < s->ng * s->nn; i++)
        path_free(&s->gn[i]);
    for (int i = 0; s->ngp && i < s->ng * s->nn; i++)
        path_free(&s->ngp[i]);
    free(s->gg);
    free(s->gn);
    free(s->ngp);
    free(s->gdev);
    free(s->grank);
    free(s->gsm);
    free(s->net);
    free(s->lbw);
    free(s->nvs_up);
    free(s->nvs_down);
    free(s->used);
}

/* ---- the DFS (ncclTopoSearchRec and friends) ------------------------- */

typedef struct srch {
    ssys *s;
    sgraph *tmp, *save;
    int *scratch; /* 2 x (nn + ng) + ng ints */
} srch;

#define SUB_ROUND(a, b) ((a) = roundf(((a) - (b)) * 1000) / 1000)

/* followPath: charges bw on the first max_steps counters; returns the
 * number charged (< max_steps: a counter lacked bandwidth). */
static uint32_t follow(const spath *p, uint32_t max_steps, float bw)
{
    for (uint32_t k = 0; k < max_steps; k++) {
        float rev = p->rev[k] ? bw / 8 : 0;
        if (*p->slot[k] < bw || (rev != 0 && *p->rev[k] < rev))
            return k;
        SUB_ROUND(*p->slot[k], bw);
        if (rev != 0)
            SUB_ROUND(*p->rev[k], rev);
    }
    return max_steps;
}

static int is_tree(int pattern)
{
    return pattern == NSIM_PATTERN_BALANCED_TREE ||
           pattern == NSIM_PATTERN_TREE || pattern == NSIM_PATTERN_SPLIT_TREE;
}

/* ncclTopoFollowPath: mult 1 takes the path (0 if refused), -1 gives
 * the bandwidth back. rev is the reverse path (trees check its type). */
static int take_path(sgraph *g, const spath *p, const spath *rev, int intra,
                     int mult)
{
    float bw = intra ? g->bw_intra : g->bw_inter;
    int type = intra ? g->type_intra : g->type_inter;
    if (p->type >= NSIM_PATH_DIS)
        return 0;
    if (mult == 1 && p->type > type)
        return 0;
    if (mult == 1 && is_tree(g->pattern) && rev != NULL && rev->type > type)
        return 0;
    uint32_t k = follow(p, p->n, bw * (float)mult);
    if (k < p->n) {
        follow(p, k, -bw * (float)mult);
        return 0;
    }
    g->nhops += mult * (int)p->hops;
    return 1;
}

static int rec_gpu(srch *x, int g, int step, int back_net, int back_first,
                   int forced, int *time);
static int search_rec(srch *x, int *time);

/* ncclTopoSearchTryGpu from a GPU (from_gpu >= 0), a NET (from_net) or
 * nowhere (both -1). */
static int try_gpu(srch *x, int step, int back_net, int back_first,
                   int forced, int *time, int from_gpu, int from_net, int g)
{
    ssys *s = x->s;
    sgraph *gr = x->tmp;
    const spath *p = NULL, *rev = NULL;
    int intra = from_gpu >= 0;
    if (from_gpu >= 0) {
        p = GG(s, from_gpu, g);
        rev = GG(s, g, from_gpu);
    } else if (from_net >= 0) {
        p = NG(s, from_net, g);
        rev = GN(s, g, from_net);
    }
    if (p != NULL && !take_path(gr, p, rev, intra, 1))
        return NSIM_OK;
    uint64_t flag = 1ull << gr->nch;
    s->used[g] ^= flag;
    int rc = rec_gpu(x, g, step, back_net, back_first, forced, time);
    s->used[g] ^= flag;
    if (p != NULL)
        take_path(gr, p, rev, intra, -1);
    return rc;
}

/* ncclTopoCompareGraphs: more nChannels x bwIntra wins, then fewer hops. */
static int better(const sgraph *g, const sgraph *ref)
{
    if (g->nch < g->min_ch)
        return 0;
    float a = g->nch * g->bw_intra, b = ref->nch * ref->bw_intra;
    if (a != b)
        return a > b;
    return g->pattern == ref->pattern && g->crossnic == ref->crossnic &&
           g->nhops < ref->nhops;
}

static void graph_copy(const ssys *s, sgraph *dst, const sgraph *src)
{
    int *intra = dst->intra, *inter = dst->inter;
    *dst = *src;
    dst->intra = intra;
    dst->inter = inter;
    memcpy(intra, src->intra,
           sizeof *intra * (size_t)NSIM_SEARCH_MAXCHANNELS * s->ng);
    memcpy(inter, src->inter, sizeof *inter * 2 * NSIM_SEARCH_MAXCHANNELS);
}

/* step == ngpus: a channel is complete. */
static int channel_done(srch *x, int *time)
{
    sgraph *g = x->tmp;
    g->nch++;
    if (better(g, x->save)) {
        graph_copy(x->s, x->save, g);
        if (g->nch == g->max_ch)
            *time = -1;
    }
    int rc = NSIM_OK;
    if (g->nch < g->max_ch)
        rc = search_rec(x, time);
    g->nch--;
    return rc;
}

typedef struct score {
    int g, start, intra_hops, inter_hops;
    float intra_bw, inter_bw, pci_bw;
} score;

/* cmpScore (NCCL subtracts floats into an int). */
static int cmp_score(const void *pa, const void *pb)
{
    const score *a = pa, *b = pb;
    int d;
    if ((d = (int)(b->inter_bw - a->inter_bw)))
        return d;
    if ((d = (int)(b->pci_bw - a->pci_bw)))
        return d;
    if ((d = a->inter_hops - b->inter_hops))
        return d;
    if ((d = (int)(b->intra_bw - a->intra_bw)))
        return d;
    if ((d = a->intra_hops - b->intra_hops))
        return d;
    return a->start - b->start;
}

/* gpuPciBw: the GPU's PCIe link, min of both directions (current). */
static float gpu_pci_bw(const ssys *s, int g)
{
    const uint32_t *out = nsim_topo_out(s->t, s->gdev[g]);
    for (uint32_t k = 0; k < nsim_topo_nout(s->t, s->gdev[g]); k++) {
        const nsim_link *l = nsim_topo_link(s->t, out[k]);
        if (l->type != NSIM_LINK_PCIE)
            continue;
        float a = s->lbw[out[k]], b = s->lbw[l->reverse];
        return a < b ? a : b;
    }
    return -1;
}

/* With an NVSwitch, only the neighbours by index: each found one is moved
 * to the front, so rings try the previous GPU first, then the next. */
static int nvs_neighbours(const srch *x, int g, int *next, int count)
{
    int ng = x->s->ng, prev = (g - 1 + ng) % ng, nx = (g + 1) % ng;
    int first[2], nfirst = 1, real = 0, pat = x->tmp->pattern;
    first[0] = nx;
    if (pat == NSIM_PATTERN_RING) {
        first[1] = prev;
        nfirst = 2;
    } else if (pat == NSIM_PATTERN_SPLIT_TREE ||
               pat == NSIM_PATTERN_BALANCED_TREE) {
        first[0] = prev;
        first[1] = nx;
        nfirst = 2;
    }
    if (nx == prev && nfirst == 2)
        nfirst = 1;
    for (int f = 0; f < nfirst; f++) {
        int i = 0;
        while (i < count && next[i] != first[f])
            i++;
        if (i == count)
            continue;
        for (; i > 0; i--)
            next[i] = next[i - 1];
        next[0] = first[f];
        real++;
    }
    return real;
}

/* ncclTopoSearchNextGpuSort. */
static int next_gpus(const srch *x, int g, int *next, int sort_net)
{
    const ssys *s = x->s;
    const sgraph *gr = x->tmp;
    uint64_t flag = 1ull << gr->nch;
    score sc[256];
    int count = 0;
    int net0 = sort_net ? gr->inter[gr->nch * 2] : -1;
    for (int i = 1; i < s->ng && count < 256; i++) {
        int h = (g + i) % s->ng;
        const spath *p = GG(s, g, h);
        if (p->type >= NSIM_PATH_DIS || (s->used[h] & flag))
            continue;
        sc[count] = (score){h, i, (int)p->hops, 0, p->bw, 0, 0};
        if (net0 >= 0) {
            sc[count].inter_hops = (int)NG(s, net0, h)->hops;
            sc[count].pci_bw = gpu_pci_bw(s, h);
            sc[count].inter_bw = NG(s, net0, h)->bw;
        }
        count++;
    }
    qsort(sc, (size_t)count, sizeof *sc, cmp_score);
    for (int i = 0; i < count; i++)
        next[i] = sc[i].g;
    return s->has_nvs ? nvs_neighbours(x, g, next, count) : count;
}

/* The GPU at step+1 of the previous channel (ncclTopoReplayGetGpu). */
static int replay_gpu(const srch *x, int step)
{
    return x->tmp->intra[(x->tmp->nch - 1) * x->s->ng + step + 1];
}

/* The exit NETs GPU g may leave on (ncclTopoSelectNets + the crossNic
 * and tree rules of ncclTopoSearchRecGpu). */
static int exit_allowed(const srch *x, int n)
{
    const sgraph *g = x->tmp;
    const ssys *s = x->s;
    int start = g->inter[g->nch * 2];
    if (g->pattern == NSIM_PATTERN_TREE && n != start)
        return 0;
    if (g->pattern == NSIM_PATTERN_RING && g->crossnic == 2)
        return !(g->nch & 1) || n == g->inter[(g->nch - 1) * 2];
    if (g->crossnic == 0) {
        const nsim_device *a = nsim_topo_device(s->t, s->net[n].nic);
        const nsim_device *b = nsim_topo_device(s->t, s->net[start].nic);
        if (a->rail >= 0 && b->rail >= 0)
            return a->rail == b->rail;
        return n == start;
    }
    return 1;
}

static int select_nets(const srch *x, int type_inter, int gpu, int *nets);

static int back_to_net(srch *x, int g, int step, int back_first, int forced,
                       int *time)
{
    sgraph *gr = x->tmp;
    int nets[x->s->nn + 1], nnets = select_nets(x, gr->type_inter, g, nets);
    for (int i = 0; i < nnets; i++) {
        int n = nets[i], next_back = -1;
        if (!exit_allowed(x, n))
            continue;
        float save = gr->bw_inter;
        if (gr->pattern == NSIM_PATTERN_BALANCED_TREE) {
            if (step == 0)
                next_back = 1;
            else if (n != gr->inter[gr->nch * 2 + 1])
                continue;
            gr->bw_inter /= 2;
        }
        int ok = take_path(gr, GN(x->s, g, n), NG(x->s, n, g), 0, 1);
        gr->bw_inter = save;
        if (!ok)
            continue;
        gr->inter[gr->nch * 2 + 1] = n;
        NSIM_TRY(rec_gpu(x, g, step, next_back, back_first, forced, time));
        if (gr->pattern == NSIM_PATTERN_BALANCED_TREE)
            gr->bw_inter /= 2;
        take_path(gr, GN(x->s, g, n), NG(x->s, n, g), 0, -1);
        gr->bw_inter = save;
    }
    return NSIM_OK;
}

/* ncclTopoSearchRecGpu. */
static int rec_gpu(srch *x, int g, int step, int back_net, int back_first,
                   int forced, int *time)
{
    ssys *s = x->s;
    sgraph *gr = x->tmp;
    if (*time <= 0)
        return NSIM_OK;
    (*time)--;
    if (step == s->ng)
        return channel_done(x, time);
    gr->intra[gr->nch * s->ng + step] = g;
    if (step == back_net)
        return s->nn ? back_to_net(x, g, step, back_first, forced, time)
                     : NSIM_OK;
    if (step < s->ng - 1) {
        int next[s->ng + 1], count = 1;
        if (forced == FORCED_ORDER_PCI)
            next[0] = step + 1;
        else if (forced == FORCED_ORDER_REPLAY)
            next[0] = replay_gpu(x, step);
        else
            count = next_gpus(x, g, next, back_net == -1 ? 0
                                          : back_net == step + 1);
        for (int i = 0; i < count; i++)
            NSIM_TRY(try_gpu(x, step + 1, back_net, back_first, forced, time,
                             g, -1, next[i]));
        return NSIM_OK;
    }
    if (step == back_first) {
        int first = gr->intra[gr->nch * s->ng];
        if (!take_path(gr, GG(s, g, first), GG(s, first, g), 1, 1))
            return NSIM_OK;
        int rc = rec_gpu(x, first, step + 1, back_net, -1, forced, time);
        take_path(gr, GG(s, g, first), GG(s, first, g), 1, -1);
        return rc;
    }
    return rec_gpu(x, g, s->ng, -1, -1, forced, time);
}

static void add_unique(int *nets, int *n, int v)
{
    for (int i = 0; i < *n; i++)
        if (nets[i] == v)
            return;
    nets[(*n)++] = v;
}

/* ncclTopoSelectNets: the GPUs' preferred NETs (per channel, 2.6), then
 * the others by path type up to type_inter; gpu -1: all GPUs. */
static int select_nets(const srch *x, int type_inter, int gpu, int *nets)
{
    const ssys *s = x->s;
    int n = 0;
    for (int g = 0; g < s->ng; g++) {
        if (gpu != -1 && gpu != g)
            continue;
        int first = local_net(s, g, 0, x->scratch);
        for (int c = 0; first >= 0 && c < NSIM_SEARCH_MAXCHANNELS; c++) {
            int v = local_net(s, g, c, x->scratch);
            if (c > 0 && v == first)
                break;
            add_unique(nets, &n, v);
        }
    }
    for (int t = 0; t <= type_inter; t++)
        for (int g = 0; g < s->ng; g++)
            for (int k = 0; (gpu == -1 || gpu == g) && k < s->nn; k++)
                if (GN(s, g, k)->type == t)
                    add_unique(nets, &n, k);
    return n;
}

static void net_charge(ssys *s, int n, float bw)
{
    s->net[n].bw -= bw; /* every NET with the same guid+port: itself */
}

/* ncclTopoSearchRecNet: channel nch starts at NET list[nch mod n]. */
static int rec_net(srch *x, int back_net, int back_first, int *time)
{
    ssys *s = x->s;
    sgraph *gr = x->tmp;
    float bw = gr->bw_inter;
    int nets[s->nn + 1], nnets = select_nets(x, gr->type_inter, -1, nets);
    int loc[s->ng + 1];
    for (int i = 0; i < nnets; i++) {
        int n = nets[(gr->nch + i) % nnets];
        if (s->net[n].bw < bw)
            continue;
        if (gr->pattern == NSIM_PATTERN_RING && gr->crossnic == 2 &&
            (gr->nch & 1) && n != gr->inter[(gr->nch - 1) * 2 + 1])
            continue;
        gr->inter[gr->nch * 2] = n;
        net_charge(s, n, bw);
        int rc = NSIM_OK;
        if (gr->nch > 0 && gr->same == 1) {
            rc = try_gpu(x, 0, back_net, back_first, FORCED_ORDER_REPLAY,
                         time, -1, n, replay_gpu(x, -1));
        } else {
            if (gr->nch == 0 && !s->has_nvs) {
                int t = PCI_ORDER_TIMEOUT;
                rc = try_gpu(x, 0, back_net, back_first, FORCED_ORDER_PCI,
                             &t, -1, n, 0);
                if (t == -1)
                    *time = -1;
            }
            int type;
            int nl = get_local(NG(s, n, 0), s->ng, loc, &type);
            for (int k = 0; rc == NSIM_OK && type < NSIM_PATH_DIS && k < nl;
                 k++)
                rc = try_gpu(x, 0, back_net, back_first, 0, time, -1, n,
                             loc[k]);
        }
        net_charge(s, n, -bw);
        NSIM_TRY(rc);
    }
    return NSIM_OK;
}

/* ncclTopoSearchRec with ncclTopoSearchParams. */
static int search_rec(srch *x, int *time)
{
    ssys *s = x->s;
    sgraph *gr = x->tmp;
    int back_net = -1, back_first = -1;
    if (s->nn) {
        back_net = gr->pattern == NSIM_PATTERN_RING ? s->ng - 1
                   : gr->pattern == NSIM_PATTERN_SPLIT_TREE ? 1 : 0;
        return rec_net(x, back_net, back_first, time);
    }
    if (gr->pattern == NSIM_PATTERN_RING)
        back_first = s->ng - 1;
    if (gr->nch == 0)
        NSIM_TRY(try_gpu(x, 0, back_net, back_first, FORCED_ORDER_PCI, time,
                         -1, -1, 0));
    else
        NSIM_TRY(try_gpu(x, 0, back_net, back_first, FORCED_ORDER_REPLAY,
                         time, -1, -1, replay_gpu(x, -1)));
    if (gr->same == 0 || gr->nch == 0)
        for (int g = 0; g < s->ng; g++)
            NSIM_TRY(try_gpu(x, 0, back_net, back_first, 0, time, -1, -1,
                             g));
    return NSIM_OK;
}

/* ---- ncclTopoCompute -------------------------------------------------- */

typedef struct cstate {
    const float *sp;
    int nsp, si, pass, cross_nic, try_same;
    int min_intra, max_intra, min_inter, max_inter;
    long global;
} cstate;

static void path_range(const ssys *s, int to_net, int *mn, int *mx)
{
    *mn = NSIM_PATH_SYS;
    *mx = NSIM_PATH_LOC;
    for (int g = 0; g < s->ng; g++)
        for (int j = 0; j < (to_net ? s->nn : s->ng); j++) {
            if (!to_net && j == g)
                continue;
            int t = to_net ? GN(s, g, j)->type : GG(s, g, j)->type;
            *mn = t < *mn ? t : *mn;
            *mx = t > *mx ? t : *mx;
        }
}

/* The pass 1 relaxations in NCCL's order; 1: search again. */
static int relax(srch *x, cstate *c, int time)
{
    sgraph *t = x->tmp, *g = x->save;
    if (t->same == 1) {
        t->same = 0; /* no AMD rule: the topology has no CPU vendor */
        return 1;
    }
    t->same = c->try_same;
    c->global = time != -1 ? c->global + time : SEARCH_TIMEOUT_GLOBAL;
    if (c->global < 0 && g->nch)
        return 0;
    if (x->s->sm_min >= 90 && t->pattern == NSIM_PATTERN_BALANCED_TREE) {
        t->pattern = NSIM_PATTERN_TREE;
        return 1;
    }
    t->pattern = g->pattern;
    int max_intra = x->s->nn ? t->type_inter : c->max_intra;
    if (t->type_intra < max_intra &&
        (g->nch == 0 || t->type_intra < g->type_intra)) {
        t->type_intra++;
        return 1;
    }
    t->type_intra = c->min_intra;
    if (x->s->nn && t->type_inter < c->max_inter &&
        (g->nch == 0 || t->type_inter < g->type_inter ||
         t->type_inter < NSIM_PATH_PXN)) {
        t->type_inter++;
        return 1;
    }
    t->type_inter = c->min_inter;
    if (c->cross_nic == 2 && t->crossnic == 0 &&
        (t->pattern == NSIM_PATTERN_RING ||
         t->pattern == NSIM_PATTERN_BALANCED_TREE)) {
        t->crossnic = 2;
        return 1;
    }
    t->crossnic = c->cross_nic == 1;
    if (c->si < c->nsp - 1 &&
        (g->nch == 0 || c->sp[c->si + 1] / g->bw_inter > .49f)) {
        t->bw_inter = t->bw_intra = c->sp[++c->si];
        return 1;
    }
    return 0;
}

/* ncclTopoDupChannels (2.2). */
static void dup_channels(const ssys *s, sgraph *g)
{
    if (g->nch == 0 || g->bw_intra < 25.0f)
        return;
    if (s->sm_min > 80 && g->bw_intra < 50.0f && g->nch > 4)
        return;
    int dup = 2 * g->nch < g->max_ch ? 2 * g->nch : g->max_ch;
    memcpy(g->intra + g->nch * s->ng, g->intra,
           sizeof *g->intra * (size_t)(dup - g->nch) * s->ng);
    memcpy(g->inter + g->nch * 2, g->inter,
           sizeof *g->inter * (size_t)(dup - g->nch) * 2);
    int div = (dup + g->nch - 1) / g->nch;
    g->bw_intra /= (float)div;
    g->bw_inter /= (float)div;
    g->nch = dup;
}

/* Pass 2 (2.2): raise the speed while the found channel count holds. */
static int raise_speed(srch *x, cstate *c, int time)
{
    sgraph *t = x->tmp, *g = x->save;
    if (time == 0 || c->si == 0)
        return 0;
    if (g->pattern == NSIM_PATTERN_RING) {
        t->bw_intra = t->bw_inter = c->sp[--c->si];
        return 1;
    }
    if (t->bw_intra == g->bw_intra && t->bw_intra < t->bw_inter * 2) {
        t->bw_intra = c->sp[--c->si];
        return 1;
    }
    return 0;
}

static int run_once(srch *x, cstate *c, int *time)
{
    *time = x->tmp->same ? SEARCH_TIMEOUT_SAME : SEARCH_TIMEOUT;
    x->tmp->nch = 0;
    x->tmp->nhops = 0;
    c->global -= *time;
    return search_rec(x, time);
}

/* ncclTopoCompute's main loop: pass 1 (relax until a solution), channel
 * duplication, pass 2 (raise the speed). */
static int compute_loop(srch *x, cstate *c)
{
    ssys *s = x->s;
    sgraph *g = x->save, *t = x->tmp;
    int time;
    for (;;) {
        NSIM_TRY(run_once(x, c, &time));
        int done = time == -1 || g->nch * g->bw_inter >= s->total_bw;
        if (!done && c->pass == 1 && relax(x, c, time))
            continue;
        if (c->pass == 1) {
            time = -1;
            dup_channels(s, g);
            graph_copy(s, t, g);
            c->si = 0;
            while (c->sp[c->si] > g->bw_inter && c->si < c->nsp - 1)
                c->si++;
            t->bw_intra = t->bw_inter = c->sp[c->si];
            t->min_ch = g->nch;
            c->pass = 2;
        }
        if (raise_speed(x, c, time))
            continue;
        return NSIM_OK;
    }
}

static void pick_speeds(const ssys *s, cstate *c)
{
    uint32_t sm = s->sm_min;
    if (s->nn == 0) {
        c->sp = sm >= 100 ? sp100 : sm >= 90 ? sp90 : sp80;
        c->nsp = sm >= 100 ? NSP(sp100) : sm >= 90 ? NSP(sp90) : NSP(sp80);
    } else {
        c->sp = sm >= 100 ? in100 : sm >= 90 ? in90 : in80;
        c->nsp = sm >= 100 ? NSP(in100) : sm >= 90 ? NSP(in90) : NSP(in80);
    }
}

static void compute_init(srch *x, cstate *c, const nsim_search_opts *o)
{
    ssys *s = x->s;
    sgraph *g = x->save;
    int cn = o->cross_nic < 0 ? 2 : o->cross_nic;
    c->cross_nic = s->nn > 1 && (g->pattern == NSIM_PATTERN_RING ||
                                 g->pattern == NSIM_PATTERN_BALANCED_TREE ||
                                 g->pattern == NSIM_PATTERN_SPLIT_TREE)
                       ? cn : 0;
    g->crossnic = c->cross_nic == 1;
    c->min_intra = NSIM_PATH_LOC;
    c->max_intra = NSIM_PATH_SYS;
    c->min_inter = NSIM_PATH_PIX;
    c->max_inter = NSIM_PATH_SYS;
    if (s->ng > 1)
        path_range(s, 0, &c->min_intra, &c->max_intra);
    if (s->nn > 0) {
        path_range(s, 1, &c->min_inter, &c->max_inter);
        c->max_intra = c->max_inter;
    }
    g->type_intra = c->min_intra;
    g->type_inter = c->min_inter;
    c->try_same = 1;
    g->same = 1;
    if (s->ng == 1 && g->pattern != NSIM_PATTERN_RING)
        g->pattern = NSIM_PATTERN_TREE;
    graph_copy(s, x->tmp, g);
    pick_speeds(s, c);
    float total = s->total_bw;
    if (s->ng > 1 && g->pattern != NSIM_PATTERN_RING)
        total *= (float)s->ng / (float)(s->ng - 1);
    c->si = 0;
    while ((c->sp[c->si] > s->max_bw ||
            c->sp[c->si] * (float)g->min_ch > total) &&
           c->si < c->nsp - 1)
        c->si++;
    x->tmp->bw_intra = x->tmp->bw_inter = c->sp[c->si];
    c->pass = 1;
    c->global = SEARCH_TIMEOUT_GLOBAL;
}

/* ---- public entry points ---------------------------------------------- */

static int graph_out(const ssys *s, const sgraph *g, nsim_search_graph **out)
{
    nsim_search_graph *r = calloc(1, sizeof *r);
    size_t nch = g->nch ? (size_t)g->nch : 1;
    if (r == NULL)
        return NSIM_ENOMEM;
    r->intra = calloc(nch * (size_t)(s->ng ? s->ng : 1), sizeof *r->intra);
    r->net_in = calloc(nch, sizeof *r->net_in);
    r->net_out = calloc(nch, sizeof *r->net_out);
    r->nic_in = calloc(nch, sizeof *r->nic_in);
    r->nic_out = calloc(nch, sizeof *r->nic_out);
    *out = r;
    if (!r->intra || !r->net_in || !r->net_out || !r->nic_in || !r->nic_out)
        return NSIM_ENOMEM;
    r->pattern = g->pattern;
    r->crossnic = g->crossnic;
    r->same_channels = g->same;
    r->nchannels = (uint32_t)g->nch;
    r->ngpus = (uint32_t)s->ng;
    r->nhosts = nsim_topo_nnodes(s->t);
    r->sm = s->sm_min;
    r->bw_intra = g->bw_intra;
    r->bw_inter = g->bw_inter;
    r->type_intra = (nsim_path_type)g->type_intra;
    r->type_inter = (nsim_path_type)g->type_inter;
    r->max_bw = s->max_bw;
    r->total_bw = s->total_bw;
    for (int c = 0; c < g->nch; c++) {
        for (int i = 0; i < s->ng; i++)
            r->intra[c * s->ng + i] = s->grank[g->intra[c * s->ng + i]];
        int in = s->nn ? g->inter[2 * c] : -1;
        int ou = s->nn ? g->inter[2 * c + 1] : -1;
        r->net_in[c] = in;
        r->net_out[c] = ou;
        r->nic_in[c] = in >= 0 ? (int32_t)s->net[in].nic : -1;
        r->nic_out[c] = ou >= 0 ? (int32_t)s->net[ou].nic : -1;
    }
    return NSIM_OK;
}

/* The graph NCCL falls back to: one channel, index order, 0.1 GB/s, SYS. */
static void fallback(const ssys *s, sgraph *g)
{
    for (int i = 0; i < s->ng; i++)
        g->intra[i] = i;
    g->inter[0] = g->inter[1] = 0;
    g->bw_intra = g->bw_inter = 0.1f;
    g->type_intra = g->type_inter = NSIM_PATH_SYS;
    g->nch = 1;
}

static int sys_build(ssys *s, int32_t host, int **scratch)
{
    NSIM_TRY(sys_gpus(s, host));
    NSIM_TRY(sys_nets(s, host));
    NSIM_TRY(sys_links(s));
    *scratch = calloc((size_t)(3 * (s->nn + s->ng) + 1), sizeof **scratch);
    if (*scratch == NULL)
        return NSIM_ENOMEM;
    NSIM_TRY(sys_paths(s, *scratch));
    sys_summary(s);
    return NSIM_OK;
}

static int graph_alloc(const ssys *s, sgraph *g)
{
    g->intra = calloc((size_t)NSIM_SEARCH_MAXCHANNELS * (s->ng ? s->ng : 1),
                      sizeof *g->intra);
    g->inter = calloc(2 * NSIM_SEARCH_MAXCHANNELS, sizeof *g->inter);
    return g->intra && g->inter ? NSIM_OK : NSIM_ENOMEM;
}

static int search_run(ssys *s, const nsim_search_opts *o, int *scratch,
                      nsim_search_graph **out)
{
    sgraph save = {0}, tmp = {0};
    int rc = graph_alloc(s, &save);
    if (rc == NSIM_OK)
        rc = graph_alloc(s, &tmp);
    if (rc == NSIM_OK) {
        save.pattern = o->pattern ? o->pattern : NSIM_PATTERN_RING;
        save.min_ch = o->min_channels ? (int)o->min_channels : 1;
        save.max_ch = o->max_channels ? (int)o->max_channels
                                      : NSIM_SEARCH_MAXCHANNELS / 2;
        srch x = {s, &tmp, &save, scratch};
        cstate c = {0};
        compute_init(&x, &c, o);
        rc = compute_loop(&x, &c);
        if (rc == NSIM_OK && save.nch == 0)
            fallback(s, &save);
        if (rc == NSIM_OK)
            rc = graph_out(s, &save, out);
    }
    free(save.intra);
    free(save.inter);
    free(tmp.intra);
    free(tmp.inter);
    return rc;
}

int nsim_search_compute(nsim_topo *t, const nsim_search_opts *o,
                        nsim_search_graph **out, nsim_err *err)
{
    nsim_search_opts def = {0, -1, 0, 0, -1};
    ssys s = {0};
    int *scratch = NULL;
    *out = NULL;
    if (o == NULL)
        o = &def;
    if (nsim_topo_nranks(t) == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "search: the topology has no GPU");
    int32_t host = o->host >= 0 ? o->host
        : nsim_topo_device(t, nsim_topo_rank_device(t, 0))->host;
    s.t = t;
    int rc = sys_build(&s, host, &scratch);
    if (rc == NSIM_OK && s.ng == 0)
        rc = NSIM_ERR(err, NSIM_ECONFIG, "search: host %d has no GPU", host);
    else if (rc == NSIM_OK)
        rc = search_run(&s, o, scratch, out);
    if (rc == NSIM_OK)
        (*out)->host = host;
    free(scratch);
    sys_free(&s);
    if (rc == NSIM_ENOMEM)
        NSIM_ERR(err, rc, "search: out of memory");
    if (rc != NSIM_OK) {
        nsim_search_graph_destroy(*out);
        *out = NULL;
    }
    return rc;
}

void nsim_search_graph_destroy(nsim_search_graph *g)
{
    if (g == NULL)
        return;
    free(g->intra);
    free(g->net_in);
    free(g->net_out);
    free(g->nic_in);
    free(g->nic_out);
    free(g);
}

uint32_t nsim_search_comm_channels(const nsim_search_graph *g,
                                   uint32_t min_env, uint32_t max_env)
{
    uint32_t n = 2 * g->nchannels; /* ncclTopoPostset (2.5 step 2) */
    n = n > NSIM_SEARCH_MAXCHANNELS ? NSIM_SEARCH_MAXCHANNELS : n;
    if (g->sm >= 90 && g->nhosts > 1 && g->bw_intra > 45.0 && n < 16)
        n *= 2; /* 2.5 step 4 */
    if (max_env && n > max_env)
        n = max_env;
    if (min_env && n < min_env)
        n = min_env;
    return n;
}

void nsim_search_dump(const nsim_search_graph *g, const nsim_topo *t,
                      FILE *f)
{
    fprintf(f, "Pattern %d, crossNic %d, nChannels %u, bw %f/%f, type %s/%s,"
               " sameChannels %d\n",
            g->pattern, g->crossnic, g->nchannels, g->bw_intra, g->bw_inter,
            nsim_path_type_name(g->type_intra),
            nsim_path_type_name(g->type_inter), g->same_channels);
    for (uint32_t c = 0; c < g->nchannels; c++) {
        fprintf(f, "%2u :", c);
        if (g->net_in[c] >= 0)
            fprintf(f, " NET/%d", g->net_in[c]);
        for (uint32_t i = 0; i < g->ngpus; i++)
            fprintf(f, " GPU/%u", g->intra[c * g->ngpus + i]);
        if (g->net_out[c] >= 0)
            fprintf(f, " NET/%d", g->net_out[c]);
        fprintf(f, "\n");
    }
    fprintf(f, "# host %d, maxBw %.1f totalBw %.1f; GPU/r = rank r",
            g->host, g->max_bw, g->total_bw);
    for (int32_t d = 0; d < NSIM_SEARCH_MAXCHANNELS * 8; d++)
        for (uint32_t c = 0; c < g->nchannels; c++) {
            int32_t nic = g->net_in[c] == d    ? g->nic_in[c]
                          : g->net_out[c] == d ? g->nic_out[c] : -1;
            if (nic < 0)
                continue;
            fprintf(f, "; NET/%d = %s", d,
                    nsim_topo_device(t, (uint32_t)nic)->name);
            break;
        }
    fprintf(f, "\n");
}

/* ---- the job: every host's graph, then the minimum ------------------ */

/* A host's shape: its devices in device order (type, GPU rank order and
 * generation, NIC ports and speed, NVLS, P2P) and its internal links by
 * local index. Two hosts of one shape find the same graph. */
typedef struct host_shape {
    int32_t host;
    uint32_t ndev, nlink;
    uint32_t *dev;  /* ndev device ids */
    uint32_t *link; /* nlink link ids whose both ends are on the host */
} host_shape;

static int32_t local_of(const host_shape *s, uint32_t dev)
{
    for (uint32_t i = 0; i < s->ndev; i++)
        if (s->dev[i] == dev)
            return (int32_t)i;
    return -1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The host's devices (id order) and the links between them (index
 * order), from the host's own device list: O(the host), not O(the
 * cluster), so that a cluster of 16,384 hosts is not quadratic. */
static int shape_build(const nsim_topo *t, int32_t host, host_shape *s)
{
    uint32_t nd, nl = 0;
    const uint32_t *hd = nsim_topo_host_devices(t, host, &nd);
    for (uint32_t i = 0; i < nd; i++)
        nl += nsim_topo_nout(t, hd[i]);
    s->host = host;
    s->ndev = s->nlink = 0;
    s->dev = malloc((nd ? nd : 1) * sizeof *s->dev);
    s->link = malloc((nl ? nl : 1) * sizeof *s->link);
    if (s->dev == NULL || s->link == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < nd; i++) {
        const uint32_t *out = nsim_topo_out(t, hd[i]);
        s->dev[s->ndev++] = hd[i];
        for (uint32_t k = 0; k < nsim_topo_nout(t, hd[i]); k++)
            if (nsim_topo_device(t, nsim_topo_link(t, out[k])->dst)->host ==
                host)
                s->link[s->nlink++] = out[k];
    }
    qsort(s->link, s->nlink, sizeof *s->link, cmp_u32);
    return NSIM_OK;
}

static int same_device(const nsim_device *a, const nsim_device *b)
{
    return a->type == b->type && a->sm == b->sm && a->no_p2p == b->no_p2p &&
           a->nvls == b->nvls && a->nic_ports == b->nic_ports &&
           a->port_bw == b->port_bw && a->gdr == b->gdr &&
           a->link_layer == b->link_layer && strcmp(a->gen, b->gen) == 0 &&
           (a->rank < 0) == (b->rank < 0);
}

static int same_shape(const nsim_topo *t, const host_shape *a,
                      const host_shape *b)
{
    if (a->ndev != b->ndev || a->nlink != b->nlink)
        return 0;
    for (uint32_t i = 0; i < a->ndev; i++)
        if (!same_device(nsim_topo_device(t, a->dev[i]),
                         nsim_topo_device(t, b->dev[i])))
            return 0;
    for (uint32_t i = 0; i < a->nlink; i++) {
        const nsim_link *x = nsim_topo_link(t, a->link[i]);
        const nsim_link *y = nsim_topo_link(t, b->link[i]);
        if (x->type != y->type || x->bw != y->bw || x->count != y->count ||
            local_of(a, x->src) != local_of(b, y->src) ||
            local_of(a, x->dst) != local_of(b, y->dst))
            return 0;
    }
    /* the GPUs' ranks in the same relative order (NCCL's local index is
     * the rank order inside the host) */
    for (uint32_t i = 0; i < a->ndev; i++)
        for (uint32_t j = i + 1; j < a->ndev; j++) {
            int32_t ai = nsim_topo_device(t, a->dev[i])->rank;
            int32_t aj = nsim_topo_device(t, a->dev[j])->rank;
            int32_t bi = nsim_topo_device(t, b->dev[i])->rank;
            int32_t bj = nsim_topo_device(t, b->dev[j])->rank;
            if (ai >= 0 && aj >= 0 && (ai < aj) != (bi < bj))
                return 0;
        }
    return 1;
}

struct nsim_search_job {
    uint32_t refs; /* the callers' and the memo's */
    uint32_t nhosts, ngraphs, nchannels;
    int32_t *host;              /* host ids in order of their first rank */
    uint32_t *graph_of;         /* per host: its graph in graphs[] */
    nsim_search_graph **graphs; /* one search per distinct host shape */
};

static void shapes_free(host_shape *s, uint32_t n)
{
    for (uint32_t i = 0; s != NULL && i < n; i++) {
        free(s[i].dev);
        free(s[i].link);
    }
    free(s);
}

/* Jobs already computed, by a hash of the topology's JSON text and the
 * options: the search depends on nothing else, and commands that run
 * many sizes on one topology (run's sweep, compare, calibrate) plan it
 * again for every size. A few entries, replaced round-robin. */
#define JOB_MEMO 4
static struct {
    uint64_t key;
    nsim_search_job *job;
} job_memo[JOB_MEMO];
static uint32_t job_memo_next;

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int job_key(const nsim_topo *t, const nsim_search_opts *o,
                   uint64_t *key)
{
    uint64_t h;
    if (nsim_topo_content_hash(t, &h) != NSIM_OK)
        return -1;
    h = fnv1a(h, &o->pattern, sizeof o->pattern);
    h = fnv1a(h, &o->cross_nic, sizeof o->cross_nic);
    h = fnv1a(h, &o->min_channels, sizeof o->min_channels);
    h = fnv1a(h, &o->max_channels, sizeof o->max_channels);
    *key = h;
    return 0;
}

static int job_compute(nsim_topo *t, const nsim_search_opts *o,
                       nsim_search_job **out, nsim_err *err);

int nsim_search_job_compute(nsim_topo *t, const nsim_search_opts *o,
                            nsim_search_job **out, nsim_err *err)
{
    nsim_search_opts opt = {0, -1, 0, 0, -1};
    if (o != NULL)
        opt = *o;
    uint64_t key = 0;
    int keyed = job_key(t, &opt, &key) == 0;
    for (uint32_t i = 0; keyed && i < JOB_MEMO; i++)
        if (job_memo[i].job != NULL && job_memo[i].key == key) {
            job_memo[i].job->refs++;
            *out = job_memo[i].job;
            return NSIM_OK;
        }
    NSIM_TRY(job_compute(t, o, out, err));
    if (keyed) {
        uint32_t i = job_memo_next++ % JOB_MEMO;
        nsim_search_job_destroy(job_memo[i].job);
        job_memo[i].key = key;
        job_memo[i].job = *out;
        (*out)->refs++;
    }
    return NSIM_OK;
}

static int job_compute(nsim_topo *t, const nsim_search_opts *o,
                       nsim_search_job **out, nsim_err *err)
{
    nsim_search_opts opt = {0, -1, 0, 0, -1};
    uint32_t nr = nsim_topo_nranks(t);
    *out = NULL;
    if (o != NULL)
        opt = *o;
    if (nr == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "search: the topology has no GPU");
    nsim_search_job *j = calloc(1, sizeof *j);
    if (j != NULL)
        j->refs = 1;
    host_shape *shape = calloc(nr, sizeof *shape); /* per graph */
    if (j == NULL || shape == NULL ||
        (j->host = malloc(nr * sizeof *j->host)) == NULL ||
        (j->graph_of = malloc(nr * sizeof *j->graph_of)) == NULL ||
        (j->graphs = calloc(nr, sizeof *j->graphs)) == NULL) {
        free(shape);
        nsim_search_job_destroy(j);
        return NSIM_ERR(err, NSIM_ENOMEM, "search: out of memory");
    }
    int rc = NSIM_OK;
    host_shape mine = {0};
    /* hosts already seen (host ids are -1 .. nhosts - 1) */
    uint8_t *seen = calloc(nsim_topo_nhosts(t) + 1, 1);
    if (seen == NULL) {
        free(shape);
        nsim_search_job_destroy(j);
        return NSIM_ERR(err, NSIM_ENOMEM, "search: out of memory");
    }
    for (uint32_t r = 0; rc == NSIM_OK && r < nr; r++) {
        int32_t h = nsim_topo_device(t, nsim_topo_rank_device(t, r))->host;
        uint32_t g;
        if (seen[h + 1])
            continue;
        seen[h + 1] = 1;
        j->host[j->nhosts] = h;
        rc = shape_build(t, h, &mine);
        for (g = 0; rc == NSIM_OK && g < j->ngraphs &&
                    !same_shape(t, &shape[g], &mine); g++)
            ;
        if (rc == NSIM_OK && g == j->ngraphs) { /* a new shape: search it */
            opt.host = h;
            rc = nsim_search_compute(t, &opt, &j->graphs[g], err);
            if (rc == NSIM_OK) {
                shape[g] = mine;
                mine = (host_shape){0};
                j->ngraphs++;
            }
        }
        free(mine.dev);
        free(mine.link);
        mine = (host_shape){0};
        j->graph_of[j->nhosts++] = g;
    }
    free(seen);
    shapes_free(shape, j->ngraphs);
    if (rc != NSIM_OK) {
        if (rc == NSIM_ENOMEM)
            NSIM_ERR(err, rc, "search: out of memory");
        nsim_search_job_destroy(j);
        return rc;
    }
    /* ncclTopoPostset syncs the channel count over all ranks: the
     * minimum (nccl-internals 2.2) */
    j->nchannels = UINT32_MAX;
    for (uint32_t g = 0; g < j->ngraphs; g++)
        if (j->graphs[g]->nchannels < j->nchannels)
            j->nchannels = j->graphs[g]->nchannels;
    *out = j;
    return NSIM_OK;
}

void nsim_search_job_destroy(nsim_search_job *j)
{
    if (j == NULL || --j->refs > 0)
        return;
    for (uint32_t g = 0; j->graphs != NULL && g < j->ngraphs; g++)
        nsim_search_graph_destroy(j->graphs[g]);
    free(j->graphs);
    free(j->graph_of);
    free(j->host);
    free(j);
}

uint32_t nsim_search_job_nchannels(const nsim_search_job *j)
{
    return j->nchannels;
}

uint32_t nsim_search_job_ngraphs(const nsim_search_job *j)
{
    return j->ngraphs;
}

const nsim_search_graph *nsim_search_job_graph_at(const nsim_search_job *j,
                                                  uint32_t i)
{
    return i < j->ngraphs ? j->graphs[i] : NULL;
}

const nsim_search_graph *nsim_search_job_graph(const nsim_search_job *j,
                                               int32_t host)
{
    for (uint32_t x = 0; x < j->nhosts; x++)
        if (j->host[x] == host)
            return j->graphs[j->graph_of[x]];
    return NULL;
}

const nsim_search_graph *nsim_search_job_limiting(const nsim_search_job *j)
{
    const nsim_search_graph *best = j->graphs[0];
    for (uint32_t g = 1; g < j->ngraphs; g++) {
        const nsim_search_graph *x = j->graphs[g];
        if (x->nchannels < best->nchannels ||
            (x->nchannels == best->nchannels &&
             x->bw_intra + x->bw_inter < best->bw_intra + best->bw_inter))
            best = x;
    }
    return best;
}
