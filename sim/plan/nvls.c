/* SPDX-License-Identifier: MIT
 *
 * nvls.c - NVLS (NVLink SHARP) AllReduce on one host (nccl-internals
 * 3.3, 6.3): the plan side. The switch does the reduction and the
 * multicast (models/nvlink/nvls.c); the GPUs only scatter their data to
 * it and gather the reduced result.
 *
 * Models: nvlsChannels thread blocks per GPU (16 sm90, 24 sm100), every
 * GPU a head (min(32, nGPUs) heads); per channel loops of nHeads chunks
 * (chunk 128 KiB, NCCL_NVLS_CHUNKSIZE, cut to 64/32/16 KiB when the size
 * is under 64/8/2 x channels x heads x chunk); chunk k of channel c's
 * loops is head (k + c) mod heads's part (nsim_plan_nvls_head). Per
 * rank and channel a scatter lane (sends every chunk up to the switch)
 * and a gather lane (receives every reduced chunk and copies it out)
 * sharing one thread block, with an up and a down connection.
 * NVLSTree (several hosts, nccl-internals 3.3, 6.3): the same NVLS
 * groups per host (every GPU a head, heads = GPUs per host); per rank
 * and channel two more lanes on the same thread block: tree up (the
 * switch's reduced part of the head's chunk, plus the child hosts'
 * parts over NET, reduced, sent to the parent host's head) and tree
 * down (the parent's final part, sent on to the children and stored to
 * the switch, which multicasts it). The trees between hosts are
 * tree.c's ncclGetDtree: tree 0 for channels c < nCh/2, tree 1 for the
 * rest; head h of every host is in the tree of head h. NET connections
 * use the head GPU's nearest NIC. Chunk: 128 KiB halved under 32/16/4/1
 * x channels x heads x chunk (floors 256/128/64/32 KiB).
 * Does not model: user-buffer registration, NVLS + CollNet (SHARP).
 * Units: bytes.
 */
#include <stdlib.h>

#include "plan_int.h"

uint32_t nsim_plan_nvls_channels(nsim_topo *t)
{
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    return g.sm >= 100 ? 24 : 16;
}

uint32_t nsim_plan_req_nvls_channels(nsim_topo *t, const nsim_plan_req *req)
{
    return req->nvls_nchannels ? req->nvls_nchannels
                               : nsim_plan_nvls_channels(t);
}

uint32_t nsim_plan_nvls_head(const nsim_plan *p, uint32_t c, uint64_t k)
{
    return (uint32_t)((k + c) % p->nvls_heads);
}

uint32_t nsim_plan_nvls_part(const nsim_plan *p, uint32_t c, uint32_t h)
{
    uint32_t H = p->nvls_heads;
    return (h + H - c % H) % H;
}

/* NCCL_NVLS_CHUNKSIZE (128 KiB by default, nccl 3.3, 9), at most a
 * buffer slot (buffsize / NCCL_STEPS), where NCCL's chunk starts. */
static uint64_t nvls_base_chunk(const nsim_plan *p)
{
    uint64_t ch = p->req.nvls_chunk ? p->req.nvls_chunk : 131072;
    uint64_t slot = p->req.buffsize / NSIM_NCCL_STEPS;
    return slot != 0 && slot < ch ? slot : ch;
}

/* NCCL's NVLS chunk (enqueue.cc computeCollDevWork, nccl 3.3). */
static uint64_t nvls_chunk(const nsim_plan *p)
{
    uint64_t ch = nvls_base_chunk(p);
    uint64_t conc = (uint64_t)p->nchannels * p->nvls_heads;
    if (p->req.bytes < 64 * conc * ch && ch > 65536)
        ch = 65536;
    if (p->req.bytes < 8 * conc * ch && ch > 32768)
        ch = 32768;
    if (p->req.bytes < 2 * conc * ch && ch > 16384)
        ch = 16384;
    return ch;
}

/* The ops of chunks [k0, k1) of every loop on channel c: chunk k at k x
 * chunk (op index loop x heads + k), empty past the end. */
static int chunk_ops(const nsim_plan *p, uint32_t c, uint32_t k0, uint32_t k1,
                     uint8_t prim, nsim_plan_lane *l)
{
    op_buf b = nsim__plan_ops(p);
    uint32_t ts = p->req.type_size, H = p->nvls_heads;
    uint64_t count = p->chan_bytes[c] / ts, cc = p->chunk_bytes / ts;
    uint64_t off = 0;
    uint32_t loop = 0;
    do {
        for (uint32_t k = k0; k < k1; k++) {
            uint64_t o = off + k * cc;
            int64_t ne = o >= count ? 0
                         : (int64_t)(count - o < cc ? count - o : cc);
            if (nsim__plan_push_chunk(p, &b, prim, (uint16_t)k,
                                      loop * H + k, o, ne,
                                      p->chan_offset[c]) != NSIM_OK) {
                free(b.ops);
                return NSIM_ENOMEM;
            }
        }
        off += H * cc;
        loop++;
    } while (off < count);
    l->ops = b.ops;
    l->nops = b.n;
    return NSIM_OK;
}

static int nvls_ops(const nsim_plan *p, uint32_t c, uint8_t prim,
                    nsim_plan_lane *l)
{
    return chunk_ops(p, c, 0, p->nvls_heads, prim, l);
}

/* In a compact plan (req.compact_ops) lanes whose ops are the same share
 * the array of the first (*owner): every rank's NVLS scatter or gather
 * on a channel, every host's head i up or down the tree. Returns 1 when
 * l now shares. */
static int share_ops(const nsim_plan *p, nsim_plan_lane *l,
                     const nsim_plan_lane *owner)
{
    if (!p->req.compact_ops || owner == NULL)
        return 0;
    l->ops = owner->ops;
    l->nops = owner->nops;
    l->ops_shared = 1;
    return 1;
}

int nsim__plan_build_nvls(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks, nc = p->nchannels;
    p->nhosts = 1;
    p->nvls_heads = n < 32 ? n : 32;
    p->nthreads = 640;
    p->chunk_bytes = p->slice_bytes = p->step_bytes = nvls_chunk(p);
    p->nconns = p->nlanes = 2 * nc * n;
    p->conns = nsim__plan_calloc(p, p->nconns, sizeof *p->conns);
    p->lanes = nsim__plan_calloc(p, p->nlanes, sizeof *p->lanes);
    p->ring = malloc((size_t)nc * n * sizeof *p->ring);
    if (p->conns == NULL || p->lanes == NULL || p->ring == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    (void)t;
    for (uint32_t c = 0; c < nc; c++)
        for (uint32_t r = 0; r < n; r++) {
            uint32_t i = (c * n + r) * 2; /* lanes and conns alike */
            p->ring[c * n + r] = r;
            p->conns[i] = (nsim_plan_conn){c, r, r, NSIM_TRANSPORT_NVLS,
                                           NSIM_PATH_NVL, UINT32_MAX,
                                           UINT32_MAX, 0, i, UINT32_MAX};
            p->conns[i + 1] = (nsim_plan_conn){
                c, r, r, NSIM_TRANSPORT_NVLS, NSIM_PATH_NVL, UINT32_MAX,
                UINT32_MAX, 0, UINT32_MAX, i + 1};
            p->lanes[i] = (nsim_plan_lane){c, r, i, UINT32_MAX, 0, NULL,
                                           0, 0, {0}, {0}, 0};
            p->lanes[i + 1] = (nsim_plan_lane){c, r, UINT32_MAX, i + 1, 0,
                                               NULL, 0, 0, {0}, {0}, 1};
            if (nvls_ops(p, c, NSIM_PRIM_SEND, &p->lanes[i]) != NSIM_OK ||
                nvls_ops(p, c, NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT,
                         &p->lanes[i + 1]) != NSIM_OK)
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        }
    return NSIM_OK;
}

/* ---- NVLSTree --------------------------------------------------------- */

/* NCCL's NVLS tree chunk (nccl-internals 3.3): min(nvlsChunkSize,
 * treeMaxChunkSize) = 128 KiB, halved while the size is under 32/16/4/1
 * x concurrency (channels x heads) x chunk and above 256/128/64/32 KiB. */
static uint64_t nvlstree_chunk(const nsim_plan *p)
{
    static const uint64_t mult[4] = {32, 16, 4, 1};
    static const uint64_t floor_bytes[4] = {262144, 131072, 65536, 32768};
    uint64_t ch = nvls_base_chunk(p);
    uint64_t conc = (uint64_t)p->nchannels * p->nvls_heads;
    if (p->req.nvlstree_max_chunk && p->req.nvlstree_max_chunk < ch)
        ch = p->req.nvlstree_max_chunk;
    for (int i = 0; i < 4; i++)
        while (p->req.bytes < mult[i] * conc * ch && ch > floor_bytes[i])
            ch /= 2;
    return ch;
}

/* The ops of head h on channel c: its own chunk of every loop
 * (nsim_plan_nvls_part). */
static int head_ops(const nsim_plan *p, uint32_t c, uint32_t h, uint8_t prim,
                    nsim_plan_lane *l)
{
    uint32_t k = nsim_plan_nvls_part(p, c, h);
    return chunk_ops(p, c, k, k + 1, prim, l);
}

/* The hosts an NVLSTree plan plays: all, or (req.fold_tree) those that
 * nsim__plan_tree_fold chose, the others standing in as phantoms. */
typedef struct nvt {
    const host_list *hl;
    uint32_t nhosts, heads;
    uint32_t *played;  /* the played hosts in order */
    uint32_t nplayed;
    uint32_t *pidx;    /* per host: its index among them, or UINT32_MAX */
    uint32_t *rep;     /* fold: 2 x hosts, the played host in x's role in
                        * tree t (nsim__plan_tree_fold); NULL otherwise */
    int *parent;           /* per host, in the channel's tree (-1: root) */
    int *child;            /* per host, 2 children (-1: none) */
    int tree;              /* the channel's tree */
} nvt;

/* Rank of head i of host x. */
static uint32_t head_rank(const nvt *v, uint32_t x, uint32_t i)
{
    return v->hl->ranks[v->hl->start[x] + i];
}

/* Lane (and NVLS connection) k of head i of played host x on channel c:
 * 0 scatter, 1 gather, 2 tree up (the root: up and down), 3 tree down. */
static uint32_t tlane(const nvt *v, uint32_t c, uint32_t x, uint32_t i,
                      uint32_t k)
{
    return ((c * v->nplayed + v->pidx[x]) * v->heads + i) * 4 + k;
}

/* The played host that plays host x's part in this channel's tree. */
static uint32_t stand_in(const nvt *v, uint32_t x)
{
    return v->rep == NULL ? x : v->rep[(size_t)v->tree * v->nhosts + x];
}

static int nvlstree_check(const host_list *hl, uint32_t *ppn, nsim_err *err)
{
    uint32_t m = hl->start[1] - hl->start[0];
    if (hl->nhosts < 2)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "algorithm NVLSTree needs more than one host; one "
                        "host runs NVLS (nccl-internals 4.3)");
    for (uint32_t h = 1; h < hl->nhosts; h++)
        if (hl->start[h + 1] - hl->start[h] != m)
            return NSIM_ERR(err, NSIM_ENOTSUP,
                            "algorithm NVLSTree: hosts with different GPU "
                            "counts (%u and %u) are not modelled",
                            m, hl->start[h + 1] - hl->start[h]);
    if (m < 2 || m > 32)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "algorithm NVLSTree: %u GPUs per node; modelled "
                        "for 2..32 (one head per GPU)", m);
    *ppn = m;
    return NSIM_OK;
}

/* The NVLS part of channel c: per played rank its four NVLS connections
 * and four lanes, the scatter and gather ops. */
static int nvlstree_local(nsim_plan *p, uint32_t c, const nvt *v)
{
    const nsim_plan_lane *scatter = NULL, *gather = NULL; /* owners */
    for (uint32_t j = 0; j < v->nplayed; j++)
        for (uint32_t i = 0; i < v->heads; i++) {
            uint32_t x = v->played[j], r = head_rank(v, x, i);
            uint32_t b = tlane(v, c, x, i, 0);
            uint32_t store_lane = tlane(v, c, x, i, v->parent[x] < 0 ? 2 : 3);
            for (uint32_t k = 0; k < 4; k++) {
                p->conns[b + k] = (nsim_plan_conn){
                    c, r, r, NSIM_TRANSPORT_NVLS, NSIM_PATH_NVL, UINT32_MAX,
                    UINT32_MAX, 0, UINT32_MAX, UINT32_MAX, 0};
                p->lanes[b + k] = (nsim_plan_lane){
                    c, r, UINT32_MAX, UINT32_MAX, 0, NULL, 0, 0, {0}, {0},
                    k > 0};
            }
            p->conns[b].send_lane = b;
            p->lanes[b].send_conn = b;
            p->conns[b + 1].recv_lane = b + 1;
            p->lanes[b + 1].recv_conn = b + 1;
            p->conns[b + 2].nvls_role = NSIM_NVLS_REDUCED;
            p->conns[b + 2].recv_lane = b + 2;
            p->lanes[b + 2].recv_conn = b + 2;
            p->conns[b + 3].nvls_role = NSIM_NVLS_STORE;
            p->conns[b + 3].send_lane = store_lane;
            p->lanes[store_lane].send_conn = b + 3;
            if (!share_ops(p, &p->lanes[b], scatter))
                NSIM_TRY(nvls_ops(p, c, NSIM_PRIM_SEND, &p->lanes[b]));
            if (!share_ops(p, &p->lanes[b + 1], gather))
                NSIM_TRY(nvls_ops(p, c, NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT,
                                  &p->lanes[b + 1]));
            scatter = &p->lanes[b];
            gather = &p->lanes[b + 1];
        }
    return NSIM_OK;
}

/* A NET connection of channel c between head i of child host y and of
 * its parent host x, up (reduce) or down (broadcast). A side whose host
 * is not played is a phantom: its GPU, NIC and proxy carry the transfer
 * (the connection's ranks are the real ones), the lane of the played
 * host in its role sends or receives it. */
static int tree_conn(nsim_topo *t, nsim_plan *p, uint32_t c, const nvt *v,
                     uint32_t y, uint32_t x, uint32_t i, int up,
                     nsim_err *err)
{
    uint32_t from = up ? y : x, to = up ? x : y, id = p->nconns++;
    uint32_t sf = stand_in(v, from), st = stand_in(v, to);
    nsim_plan_conn *pc = &p->conns[id];
    NSIM_TRY(nsim__plan_make_conn(t, &p->req, c, head_rank(v, from, i),
                                  head_rank(v, to, i), pc, err));
    /* up: child's up lane -> parent's up lane; down: parent's down lane
     * (the root's single lane) -> child's down lane */
    pc->send_lane = tlane(v, c, sf, i, up || v->parent[from] < 0 ? 2 : 3);
    pc->recv_lane = tlane(v, c, st, i, up ? 2 : 3);
    if (sf != from || st != to)
        p->phantom_conns++;
    NSIM_TRY(nsim__plan_lane_take(&p->lanes[pc->send_lane], 0, id,
                                  "NVLSTree", err));
    return nsim__plan_lane_take(&p->lanes[pc->recv_lane], 1, id, "NVLSTree",
                                err);
}

/* The NET part of channel c: head i of each played host to head i of its
 * parent host (up, reduce) and back (down, broadcast); a fold adds the
 * connections of the played hosts' children that are not played. */
static int nvlstree_net(nsim_topo *t, nsim_plan *p, uint32_t c,
                        const nvt *v, nsim_err *err)
{
    for (uint32_t j = 0; j < v->nplayed; j++) {
        uint32_t x = v->played[j];
        for (uint32_t i = 0; i < v->heads; i++) {
            if (v->parent[x] >= 0)
                for (int up = 1; up >= 0; up--)
                    NSIM_TRY(tree_conn(t, p, c, v, x, (uint32_t)v->parent[x],
                                       i, up, err));
            for (int k = 0; k < 2 && v->rep != NULL; k++) {
                int y = v->child[2 * x + k];
                if (y < 0 || v->pidx[y] != UINT32_MAX)
                    continue;
                for (int up = 1; up >= 0; up--)
                    NSIM_TRY(tree_conn(t, p, c, v, (uint32_t)y, x, i, up,
                                       err));
            }
        }
    }
    return NSIM_OK;
}

static int nvlstree_tree_ops(nsim_plan *p, uint32_t c, const nvt *v)
{
    /* owners per head: up with and without children to reduce, down */
    const nsim_plan_lane *own[32][3] = {{NULL}};
    for (uint32_t j = 0; j < v->nplayed; j++)
        for (uint32_t i = 0; i < v->heads; i++) {
            uint32_t x = v->played[j];
            nsim_plan_lane *lu = &p->lanes[tlane(v, c, x, i, 2)];
            nsim_plan_lane *ld = &p->lanes[tlane(v, c, x, i, 3)];
            int k = lu->nrecv_more > 0 ? 0 : 1;
            uint8_t red = k == 0 ? NSIM_PRIM_REDUCE : 0;
            if (!share_ops(p, lu, own[i][k]))
                NSIM_TRY(head_ops(p, c, i,
                                  NSIM_PRIM_RECV | NSIM_PRIM_SEND | red, lu));
            own[i][k] = lu;
            if (v->parent[x] < 0) /* the root: one lane */
                continue;
            if (!share_ops(p, ld, own[i][2]))
                NSIM_TRY(head_ops(p, c, i, NSIM_PRIM_RECV | NSIM_PRIM_SEND,
                                  ld));
            own[i][2] = ld;
        }
    return NSIM_OK;
}

/* The played hosts: all, or those of a fold that plays fewer. */
static int nvt_hosts(nsim_topo *t, nsim_plan *p, nvt *v)
{
    uint32_t H = v->nhosts;
    uint8_t *mark = NULL;
    v->played = malloc(H * sizeof *v->played);
    v->pidx = malloc(H * sizeof *v->pidx);
    if (v->played == NULL || v->pidx == NULL)
        return NSIM_ENOMEM;
    if (nsim__plan_tree_played(t, p, v->hl, &mark, &v->rep, &v->nplayed) !=
        NSIM_OK)
        return NSIM_ENOMEM;
    for (uint32_t x = 0, j = 0; x < H; x++) {
        int on = v->rep == NULL || mark[x];
        v->pidx[x] = on ? j : UINT32_MAX;
        if (on)
            v->played[j++] = x;
    }
    free(mark);
    return NSIM_OK;
}

int nsim__plan_build_nvlstree(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    host_list hl = {0};
    nvt v = {0};
    uint32_t n = p->nranks, nc = p->nchannels, m = 0;
    int rc = nsim__plan_group_hosts(t, &hl);
    if (rc != NSIM_OK) {
        rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        goto out;
    }
    if ((rc = nvlstree_check(&hl, &m, err)) != NSIM_OK)
        goto out;
    v = (nvt){.hl = &hl, .nhosts = hl.nhosts, .heads = m};
    p->nhosts = hl.nhosts;
    p->nvls_heads = m;
    p->nthreads = 640;
    p->chunk_bytes = p->slice_bytes = p->step_bytes = nvlstree_chunk(p);
    v.parent = malloc(hl.nhosts * sizeof *v.parent);
    v.child = malloc(2 * (size_t)hl.nhosts * sizeof *v.child);
    p->ring = malloc((size_t)nc * n * sizeof *p->ring);
    if (v.parent == NULL || v.child == NULL ||
        p->ring == NULL || nvt_hosts(t, p, &v) != NSIM_OK) {
        rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        goto out;
    }
    uint32_t np = v.nplayed * m; /* played ranks */
    p->played_hosts = v.nplayed;
    p->nconns = 4 * nc * np; /* the NET ones follow: up to 2 per played
                              * rank to its parent, 4 to phantom children */
    p->nlanes = 4 * nc * np;
    p->conns = nsim__plan_calloc(p, (size_t)(v.rep ? 10 : 6) * nc * np,
                                 sizeof *p->conns);
    p->lanes = nsim__plan_calloc(p, p->nlanes, sizeof *p->lanes);
    if (p->conns == NULL || p->lanes == NULL) {
        rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        goto out;
    }
    for (uint32_t c = 0; c < nc; c++)
        for (uint32_t k = 0; k < n; k++)
            p->ring[c * n + k] = hl.ranks[k];
    for (uint32_t c = 0; rc == NSIM_OK && c < nc; c++) {
        int tree = nc >= 2 && c >= nc / 2; /* as tree.c: tree 1 above half */
        int same = c > 0 && tree == v.tree;
        v.tree = tree;
        for (uint32_t x = 0; !same && x < hl.nhosts; x++) {
            int ct;
            nsim__plan_dtree((int)hl.nhosts, (int)x, v.tree, &v.parent[x],
                             &v.child[2 * x], &v.child[2 * x + 1], &ct);
        }
        if (nvlstree_local(p, c, &v) != NSIM_OK) {
            rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
            break;
        }
        rc = nvlstree_net(t, p, c, &v, err);
        if (rc == NSIM_OK && nvlstree_tree_ops(p, c, &v) != NSIM_OK)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    }
out:
    free(v.parent);
    free(v.child);
    free(v.played);
    free(v.pidx);
    free(v.rep);
    free(hl.ranks);
    free(hl.start);
    return rc;
}
