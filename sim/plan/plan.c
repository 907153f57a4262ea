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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[NSIM_COLL__COUNT] = {
    "allreduce", "allgather", "reducescatter", "broadcast",
    "reduce",    "sendrecv",  "alltoall",
};
static const char *const proto_names[NSIM_PROTO__COUNT] = {"Simple", "LL",
                                                           "LL128"};
static const char *const algo_names[NSIM_ALGO__COUNT] = {"Ring"};

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
    return t == NSIM_TRANSPORT_P2P ? "P2P" : "NET";
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

void nsim_plan_destroy(nsim_plan *p)
{
    if (p == NULL)
        return;
    if (p->lanes != NULL)
        for (uint32_t i = 0; i < p->nchannels * p->nranks; i++)
            free(p->lanes[i].ops);
    free(p->lanes);
    free(p->conns);
    free(p->ring);
    free(p->chan_offset);
    free(p->chan_bytes);
    free(p);
}

/* ---- channel count --------------------------------------------------- */

/* NCCL's per-NVLink bandwidth by the GPU's sm (nccl-internals 1.3). */
static double nccl_nvlink_bw(uint32_t sm)
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

/* NCCL counts a PCIe Gen3/4/5 lane at 0.75/1.5/3 GB/s, i.e. 0.762 of the
 * raw 128b/130b rate (nccl-internals 1.3 vs hardware-facts 2.1). */
#define NCCL_PCI_PER_RAW 0.762

/* Per-GPU bandwidth in NCCL units: max of NVLink sum and PCIe. */
static double gpu_total_bw(nsim_topo *t, uint32_t dev)
{
    const nsim_device *g = nsim_topo_device(t, dev);
    double nvl = 0, pci = 0;
    const uint32_t *out = nsim_topo_out(t, dev);
    for (uint32_t k = 0; k < nsim_topo_nout(t, dev); k++) {
        const nsim_link *l = nsim_topo_link(t, out[k]);
        if (l->type == NSIM_LINK_NVLINK)
            nvl += l->count * nccl_nvlink_bw(g->sm);
        else if (l->type == NSIM_LINK_PCIE)
            pci += l->bw / 1e9 * NCCL_PCI_PER_RAW;
    }
    return nvl > pci ? nvl : pci;
}

uint32_t nsim_plan_default_channels(nsim_topo *t)
{
    uint32_t g0 = nsim_topo_rank_device(t, 0);
    uint32_t sm = nsim_topo_device(t, g0)->sm;
    if (nsim_topo_nhosts(t) > 1) {
        /* one graph channel per NIC of a host (bw <= NIC speed), no
         * duplication below 50 GB/s, then the postset doubling */
        uint32_t nnic = 0;
        for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++) {
            const nsim_device *dv = nsim_topo_device(t, d);
            nnic += dv->type == NSIM_DEV_NIC &&
                    dv->host == nsim_topo_device(t, g0)->host;
        }
        uint32_t n = 2 * (nnic ? nnic : 1);
        return n > NSIM_MAX_CHANNELS ? NSIM_MAX_CHANNELS : n;
    }
    static const double speeds80[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5,
                                      4,  3,  0};
    static const double speeds90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6,
                                      3,  0};
    static const double speeds100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24,
                                       20, 19, 18, 0};
    const double *sp = sm >= 100 ? speeds100 : sm >= 90 ? speeds90 : speeds80;
    double total = gpu_total_bw(t, g0);
    while (sp[1] != 0 && sp[0] > total)
        sp++;
    uint32_t n = (uint32_t)(total / sp[0]);
    if (n == 0)
        n = 1;
    if (n > NSIM_MAX_CHANNELS / 2)
        n = NSIM_MAX_CHANNELS / 2;
    double bw = sp[0];
    if (bw >= 25 && !(sm > 80 && bw < 50 && n > 4))
        n *= 2; /* ncclTopoDupChannels */
    n *= 2;     /* postset doubling */
    return n > NSIM_MAX_CHANNELS ? NSIM_MAX_CHANNELS : n;
}

/* ---- rings ----------------------------------------------------------- */

typedef struct host_list {
    uint32_t *ranks; /* all ranks, grouped by host in order of first rank */
    uint32_t *start; /* nhosts + 1 */
    uint32_t nhosts;
} host_list;

static int group_hosts(nsim_topo *t, host_list *hl)
{
    uint32_t n = nsim_topo_nranks(t);
    int32_t *hosts = malloc(n * sizeof *hosts);
    hl->ranks = malloc(n * sizeof *hl->ranks);
    hl->start = calloc(n + 1, sizeof *hl->start);
    if (hosts == NULL || hl->ranks == NULL || hl->start == NULL) {
        free(hosts);
        return NSIM_ENOMEM;
    }
    hl->nhosts = 0;
    uint32_t k = 0;
    for (uint32_t r = 0; r < n; r++) {
        int32_t h = nsim_topo_device(t, nsim_topo_rank_device(t, r))->host;
        uint32_t i;
        for (i = 0; i < hl->nhosts && hosts[i] != h; i++)
            ;
        if (i < hl->nhosts)
            continue;
        hosts[hl->nhosts] = h;
        hl->start[hl->nhosts++] = k;
        for (uint32_t q = r; q < n; q++)
            if (nsim_topo_device(t, nsim_topo_rank_device(t, q))->host == h)
                hl->ranks[k++] = q;
    }
    hl->start[hl->nhosts] = k;
    free(hosts);
    return NSIM_OK;
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

/* The NIC nearest to a GPU: best path type, then bandwidth, then hops. */
static int nearest_nic(nsim_topo *t, uint32_t gpu, uint32_t *out,
                       nsim_err *err)
{
    const nsim_route *best = NULL;
    int32_t host = nsim_topo_device(t, gpu)->host;
    for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++) {
        const nsim_device *dv = nsim_topo_device(t, d);
        if (dv->type != NSIM_DEV_NIC || dv->host != host)
            continue;
        const nsim_route *r;
        if (nsim_topo_route(t, gpu, d, &r, NULL) != NSIM_OK)
            continue;
        if (best == NULL || r->type < best->type ||
            (r->type == best->type &&
             (r->bw > best->bw || (r->bw == best->bw && r->hops < best->hops)))) {
            best = r;
            *out = d;
        }
    }
    if (best == NULL)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "cannot form a ring: gpu \"%s\" on host %d has no "
                        "NIC to reach the other hosts",
                        nsim_topo_device(t, gpu)->name, host);
    return NSIM_OK;
}

static int make_conn(nsim_topo *t, const nsim_plan_req *req, uint32_t c,
                     uint32_t from, uint32_t to, nsim_plan_conn *conn,
                     nsim_err *err)
{
    uint32_t a = nsim_topo_rank_device(t, from), b = nsim_topo_rank_device(t, to);
    const nsim_route *r;
    if (nsim_topo_route(t, a, b, &r, err) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "cannot form a ring on channel %u: no path from "
                        "rank %u (%s) to rank %u (%s)",
                        c, from, nsim_topo_device(t, a)->name, to,
                        nsim_topo_device(t, b)->name);
    *conn = (nsim_plan_conn){c, from, to, NSIM_TRANSPORT_P2P, r->type,
                             UINT32_MAX, UINT32_MAX, 0};
    if (nsim_topo_device(t, a)->host == nsim_topo_device(t, b)->host)
        return NSIM_OK;
    conn->transport = NSIM_TRANSPORT_NET;
    conn->nqps = req->qps_per_conn;
    NSIM_TRY(nearest_nic(t, a, &conn->send_nic, err));
    NSIM_TRY(nearest_nic(t, b, &conn->recv_nic, err));
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

typedef struct op_buf {
    nsim_plan_op *ops;
    uint32_t n, cap;
} op_buf;

static int push_op(op_buf *b, nsim_plan_op op)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 64;
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
static int push_chunk(const nsim_plan *p, op_buf *b, uint8_t prim,
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
        NSIM_TRY(push_op(b, op));
    }
    return NSIM_OK;
}

static int allreduce_lane(const nsim_plan *p, uint32_t c, uint32_t pos,
                          op_buf *b)
{
    uint32_t n = p->nranks, ts = p->req.type_size;
    uint64_t count = p->chan_bytes[c] / ts, base = p->chan_offset[c];
    uint64_t chunk_count = p->chunk_bytes / ts;
    for (uint64_t off = 0; off < count; off += (uint64_t)n * chunk_count) {
        uint64_t rem = count - off, cc = chunk_count;
        if (rem < (uint64_t)n * cc)
            cc = div_up(div_up(rem, n), 16 / ts) * (16 / ts);
        uint16_t step = 0;
#define CHUNK(j) ((pos + n - (j)) % n)
#define EMIT(prim, ch)                                                       \
    do {                                                                     \
        int64_t ne = (int64_t)count - (int64_t)(off + (ch)*cc);              \
        ne = ne < (int64_t)cc ? ne : (int64_t)cc;                            \
        NSIM_TRY(push_chunk(p, b, (prim), step++, (ch), off + (ch)*cc, ne,   \
                            base));                                          \
    } while (0)
        EMIT(NSIM_PRIM_SEND, CHUNK(1));
        for (uint32_t j = 2; j < n; j++)
            EMIT(NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_SEND, CHUNK(j));
        EMIT(NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_COPY_OUT |
                 NSIM_PRIM_SEND,
             CHUNK(0));
        for (uint32_t j = 1; j + 1 < n; j++)
            EMIT(NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT | NSIM_PRIM_SEND,
                 CHUNK(j));
        EMIT(NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT, CHUNK(n - 1));
#undef EMIT
#undef CHUNK
    }
    return NSIM_OK;
}

/* Channels used for this size: NCCL drops channels while the payload
 * is below nc x nThreads x 64 B (Simple, nccl-internals 2.8), and the
 * buffer is split into contiguous 16-byte-aligned ranges. */
static int split_channels(nsim_plan *p)
{
    uint32_t nc = p->nchannels;
    while (nc > 1 && p->req.bytes < (uint64_t)nc * 512 * 64)
        nc--;
    p->nchannels = nc;
    p->chan_offset = calloc(nc, sizeof *p->chan_offset);
    p->chan_bytes = calloc(nc, sizeof *p->chan_bytes);
    if (p->chan_offset == NULL || p->chan_bytes == NULL)
        return NSIM_ENOMEM;
    uint64_t per = div_up(div_up(p->req.bytes, nc), 16) * 16, off = 0;
    for (uint32_t c = 0; c < nc; c++) {
        uint64_t b = p->req.bytes - off < per ? p->req.bytes - off : per;
        p->chan_offset[c] = off;
        p->chan_bytes[c] = b;
        off += b;
    }
    return NSIM_OK;
}

static int check_req(nsim_topo *t, const nsim_plan_req *req, nsim_err *err)
{
    if (req->coll != NSIM_COLL_ALLREDUCE)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "collective %s: this planner builds allreduce only",
                        nsim_coll_name(req->coll));
    if (req->proto != NSIM_PROTO_SIMPLE)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "protocol %s: this planner builds Simple only",
                        nsim_proto_name(req->proto));
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
    return NSIM_OK;
}

static int build_conns(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks;
    p->nconns = p->nchannels * n;
    p->conns = calloc(p->nconns, sizeof *p->conns);
    p->lanes = calloc((size_t)p->nchannels * n, sizeof *p->lanes);
    if (p->conns == NULL || p->lanes == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t *ring = &p->ring[c * n];
            uint32_t from = ring[i], to = ring[(i + 1) % n];
            uint32_t id = c * n + i;
            NSIM_TRY(make_conn(t, &p->req, c, from, to, &p->conns[id], err));
            p->lanes[c * n + from].send_conn = id;
            p->lanes[c * n + to].recv_conn = id;
            p->lanes[c * n + from].channel = c;
            p->lanes[c * n + from].rank = from;
        }
    return NSIM_OK;
}

static int build_ops(nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks;
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t pos = 0; pos < n; pos++) {
            nsim_plan_lane *l = &p->lanes[c * n + p->ring[c * n + pos]];
            op_buf b = {0};
            if (allreduce_lane(p, c, pos, &b) != NSIM_OK) {
                free(b.ops);
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
            }
            l->ops = b.ops;
            l->nops = b.n;
        }
    return NSIM_OK;
}

int nsim_plan_build(nsim_topo *t, const nsim_plan_req *req, nsim_plan **out,
                    nsim_err *err)
{
    NSIM_TRY(check_req(t, req, err));
    nsim_plan *p = calloc(1, sizeof *p);
    host_list hl = {0};
    int rc = NSIM_ENOMEM;
    if (p == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    p->req = *req;
    p->nranks = nsim_topo_nranks(t);
    p->nchannels = req->nchannels ? req->nchannels
                                  : nsim_plan_default_channels(t);
    p->chunk_steps = NSIM_NCCL_STEPS / 2;
    p->slice_steps = NSIM_NCCL_STEPS / 4;
    p->step_bytes = req->buffsize / NSIM_NCCL_STEPS;
    p->slice_bytes = p->step_bytes * p->slice_steps;
    p->chunk_bytes = p->step_bytes * p->chunk_steps;
    if (group_hosts(t, &hl) != NSIM_OK || split_channels(p) != NSIM_OK)
        goto fail_oom;
    p->nhosts = hl.nhosts;
    p->ring = malloc((size_t)p->nchannels * p->nranks * sizeof *p->ring);
    if (p->ring == NULL)
        goto fail_oom;
    for (uint32_t c = 0; c < p->nchannels; c++)
        build_ring(&hl, c, &p->ring[c * p->nranks]);
    if ((rc = build_conns(t, p, err)) != NSIM_OK ||
        (rc = build_ops(p, err)) != NSIM_OK)
        goto fail;
    free(hl.ranks);
    free(hl.start);
    *out = p;
    return NSIM_OK;
fail_oom:
    rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
fail:
    free(hl.ranks);
    free(hl.start);
    nsim_plan_destroy(p);
    return rc;
}
