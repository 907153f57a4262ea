/* SPDX-License-Identifier: MIT
 *
 * plan.c - channel planner v1: rings over the topology and the ring
 * AllReduce schedule of the Simple protocol (see plan.h).
 *
 * Rings: inside a host the GPUs in rank order, rotated by the channel
 * index so that successive channels start on successive GPUs (and so on
 * successive NICs); across hosts, odd hosts run their part backwards so
 * that the GPU that leaves a host and the GPU that enters the next one sit
 * on the same rail (NCCL swaps odd hosts' channels for the same reason,
 * nccl-internals 2.2, and file 21's rings show the pattern). The GPU at a
 * host boundary uses the NIC nearest to it.
 */
#include "plan.h"

#include "sim/topo/nccl_graph.h"
#include "search.h"
#include "plan_int.h"
#include "search.h"
#include "tune.h"
#include "sim/core/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[NSIM_COLL__COUNT] = {
    "allreduce", "allgather", "reducescatter", "broadcast",
    "reduce",    "sendrecv",  "alltoall",
};
static const char *const proto_names[NSIM_PROTO__COUNT] = {"Simple", "LL",
                                                           "LL128"};
static const char *const algo_names[NSIM_ALGO__COUNT] = {"Ring", "Tree",
                                                         "NVLS", "NVLSTree",
                                                         "PAT"};

const char *nsim_coll_name(nsim_coll c)
{
    return (unsigned)c < NSIM_COLL__COUNT ? coll_names[c] : "?";
}
const char *nsim_proto_name(nsim_proto p)
{
    return (unsigned)p < NSIM_PROTO__COUNT ? proto_names[p] : "?";
}
const char *nsim_algo_name(nsim_algo a)
{
    return (unsigned)a < NSIM_ALGO__COUNT ? algo_names[a] : "?";
}
const char *nsim_transport_name(nsim_transport t)
{
    return t == NSIM_TRANSPORT_P2P   ? "P2P"
           : t == NSIM_TRANSPORT_NET ? "NET"
           : t == NSIM_TRANSPORT_SHM ? "SHM"
                                     : "NVLS";
}

static int parse_ci(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

int nsim_coll_parse(const char *s, nsim_coll *out)
{
    static const struct {
        const char *alias;
        nsim_coll c;
    } aliases[] = {
        {"all_reduce", NSIM_COLL_ALLREDUCE},
        {"all_reduce_perf", NSIM_COLL_ALLREDUCE},
        {"all_gather", NSIM_COLL_ALLGATHER},
        {"all_gather_perf", NSIM_COLL_ALLGATHER},
        {"reduce_scatter", NSIM_COLL_REDUCESCATTER},
        {"reduce_scatter_perf", NSIM_COLL_REDUCESCATTER},
        {"broadcast_perf", NSIM_COLL_BROADCAST},
        {"reduce_perf", NSIM_COLL_REDUCE},
        {"sendrecv_perf", NSIM_COLL_SENDRECV},
        {"alltoall_perf", NSIM_COLL_ALLTOALL},
        {"all_to_all", NSIM_COLL_ALLTOALL},
        {"send_recv", NSIM_COLL_SENDRECV},
    };
    int i = parse_ci(s, coll_names, NSIM_COLL__COUNT);
    if (i >= 0) {
        *out = (nsim_coll)i;
        return NSIM_OK;
    }
    for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
        if (strcasecmp(s, aliases[k].alias) == 0) {
            *out = aliases[k].c;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

int nsim_proto_parse(const char *s, nsim_proto *out)
{
    int i = parse_ci(s, proto_names, NSIM_PROTO__COUNT);
    if (i < 0)
        return NSIM_EINVAL;
    *out = (nsim_proto)i;
    return NSIM_OK;
}

int nsim_algo_parse(const char *s, nsim_algo *out)
{
    int i = parse_ci(s, algo_names, NSIM_ALGO__COUNT);
    if (i < 0)
        return NSIM_EINVAL;
    *out = (nsim_algo)i;
    return NSIM_OK;
}

double nsim_coll_busbw_factor(nsim_coll c, uint32_t n)
{
    switch (c) {
    case NSIM_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case NSIM_COLL_ALLGATHER:
    case NSIM_COLL_REDUCESCATTER:
    case NSIM_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

uint64_t nsim_coll_test_bytes(nsim_coll c, uint32_t n, uint32_t ts,
                              uint64_t bytes, uint64_t *count)
{
    uint64_t cnt = bytes / ts;
    if (c == NSIM_COLL_ALLGATHER || c == NSIM_COLL_REDUCESCATTER ||
        c == NSIM_COLL_ALLTOALL) {
        uint64_t per = (cnt / n) & ~(uint64_t)(16 / ts - 1);
        *count = per;
        return per * n * ts;
    }
    *count = cnt;
    return cnt * ts;
}

const char *nsim_coll_test_name(nsim_coll c)
{
    static const char *const names[NSIM_COLL__COUNT] = {
        "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
        "broadcast_perf",  "reduce_perf",     "sendrecv_perf",
        "alltoall_perf"};
    return (unsigned)c < NSIM_COLL__COUNT ? names[c] : "?";
}

/* nccl-tests prints "none" for the collectives that do not reduce (its
 * sendrecv_perf passes the op through: hwdata 06 prints "sum"). */
int nsim_coll_has_op(nsim_coll c)
{
    return c == NSIM_COLL_ALLREDUCE || c == NSIM_COLL_REDUCESCATTER ||
           c == NSIM_COLL_REDUCE || c == NSIM_COLL_SENDRECV;
}

int nsim_coll_has_root(nsim_coll c)
{
    return c == NSIM_COLL_BROADCAST || c == NSIM_COLL_REDUCE;
}

int nsim_coll_is_p2p(nsim_coll c)
{
    return c == NSIM_COLL_SENDRECV || c == NSIM_COLL_ALLTOALL;
}

uint64_t nsim_plan_wire_bytes(const nsim_plan *p, uint64_t payload)
{
    if (p->line_payload_bytes == 0)
        return payload;
    return (payload + p->line_payload_bytes - 1) / p->line_payload_bytes *
           p->line_bytes;
}

uint32_t nsim_plan_lane_patch_from(const nsim_plan_lane *l, uint32_t k)
{
    uint32_t lo = 0, hi = l->npatch;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->patch[mid].at < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const nsim_plan_op *nsim_plan_lane_op(const nsim_plan_lane *l, uint32_t k)
{
    uint32_t i = nsim_plan_lane_patch_from(l, k);
    return i < l->npatch && l->patch[i].at == k ? &l->patch[i].op
                                                : &l->ops[k];
}

void nsim_plan_destroy(nsim_plan *p)
{
    if (p == NULL)
        return;
    if (p->lanes != NULL)
        for (uint32_t i = 0; i < p->nlanes; i++) {
            if (!p->lanes[i].ops_shared)
                free(p->lanes[i].ops);
            if (!p->lanes[i].patch_shared)
                free(p->lanes[i].patch);
        }
    free(p->lanes);
    free(p->conns);
    free(p->ring);
    free(p->ring_nic_in);
    free(p->ring_nic_out);
    free(p->chan_offset);
    free(p->chan_bytes);
    free(p);
}

/* ---- channel count --------------------------------------------------- */

/* The graph summary comes from NCCL's search (search.c): the ring graph
 * of rank 0's host, its channels and per-channel bandwidth after
 * ncclTopoDupChannels, and its path types. */
void nsim_plan_graph_get(nsim_topo *t, nsim_plan_graph *g)
{
    uint32_t g0 = nsim_topo_rank_device(t, 0);
    memset(g, 0, sizeof *g);
    g->nranks = nsim_topo_nranks(t);
    g->nhosts = nsim_topo_nnodes(t); /* NCCL's nodes (MNNVL: a domain) */
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
    g->nvlink_bw = nsim_search_gpu_total_bw(t, g0);
    nsim_search_job *job = NULL;
    if (nsim_search_job_compute(t, NULL, &job, NULL) != NSIM_OK) {
        g->nchannels = 1; /* NCCL's fallback graph (2.2) */
        g->bw_intra = g->bw_inter = 0.1;
        g->type_intra = g->type_inter = NSIM_PATH_SYS;
        return;
    }
    /* every host's graph, synced as ncclTopoPostset does: the fewest
     * channels, the lowest bandwidths, the worst path types */
    const nsim_search_graph *sg = nsim_search_job_limiting(job);
    g->nchannels = nsim_search_job_nchannels(job);
    g->bw_intra = sg->bw_intra;
    g->bw_inter = sg->bw_inter;
    g->type_intra = sg->type_intra;
    g->type_inter = sg->type_inter;
    for (uint32_t i = 0; i < nsim_search_job_ngraphs(job); i++) {
        const nsim_search_graph *x = nsim_search_job_graph_at(job, i);
        g->bw_intra = x->bw_intra < g->bw_intra ? x->bw_intra : g->bw_intra;
        g->bw_inter = x->bw_inter < g->bw_inter ? x->bw_inter : g->bw_inter;
        g->type_intra = x->type_intra > g->type_intra ? x->type_intra
                                                      : g->type_intra;
        g->type_inter = x->type_inter > g->type_inter ? x->type_inter
                                                      : g->type_inter;
    }
    g->comm_channels = nsim_search_comm_channels(sg, 0, 0);
    nsim_search_job_destroy(job);
}

uint32_t nsim_plan_default_channels(nsim_topo *t)
{
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    return g.comm_channels ? g.comm_channels : 2 * g.nchannels;
}

/* ---- rings ----------------------------------------------------------- */

/* The node (NCCL's: a host, or an MNNVL domain of hosts) of a rank. */
static uint32_t rank_node(nsim_topo *t, uint32_t r)
{
    return nsim_topo_host_node(t,
                               nsim_topo_device(t, nsim_topo_rank_device(t, r))->host);
}

int nsim__plan_lane_take(nsim_plan_lane *l, int recv, uint32_t conn,
                         const char *what, nsim_err *err)
{
    uint32_t *first = recv ? &l->recv_conn : &l->send_conn;
    uint32_t *n = recv ? &l->nrecv_more : &l->nsend_more;
    if (*first == UINT32_MAX) {
        *first = conn;
        return NSIM_OK;
    }
    if (*n == NSIM_LANE_MORE_CONNS)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "%s fold: rank %u would %s more than %u "
                        "connections on channel %u",
                        what, l->rank, recv ? "receive from" : "send to",
                        NSIM_LANE_MORE_CONNS + 1, l->channel);
    (recv ? l->recv_more : l->send_more)[(*n)++] = conn;
    return NSIM_OK;
}

/* Ranks grouped by node, nodes in order of their first rank. */
int nsim__plan_group_hosts(nsim_topo *t, host_list *hl)
{
    return nsim_topo_group_ranks(t, &hl->ranks, &hl->start, &hl->nhosts);
}

static void build_ring(const host_list *hl, uint32_t c, uint32_t *ring)
{
    uint32_t k = 0;
    for (uint32_t h = 0; h < hl->nhosts; h++) {
        const uint32_t *L = &hl->ranks[hl->start[h]];
        uint32_t m = hl->start[h + 1] - hl->start[h], s = c % m;
        for (uint32_t i = 0; i < m; i++) {
            if (hl->nhosts > 1 && (h & 1))
                ring[k++] = L[(s + m - 1 - i) % m];
            else
                ring[k++] = L[(s + i) % m];
        }
    }
}

static int route_better(const nsim_route *r, const nsim_route *best)
{
    if (best == NULL || r->type != best->type)
        return best == NULL || r->type < best->type;
    if (r->bw != best->bw)
        return r->bw > best->bw;
    return r->hops < best->hops;
}

static int route_equal(const nsim_route *a, const nsim_route *b)
{
    return a->type == b->type && a->bw == b->bw && a->hops == b->hops;
}

/* The GPU's index among its host's GPUs (rank order). */
static uint32_t local_index(nsim_topo *t, uint32_t gpu)
{
    uint32_t n, k = 0;
    const uint32_t *hd =
        nsim_topo_host_devices(t, nsim_topo_device(t, gpu)->host, &n);
    int32_t rank = nsim_topo_device(t, gpu)->rank;
    for (uint32_t i = 0; i < n; i++) {
        const nsim_device *dv = nsim_topo_device(t, hd[i]);
        k += dv->type == NSIM_DEV_GPU && dv->rank < rank;
    }
    return k;
}

/* The NIC nearest to a GPU: best path type, then bandwidth, then hops;
 * among equally near NICs (two NICs under one switch with two GPUs) the
 * GPU's local index picks, as NCCL spreads local GPUs over local NICs
 * (nccl-internals 2.6). */
static int nearest_nic(nsim_topo *t, uint32_t gpu, uint32_t *out,
                       nsim_err *err)
{
    const nsim_route *best = NULL;
    int32_t host = nsim_topo_device(t, gpu)->host;
    uint32_t ties[64], nties = 0, nd;
    const uint32_t *hd = nsim_topo_host_devices(t, host, &nd);
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t d = hd[i];
        const nsim_device *dv = nsim_topo_device(t, d);
        const nsim_route *r;
        if (dv->type != NSIM_DEV_NIC ||
            nsim_topo_route(t, gpu, d, &r, NULL) != NSIM_OK)
            continue;
        if (route_better(r, best)) {
            best = r;
            nties = 0;
        }
        if (route_equal(r, best) && nties < 64)
            ties[nties++] = d;
    }
    if (best != NULL) {
        *out = ties[local_index(t, gpu) % nties];
        return NSIM_OK;
    }
    if (best == NULL)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "cannot form a ring: gpu \"%s\" on host %d has no "
                        "NIC to reach the other hosts",
                        nsim_topo_device(t, gpu)->name, host);
    return NSIM_OK;
}

/* The NIC of host `host` in the same position (among its host's NICs)
 * as nic is among its own's. */
static int map_nic(nsim_topo *t, uint32_t nic, int32_t host, uint32_t *out)
{
    uint32_t k = 0, n = 0, na, nb;
    const uint32_t *a =
        nsim_topo_host_devices(t, nsim_topo_device(t, nic)->host, &na);
    const uint32_t *b = nsim_topo_host_devices(t, host, &nb);
    for (uint32_t i = 0; i < na && a[i] < nic; i++)
        k += nsim_topo_device(t, a[i])->type == NSIM_DEV_NIC;
    for (uint32_t i = 0; i < nb; i++) {
        if (nsim_topo_device(t, b[i])->type != NSIM_DEV_NIC)
            continue;
        if (n++ == k) {
            *out = b[i];
            return NSIM_OK;
        }
    }
    return NSIM_ENOENT;
}

/* With a graph: channel c leaves host(a) on the graph channel's exit NET
 * and enters host(b) on its entry NET, mapped onto those hosts. */
static int graph_nics(nsim_topo *t, const nsim_plan_req *req, uint32_t c,
                      uint32_t a, uint32_t b, nsim_plan_conn *conn)
{
    const nsim_graph_info *gi = nsim_ncclgraph_find(req->graph, NSIM_GRAPH_RING);
    if (gi == NULL || gi->nchannels == 0)
        return NSIM_ENOENT;
    uint32_t gidx = (uint32_t)(gi - nsim_ncclgraph_graph(req->graph, 0));
    const nsim_graph_chan *gc =
        nsim_ncclgraph_channel(req->graph, gidx, c % gi->nchannels);
    if (gc->nic_out < 0 || gc->nic_in < 0)
        return NSIM_ENOENT;
    if (map_nic(t, (uint32_t)gc->nic_out, nsim_topo_device(t, a)->host,
                &conn->send_nic) != NSIM_OK ||
        map_nic(t, (uint32_t)gc->nic_in, nsim_topo_device(t, b)->host,
                &conn->recv_nic) != NSIM_OK)
        return NSIM_ENOENT;
    return NSIM_OK;
}

/* Devices a and b are in different NCCL nodes (hosts not joined by one
 * NVLink domain): only the network joins them, so their path is NET
 * without searching the fabric (a search that, for every pair of ranks
 * of a large cluster, costs time and route-cache memory). */
static int other_nodes(nsim_topo *t, uint32_t a, uint32_t b)
{
    int32_t ha = nsim_topo_device(t, a)->host;
    int32_t hb = nsim_topo_device(t, b)->host;
    return ha >= 0 && hb >= 0 && ha != hb &&
           nsim_topo_host_node(t, ha) != nsim_topo_host_node(t, hb);
}

int nsim__plan_make_conn(nsim_topo *t, const nsim_plan_req *req, uint32_t c,
                     uint32_t from, uint32_t to, nsim_plan_conn *conn,
                     nsim_err *err)
{
    uint32_t a = nsim_topo_rank_device(t, from), b = nsim_topo_rank_device(t, to);
    nsim_path_type type = NSIM_PATH_NET;
    if (!other_nodes(t, a, b)) {
        const nsim_route *r;
        if (nsim_topo_route(t, a, b, &r, err) != NSIM_OK)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "cannot form a ring on channel %u: no path from "
                            "rank %u (%s) to rank %u (%s)",
                            c, from, nsim_topo_device(t, a)->name, to,
                            nsim_topo_device(t, b)->name);
        type = r->type;
    }
    *conn = (nsim_plan_conn){c, from, to, NSIM_TRANSPORT_P2P, type,
                             UINT32_MAX, UINT32_MAX, 0};
    /* one NVLink domain across hosts (MNNVL, nccl 6.1: P2P/MNNVL): the
     * GPUs store into each other */
    if (type <= NSIM_PATH_NVB)
        return NSIM_OK;
    /* same host: P2P up to NCCL's default P2P level PXB, when both GPUs
     * support it; otherwise SHM through host memory (nccl 6.1, 6.2) */
    if (nsim_topo_device(t, a)->host == nsim_topo_device(t, b)->host) {
        if (type > NSIM_PATH_PXB || nsim_topo_device(t, a)->no_p2p ||
            nsim_topo_device(t, b)->no_p2p)
            conn->transport = NSIM_TRANSPORT_SHM;
        return NSIM_OK;
    }
    conn->transport = NSIM_TRANSPORT_NET;
    conn->nqps = req->qps_per_conn;
    if (req->graph != NULL && graph_nics(t, req, c, a, b, conn) == NSIM_OK)
        ; /* the dumped graph's entry and exit NICs */
    else {
        NSIM_TRY(nearest_nic(t, a, &conn->send_nic, err));
        NSIM_TRY(nearest_nic(t, b, &conn->recv_nic, err));
    }
    const nsim_route *nr;
    if (nsim_topo_route(t, conn->send_nic, conn->recv_nic, &nr, err) !=
            NSIM_OK ||
        nr->type != NSIM_PATH_NET)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "cannot form a ring on channel %u: NIC %s cannot "
                        "reach NIC %s over the network",
                        c, nsim_topo_device(t, conn->send_nic)->name,
                        nsim_topo_device(t, conn->recv_nic)->name);
    return NSIM_OK;
}

/* ---- the Simple ring AllReduce cut (nccl-internals 3.3, 2.8) --------- */


/* A plan whose every lane builds its own op list (not compact: --debug,
 * or a --trace, --stats or explain run that does not fold) is
 * projected once its op lists hold a
 * sixteenth of the budget: the lists so far, scaled to every lane. One
 * that would need more than twice the budget stops there (held set to
 * the projection, so the next allocation fails) instead of allocating
 * the whole budget first: at 131,072 GPUs that took 93 s, 58 of them
 * the kernel clearing pages. Lanes of one plan differ (an NVLSTree
 * channel builds its scatter and gather lanes before its tree lanes:
 * projected 1.75x the whole from the first 2 % of it, 1.09x from the
 * first 7 %; rings and trees within 0.1 %), hence the factor of two. */
#define PROJECT_AFTER_LISTS 64u

op_buf nsim__plan_ops(const nsim_plan *p)
{
    struct nsim_plan_build *b = p->building;
    uint64_t limit = p->req.max_plan_bytes;
    if (b == NULL)
        return (op_buf){NULL, 0, 0, NULL, limit};
    if (b->lists++ == 0)
        b->fixed = b->held;
    if (limit != 0 && !p->req.compact_ops && b->projected == 0 &&
        b->lists > PROJECT_AFTER_LISTS && b->lists < p->nlanes &&
        b->held - b->fixed > limit / 16) {
        double whole = (double)b->fixed + (double)(b->held - b->fixed) *
                                              p->nlanes / (b->lists - 1);
        if (whole > 2.0 * (double)limit) {
            b->projected = (uint64_t)whole;
            b->held = b->projected;
        }
    }
    return (op_buf){NULL, 0, 0, &b->held, limit};
}

/* Counts bytes into a build's count (none: held NULL); 0 when that
 * passes limit (0: none). Past the limit the count keeps what the build
 * would have needed. */
static int charge(uint64_t *held, uint64_t limit, uint64_t bytes)
{
    if (held == NULL)
        return 1;
    *held += bytes;
    return limit == 0 || *held <= limit;
}

void *nsim__plan_calloc(nsim_plan *p, size_t n, size_t size)
{
    n = n ? n : 1;
    if (!charge(p->building ? &p->building->held : NULL,
                p->req.max_plan_bytes, (uint64_t)n * size))
        return NULL;
    return calloc(n, size);
}

int nsim__plan_push_op(op_buf *b, nsim_plan_op op)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 64;
        if (!charge(b->held, b->limit,
                    (uint64_t)(cap - b->cap) * sizeof *b->ops))
            return NSIM_EBUDGET;
        nsim_plan_op *o = realloc(b->ops, cap * sizeof *o);
        if (o == NULL)
            return NSIM_ENOMEM;
        b->ops = o;
        b->cap = cap;
    }
    b->ops[b->n++] = op;
    return NSIM_OK;
}

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Emits the slices of one primitive on one chunk: slicesPerChunk slices,
 * empty ones included (NCCL still posts them, nccl-internals 3.3). */
int nsim__plan_push_chunk(const nsim_plan *p, op_buf *b, uint8_t prim,
                      uint16_t step, uint32_t chunk, uint64_t off_el,
                      int64_t nelem, uint64_t base_byte)
{
    uint32_t ts = p->req.type_size, spc = p->chunk_steps / p->slice_steps;
    uint64_t full_slice = p->slice_bytes / ts;
    uint64_t slice = div_up((uint64_t)(nelem > 0 ? nelem : 0), 16ull * spc) * 16;
    if (slice < full_slice / 32)
        slice = full_slice / 32;
    for (uint32_t s = 0; s < spc; s++) {
        int64_t left = nelem - (int64_t)(s * slice);
        uint64_t n = left <= 0 ? 0 : (uint64_t)left < slice ? (uint64_t)left
                                                             : slice;
        nsim_plan_op op = {prim, (uint8_t)s, step, chunk,
                           base_byte + (off_el + s * slice) * ts, n * ts};
        NSIM_TRY(nsim__plan_push_op(b, op));
    }
    return NSIM_OK;
}

/* Ring AllReduce, one loop of 2n-1 emits (nccl-internals 3.3): emit e
 * works on chunk ar_chunk(n, pos, e) with primitive ar_prim(n, e). The
 * reduce-scatter half sends the chunk of ring[pos-1], reduces n-2 on to
 * the own (recvReduceCopySend), the all-gather half forwards n-2 and
 * receives the last. */
static uint8_t ar_prim(uint32_t n, uint32_t e)
{
    if (e == 0)
        return NSIM_PRIM_SEND;
    if (e < n - 1)
        return NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_SEND;
    if (e == n - 1)
        return NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_COPY_OUT |
               NSIM_PRIM_SEND;
    if (e < 2 * n - 2)
        return NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT | NSIM_PRIM_SEND;
    return NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT;
}

static uint32_t ar_chunk(uint32_t n, uint32_t pos, uint32_t e)
{
    uint32_t j = e < n - 1 ? e + 1 : e == n - 1 ? 0 : e - n + 1;
    return (pos + n - j) % n;
}

/* The chunk (elements) of the loop at element off: the plan's, or in the
 * last loop, where less than n of them is left, the rest's share rounded
 * up to 16 bytes. */
static uint64_t ar_loop_chunk(const nsim_plan *p, uint64_t count, uint64_t off)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    uint64_t rem = count - off, cc = p->chunk_bytes / ts;
    if (rem < (uint64_t)n * cc)
        cc = div_up(div_up(rem, n), 16 / ts) * (16 / ts);
    return cc;
}

/* Elements of chunk ch in that loop: cc, fewer in an uneven last loop,
 * or none (<= 0) past the channel's count. */
static int64_t ar_chunk_elems(uint64_t count, uint64_t off, uint64_t cc,
                              uint32_t ch)
{
    int64_t ne = (int64_t)count - (int64_t)(off + (uint64_t)ch * cc);
    return ne < (int64_t)cc ? ne : (int64_t)cc;
}

#define AR_EVERY_CHUNK INT64_MIN

/* Ring position pos of channel c. last_ne: every chunk of an uneven last
 * loop given that many elements (the array compact positions share), or
 * AR_EVERY_CHUNK for each its own. */
static int allreduce_lane(const nsim_plan *p, uint32_t c, uint32_t pos,
                          int64_t last_ne, op_buf *b)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    uint64_t count = p->chan_bytes[c] / ts, base = p->chan_offset[c];
    uint64_t loop = (uint64_t)n * (p->chunk_bytes / ts);
    for (uint64_t off = 0; off < count; off += loop) {
        uint64_t cc = ar_loop_chunk(p, count, off);
        int last = count - off < loop && last_ne != AR_EVERY_CHUNK;
        for (uint32_t e = 0; e < 2 * n - 1; e++) {
            uint32_t ch = ar_chunk(n, pos, e);
            int64_t ne = last ? last_ne : ar_chunk_elems(count, off, cc, ch);
            NSIM_TRY(nsim__plan_push_chunk(p, b, ar_prim(n, e), (uint16_t)e,
                                           ch, off + ch * cc, ne, base));
        }
    }
    return NSIM_OK;
}

/* AllGather / ReduceScatter ring: n-1 steps per loop over every rank's
 * block (nccl-internals 3.3). AllGather: send the own block, forward
 * n-2 blocks (recvCopySend), receive the last; ReduceScatter: send the
 * block of ring[pos-1], recvReduceSend n-2, recvReduceCopy the own. */
static int agrs_lane(const nsim_plan *p, uint32_t c, uint32_t pos, op_buf *b)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    int rs = p->req.coll == NSIM_COLL_REDUCESCATTER;
    uint64_t block = p->req.bytes / n, count = p->chan_bytes[c] / ts;
    uint64_t chunk_count = p->chunk_bytes / ts;
    const uint32_t *ring = &p->ring[c * n];
    for (uint64_t off = 0; off < count; off += chunk_count) {
        int64_t ne = (int64_t)(count - off < chunk_count ? count - off
                                                        : chunk_count);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t who = rs ? ring[(pos + n - 1 - j) % n]
                              : ring[(pos + n - j) % n];
            uint8_t prim = j == 0       ? NSIM_PRIM_SEND
                           : j == n - 1 ? NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT
                                        : NSIM_PRIM_RECV | NSIM_PRIM_SEND;
            if (j > 0 && j < n - 1)
                prim |= rs ? NSIM_PRIM_REDUCE : NSIM_PRIM_COPY_OUT;
            if (rs && j == n - 1)
                prim |= NSIM_PRIM_REDUCE;
            NSIM_TRY(nsim__plan_push_chunk(p, b, prim, (uint16_t)j, who, off, ne,
                                who * block + p->chan_offset[c]));
        }
    }
    return NSIM_OK;
}

/* Broadcast / Reduce: a chain along the ring from the root (Broadcast:
 * send, recvCopySend, recv) or to it (Reduce: send, recvReduceSend,
 * recvReduceCopy), one chunk of one step at a time (nccl 3.3). */
/* Where the root sits on channel c's ring. */
static uint32_t chain_root_pos(const nsim_plan *p, uint32_t c)
{
    uint32_t n = p->nranks, pos = 0;
    while (pos < n && p->ring[c * n + pos] != p->req.root)
        pos++;
    return pos < n ? pos : 0;
}

/* Ring position pos's place k along the chain (0 its first rank, n - 1
 * its last), the root at rootpos. */
static uint32_t chain_place(const nsim_plan *p, uint32_t pos, uint32_t rootpos)
{
    uint32_t n = p->nranks;
    return p->req.coll == NSIM_COLL_BROADCAST
               ? (pos + n - rootpos) % n
               : (pos + 2 * n - rootpos - 1) % n;
}

/* Which of the chain's three kinds of ops place k runs: 0 the first's,
 * 1 the middle's, 2 the last's. */
static int chain_kind(const nsim_plan *p, uint32_t k)
{
    return k == 0 ? 0 : k == p->nranks - 1 ? 2 : 1;
}

static int chain_lane(const nsim_plan *p, uint32_t c, uint32_t k, op_buf *b)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    int bc = p->req.coll == NSIM_COLL_BROADCAST;
    uint8_t prim = k == 0       ? NSIM_PRIM_SEND
                   : k == n - 1 ? NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT
                                : NSIM_PRIM_RECV | NSIM_PRIM_SEND;
    if (bc && k > 0 && k < n - 1)
        prim |= NSIM_PRIM_COPY_OUT;
    if (!bc && k > 0)
        prim |= NSIM_PRIM_REDUCE;
    uint64_t count = p->chan_bytes[c] / ts, chunk_count = p->chunk_bytes / ts;
    for (uint64_t off = 0; off < count; off += chunk_count) {
        int64_t ne = (int64_t)(count - off < chunk_count ? count - off
                                                        : chunk_count);
        /* a compact plan leaves the place out of the ops (the executor
         * does not read it): the middle ranks share one array, as a
         * folded chain needs (fold.c) */
        NSIM_TRY(nsim__plan_push_chunk(p, b, prim,
                                       p->req.compact_ops ? 0 : (uint16_t)k,
                                       p->req.root, off, ne,
                                       p->chan_offset[c]));
    }
    return NSIM_OK;
}

/* Per-thread byte threshold under which NCCL drops a channel (2.8). */
static uint64_t thread_threshold(const nsim_plan *p)
{
    if (p->req.algo == NSIM_ALGO_NVLS || p->req.algo == NSIM_ALGO_NVLSTREE)
        return 0; /* NVLS keeps its nvlsChannels (2.8) */
    switch (p->req.proto) {
    case NSIM_PROTO_LL: /* ring LL: 8 x nRanks, tree LL: 8 */
        return p->req.algo == NSIM_ALGO_RING ? 8ull * p->nranks : 8;
    case NSIM_PROTO_LL128:
        return 8;
    default:
        return 64;
    }
}

/* Channels used for this size: NCCL drops channels while the payload
 * is below nc x nThreads x threshold (nccl-internals 2.8), and the
 * buffer (AllGather/ReduceScatter: each rank's block) is split into
 * contiguous 16-byte-aligned ranges. */
static int split_channels(nsim_plan *p)
{
    uint32_t nc = p->nchannels;
    uint64_t thr = thread_threshold(p) * p->nthreads;
    while (nc > 1 && p->req.bytes < (uint64_t)nc * thr)
        nc--;
    p->nchannels = nc;
    p->chan_offset = calloc(nc, sizeof *p->chan_offset);
    p->chan_bytes = calloc(nc, sizeof *p->chan_bytes);
    if (p->chan_offset == NULL || p->chan_bytes == NULL)
        return NSIM_ENOMEM;
    uint64_t total = p->req.bytes;
    if (p->req.coll == NSIM_COLL_ALLGATHER ||
        p->req.coll == NSIM_COLL_REDUCESCATTER)
        total /= p->nranks;
    uint64_t per = div_up(div_up(total, nc), 16) * 16, off = 0;
    for (uint32_t c = 0; c < nc; c++) {
        uint64_t b = total - off < per ? total - off : per;
        p->chan_offset[c] = off;
        p->chan_bytes[c] = b;
        off += b;
    }
    return NSIM_OK;
}

/* LL128 needs 128-byte store ordering: NVLink inside hosts and a
 * GPU-NIC path NCCL trusts (nccl-internals 3.5). Returns the reason it
 * is not allowed, or NULL. */
const char *nsim_plan_ll128_refusal(nsim_topo *t)
{
    uint32_t n = nsim_topo_nranks(t);
    const nsim_device *g0 = nsim_topo_device(t, nsim_topo_rank_device(t, 0));
    for (uint32_t a = 0; a < n; a++) {
        uint32_t da = nsim_topo_rank_device(t, a);
        const nsim_device *ga = nsim_topo_device(t, da);
        if (ga->sm < 70)
            return "LL128 needs sm >= 70 (nccl-internals 3.5)";
        if (ga->sm != g0->sm && (ga->sm < 90 || g0->sm < 90))
            return "LL128 needs all GPUs of one generation or all sm >= 90 "
                   "(nccl-internals 3.5)";
    }
    if (!nsim_topo_hosts_nvlink_whole(t))
        return "LL128 needs NVLink (path NVL or NVB) between the GPUs of a "
               "host; this topology has PCIe-only pairs (nccl-internals "
               "3.5: typeIntra <= NVB)";
    return NULL;
}

static int check_req(nsim_topo *t, const nsim_plan_req *req, nsim_err *err)
{
    if ((unsigned)req->coll >= NSIM_COLL__COUNT ||
        (unsigned)req->proto >= NSIM_PROTO__COUNT)
        return NSIM_ERR(err, NSIM_EINVAL, "bad collective or protocol");
    NSIM_TRY(nsim_tune_check(t, req->coll, req->algo, req->proto, err));
    if (req->algo == NSIM_ALGO_NVLS && nsim_topo_nnodes(t) > 1)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "algorithm NVLS across %u hosts is NVLSTree in "
                        "NCCL (NVLS inside hosts, trees between them) "
                        "without CollNet: use NVLSTree, Tree or Ring",
                        nsim_topo_nnodes(t));
    if (nsim_coll_is_p2p(req->coll) && req->proto != NSIM_PROTO_SIMPLE)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "protocol %s cannot be forced for %s: NCCL picks "
                        "LL for point-to-point parts of at most 16 KiB "
                        "inside a node and Simple otherwise (nccl-internals "
                        "2.7); leave the protocol to NCCL or force Simple",
                        nsim_proto_name(req->proto), nsim_coll_name(req->coll));
    if (req->type_size == 0 || req->bytes % req->type_size != 0)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "size %llu is not a multiple of the type size %u",
                        (unsigned long long)req->bytes, req->type_size);
    if (req->qps_per_conn == 0 || req->qps_per_conn > 128)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "QPs per connection must be 1..128, got %u",
                        req->qps_per_conn);
    if (req->nchannels > NSIM_MAX_CHANNELS)
        return NSIM_ERR(err, NSIM_EINVAL, "channels must be 1..%d, got %u",
                        NSIM_MAX_CHANNELS, req->nchannels);
    if (req->buffsize < NSIM_NCCL_STEPS * 512 ||
        req->buffsize % (NSIM_NCCL_STEPS * 512) != 0)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "buffer size %llu must be a positive multiple of "
                        "4096 (8 steps of 512-byte grains)",
                        (unsigned long long)req->buffsize);
    if (nsim_topo_nranks(t) < 2)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "a ring needs at least 2 GPUs, the topology has %u",
                        nsim_topo_nranks(t));
    if (req->fold_senders &&
        (!nsim_coll_is_p2p(req->coll) ||
         req->fold_host[0] >= nsim_topo_nnodes(t) ||
         req->fold_host[1] >= nsim_topo_nnodes(t)))
        return NSIM_ERR(err, NSIM_EINVAL, "senders of nodes %u and %u: "
                        "expected an AllToAll or SendRecv and nodes "
                        "0..%u",
                        req->fold_host[0], req->fold_host[1],
                        nsim_topo_nnodes(t) - 1);
    if (req->root >= nsim_topo_nranks(t))
        return NSIM_ERR(err, NSIM_EINVAL, "root %u: expected a rank 0..%u",
                        req->root, nsim_topo_nranks(t) - 1);
    return NSIM_OK;
}

/* A ring's NET connection leaves its host on the channel's exit NIC and
 * enters the next on that host's entry NIC, when the rings came from
 * NCCL's search. */
static void ring_nics(nsim_topo *t, const nsim_plan *p, uint32_t c,
                      nsim_plan_conn *conn)
{
    if (conn->transport != NSIM_TRANSPORT_NET || p->ring_nic_out == NULL)
        return;
    uint32_t hs = rank_node(t, conn->from), hr = rank_node(t, conn->to);
    if (hs >= p->nhosts || hr >= p->nhosts)
        return; /* host ids not 0..n-1 in rank order: nearest NICs */
    int32_t out = p->ring_nic_out[c * p->nhosts + hs];
    int32_t in = p->ring_nic_in[c * p->nhosts + hr];
    const nsim_route *r;
    if (out < 0 || in < 0 ||
        nsim_topo_route(t, (uint32_t)out, (uint32_t)in, &r, NULL) != NSIM_OK ||
        r->type != NSIM_PATH_NET)
        return; /* keep the nearest NICs */
    conn->send_nic = (uint32_t)out;
    conn->recv_nic = (uint32_t)in;
}

static int build_conns(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks;
    p->nconns = p->nchannels * n;
    p->nlanes = p->nchannels * n;
    p->conns = nsim__plan_calloc(p, p->nconns, sizeof *p->conns);
    p->lanes = nsim__plan_calloc(p, p->nlanes, sizeof *p->lanes);
    if (p->conns == NULL || p->lanes == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t *ring = &p->ring[c * n];
            uint32_t from = ring[i], to = ring[(i + 1) % n];
            uint32_t id = c * n + i;
            NSIM_TRY(nsim__plan_make_conn(t, &p->req, c, from, to, &p->conns[id], err));
            ring_nics(t, p, c, &p->conns[id]);
            p->conns[id].send_lane = c * n + from;
            p->conns[id].recv_lane = c * n + to;
            p->lanes[c * n + from].send_conn = id;
            p->lanes[c * n + to].recv_conn = id;
            p->lanes[c * n + from].channel = c;
            p->lanes[c * n + from].rank = from;
        }
    return NSIM_OK;
}

/* Ring position pos's ops on channel c (a chain's: its place along the
 * chain, the root at rootpos). */
static int ring_lane(const nsim_plan *p, uint32_t c, uint32_t pos,
                     uint32_t rootpos, op_buf *b)
{
    switch (p->req.coll) {
    case NSIM_COLL_ALLREDUCE:
        return allreduce_lane(p, c, pos, AR_EVERY_CHUNK, b);
    case NSIM_COLL_ALLGATHER:
    case NSIM_COLL_REDUCESCATTER:
        return agrs_lane(p, c, pos, b);
    default:
        return chain_lane(p, c, chain_place(p, pos, rootpos), b);
    }
}

void nsim__plan_set_ops(const nsim_plan *p, nsim_plan_lane *l, op_buf *b,
                        op_owners *owners)
{
    l->ops = b->ops;
    l->nops = b->n;
    if (!p->req.compact_ops)
        return;
    for (uint32_t i = 0; i < b->n; i++) {
        b->ops[i].chunk = 0;
        b->ops[i].offset = 0;
    }
    for (uint32_t k = 0; k < NSIM__OP_OWNERS; k++) {
        const nsim_plan_lane *o = owners->lane[k];
        if (o != NULL && o->nops == b->n &&
            memcmp(o->ops, b->ops, b->n * sizeof *b->ops) == 0) {
            if (b->held != NULL)
                *b->held -= (uint64_t)b->cap * sizeof *b->ops;
            free(b->ops);
            l->ops = o->ops;
            l->ops_shared = 1;
            return;
        }
    }
    owners->lane[owners->next] = l;
    owners->next = (owners->next + 1) % NSIM__OP_OWNERS;
}

/* Whether, in a compact plan (no placement), every ring position of
 * channel c gets the same ops: AllGather and ReduceScatter always (a
 * position changes only which block, i.e. the placement); AllReduce
 * when every chunk of the last loop is as long as the others (the size
 * divides evenly; otherwise the last positions get shorter ones). */
static int ring_ops_uniform(const nsim_plan *p, uint32_t c)
{
    if (!p->req.compact_ops)
        return 0;
    if (p->req.coll == NSIM_COLL_ALLGATHER ||
        p->req.coll == NSIM_COLL_REDUCESCATTER)
        return 1;
    if (p->req.coll != NSIM_COLL_ALLREDUCE)
        return 0;
    uint32_t n = p->nranks, ts = p->req.type_size;
    uint64_t count = p->chan_bytes[c] / ts, loop = n * (p->chunk_bytes / ts);
    uint64_t rem = loop ? count % loop : 0;
    if (rem == 0)
        return 1;
    uint64_t cc = div_up(div_up(rem, n), 16 / ts) * (16 / ts);
    return n * cc == rem;
}

/* In a compact plan, an earlier channel whose ring positions get the
 * same ops as channel c's, position by position, or UINT32_MAX. An
 * AllReduce lane's ops depend on its position and its channel's byte
 * count alone (the channel's offset and the chunks are placement): where
 * the size does not divide evenly (1,536 ranks, 1 GiB) every position
 * differs, and without this each channel built its own n^2 ops (16x the
 * memory and time of one). */
static uint32_t ring_ops_like(const nsim_plan *p, uint32_t c)
{
    if (!p->req.compact_ops || p->req.coll != NSIM_COLL_ALLREDUCE)
        return UINT32_MAX;
    for (uint32_t k = 0; k < c; k++)
        if (p->chan_bytes[k] == p->chan_bytes[c])
            return k;
    return UINT32_MAX;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Patches of ring position pos (patched_ring): the ops of the minority
 * chunks m[0..nm) of the last loop (starting at op last_op, its chunk
 * cc, at element off), where they differ from base. A chunk at distance
 * j = pos - ch along the ring is emit j - 1 and n + j - 1 of the loop,
 * the own chunk (j = 0) emit n - 1. emits: room for 2 nm emits and
 * then their ops (2 nm spc); scratch: an op buffer for them. */
static int position_patches(nsim_plan *p, uint32_t c, uint32_t pos,
                            const uint32_t *m, uint32_t nm, uint64_t off,
                            uint64_t cc, uint32_t last_op,
                            const nsim_plan_op *base, uint64_t *emits,
                            op_buf *scratch, nsim_plan_lane *l)
{
    uint32_t n = p->nranks, ts = p->req.type_size, ne = 0;
    uint32_t spc = p->chunk_steps / p->slice_steps;
    uint64_t count = p->chan_bytes[c] / ts;
    for (uint32_t i = 0; i < nm; i++) {
        uint32_t j = (pos + n - m[i]) % n;
        if (j == 0) {
            emits[ne++] = (uint64_t)(n - 1) << 32 | m[i];
        } else {
            emits[ne++] = (uint64_t)(j - 1) << 32 | m[i];
            emits[ne++] = (uint64_t)(n + j - 1) << 32 | m[i];
        }
    }
    qsort(emits, ne, sizeof *emits, cmp_u64);
    scratch->n = 0;
    for (uint32_t i = 0; i < ne; i++) {
        uint32_t e = (uint32_t)(emits[i] >> 32), ch = (uint32_t)emits[i];
        NSIM_TRY(nsim__plan_push_chunk(p, scratch, ar_prim(n, e), (uint16_t)e,
                                       ch, 0,
                                       ar_chunk_elems(count, off, cc, ch), 0));
    }
    uint32_t np = 0;
    uint64_t *sel = emits + 2 * (size_t)nm; /* patch k: at << 32 | op */
    for (uint32_t i = 0; i < scratch->n; i++) {
        nsim_plan_op *op = &scratch->ops[i];
        uint32_t at = last_op + (uint32_t)(emits[i / spc] >> 32) * spc +
                      i % spc;
        op->chunk = 0;
        op->offset = 0;
        if (memcmp(op, &base[at], sizeof *op) != 0)
            sel[np++] = (uint64_t)at << 32 | i;
    }
    if (np == 0)
        return NSIM_OK;
    l->patch = nsim__plan_calloc(p, np, sizeof *l->patch);
    if (l->patch == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < np; i++)
        l->patch[i] = (nsim_plan_patch){(uint32_t)(sel[i] >> 32),
                                        scratch->ops[(uint32_t)sel[i]]};
    l->npatch = np;
    return NSIM_OK;
}

/* A compact ring AllReduce whose last loop is uneven (the size does not
 * divide into n equal chunks: 1,536 ranks, 1 GiB): every position's ops
 * differ there, and n arrays of 2n ops each were n^2 (2.4 GB and 15 s at
 * 6,144 ranks). Positions differ only in where along their loop the
 * short and empty chunks fall, so they share one array, with the last
 * loop's chunks all of the most common length, and each keeps patches:
 * its ops of the other chunks (a few, at 16 MiB and up). Returns 0
 * without building where the patches would not be much smaller than
 * the arrays (many short or empty chunks: small sizes on many ranks). */
static int patched_ring(nsim_plan *p, uint32_t c, op_owners *owners,
                        int *built)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    uint32_t spc = p->chunk_steps / p->slice_steps;
    uint64_t count = p->chan_bytes[c] / ts;
    uint64_t loop = (uint64_t)n * (p->chunk_bytes / ts);
    *built = 0;
    if (!p->req.compact_ops || p->req.coll != NSIM_COLL_ALLREDUCE ||
        count == 0 || loop == 0)
        return NSIM_OK;
    uint64_t off = (count - 1) / loop * loop, cc = ar_loop_chunk(p, count, off);
    uint32_t last_op = (uint32_t)(off / loop) * (2 * n - 1) * spc;
    /* chunk lengths: full (cc), one short, the rest empty */
    uint32_t full = 0, empty = 0;
    for (uint32_t ch = 0; ch < n; ch++) {
        int64_t ne = ar_chunk_elems(count, off, cc, ch);
        full += ne == (int64_t)cc;
        empty += ne <= 0;
    }
    int64_t most = full >= empty ? (int64_t)cc : 0;
    uint32_t nm = n - (full >= empty ? full : empty);
    uint64_t nops = (off / loop + 1) * (2 * n - 1) * spc;
    if ((uint64_t)nm * 2 * spc * sizeof(nsim_plan_patch) * 4 >
        nops * sizeof(nsim_plan_op))
        return NSIM_OK;
    uint32_t *m = malloc((nm ? nm : 1) * sizeof *m);
    uint64_t *emits = malloc((2 * (size_t)nm * (spc + 1) + 1) * sizeof *emits);
    op_buf scratch = {NULL, 0, 0, NULL, 0}, b = nsim__plan_ops(p);
    int rc = m == NULL || emits == NULL ? NSIM_ENOMEM : NSIM_OK;
    for (uint32_t ch = 0, k = 0; rc == NSIM_OK && ch < n; ch++) {
        int64_t ne = ar_chunk_elems(count, off, cc, ch);
        if ((ne < 0 ? 0 : ne) != most)
            m[k++] = ch;
    }
    const uint32_t *ring = &p->ring[c * n];
    nsim_plan_lane *first = &p->lanes[c * n + ring[0]];
    if (rc == NSIM_OK && (rc = allreduce_lane(p, c, 0, most, &b)) == NSIM_OK)
        nsim__plan_set_ops(p, first, &b, owners);
    else
        free(b.ops);
    for (uint32_t pos = 0; rc == NSIM_OK && pos < n; pos++) {
        nsim_plan_lane *l = &p->lanes[c * n + ring[pos]];
        if (pos > 0) {
            l->ops = first->ops;
            l->nops = first->nops;
            l->ops_shared = 1;
        }
        rc = position_patches(p, c, pos, m, nm, off, cc, last_op, first->ops,
                              emits, &scratch, l);
    }
    free(scratch.ops);
    free(emits);
    free(m);
    *built = rc == NSIM_OK;
    return rc;
}

static int build_ops(nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks;
    op_owners owners = {{NULL}, 0};
    for (uint32_t c = 0; c < p->nchannels; c++) {
        const nsim_plan_lane *first = NULL;
        /* a compact chain: the lanes of each kind share the first's ops */
        const nsim_plan_lane *kind[3] = {NULL, NULL, NULL};
        uint32_t rootpos = nsim_coll_has_root(p->req.coll) ? chain_root_pos(p, c) : 0;
        int uniform = ring_ops_uniform(p, c), patched = 0;
        uint32_t like = uniform ? UINT32_MAX : ring_ops_like(p, c);
        if (!uniform && like == UINT32_MAX &&
            patched_ring(p, c, &owners, &patched) != NSIM_OK)
            return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        for (uint32_t pos = 0; !patched && pos < n; pos++) {
            nsim_plan_lane *l = &p->lanes[c * n + p->ring[c * n + pos]];
            if (first != NULL) { /* uniform: the first position's ops */
                l->ops = first->ops;
                l->nops = first->nops;
                l->ops_shared = 1;
                continue;
            }
            if (like != UINT32_MAX) { /* that channel's, at this position */
                const nsim_plan_lane *o =
                    &p->lanes[like * n + p->ring[like * n + pos]];
                l->ops = o->ops;
                l->nops = o->nops;
                l->ops_shared = 1;
                l->patch = o->patch;
                l->npatch = o->npatch;
                l->patch_shared = 1;
                continue;
            }
            int k = nsim_coll_has_root(p->req.coll) && p->req.compact_ops
                        ? chain_kind(p, chain_place(p, pos, rootpos))
                        : -1;
            if (k >= 0 && kind[k] != NULL) {
                l->ops = kind[k]->ops;
                l->nops = kind[k]->nops;
                l->ops_shared = 1;
                continue;
            }
            op_buf b = nsim__plan_ops(p);
            if (ring_lane(p, c, pos, rootpos, &b) != NSIM_OK) {
                free(b.ops);
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
            }
            nsim__plan_set_ops(p, l, &b, &owners);
            if (uniform)
                first = l;
            if (k >= 0)
                kind[k] = l;
        }
    }
    return NSIM_OK;
}

/* The cut of each protocol (nccl-internals 3.2-3.4): slot (step) size,
 * payload per chunk and slice, threads per block, line format. */
static void set_cut(nsim_plan *p)
{
    nsim_coll c = p->req.coll;
    int ring_simple = (c == NSIM_COLL_ALLREDUCE || c == NSIM_COLL_ALLGATHER ||
                       c == NSIM_COLL_REDUCESCATTER) &&
                      p->req.algo == NSIM_ALGO_RING;
    p->chunk_steps = p->slice_steps = 1;
    p->nthreads = 512;
    switch (p->req.proto) {
    case NSIM_PROTO_LL: /* 64 KiB slots carrying 32 KiB of data */
        p->step_bytes = 32768;
        p->line_bytes = 16;
        p->line_payload_bytes = 8;
        break;
    case NSIM_PROTO_LL128: /* 614,400-byte slots carrying 576,000 */
        p->step_bytes = 576000;
        p->line_bytes = 128;
        p->line_payload_bytes = 120;
        p->nthreads = 640;
        break;
    default:
        p->step_bytes = p->req.buffsize / NSIM_NCCL_STEPS;
        if (ring_simple) {
            p->chunk_steps = NSIM_NCCL_STEPS / 2;
            p->slice_steps = NSIM_NCCL_STEPS / 4;
        }
        break;
    }
    p->slice_bytes = p->step_bytes * p->slice_steps;
    p->chunk_bytes = p->step_bytes * p->chunk_steps;
}

/* Channel c's ring from a graph dump: the graph channel's GPU order
 * (given for one host) applied by local index to every host in turn. */
static int graph_ring(nsim_topo *t, const host_list *hl,
                      const nsim_ncclgraph *g, uint32_t c, uint32_t *ring)
{
    const nsim_graph_info *gi = nsim_ncclgraph_find(g, NSIM_GRAPH_RING);
    if (gi == NULL || gi->nchannels == 0)
        return NSIM_ENOENT;
    uint32_t gidx = (uint32_t)(gi - nsim_ncclgraph_graph(g, 0));
    const nsim_graph_chan *gc = nsim_ncclgraph_channel(g, gidx,
                                                       c % gi->nchannels);
    uint32_t k = 0;
    for (uint32_t h = 0; h < hl->nhosts; h++) {
        uint32_t m = hl->start[h + 1] - hl->start[h];
        if (gc->ngpus != m)
            return NSIM_ENOENT;
        for (uint32_t i = 0; i < m; i++) {
            uint32_t li = local_index(t, nsim_topo_rank_device(t, gc->ranks[i]));
            if (li >= m)
                return NSIM_ENOENT;
            ring[k++] = hl->ranks[hl->start[h] + li];
        }
    }
    return NSIM_OK;
}

/* Multi-host rings from NCCL's search (nccl-internals 2.2, 2.4): every
 * host runs channel c of its own graph (the channel count synced to the
 * hosts' minimum), entering on its entry NET and leaving on its exit NET;
 * with NCCL_CROSS_NIC=2 odd hosts run channel c ^ 1 so that the rails
 * line up (file 21's rings). */
static int search_rings(nsim_topo *t, const host_list *hl, nsim_plan *p)
{
    nsim_search_job *job = NULL;
    uint32_t nh = hl->nhosts, n = p->nranks, nch;
    nsim_search_opts o = {0, -1, 0, 0, -1};
    if (p->req.cross_nic_given)
        o.cross_nic = (int32_t)p->req.cross_nic;
    if (nsim_search_job_compute(t, &o, &job, NULL) != NSIM_OK ||
        (nch = nsim_search_job_nchannels(job)) == 0)
        goto no;
    p->ring_nic_in = malloc((size_t)p->nchannels * nh * sizeof(int32_t));
    p->ring_nic_out = malloc((size_t)p->nchannels * nh * sizeof(int32_t));
    if (p->ring_nic_in == NULL || p->ring_nic_out == NULL)
        goto no;
    for (uint32_t c = 0; c < p->nchannels; c++) {
        uint32_t k = 0;
        for (uint32_t h = 0; h < nh; h++) {
            int32_t host = nsim_topo_device(t, nsim_topo_rank_device(t, hl->ranks[hl->start[h]]))->host;
            const nsim_search_graph *g = nsim_search_job_graph(job, host);
            uint32_t gc = c % nch, m = hl->start[h + 1] - hl->start[h];
            if ((h & 1) && g->crossnic == 2 && (gc ^ 1) < nch)
                gc ^= 1;
            if (m != g->ngpus)
                goto no;
            for (uint32_t i = 0; i < m; i++) {
                uint32_t li = local_index(t, nsim_topo_rank_device(t, g->intra[gc * g->ngpus + i]));
                if (li >= m)
                    goto no;
                p->ring[c * n + k++] = hl->ranks[hl->start[h] + li];
            }
            uint32_t nin, nout;
            p->ring_nic_in[c * nh + h] =
                g->nic_in[gc] >= 0 && map_nic(t, (uint32_t)g->nic_in[gc], host, &nin) == NSIM_OK ? (int32_t)nin : -1;
            p->ring_nic_out[c * nh + h] =
                g->nic_out[gc] >= 0 && map_nic(t, (uint32_t)g->nic_out[gc], host, &nout) == NSIM_OK ? (int32_t)nout : -1;
        }
    }
    nsim_search_job_destroy(job);
    return NSIM_OK;
no:
    free(p->ring_nic_in);
    free(p->ring_nic_out);
    p->ring_nic_in = p->ring_nic_out = NULL;
    nsim_search_job_destroy(job);
    return NSIM_ENOENT;
}

static int build_rings(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    host_list hl = {0};
    int rc = NSIM_OK;
    if (nsim__plan_group_hosts(t, &hl) != NSIM_OK)
        rc = NSIM_ENOMEM;
    p->nhosts = hl.nhosts;
    p->ring = malloc((size_t)p->nchannels * p->nranks * sizeof *p->ring);
    if (rc == NSIM_OK && p->ring == NULL)
        rc = NSIM_ENOMEM;
    int searched = rc == NSIM_OK && p->req.graph == NULL && hl.nhosts > 1 &&
                   search_rings(t, &hl, p) == NSIM_OK;
    for (uint32_t c = 0; rc == NSIM_OK && !searched && c < p->nchannels; c++) {
        if (p->req.graph != NULL &&
            graph_ring(t, &hl, p->req.graph, c, &p->ring[c * p->nranks]) ==
                NSIM_OK)
            continue;
        build_ring(&hl, c, &p->ring[c * p->nranks]);
    }
    free(hl.ranks);
    free(hl.start);
    if (rc != NSIM_OK)
        return NSIM_ERR(err, rc, "planner: out of memory");
    return NSIM_OK;
}

/* ---- point-to-point collectives (nccl-internals 2.7) ---------------- */

static uint32_t pow2_up(uint32_t x)
{
    uint32_t v = 1;
    while (v < x)
        v <<= 1;
    return v;
}

static uint32_t bit_reverse(uint32_t v, uint32_t nbits)
{
    uint32_t r = 0;
    for (uint32_t i = 0; i < nbits; i++)
        r |= ((v >> i) & 1u) << (nbits - 1 - i);
    return r;
}

/* Channels NCCL gives one peer: 2 per NVLink of the path, 2 over PCIe,
 * NCCL_NCHANNELS_PER_NET_PEER or the NIC path's bandwidth over 14 GB/s
 * (NCCL_P2P_PER_CHANNEL_NET_BW) over the network. */
static uint32_t peer_channels(nsim_topo *t, const nsim_plan_req *req,
                              uint32_t a, uint32_t b)
{
    uint32_t da = nsim_topo_rank_device(t, a), db = nsim_topo_rank_device(t, b);
    const nsim_route *r = NULL;
    if (!other_nodes(t, da, db) &&
        nsim_topo_route(t, da, db, &r, NULL) != NSIM_OK)
        return 1;
    if (r != NULL && (r->type == NSIM_PATH_NVL || r->type == NSIM_PATH_NVB)) {
        /* pathBw / perLinkNvlBw: the NVLinks of the GPU's first hop */
        uint32_t links = nsim_topo_link(t, r->links[0])->count;
        return 2 * (links > 1 ? links : 1);
    }
    if (r != NULL && r->type != NSIM_PATH_NET)
        return 2;
    if (req->net_peer_channels)
        return req->net_peer_channels;
    uint32_t nic;
    const nsim_route *nr;
    if (nearest_nic(t, da, &nic, NULL) != NSIM_OK ||
        nsim_topo_route(t, da, nic, &nr, NULL) != NSIM_OK)
        return 2;
    uint32_t n = (uint32_t)div_up((uint64_t)(nr->bw / 1e9 + 0.5), 14);
    return n ? n : 1;
}

/* NCCL_P2P_LL_THRESHOLD (nccl-internals 2.7): a part this small runs LL
 * on a connection that has LL buffers. */
#define P2P_LL_THRESHOLD 16384u

typedef struct p2p_cut {
    uint32_t nch, nbits, parts;
    uint64_t peer_bytes, part_bytes, chunk;
} p2p_cut;

/* Whether rank r's sends are planned (all, or two hosts' for a fold;
 * the hosts are alike then, so their pairs give every cut). */
static int plans_sender(nsim_topo *t, const nsim_plan *p, uint32_t r)
{
    uint32_t h = nsim_topo_host_node(
        t, nsim_topo_device(t, nsim_topo_rank_device(t, r))->host);
    return !p->req.fold_senders || h == p->req.fold_host[0] ||
           h == p->req.fold_host[1];
}

static void p2p_plan_cut(nsim_topo *t, nsim_plan *p, p2p_cut *k)
{
    uint32_t n = p->nranks, a2a = p->req.coll == NSIM_COLL_ALLTOALL;
    uint32_t comm = p->nchannels < 64 ? p->nchannels : 64, per = UINT32_MAX;
    k->nch = pow2_up(comm);
    for (k->nbits = 0; (1u << k->nbits) < k->nch; k->nbits++)
        ;
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t q = 0; q < n && plans_sender(t, p, r); q++)
            if (q != r && (a2a || q == (r + 1) % n)) {
                uint32_t c = peer_channels(t, &p->req, r, q);
                per = c < per ? c : per;
            }
    per = pow2_up(per);
    if (p->nhosts > 1 && p->req.net_peer_channels == 0)
        while (per > 1 && per * div_up(n, 8) > k->nch)
            per /= 2;
    uint32_t nmin = per;
    while (nmin > 1 && nmin * n > k->nch)
        nmin /= 2;
    int all_nvl = 1;
    for (uint32_t c = 0; c < p->nconns; c++)
        all_nvl &= p->conns[c].path == NSIM_PATH_NVL;
    uint64_t step = p->nhosts > 1 ? 128 << 10 : all_nvl ? 512 << 10 : 128 << 10;
    if (step > p->req.buffsize / NSIM_NCCL_STEPS)
        step = p->req.buffsize / NSIM_NCCL_STEPS;
    uint64_t min_part = p->nhosts > 1 ? step / 2 : step / 8;
    uint64_t max_part = p->nhosts > 1 ? step : 32 * step;
    k->peer_bytes = a2a ? p->req.bytes / n : p->req.bytes;
    uint64_t parts = div_up(k->peer_bytes, min_part);
    parts = parts < nmin ? parts : nmin;
    parts = parts ? parts : 1;
    while (div_up(k->peer_bytes, parts) > max_part && parts <= per / 2)
        parts *= 2;
    k->parts = (uint32_t)(parts < k->nch ? parts : k->nch);
    k->part_bytes = div_up(div_up(k->peer_bytes, k->parts), 16) * 16;
    k->chunk = step;
}

/* PXN for point-to-point (nccl-internals 2.6, NCCL_P2P_PXN_LEVEL 2): a
 * send to a remote peer uses the NIC its host's GPU of the peer's local
 * index would use (rail alignment), through that GPU's proxy when the
 * sender reaches it over NVLink and it owns the NIC with GDR; the NET
 * model then stages the data in that GPU's memory. */
static void p2p_pxn_nic(nsim_topo *t, nsim_plan_conn *c)
{
    uint32_t a = nsim_topo_rank_device(t, c->from);
    uint32_t b = nsim_topo_rank_device(t, c->to);
    uint32_t want = local_index(t, b), nic, nd;
    const uint32_t *hd =
        nsim_topo_host_devices(t, nsim_topo_device(t, a)->host, &nd);
    const nsim_route *r;
    for (uint32_t k = 0; k < nd; k++) {
        uint32_t g = hd[k];
        if (nsim_topo_device(t, g)->type != NSIM_DEV_GPU ||
            local_index(t, g) != want)
            continue;
        if (g == a || nearest_nic(t, g, &nic, NULL) != NSIM_OK ||
            !nsim_topo_device(t, nic)->gdr ||
            nsim_topo_route(t, a, g, &r, NULL) != NSIM_OK ||
            r->type != NSIM_PATH_NVL ||
            nsim_topo_route(t, g, nic, &r, NULL) != NSIM_OK ||
            r->type > NSIM_PATH_PXB ||
            nsim_topo_route(t, nic, c->recv_nic, &r, NULL) != NSIM_OK)
            return;
        c->send_nic = nic;
        return;
    }
}

/* One lane of ops moving len bytes from off in pieces of chunk. */
static int p2p_lane(const nsim_plan *p, nsim_plan_lane *l, uint8_t prim,
                    uint32_t peer, uint64_t off, uint64_t len, uint64_t chunk)
{
    op_buf b = nsim__plan_ops(p);
    uint64_t done = 0;
    do {
        uint64_t n = len - done < chunk ? len - done : chunk;
        nsim_plan_op op = {prim, 0, 0, peer, off + done, n};
        if (nsim__plan_push_op(&b, op) != NSIM_OK) {
            free(b.ops);
            return NSIM_ENOMEM;
        }
        done += n;
    } while (done < len);
    l->ops = b.ops;
    l->nops = b.n;
    return NSIM_OK;
}

/* Over the network the chunk shrinks for small parts (nccl 2.7). */
static uint64_t net_chunk(const p2p_cut *k)
{
    if (k->part_bytes < k->chunk)
        return k->chunk / 4;
    if (k->part_bytes < 8 * k->chunk)
        return k->chunk / 2;
    return k->chunk;
}

static int p2p_pair(nsim_topo *t, nsim_plan *p, const p2p_cut *k,
                    uint32_t src, uint32_t round, nsim_err *err)
{
    uint32_t n = p->nranks, dst = (src + round) % n;
    for (uint32_t part = 0; part < k->parts; part++) {
        uint64_t off = (uint64_t)part * k->part_bytes, len = 0;
        if (off < k->peer_bytes)
            len = k->peer_bytes - off < k->part_bytes ? k->peer_bytes - off
                                                      : k->part_bytes;
        uint32_t ch = (bit_reverse(round, k->nbits) + part) % k->nch;
        uint64_t base = p->req.coll == NSIM_COLL_ALLTOALL
                            ? (uint64_t)dst * k->peer_bytes : 0;
        nsim_plan_lane *sl = &p->lanes[p->nlanes++];
        *sl = (nsim_plan_lane){ch, src, UINT32_MAX, UINT32_MAX, 0, NULL};
        if (round == 0) { /* the rank's own block: a local copy */
            if (p2p_lane(p, sl, NSIM_PRIM_COPY_OUT, src, base + off, len,
                         k->chunk) != NSIM_OK)
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
            continue;
        }
        nsim_plan_lane *rl = &p->lanes[p->nlanes++];
        *rl = (nsim_plan_lane){ch, dst, UINT32_MAX, UINT32_MAX, 0, NULL};
        uint32_t id = p->nconns++;
        nsim_plan_conn *c = &p->conns[id];
        NSIM_TRY(nsim__plan_make_conn(t, &p->req, ch, src, dst, c, err));
        if (c->transport == NSIM_TRANSPORT_NET && p->req.graph == NULL)
            p2p_pxn_nic(t, c);
        c->send_lane = (uint32_t)(sl - p->lanes);
        c->recv_lane = (uint32_t)(rl - p->lanes);
        sl->send_conn = rl->recv_conn = id;
        uint64_t chunk = c->transport == NSIM_TRANSPORT_NET ? net_chunk(k)
                                                            : k->chunk;
        if (p2p_lane(p, sl, NSIM_PRIM_SEND, dst, base + off, len, chunk) ||
            p2p_lane(p, rl, NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT, src,
                     (uint64_t)src * k->peer_bytes + off, len, chunk))
            return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    }
    return NSIM_OK;
}

/* SendRecv (rank r sends to r+1, as nccl-tests) and AllToAll (round r:
 * send to rank+r, receive from rank-r; round 0 is the local copy): each
 * transfer in parts on channels base(round)+part, base the bit-reversed
 * round (nccl-internals 2.7); a part is a send lane on the sender and a
 * receive lane on the receiver. Both halves of a channel's block are
 * modelled as separate lanes, each at the per-SM rate. Parts of at most
 * 16 KiB run LL on one node unless the protocol is forced (2.7). */
static int build_p2p(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    host_list hl = {0};
    p2p_cut k;
    uint32_t n = p->nranks, a2a = p->req.coll == NSIM_COLL_ALLTOALL;
    if (nsim__plan_group_hosts(t, &hl) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    p->nhosts = hl.nhosts;
    free(hl.ranks);
    free(hl.start);
    /* a first connection tells whether all pairs are NVLink */
    p->conns = calloc(1, sizeof *p->conns);
    if (p->conns == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    p->nconns = 0;
    for (uint32_t r = 1; r < n && (a2a || r == 1); r++) {
        NSIM_TRY(nsim__plan_make_conn(t, &p->req, 0, 0, r, &p->conns[0], err));
        p->nconns = 1;
        if (p->conns[0].path != NSIM_PATH_NVL)
            break;
    }
    p2p_plan_cut(t, p, &k);
    free(p->conns);
    p->nconns = 0;
    p->nchannels = k.nch;
    if (p->req.proto_auto && p->req.proto == NSIM_PROTO_SIMPLE &&
        nsim_topo_nnodes(t) == 1 && k.part_bytes <= P2P_LL_THRESHOLD) {
        /* NCCL's choice for small parts on connections with LL buffers
         * (every intra-node one; NET ones have none by default) */
        p->req.proto = NSIM_PROTO_LL;
        set_cut(p);
        k.chunk = p->step_bytes;
    }
    p->step_bytes = p->slice_bytes = p->chunk_bytes = k.chunk;
    p->parts_per_peer = k.parts;
    uint32_t senders = 0;
    for (uint32_t src = 0; src < n; src++)
        senders += plans_sender(t, p, src);
    uint32_t rounds = a2a ? n : 1, maxl = senders * rounds * k.parts * 2;
    p->conns = nsim__plan_calloc(p, maxl, sizeof *p->conns);
    p->lanes = nsim__plan_calloc(p, maxl, sizeof *p->lanes);
    p->ring = calloc((size_t)k.nch * n, sizeof *p->ring);
    p->chan_offset = calloc(k.nch, sizeof *p->chan_offset);
    p->chan_bytes = calloc(k.nch, sizeof *p->chan_bytes);
    if (!p->conns || !p->lanes || !p->ring || !p->chan_offset || !p->chan_bytes)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t c = 0; c < k.nch; c++)
        for (uint32_t i = 0; i < n; i++)
            p->ring[c * n + i] = i;
    for (uint32_t src = 0; src < n; src++)
        for (uint32_t r = a2a ? 0 : 1; r < (a2a ? n : 2) &&
                                       plans_sender(t, p, src); r++)
            NSIM_TRY(p2p_pair(t, p, &k, src, r, err));
    return NSIM_OK;
}

int nsim_plan_build(nsim_topo *t, const nsim_plan_req *req, nsim_plan **out,
                    nsim_err *err)
{
    NSIM_TRY(check_req(t, req, err));
    nsim_plan *p = calloc(1, sizeof *p);
    int rc;
    if (p == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    p->req = *req;
    p->nranks = nsim_topo_nranks(t);
    p->building = &p->build;
    int nvls = !nsim_coll_is_p2p(req->coll) &&
               (req->algo == NSIM_ALGO_NVLS || req->algo == NSIM_ALGO_NVLSTREE);
    p->nchannels = req->nchannels ? req->nchannels
                   : nvls        ? nsim_plan_req_nvls_channels(t, req)
                                 : nsim_plan_default_channels(t);
    uint32_t nch_full = p->nchannels;
    set_cut(p);
    if (nsim_coll_is_p2p(req->coll))
        rc = build_p2p(t, p, err);
    else if (split_channels(p) != NSIM_OK)
        rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    else if (req->algo == NSIM_ALGO_TREE)
        rc = nsim__plan_build_trees(t, p, nch_full, err);
    else if (req->algo == NSIM_ALGO_NVLS)
        rc = nsim__plan_build_nvls(t, p, err);
    else if (req->algo == NSIM_ALGO_NVLSTREE)
        rc = nsim__plan_build_nvlstree(t, p, err);
    else if (req->algo == NSIM_ALGO_PAT)
        rc = nsim__plan_build_pat(t, p, err);
    else if ((rc = build_rings(t, p, err)) == NSIM_OK &&
             (rc = build_conns(t, p, err)) == NSIM_OK)
        rc = build_ops(p, err);
    p->building = NULL;
    if (req->max_plan_bytes != 0 && p->build.held > req->max_plan_bytes) {
        /* an allocation refused at the limit: the builders report it
         * as out of memory */
        char lim[32], need[64] = "more";
        nsim_units_format_size(req->max_plan_bytes, lim, sizeof lim);
        if (p->build.projected != 0) {
            char proj[32];
            nsim_units_format_size(p->build.projected, proj, sizeof proj);
            snprintf(need, sizeof need, "about %s (projected)", proj);
        }
        rc = NSIM_ERR(err, NSIM_EBUDGET,
                      "over the memory budget (--max-memory %s): the plan "
                      "alone needs %s (%u ranks, %u channels, %u lanes "
                      "with their ops)",
                      lim, need, p->nranks, p->nchannels, p->nlanes);
    }
    if (rc != NSIM_OK) {
        nsim_plan_destroy(p);
        return rc;
    }
    *out = p;
    return NSIM_OK;
}
