/* SPDX-License-Identifier: MIT
 *
 * tune.c - NCCL's tuning model (see tune.h). Tables from
 * nccl-internals 4.1 and 4.2 (src/graph/tuning.cc, NCCL 2.30).
 * Does not model: CollNet, PAT, tree correction factors for trees that
 * ncclsim does not build yet, tuner plugins.
 */
#include "tune.h"

#include <math.h>

enum { HW_NVLINK, HW_PCI, HW_NET };

/* baseLat[algo][proto] (us), protos in nsim order Simple, LL, LL128. */
static const double base_lat[NSIM_ALGO__COUNT][NSIM_PROTO__COUNT] = {
    {8.4, 6.6, 14.0}, /* Ring */
    {8.4, 6.8, 14.0}, /* Tree */
    {0, 0, 0},        /* NVLS */
};
/* hwLat[hw][algo][proto] (us). */
static const double hw_lat[3][NSIM_ALGO__COUNT][NSIM_PROTO__COUNT] = {
    {{3.4, 0.6, 1.9}, {4.0, 0.6, 1.25}, {25, 0, 0}},  /* NVLINK */
    {{5.7, 1.0, 2.5}, {4.0, 1.0, 1.9}, {0, 0, 0}},    /* PCI */
    {{14.0, 2.7, 4.0}, {14, 5.0, 8.5}, {18, 0, 0}},   /* NET */
};
/* llMaxBws[row][nHosts 1 / 2 / >2] (GB/s). */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},
    {282.0, 90.0, 70.0}};
/* perChMaxRingLL128Bw by compCapIndex. */
static const double ring_ll128_bw[4] = {20, 20, 36.7, 40};

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

double nsim_tune_time_us(const nsim_plan_graph *g, nsim_coll c, nsim_algo a,
                         nsim_proto p, uint64_t bytes)
{
    if (a != NSIM_ALGO_RING || c == NSIM_COLL_SENDRECV ||
        c == NSIM_COLL_ALLTOALL)
        return -1;
    double bw = ring_bw(g, c, p);
    if (bw <= 0)
        return -1;
    return ring_latency(g, c, p, bytes) + (double)bytes / (1000.0 * bw);
}

int nsim_tune_check(nsim_topo *t, nsim_coll c, nsim_algo a, nsim_proto p,
                    nsim_err *err)
{
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
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
    if (a == NSIM_ALGO_NVLS && c != NSIM_COLL_ALLREDUCE && g.nhosts > 1)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLS for %s across hosts needs CollNet "
                        "(nccl-internals 4.3)",
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
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    *time_us = -1;
    if (!algo_forced)
        *algo = NSIM_ALGO_RING;
    NSIM_TRY(nsim_tune_check(t, c, *algo, proto_forced ? *proto
                                                       : NSIM_PROTO_SIMPLE,
                             err));
    if (c == NSIM_COLL_SENDRECV || c == NSIM_COLL_ALLTOALL) {
        if (!proto_forced)
            *proto = NSIM_PROTO_SIMPLE;
        return NSIM_OK;
    }
    int ll128_ok = nsim_plan_ll128_refusal(t) == NULL;
    double best = -1;
    for (int p = 0; p < NSIM_PROTO__COUNT; p++) {
        if ((proto_forced && p != (int)*proto) ||
            (p == NSIM_PROTO_LL128 && !ll128_ok))
            continue;
        double us = nsim_tune_time_us(&g, c, *algo, (nsim_proto)p, bytes);
        /* NCCL walks LL, LL128, Simple; ties go to the first */
        if (us >= 0 && (best < 0 || us < best ||
                        (us == best && p != NSIM_PROTO_SIMPLE))) {
            best = us;
            *proto = (nsim_proto)p;
        }
    }
    *time_us = best;
    return NSIM_OK;
}
