/* SPDX-License-Identifier: MIT
 *
 * tune.c - NCCL's tuning model (see tune.h). Tables from
 * nccl-internals 4.1 and 4.2 (src/graph/tuning.cc, NCCL 2.30).
 * Does not model: CollNet, NVLSTree's sm100 tree correction, the
 * TREE-pattern x0.85 (ncclsim's trees are BALANCED_TREE), tuner
 * plugins.
 */
#include "tune.h"

#include <string.h>

#include <math.h>

enum { HW_NVLINK, HW_PCI, HW_NET };

/* baseLat[algo][proto] (us), protos in nsim order Simple, LL, LL128. */
static const double base_lat[NSIM_ALGO__COUNT][NSIM_PROTO__COUNT] = {
    {8.4, 6.6, 14.0}, /* Ring */
    {8.4, 6.8, 14.0}, /* Tree */
    {0, 0, 0},        /* NVLS */
    {0, 0, 0},        /* NVLSTree */
    {8.0, 8.0, 8.0},  /* PAT */
};
/* hwLat[hw][algo][proto] (us). */
static const double hw_lat[3][NSIM_ALGO__COUNT][NSIM_PROTO__COUNT] = {
    {{3.4, 0.6, 1.9}, {4.0, 0.6, 1.25}, {25, 0, 0}, {25, 0, 0},
     {4.0, 0, 0}}, /* NVLINK */
    {{5.7, 1.0, 2.5}, {4.0, 1.0, 1.9}, {0, 0, 0}, {0, 0, 0},
     {4.0, 0, 0}}, /* PCI */
    {{14.0, 2.7, 4.0}, {14, 5.0, 8.5}, {18, 0, 0}, {20.9, 0, 0},
     {14, 0, 0}}, /* NET */
};
/* llMaxBws[row][nHosts 1 / 2 / >2] (GB/s). */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},
    {282.0, 90.0, 70.0}};
/* perChMaxRingLL128Bw by compCapIndex. */
static const double ring_ll128_bw[4] = {20, 20, 36.7, 40};
/* perChMaxTreeBw and perChMaxTreeLL128Bw [compCapIndex][nHosts 1/2/>2]. */
static const double tree_bw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0},
    {70.0, 42.8, 24.0}};
static const double tree_ll128_bw[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
/* treeCorrectionFactor[proto][log2(bytes / 64)] (nccl-internals 4.4),
 * protos in nsim order Simple, LL, LL128. */
static const double tree_corr[NSIM_PROTO__COUNT][23] = {
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8,
     .7, .7, .8, .9, .9},
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7,
     .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8,
     .9, .9, .9, .9, 1.0, 1.0},
};

static int log2i(uint64_t v)
{
    int l = -1;
    while (v) {
        v >>= 1;
        l++;
    }
    return l;
}

static int cc_index(uint32_t sm)
{
    return sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0;
}

static uint32_t ring_steps(nsim_coll c, uint32_t n)
{
    switch (c) {
    case NSIM_COLL_ALLREDUCE: return 2 * (n - 1);
    case NSIM_COLL_ALLGATHER:
    case NSIM_COLL_REDUCESCATTER: return n - 1;
    default: return n;
    }
}

static double ring_latency(const nsim_plan_graph *g, nsim_coll c,
                           nsim_proto p, uint64_t bytes)
{
    int intra_hw = g->type_intra == NSIM_PATH_NVL ? HW_NVLINK : HW_PCI;
    double intra = hw_lat[intra_hw][NSIM_ALGO_RING][p];
    uint32_t n = g->nranks, steps = ring_steps(c, n);
    if (c == NSIM_COLL_BROADCAST || c == NSIM_COLL_REDUCE) {
        int hw = g->nhosts > 1 ? HW_NET : intra_hw;
        double lat = p == NSIM_PROTO_SIMPLE ? hw_lat[hw][NSIM_ALGO_TREE][p]
                                            : hw_lat[hw][NSIM_ALGO_RING][p];
        /* sameChannels: the rings repeat one order (NVSwitch hosts) */
        return base_lat[NSIM_ALGO_RING][p] + lat;
    }
    double inter = hw_lat[HW_NET][g->nranks == g->nhosts ? NSIM_ALGO_TREE
                                                        : NSIM_ALGO_RING][p];
    double ovh = g->nhosts > 1 ? (p == NSIM_PROTO_SIMPLE ? 3.0 : 1.0) : 0;
    uint32_t ninter = g->nhosts <= 1 ? 0
                      : c == NSIM_COLL_ALLREDUCE ? 2 * (g->nhosts - 1)
                                                 : g->nhosts - 1;
    double lat = base_lat[NSIM_ALGO_RING][p] +
                 (steps - ninter) * fmax(intra, ovh) + ninter * inter;
    if (c == NSIM_COLL_ALLREDUCE && p == NSIM_PROTO_SIMPLE && g->nhosts > 1 &&
        bytes / ((uint64_t)g->nchannels * n) >= 64)
        lat *= g->sm >= 80 ? 1.4 : 1.9;
    return lat;
}

static double ring_bw(const nsim_plan_graph *g, nsim_coll c, nsim_proto p)
{
    int col = g->nhosts <= 1 ? 0 : g->nhosts == 2 ? 1 : 2;
    int cc = cc_index(g->sm);
    double bw = g->nhosts <= 2 ? g->bw_intra : g->bw_inter;
    double bus = g->nchannels * bw;
    if (p == NSIM_PROTO_LL)
        bus = fmin(ll_max_bw[g->nhosts <= 1 ? cc : 0][col], 0.5 * bus);
    else if (p == NSIM_PROTO_LL128)
        bus = fmin(0.92 * bus, g->nchannels * ring_ll128_bw[cc]);
    /* busBw -> algorithm bandwidth: x nRanks / nsteps (Broadcast and
     * Reduce: 1) */
    if (c == NSIM_COLL_BROADCAST || c == NSIM_COLL_REDUCE)
        return bus;
    return bus * g->nranks / ring_steps(c, g->nranks);
}

/* Tree AllReduce: base + 2 x ((ppn - 1) x intraLat + log2(nHosts) x
 * interLat) (nccl-internals 4.1). */
static double tree_latency(const nsim_plan_graph *g, nsim_proto p)
{
    int intra_hw = g->type_intra == NSIM_PATH_NVL ? HW_NVLINK : HW_PCI;
    double intra = hw_lat[intra_hw][NSIM_ALGO_TREE][p];
    double inter = hw_lat[HW_NET][NSIM_ALGO_TREE][p];
    return base_lat[NSIM_ALGO_TREE][p] +
           2 * ((g->nranks / g->nhosts - 1) * intra +
                log2i(g->nhosts) * inter);
}

/* Tree AllReduce bandwidth (nccl-internals 4.2), as algorithm bandwidth
 * (x 0.5). */
static double tree_bw_of(const nsim_plan_graph *g, nsim_proto p)
{
    int col = g->nhosts <= 1 ? 0 : g->nhosts == 2 ? 1 : 2;
    int cc = cc_index(g->sm);
    double bw = g->nhosts <= 2 ? g->bw_intra : g->bw_inter;
    double bus = fmin(0.92 * g->nchannels * bw, g->nchannels * tree_bw[cc][col]);
    if (p == NSIM_PROTO_LL)
        bus = fmin(bus / 3.8, ll_max_bw[g->nhosts <= 1 ? cc : 0][col]);
    else if (p == NSIM_PROTO_LL128)
        bus = fmin(bus * (g->nhosts <= 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g->nchannels * tree_ll128_bw[cc][col]);
    return bus * 0.5;
}

/* NCCL's nvlsEfficiency by compCapIndex (nccl-internals 4.2). */
static const double nvls_eff[4] = {0, 0, 0.85, 0.74};
/* The intra-host speeds NCCL's search tries for sm90 / sm100 (2.2). */
static const double nvls_speeds90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11,
                                       6, 3, 0};
static const double nvls_speeds100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24,
                                        20, 19, 18, 0};

/* NVLS AllReduce on one host (4.1, 4.2): the NVLS graph has one channel
 * per head (every GPU) at the first speed with heads x speed <= the
 * GPU's NVLink total (2.2: speed x minChannels <= totalBw); busBw = nCh
 * x 2 x bwIntra x nvlsEff x (nCh-1)/nCh, as ring algorithm bandwidth;
 * latency hwLat[NVLINK][NVLS][Simple] (25 us), no base. */
static double nvls_time(const nsim_plan_graph *g, nsim_coll c, nsim_proto p,
                        uint64_t bytes)
{
    if (c != NSIM_COLL_ALLREDUCE || p != NSIM_PROTO_SIMPLE ||
        g->nhosts != 1 || g->sm < 90 || !g->nvswitch_nvls)
        return -1;
    uint32_t nch = g->nranks < 32 ? g->nranks : 32;
    const double *sp = g->sm >= 100 ? nvls_speeds100 : nvls_speeds90;
    while (sp[1] != 0 && nch * sp[0] > g->nvlink_bw)
        sp++;
    if (nch < 2)
        return -1;
    double bw = sp[0] * nvls_eff[cc_index(g->sm)] * (nch - 1) / nch * 2;
    double alg = nch * bw * g->nranks / (2.0 * (g->nranks - 1));
    return hw_lat[HW_NVLINK][NSIM_ALGO_NVLS][p] +
           (double)bytes / (1000.0 * alg);
}

/* perChMaxNVLSTreeBw [compCapIndex][nHosts 1 / 2 / >2] (4.2). */
static const double nvlstree_bw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};

/* NVLSTree AllReduce (4.1, 4.2): the NVLS graph of each host (one
 * channel per head, heads = min(32, GPUs per host), the speed as for
 * NVLS); intraBw = bwIntra x nvlsEff x (nCh-1)/nCh x 2, interBw =
 * bwInter (the same search speed: a 400 Gb/s NIC carries it) x 2 on two
 * hosts (a tree sends each part once each way), bw = min(intraBw,
 * interBw, perChMaxNVLSTreeBw); as ring algorithm bandwidth. Latency
 * base (0) + hwLat[NVLINK][NVLSTree] + 2 x floor(log2 nHosts) x
 * hwLat[NET][NVLSTree] (25 and 20.9 us). */
static double nvlstree_time(const nsim_plan_graph *g, nsim_coll c,
                            nsim_proto p, uint64_t bytes)
{
    if (c != NSIM_COLL_ALLREDUCE || p != NSIM_PROTO_SIMPLE ||
        g->nhosts < 2 || g->sm < 90 || !g->nvswitch_nvls)
        return -1;
    uint32_t ppn = g->nranks / g->nhosts, nch = ppn < 32 ? ppn : 32;
    if (ppn < 2 || ppn > 32)
        return -1; /* the planner models one head per GPU: 2..32 a node */
    const double *sp = g->sm >= 100 ? nvls_speeds100 : nvls_speeds90;
    while (sp[1] != 0 && nch * sp[0] > g->nvlink_bw)
        sp++;
    if (nch < 2)
        return -1;
    int cc = cc_index(g->sm), col = g->nhosts == 2 ? 1 : 2;
    double intra = sp[0] * nvls_eff[cc] * (nch - 1) / nch * 2;
    double inter = sp[0] * (g->nhosts <= 2 ? 2 : 1);
    double bw = fmin(fmin(intra, inter), nvlstree_bw[cc][col]);
    double alg = nch * bw * g->nranks / (2.0 * (g->nranks - 1));
    double lat = base_lat[NSIM_ALGO_NVLSTREE][p] +
                 hw_lat[HW_NVLINK][NSIM_ALGO_NVLSTREE][p] +
                 2 * log2i(g->nhosts) * hw_lat[HW_NET][NSIM_ALGO_NVLSTREE][p];
    return lat + (double)bytes / (1000.0 * alg);
}

/* PAT AllGather / ReduceScatter (4.1, 4.2, 4.3): Simple only, one rank
 * per host on more than one host, sm >= 60. busBw = nCh x (bwIntra on
 * <= 2 hosts, else bwInter) x 0.75, not converted (a non-ring AG/RS:
 * algorithm bandwidth = busBw); latency base (8) + floor(log2 nHosts) x
 * interLat / 3.5 + 2.8 x nRanks, interLat = hwLat[NET][Tree][Simple]
 * (14 us: one rank per host). NCCL takes the tree graph's channels and
 * speed; ncclsim's ring graph stands in (the same on 1 GPU per host). */
static double pat_time(const nsim_plan_graph *g, nsim_coll c, nsim_proto p,
                       uint64_t bytes)
{
    if ((c != NSIM_COLL_ALLGATHER && c != NSIM_COLL_REDUCESCATTER) ||
        p != NSIM_PROTO_SIMPLE || g->nhosts < 2 || g->nranks != g->nhosts ||
        g->sm < 60 || g->nranks > NSIM_PAT_MAX_RANKS)
        return -1;
    double bw = g->nchannels * (g->nhosts <= 2 ? g->bw_intra : g->bw_inter) *
                0.75;
    if (bw <= 0)
        return -1;
    double lat = base_lat[NSIM_ALGO_PAT][p] +
                 log2i(g->nhosts) * hw_lat[HW_NET][NSIM_ALGO_TREE][p] / 3.5 +
                 2.8 * g->nranks;
    return lat + (double)bytes / (1000.0 * bw);
}

double nsim_tune_time_us(const nsim_plan_graph *g, nsim_coll c, nsim_algo a,
                         nsim_proto p, uint64_t bytes)
{
    if (a == NSIM_ALGO_NVLS)
        return nvls_time(g, c, p, bytes);
    if (a == NSIM_ALGO_NVLSTREE)
        return nvlstree_time(g, c, p, bytes);
    if (a == NSIM_ALGO_PAT)
        return pat_time(g, c, p, bytes);
    if (c == NSIM_COLL_SENDRECV || c == NSIM_COLL_ALLTOALL)
        return -1;
    if (a == NSIM_ALGO_TREE) {
        if (c != NSIM_COLL_ALLREDUCE)
            return -1;
        double bw = tree_bw_of(g, p);
        int ls = log2i(bytes >> 6);
        if (ls >= 0 && ls < 23)
            bw *= tree_corr[p][ls];
        if (bw <= 0)
            return -1;
        return tree_latency(g, p) + (double)bytes / (1000.0 * bw);
    }
    if (a != NSIM_ALGO_RING)
        return -1;
    double bw = ring_bw(g, c, p);
    if (bw <= 0)
        return -1;
    return ring_latency(g, c, p, bytes) + (double)bytes / (1000.0 * bw);
}

/* The facts the availability rules read (ranks, nodes, lowest sm, NVLS
 * switches), without NCCL's channel search, so that a refusal is cheap. */
static void basic_graph(nsim_topo *t, nsim_plan_graph *g)
{
    memset(g, 0, sizeof *g);
    g->nranks = nsim_topo_nranks(t);
    g->nhosts = nsim_topo_nnodes(t);
    g->sm = UINT32_MAX;
    for (uint32_t r = 0; r < g->nranks; r++) {
        uint32_t sm = nsim_topo_device(t, nsim_topo_rank_device(t, r))->sm;
        g->sm = sm < g->sm ? sm : g->sm;
    }
    uint32_t nvls = 0;
    for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++) {
        const nsim_device *dv = nsim_topo_device(t, d);
        nvls += dv->type == NSIM_DEV_NVSWITCH && dv->nvls;
    }
    g->nvswitch_nvls = nvls >= g->nhosts;
}

int nsim_tune_check(nsim_topo *t, nsim_coll c, nsim_algo a, nsim_proto p,
                    nsim_err *err)
{
    nsim_plan_graph g;
    basic_graph(t, &g);
    if (a == NSIM_ALGO_TREE && c != NSIM_COLL_ALLREDUCE)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm Tree: NCCL runs trees for allreduce "
                        "only, not %s (nccl-internals 4.3)",
                        nsim_coll_name(c));
    if (a == NSIM_ALGO_NVLS && (g.sm < 90 || !g.nvswitch_nvls))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLS needs sm >= 90 GPUs and an "
                        "NVLS-capable NVSwitch on every host (lowest sm "
                        "here %u; nccl-internals 2.1, 6.3)",
                        g.sm);
    if (a == NSIM_ALGO_NVLS && p != NSIM_PROTO_SIMPLE)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLS runs the Simple protocol only, not "
                        "%s (nccl-internals 4.3)",
                        nsim_proto_name(p));
    if (a == NSIM_ALGO_NVLSTREE && g.sm < 90)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree needs sm >= 90 GPUs (lowest sm "
                        "here %u; nccl-internals 2.1, 6.3)",
                        g.sm);
    if (a == NSIM_ALGO_NVLSTREE && !g.nvswitch_nvls)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree needs an NVSwitch with "
                        "\"nvls\": true on every host (nccl-internals 2.1, "
                        "6.3)");
    if (a == NSIM_ALGO_NVLSTREE && g.nhosts < 2)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree needs more than one host; one "
                        "host runs NVLS (nccl-internals 4.3)");
    if (a == NSIM_ALGO_NVLSTREE && p != NSIM_PROTO_SIMPLE)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree runs the Simple protocol only, "
                        "not %s (nccl-internals 4.3)",
                        nsim_proto_name(p));
    if (a == NSIM_ALGO_NVLSTREE && c != NSIM_COLL_ALLREDUCE)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree: modelled for allreduce only, "
                        "not %s (nccl-internals 4.3)",
                        nsim_coll_name(c));
    if (a == NSIM_ALGO_PAT && c != NSIM_COLL_ALLGATHER &&
        c != NSIM_COLL_REDUCESCATTER)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm PAT runs allgather and reducescatter "
                        "only, not %s (nccl-internals 4.3)",
                        nsim_coll_name(c));
    if (a == NSIM_ALGO_PAT && p != NSIM_PROTO_SIMPLE)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm PAT runs the Simple protocol only, not "
                        "%s (nccl-internals 4.3)",
                        nsim_proto_name(p));
    if (a == NSIM_ALGO_PAT && g.nhosts < 2)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm PAT needs more than one host, one GPU "
                        "on each (nccl-internals 4.3)");
    if (a == NSIM_ALGO_PAT && g.nranks != g.nhosts)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm PAT needs exactly one GPU per host; "
                        "this topology has %u ranks on %u hosts "
                        "(nccl-internals 4.3)",
                        g.nranks, g.nhosts);
    if (a == NSIM_ALGO_PAT && g.sm < 60)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm PAT needs sm >= 60 GPUs (lowest sm here "
                        "%u; nccl-internals 4.3)",
                        g.sm);
    if (a == NSIM_ALGO_PAT && g.nranks > NSIM_PAT_MAX_RANKS)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "algorithm PAT: modelled up to %u ranks, not %u",
                        NSIM_PAT_MAX_RANKS, g.nranks);
    if (a == NSIM_ALGO_NVLS && c != NSIM_COLL_ALLREDUCE && g.nhosts > 1)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLS for %s across hosts needs CollNet "
                        "(nccl-internals 4.3)",
                        nsim_coll_name(c));
    if (a == NSIM_ALGO_NVLS && (c == NSIM_COLL_ALLGATHER ||
                                c == NSIM_COLL_REDUCESCATTER))
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "algorithm NVLS for %s: NCCL has it on one node "
                        "(multicast stores / ld_reduce, nccl-internals "
                        "4.3) but ncclsim models NVLS for allreduce only; "
                        "NCCL's own model prefers the ring there (busBw "
                        "x (ppn-1)/ppn, 4.2)",
                        nsim_coll_name(c));
    if (a != NSIM_ALGO_RING && (c == NSIM_COLL_BROADCAST ||
                                c == NSIM_COLL_REDUCE))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm %s: NCCL runs %s with Ring only "
                        "(nccl-internals 4.3)",
                        nsim_algo_name(a), nsim_coll_name(c));
    if (p == NSIM_PROTO_LL128 && nsim_plan_ll128_refusal(t) != NULL)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "protocol LL128 is not allowed on this topology: %s",
                        nsim_plan_ll128_refusal(t));
    return NSIM_OK;
}

int nsim_tune_pick(nsim_topo *t, nsim_coll c, uint64_t bytes,
                   int algo_forced, int proto_forced, nsim_algo *algo,
                   nsim_proto *proto, double *time_us, nsim_err *err)
{
    return nsim_tune_pick_without(t, c, bytes, algo_forced, proto_forced, 0,
                                  algo, proto, time_us, err);
}

int nsim_tune_pick_without(nsim_topo *t, nsim_coll c, uint64_t bytes,
                           int algo_forced, int proto_forced,
                           uint32_t disabled, nsim_algo *algo,
                           nsim_proto *proto, double *time_us, nsim_err *err)
{
    nsim_plan_graph g;
    *time_us = -1;
    if (c == NSIM_COLL_SENDRECV || c == NSIM_COLL_ALLTOALL) {
        /* point-to-point: no algorithm (NCCL_ALGO does not apply); the
         * planner picks LL or Simple by part size unless forced */
        *algo = NSIM_ALGO_RING;
        if (!proto_forced)
            *proto = NSIM_PROTO_SIMPLE;
        return NSIM_OK;
    }
    if (algo_forced && (unsigned)*algo < 32 && (disabled >> *algo & 1u))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm %s is disabled (%s)", nsim_algo_name(*algo),
                        *algo == NSIM_ALGO_PAT ? "NCCL_PAT_ENABLE=0"
                        : *algo == NSIM_ALGO_NVLS || *algo == NSIM_ALGO_NVLSTREE
                            ? "NCCL_NVLS_ENABLE=0"
                            : "not enabled");
    if (algo_forced)
        NSIM_TRY(nsim_tune_check(t, c, *algo,
                                 proto_forced ? *proto : NSIM_PROTO_SIMPLE,
                                 err));
    else if (proto_forced)
        NSIM_TRY(nsim_tune_check(t, c, NSIM_ALGO_RING, *proto, err));
    nsim_plan_graph_get(t, &g); /* NCCL's search: after the cheap refusals */
    /* NCCL walks algorithms Tree, Ring, ..., NVLS, NVLSTree, PAT and
     * protocols LL, LL128, Simple; the first of equal times wins (4.4) */
    static const nsim_algo algos[] = {NSIM_ALGO_TREE, NSIM_ALGO_RING,
                                      NSIM_ALGO_NVLS, NSIM_ALGO_NVLSTREE,
                                      NSIM_ALGO_PAT};
    static const nsim_proto protos[] = {NSIM_PROTO_LL, NSIM_PROTO_LL128,
                                        NSIM_PROTO_SIMPLE};
    double best = -1;
    nsim_algo a0 = algo_forced ? *algo : NSIM_ALGO_RING;
    nsim_proto p0 = proto_forced ? *proto : NSIM_PROTO_SIMPLE;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            nsim_algo a = algos[i];
            nsim_proto p = protos[j];
            if ((algo_forced && a != a0) || (proto_forced && p != p0) ||
                (disabled >> a & 1u) || (disabled >> (16 + p) & 1u) ||
                nsim_tune_check(t, c, a, p, NULL) != NSIM_OK)
                continue;
            double us = nsim_tune_time_us(&g, c, a, p, bytes);
            if (us >= 0 && (best < 0 || us < best)) {
                best = us;
                *algo = a;
                *proto = p;
            }
        }
    if (best < 0 && (disabled & 0xffffu & ~(1u << NSIM_ALGO_PAT) &
                     ~(1u << NSIM_ALGO_NVLS) & ~(1u << NSIM_ALGO_NVLSTREE)))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "no allowed algorithm (NCCL_ALGO) runs %s here",
                        nsim_coll_name(c));
    if (best < 0 && (disabled >> 16))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "no allowed protocol (NCCL_PROTO) runs %s here",
                        nsim_coll_name(c));
    if (best < 0 && !algo_forced)
        *algo = NSIM_ALGO_RING;
    *time_us = best;
    return NSIM_OK;
}
