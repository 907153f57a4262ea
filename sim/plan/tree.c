/* SPDX-License-Identifier: MIT
 *
 * tree.c - NCCL's Tree AllReduce (nccl-internals 2.4, 3.3): per channel
 * an intra-host chain plus an inter-host double binary tree, played as
 * NCCL's split kernel (runTreeSplit) plays it.
 *
 * Models: the chain of each host (GPUs in rank order rotated by the
 * channel, as the ring's; chain[0] talks to the parent host and is the
 * host's child-1 end, chain[1] its child-0 end: BALANCED_TREE), the
 * inter-host trees of ncclGetBtree (tree 0) and its mirror (even host
 * count) or shift (odd) for channels c >= nChannels/2 (the postset
 * copies, 2.5); per rank and channel a reduce-up lane (leaf: send;
 * others: recvReduceSend from all children) and a broadcast-down lane
 * (recvCopySend to all children; leaf: recv) sharing one thread block;
 * the root's single lane recvReduceCopySend. Chunks of one step (Simple
 * 512 KiB halved for small sizes by tree depth, LL 32 KiB, LL128 halved
 * by NCCL's nstepsLL128 rule), one slice each.
 * Does not model: SPLIT_TREE/TREE patterns (NIC traffic on one GPU),
 * the tree graph's own search (it reuses the ring graph's order).
 * Units: bytes; ranks, hosts and channels are indices.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

static int log2i(uint64_t v)
{
    int l = -1;
    while (v) {
        v >>= 1;
        l++;
    }
    return l;
}

/* ncclGetBtree, including its way of clipping down1. */
static void btree(int n, int r, int *u, int *d0, int *d1, int *ctype)
{
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & r)
            break;
    *ctype = 0;
    if (r == 0) {
        *u = -1;
        *d0 = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    int up = (r ^ bit) | (bit << 1);
    if (up >= n)
        up = r ^ bit;
    *ctype = r < up ? 0 : 1;
    *u = up;
    int lowbit = bit >> 1;
    *d0 = lowbit == 0 ? -1 : r - lowbit;
    int down1 = lowbit == 0 ? -1 : r + lowbit;
    while (down1 >= n) {
        down1 = lowbit == 0 ? -1 : r + lowbit;
        lowbit >>= 1;
    }
    *d1 = down1;
}

void nsim__plan_dtree(int n, int idx, int tree, int *u, int *d0, int *d1,
                      int *ctype)
{
    if (tree == 0) {
        btree(n, idx, u, d0, d1, ctype);
        return;
    }
    int a, b, c;
    if (n % 2 == 1) { /* shift by one */
        btree(n, (idx - 1 + n) % n, &a, &b, &c, ctype);
        *u = a == -1 ? -1 : (a + 1) % n;
        *d0 = b == -1 ? -1 : (b + 1) % n;
        *d1 = c == -1 ? -1 : (c + 1) % n;
    } else { /* mirror */
        btree(n, n - 1 - idx, &a, &b, &c, ctype);
        *u = a == -1 ? -1 : n - 1 - a;
        *d0 = b == -1 ? -1 : n - 1 - b;
        *d1 = c == -1 ? -1 : n - 1 - c;
    }
}

/* The role of host x in one tree: its depth and the shape of its
 * subtree (its children's shapes, in order), as a dense id < n: hosts
 * of one role do the same work at the same moments. */
#define NO_HOST UINT32_MAX

typedef struct tree_roles {
    int32_t *up, *down; /* per host: parent, and 2 children (-1: none) */
    uint32_t *role;     /* per host: its role's id */
} tree_roles;

/* Ids for 64-bit keys: open addressing, cap a power of two > n keys. */
typedef struct interner {
    uint64_t *key;
    uint32_t *id;
    uint32_t cap, n;
} interner;

static uint32_t intern(interner *in, uint64_t key)
{
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) &
                 (in->cap - 1);
    while (in->id[i] != NO_HOST && in->key[i] != key)
        i = (i + 1) & (in->cap - 1);
    if (in->id[i] == NO_HOST) {
        in->key[i] = key;
        in->id[i] = in->n++;
    }
    return in->id[i];
}

static int interner_init(interner *in, uint32_t n)
{
    in->cap = 2;
    while (in->cap < 2 * n + 2)
        in->cap *= 2;
    in->n = 0;
    in->key = malloc(in->cap * sizeof *in->key);
    in->id = malloc(in->cap * sizeof *in->id);
    if (in->key == NULL || in->id == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < in->cap; i++)
        in->id[i] = NO_HOST;
    return NSIM_OK;
}

static int roles_build(uint32_t n, int tree, tree_roles *tr)
{
    uint32_t *depth = calloc(n, sizeof *depth), *shape = NULL;
    uint32_t *order = malloc(n * sizeof *order);
    interner shapes = {0}, roles = {0};
    tr->up = malloc(n * sizeof *tr->up);
    tr->down = malloc(2 * (size_t)n * sizeof *tr->down);
    tr->role = malloc(n * sizeof *tr->role);
    shape = malloc(n * sizeof *shape);
    int rc = NSIM_ENOMEM;
    if (depth == NULL || order == NULL || tr->up == NULL ||
        tr->down == NULL || tr->role == NULL || shape == NULL ||
        interner_init(&shapes, n) != NSIM_OK ||
        interner_init(&roles, n) != NSIM_OK)
        goto out;
    uint32_t head = 0, tail = 0;
    for (uint32_t x = 0; x < n; x++) {
        int ct;
        nsim__plan_dtree((int)n, (int)x, tree, &tr->up[x], &tr->down[2 * x],
                         &tr->down[2 * x + 1], &ct);
        if (tr->up[x] < 0)
            order[tail++] = x; /* the root */
    }
    while (head < tail) { /* breadth first from the root */
        uint32_t x = order[head++];
        for (int j = 0; j < 2; j++) {
            int32_t y = tr->down[2 * x + j];
            if (y >= 0 && tail < n) {
                depth[y] = depth[x] + 1;
                order[tail++] = (uint32_t)y;
            }
        }
    }
    for (uint32_t k = tail; k-- > 0;) { /* leaves first */
        uint32_t x = order[k];
        int32_t c0 = tr->down[2 * x], c1 = tr->down[2 * x + 1];
        uint64_t s0 = c0 >= 0 ? shape[c0] + 1ull : 0;
        uint64_t s1 = c1 >= 0 ? shape[c1] + 1ull : 0;
        shape[x] = intern(&shapes, s0 << 32 | s1);
        tr->role[x] = intern(&roles, (uint64_t)depth[x] << 32 | shape[x]);
    }
    rc = NSIM_OK;
out:
    free(depth);
    free(shape);
    free(order);
    free(shapes.key);
    free(shapes.id);
    free(roles.key);
    free(roles.id);
    return rc;
}

static void roles_free(tree_roles *tr)
{
    free(tr->up);
    free(tr->down);
    free(tr->role);
}

/* Each role of the queued hosts without a host yet gets the first of
 * them that has it, in each tree. */
static void claim_roles(uint32_t n, const tree_roles *tr,
                        const uint32_t *queue, uint32_t tail,
                        uint32_t *by_role)
{
    for (uint32_t k = 0; k < tail; k++)
        for (int t = 0; t < 2; t++)
            if (by_role[t * n + tr[t].role[queue[k]]] == NO_HOST)
                by_role[t * n + tr[t].role[queue[k]]] = queue[k];
}

/* Per role k of tree t, pick[k]: the host whose route to its parent is
 * the slowest (most latency; the lowest index among equals), or NO_HOST
 * where the role has a host already (by_role) or its hosts' routes are
 * alike (mixed[k] 0: breadth first chooses). */
static void slowest_of_roles(uint32_t n, const tree_roles *tr, int t,
                             const nsim_time *up_lat, const uint32_t *by_role,
                             uint32_t *pick, uint8_t *mixed)
{
    const nsim_time *lat = up_lat + (size_t)t * n;
    for (uint32_t i = 0; i < n; i++) {
        pick[i] = NO_HOST;
        mixed[i] = 0;
    }
    for (uint32_t x = 0; x < n; x++) {
        uint32_t k = tr->role[x];
        if (by_role[t * n + k] != NO_HOST)
            continue;
        if (pick[k] != NO_HOST && lat[x] != lat[pick[k]])
            mixed[k] = 1;
        if (pick[k] == NO_HOST || lat[x] > lat[pick[k]])
            pick[k] = x;
    }
    for (uint32_t k = 0; k < n; k++)
        if (!mixed[k])
            pick[k] = NO_HOST;
}

int nsim__plan_tree_fold(uint32_t n, const uint32_t *must, uint32_t nmust,
                         const nsim_time *up_lat, uint8_t *played,
                         uint32_t *rep, uint32_t *nplayed, uint32_t *nslow)
{
    tree_roles tr[2] = {{0}};
    uint32_t *by_role = malloc(2 * (size_t)n * sizeof *by_role);
    uint32_t *queue = malloc(n * sizeof *queue), head = 0, tail = 0;
    uint32_t *pick = up_lat != NULL ? malloc(n * sizeof *pick) : NULL;
    uint8_t *mixed = up_lat != NULL ? malloc(n) : NULL;
    int rc = NSIM_ENOMEM;
    if (by_role == NULL || queue == NULL ||
        (up_lat != NULL && (pick == NULL || mixed == NULL)) ||
        roles_build(n, 0, &tr[0]) != NSIM_OK ||
        roles_build(n, 1, &tr[1]) != NSIM_OK)
        goto out;
    for (uint32_t i = 0; i < 2 * n; i++)
        by_role[i] = NO_HOST;
    memset(played, 0, n);
    *nslow = 0;
    for (uint32_t x = 0; x < n; x++)
        for (int t = 0; t < 2; t++)
            if (tr[t].up[x] < 0 && !played[x]) {
                played[x] = 1;
                queue[tail++] = x;
            }
    for (uint32_t i = 0; i < nmust; i++) /* then the hosts to play */
        if (must[i] < n && !played[must[i]]) {
            played[must[i]] = 1;
            queue[tail++] = must[i];
        }
    claim_roles(n, tr, queue, tail, by_role);
    /* then, per tree, each other role's host with the slowest route to
     * its parent: hosts of one role may differ in their routes (one
     * crosses the spine where another stays on its leaf), and the whole
     * run waits for the slowest; a role's phantoms are stood in for by
     * it (their own routes to the played hosts stay their own) */
    for (int t = 0; up_lat != NULL && t < 2; t++) {
        slowest_of_roles(n, &tr[t], t, up_lat, by_role, pick, mixed);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t x = pick[k];
            if (x == NO_HOST)
                continue;
            by_role[t * n + k] = x;
            ++*nslow;
            if (!played[x]) {
                played[x] = 1;
                queue[tail++] = x;
            }
        }
    }
    claim_roles(n, tr, queue, tail, by_role);
    while (head < tail) {
        uint32_t x = queue[head++];
        for (int t = 0; t < 2; t++) {
            int32_t nb[3] = {tr[t].up[x], tr[t].down[2 * x],
                             tr[t].down[2 * x + 1]};
            for (int j = 0; j < 3; j++) {
                if (nb[j] < 0 || played[nb[j]] ||
                    by_role[t * n + tr[t].role[nb[j]]] != NO_HOST)
                    continue;
                uint32_t y = (uint32_t)nb[j];
                played[y] = 1;
                queue[tail++] = y;
                for (int u = 0; u < 2; u++)
                    if (by_role[u * n + tr[u].role[y]] == NO_HOST)
                        by_role[u * n + tr[u].role[y]] = y;
            }
        }
    }
    for (int t = 0; t < 2; t++)
        for (uint32_t x = 0; x < n; x++)
            rep[t * n + x] =
                played[x] ? x : by_role[t * n + tr[t].role[x]];
    *nplayed = tail;
    rc = NSIM_OK;
out:
    roles_free(&tr[0]);
    roles_free(&tr[1]);
    free(by_role);
    free(queue);
    free(pick);
    free(mixed);
    return rc;
}

/* Per tree t and host x, up_lat[t * n + x]: the latency of the route
 * from x's first rank's NIC to its parent's (0 at the root, and within
 * a host). A pair the planner cannot connect counts 0 here: building
 * the plan's own connections says why. */
static void up_latencies(nsim_topo *t, const nsim_plan *p,
                         const host_list *hl, nsim_time *up_lat)
{
    uint32_t n = hl->nhosts;
    for (int tree = 0; tree < 2; tree++)
        for (uint32_t x = 0; x < n; x++) {
            int u, d0, d1, ct;
            nsim_plan_conn c;
            nsim_err err;
            const nsim_route *r;
            nsim__plan_dtree((int)n, (int)x, tree, &u, &d0, &d1, &ct);
            up_lat[tree * n + x] = 0;
            if (u >= 0 &&
                nsim__plan_make_conn(t, &p->req, 0, hl->ranks[hl->start[x]],
                                     hl->ranks[hl->start[u]], &c,
                                     &err) == NSIM_OK &&
                c.transport == NSIM_TRANSPORT_NET &&
                nsim_topo_route(t, c.send_nic, c.recv_nic, &r, &err) ==
                    NSIM_OK)
                up_lat[tree * n + x] = r->lat_ps;
        }
}

int nsim__plan_tree_played(nsim_topo *t, nsim_plan *p, const host_list *hl,
                           uint8_t **played, uint32_t **rep,
                           uint32_t *nplayed)
{
    uint32_t n = hl->nhosts;
    *played = NULL;
    *rep = NULL;
    *nplayed = n;
    if (!p->req.fold_tree)
        return NSIM_OK;
    *played = malloc(n);
    *rep = malloc(2 * (size_t)n * sizeof **rep);
    nsim_time *up_lat = malloc(2 * (size_t)n * sizeof *up_lat);
    if (up_lat != NULL)
        up_latencies(t, p, hl, up_lat);
    if (*played == NULL || *rep == NULL || up_lat == NULL ||
        nsim__plan_tree_fold(n, p->req.fold_play, p->req.nfold_play, up_lat,
                             *played, *rep, nplayed,
                             &p->slow_roles) != NSIM_OK) {
        free(*played);
        free(*rep);
        free(up_lat);
        *played = NULL;
        *rep = NULL;
        return NSIM_ENOMEM;
    }
    free(up_lat);
    if (*nplayed >= n) { /* every role needs its own host */
        p->slow_roles = 0;
        free(*played);
        free(*rep);
        *played = NULL;
        *rep = NULL;
        *nplayed = n;
    }
    return NSIM_OK;
}

typedef struct tnode {
    uint32_t parent; /* UINT32_MAX at the root */
    uint32_t nchild, child[3];
    uint32_t up_conn, down_conn; /* to / from the parent */
    uint32_t dropped; /* past the node's chain as played
                       * (req.fold_tree_chain): in no connection, no ops */
} tnode;

static void link_child(tnode *nd, uint32_t parent, uint32_t child)
{
    nd[child].parent = parent;
    nd[parent].child[nd[parent].nchild++] = child;
}

/* The tree of one channel over ranks; order gets the chains. A node's
 * chain played short (played_chain > 0) ends at its played_chain-th
 * rank; the rest are dropped. */
static void channel_tree(const host_list *hl, uint32_t c, uint32_t nbase,
                         int tree, uint32_t played_chain, tnode *nd,
                         uint32_t *order)
{
    uint32_t H = hl->nhosts, k = 0;
    for (uint32_t h = 0; h < H; h++) {
        const uint32_t *L = &hl->ranks[hl->start[h]];
        uint32_t m = hl->start[h + 1] - hl->start[h], s = (c % nbase) % m;
        for (uint32_t i = 0; i < m; i++) {
            order[k] = L[(s + i) % m];
            nd[order[k]] = (tnode){UINT32_MAX, 0, {0}, 0, 0, 0};
            if (played_chain > 0 && i >= played_chain)
                nd[order[k]].dropped = 1;
            else if (i > 0)
                link_child(nd, order[k - 1], order[k]);
            k++;
        }
    }
    for (uint32_t h = 0; h < H; h++) {
        const uint32_t *ch = &order[hl->start[h]];
        uint32_t m = hl->start[h + 1] - hl->start[h];
        int u, d[2], ct;
        nsim__plan_dtree((int)H, (int)h, tree, &u, &d[0], &d[1], &ct);
        for (int j = 0; j < 2; j++) {
            if (d[j] < 0)
                continue;
            /* to child0 = chain[1], to child1 = chain[0]; the child host
             * joins through its chain[0] */
            uint32_t at = j == 0 && m > 1 ? ch[1] : ch[0];
            link_child(nd, at, order[hl->start[d[j]]]);
        }
    }
}

/* Chunk of one tree step (nccl-internals 3.3; NCCL enqueue.cc
 * computeCollDevWork): Simple halves 512 KiB while the per-channel size
 * is under 8/4/1 x depth chunks; LL128 halves by nstepsLL128. */
static void tree_cut(nsim_plan *p)
{
    uint32_t H = p->nhosts, ppn = p->nranks / H;
    uint64_t nb = p->req.bytes, nc = p->nchannels, ch = p->chunk_bytes;
    if (p->req.proto == NSIM_PROTO_SIMPLE) {
        uint64_t depth = ppn - 1 + (uint64_t)log2i(H);
        while (nb / (nc * ch) < depth * 8 && ch > 131072)
            ch /= 2;
        while (nb / (nc * ch) < depth * 4 && ch > 65536)
            ch /= 2;
        while (nb / (nc * ch) < depth && ch > 32768)
            ch /= 2;
    } else if (p->req.proto == NSIM_PROTO_LL128) {
        double st = 1 + log2i(H) + 0.1 * ppn;
        ch = 614400; /* wire bytes of one step; payload 120/128 */
        while ((double)(nb / (nc * ch)) < st * 64 / ppn && ch > 131072)
            ch /= 2;
        while ((double)(nb / (nc * ch)) < st * 16 / ppn && ch > 32768)
            ch /= 2;
        ch = ch / 128 * 120;
    }
    p->chunk_bytes = p->slice_bytes = ch;
}

static int tree_ops(const nsim_plan *p, uint32_t c, uint8_t prim,
                    nsim_plan_lane *l, op_owners *owners)
{
    op_buf b = nsim__plan_ops(p);
    uint32_t ts = p->req.type_size;
    uint64_t count = p->chan_bytes[c] / ts, cc = p->chunk_bytes / ts;
    uint32_t k = 0;
    for (uint64_t off = 0; off < count; off += cc, k++) {
        int64_t ne = (int64_t)(count - off < cc ? count - off : cc);
        if (nsim__plan_push_chunk(p, &b, prim, 0, k, off, ne,
                                  p->chan_offset[c]) != NSIM_OK) {
            free(b.ops);
            return NSIM_ENOMEM;
        }
    }
    nsim__plan_set_ops(p, l, &b, owners);
    return NSIM_OK;
}

/* The ranks a Tree plan plays: all, or (req.fold_tree) those of the
 * hosts nsim__plan_tree_fold chose; the others are phantoms, stood in
 * for by the rank at the same place on the played host in their role. */
typedef struct tplay {
    uint32_t nplayed;  /* ranks played */
    uint32_t *lidx;    /* per rank: its index among them, or UINT32_MAX */
    uint32_t *host, *pos; /* per rank: host, place in the host's list */
    uint32_t *rep;     /* fold: 2 x hosts (nsim__plan_tree_fold); NULL:
                        * every host played */
    uint32_t nhosts_played;
} tplay;

/* Lane (c, r, k) of a played rank: k 0 reduce up (the root: both ways),
 * 1 broadcast down. */
static uint32_t tlane_of(const tplay *v, uint32_t c,
                         uint32_t r, uint32_t k)
{
    return (c * v->nplayed + v->lidx[r]) * 2 + k;
}

/* The played rank that plays rank r's part in tree `tree`. */
static uint32_t stand_in(const host_list *hl, const tplay *v, int tree,
                         uint32_t r)
{
    if (v->lidx[r] != UINT32_MAX)
        return r;
    uint32_t h = v->rep[(size_t)tree * hl->nhosts + v->host[r]];
    return hl->ranks[hl->start[h] + v->pos[r]];
}

/* The up (child r -> parent q) and down connections between two ranks of
 * channel c; an end on a host not played is a phantom (see tplay). */
static int tree_pair(nsim_topo *t, nsim_plan *p, uint32_t c, int tree,
                     const host_list *hl, const tplay *v, const tnode *nd,
                     uint32_t r, uint32_t q, nsim_err *err)
{
    uint32_t up = p->nconns++, dn = p->nconns++;
    uint32_t rs = stand_in(hl, v, tree, r), qs = stand_in(hl, v, tree, q);
    uint32_t qk = nd[q].parent == UINT32_MAX ? 0 : 1;
    NSIM_TRY(nsim__plan_make_conn(t, &p->req, c, r, q, &p->conns[up], err));
    NSIM_TRY(nsim__plan_make_conn(t, &p->req, c, q, r, &p->conns[dn], err));
    p->conns[up].send_lane = tlane_of(v, c, rs, 0);
    p->conns[up].recv_lane = tlane_of(v, c, qs, 0);
    p->conns[dn].send_lane = tlane_of(v, c, qs, qk);
    p->conns[dn].recv_lane = tlane_of(v, c, rs, 1);
    if (rs != r || qs != q)
        p->phantom_conns += 2;
    static const uint32_t conn_of[4] = {0, 1, 0, 1}, recv_of[4] = {0, 1, 1, 0};
    uint32_t lane_of[4] = {p->conns[up].send_lane, p->conns[dn].recv_lane,
                           p->conns[up].recv_lane, p->conns[dn].send_lane};
    for (int k = 0; k < 4; k++)
        NSIM_TRY(nsim__plan_lane_take(&p->lanes[lane_of[k]], (int)recv_of[k],
                                      conn_of[k] ? dn : up, "Tree", err));
    return NSIM_OK;
}

static int channel_conns(nsim_topo *t, nsim_plan *p, uint32_t c, int tree,
                         const host_list *hl, const tplay *v, tnode *nd,
                         nsim_err *err)
{
    for (uint32_t r = 0; r < p->nranks; r++) {
        if (v->lidx[r] == UINT32_MAX || nd[r].dropped)
            continue;
        uint32_t q = nd[r].parent;
        if (q != UINT32_MAX)
            NSIM_TRY(tree_pair(t, p, c, tree, hl, v, nd, r, q, err));
        for (uint32_t k = 0; v->rep != NULL && k < nd[r].nchild; k++) {
            uint32_t y = nd[r].child[k];
            if (v->lidx[y] == UINT32_MAX)
                NSIM_TRY(tree_pair(t, p, c, tree, hl, v, nd, y, r, err));
        }
    }
    return NSIM_OK;
}

static int channel_lanes(nsim_plan *p, uint32_t c, const tplay *v,
                         const tnode *nd)
{
    op_owners owners = {{NULL}, 0};
    for (uint32_t r = 0; r < p->nranks; r++) {
        if (v->lidx[r] == UINT32_MAX || nd[r].dropped)
            continue;
        nsim_plan_lane *lu = &p->lanes[tlane_of(v, c, r, 0)];
        nsim_plan_lane *ld = &p->lanes[tlane_of(v, c, r, 1)];
        int leaf = nd[r].nchild == 0;
        uint8_t up, down = 0;
        if (nd[r].parent == UINT32_MAX) {
            up = NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_COPY_OUT |
                 NSIM_PRIM_SEND;
        } else {
            up = leaf ? NSIM_PRIM_SEND
                      : NSIM_PRIM_RECV | NSIM_PRIM_REDUCE | NSIM_PRIM_SEND;
            down = NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT |
                   (leaf ? 0 : NSIM_PRIM_SEND);
        }
        NSIM_TRY(tree_ops(p, c, up, lu, &owners));
        if (down != 0)
            NSIM_TRY(tree_ops(p, c, down, ld, &owners));
    }
    return NSIM_OK;
}

/* The played ranks (all, or a fold's) and their lanes; NSIM_ENOMEM. */
static int tplay_init(nsim_topo *t, nsim_plan *p, const host_list *hl,
                      tplay *v)
{
    uint32_t n = p->nranks, H = hl->nhosts;
    uint8_t *mark = NULL;
    v->lidx = malloc(n * sizeof *v->lidx);
    v->host = malloc(n * sizeof *v->host);
    v->pos = malloc(n * sizeof *v->pos);
    if (v->lidx == NULL || v->host == NULL || v->pos == NULL)
        return NSIM_ENOMEM;
    if (nsim__plan_tree_played(t, p, hl, &mark, &v->rep, &v->nhosts_played) !=
        NSIM_OK)
        return NSIM_ENOMEM;
    v->nplayed = 0;
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t k = hl->start[h]; k < hl->start[h + 1]; k++) {
            uint32_t r = hl->ranks[k];
            v->host[r] = h;
            v->pos[r] = k - hl->start[h];
            v->lidx[r] = v->rep == NULL || mark[h] ? v->nplayed++ : UINT32_MAX;
        }
    free(mark);
    uint32_t nc = p->nchannels, np = v->nplayed;
    p->nlanes = 2 * nc * np;
    p->conns = nsim__plan_calloc(p, (size_t)(v->rep ? 6 : 2) * nc * np,
                                 sizeof *p->conns);
    p->lanes = nsim__plan_calloc(p, p->nlanes, sizeof *p->lanes);
    p->ring = malloc((size_t)nc * n * sizeof *p->ring);
    if (p->conns == NULL || p->lanes == NULL || p->ring == NULL)
        return NSIM_ENOMEM;
    for (uint32_t c = 0; c < nc; c++)
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t k = 0; v->lidx[r] != UINT32_MAX && k < 2; k++)
                p->lanes[tlane_of(v, c, r, k)] = (nsim_plan_lane){
                    c, r, UINT32_MAX, UINT32_MAX, 0, NULL, 0, 0, {0}, {0}, k};
    return NSIM_OK;
}

int nsim__plan_build_trees(nsim_topo *t, nsim_plan *p, uint32_t nch_full,
                           nsim_err *err)
{
    host_list hl = {0};
    tplay v = {0};
    tnode *nd = NULL;
    int rc = nsim__plan_group_hosts(t, &hl);
    uint32_t nbase = nch_full >= 2 ? nch_full / 2 : 1;
    p->nhosts = hl.nhosts;
    if (rc == NSIM_OK && (nd = malloc(p->nranks * sizeof *nd)) == NULL)
        rc = NSIM_ENOMEM;
    if (rc == NSIM_OK)
        rc = tplay_init(t, p, &hl, &v);
    if (rc != NSIM_OK) {
        rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        goto out;
    }
    p->played_hosts = v.nhosts_played;
    /* a chain played short (req.fold_tree_chain, fold.h): past the
     * nbase ranks a channel's chain may start at, and its head */
    uint32_t ppn = hl.nhosts ? p->nranks / hl.nhosts : 0, played = 0;
    if (p->req.fold_tree_chain > 0 &&
        nbase + 1 + p->req.fold_tree_chain < ppn)
        played = nbase + 1 + p->req.fold_tree_chain;
    p->tree_chain_played = played;
    tree_cut(p);
    for (uint32_t c = 0; rc == NSIM_OK && c < p->nchannels; c++) {
        int tree = nch_full >= 2 && c >= nbase;
        channel_tree(&hl, c, nbase, tree, played, nd,
                     &p->ring[c * p->nranks]);
        rc = channel_conns(t, p, c, tree, &hl, &v, nd, err);
        if (rc == NSIM_OK && channel_lanes(p, c, &v, nd) != NSIM_OK)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    }
out:
    free(nd);
    free(v.lidx);
    free(v.host);
    free(v.pos);
    free(v.rep);
    free(hl.ranks);
    free(hl.start);
    return rc;
}
