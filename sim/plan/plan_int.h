/* SPDX-License-Identifier: MIT
 *
 * plan_int.h - the planner's internal helpers shared by plan.c (rings,
 * point-to-point) and tree.c (trees): hosts in rank order, connections,
 * op lists and the slice cut of one chunk. Not a public header.
 */
#ifndef NSIM_PLAN_PLAN_INT_H
#define NSIM_PLAN_PLAN_INT_H

#include "plan.h"

typedef struct host_list {
    uint32_t *ranks; /* all ranks, grouped by host in order of first rank */
    uint32_t *start; /* nhosts + 1 */
    uint32_t nhosts;
} host_list;

/* A lane's ops as they are pushed. held and limit: the build's count
 * of bytes its op arrays hold, and req.max_plan_bytes (0: none); a push
 * that would pass the limit fails (NSIM_EBUDGET) before it allocates. */
typedef struct op_buf {
    nsim_plan_op *ops;
    uint32_t n, cap;
    uint64_t *held, limit;
} op_buf;

/* An empty op_buf counted against p's build. */
op_buf nsim__plan_ops(const nsim_plan *p);
/* calloc (at least one element) for p's lanes and connections, counted
 * against its build: NULL, and the count past req.max_plan_bytes, when
 * over it. */
void *nsim__plan_calloc(nsim_plan *p, size_t n, size_t size);

/* Groups ranks by host; the caller frees hl->ranks and hl->start. */
int nsim__plan_group_hosts(nsim_topo *t, host_list *hl);
/* Fills conn for channel c, rank from -> rank to (P2P or NET). */
int nsim__plan_make_conn(nsim_topo *t, const nsim_plan_req *req, uint32_t c,
                         uint32_t from, uint32_t to, nsim_plan_conn *conn,
                         nsim_err *err);
int nsim__plan_push_op(op_buf *b, nsim_plan_op op);
/* The lanes whose op arrays a compact plan may share (a few recent ones:
 * the roles of a ring or a tree repeat along its ranks). */
#define NSIM__OP_OWNERS 8
typedef struct op_owners {
    nsim_plan_lane *lane[NSIM__OP_OWNERS];
    uint32_t next;
} op_owners;
/* Gives lane l the ops in b. With p->req.compact_ops the ops lose their
 * placement (chunk, offset) and, where a recent owner has the same ops,
 * l shares that array and b's is freed. */
void nsim__plan_set_ops(const nsim_plan *p, nsim_plan_lane *l, op_buf *b,
                        op_owners *owners);
/* The slices of one primitive on one chunk (nccl-internals 3.3). */
int nsim__plan_push_chunk(const nsim_plan *p, op_buf *b, uint8_t prim,
                          uint16_t step, uint32_t chunk, uint64_t off_el,
                          int64_t nelem, uint64_t base_byte);
/* Tree AllReduce: conns, lanes and ops (tree.c). nch_full is the channel
 * count before the size-based reduction: channels c >= nch_full / 2 run
 * the second tree (nccl-internals 2.4). */
int nsim__plan_build_trees(nsim_topo *t, nsim_plan *p, uint32_t nch_full,
                           nsim_err *err);
/* NVLS AllReduce on one host (nvls.c): per channel and rank an up and a
 * down connection to the NVSwitch, a scatter lane and a gather lane. */
int nsim__plan_build_nvls(nsim_topo *t, nsim_plan *p, nsim_err *err);
/* NVLSTree AllReduce (nvls.c): NVLS inside every host, the heads' parts
 * along the double binary tree between hosts over NET. */
int nsim__plan_build_nvlstree(nsim_topo *t, nsim_plan *p, nsim_err *err);
/* PAT AllGather / ReduceScatter, one GPU per host (pat.c): per channel
 * and rank one NET connection per doubling phase. */
int nsim__plan_build_pat(nsim_topo *t, nsim_plan *p, nsim_err *err);
/* PAT's chunk for p's size and channels (nccl-internals 3.3). */
uint64_t nsim__plan_pat_chunk(const nsim_plan *p);
/* ncclGetBtree / ncclGetDtree (nccl-internals 2.4): parent u (-1 at the
 * root), children d0, d1 (-1: none) of host idx of n in tree 0 or 1, and
 * whether idx is its parent's child 0 or 1. */
void nsim__plan_dtree(int n, int idx, int tree, int *u, int *d0, int *d1,
                      int *child_type);

/* Lane l takes conn as one more connection to receive from (recv) or to
 * send to (after the first, into the _more lists). A lane past
 * NSIM_LANE_MORE_CONNS fails NSIM_ENOTSUP naming the algorithm (what),
 * the rank and the channel: a folded tree's played lanes also stand in
 * for phantom peers. */
int nsim__plan_lane_take(nsim_plan_lane *l, int recv, uint32_t conn,
                         const char *what, nsim_err *err);
/* A folded double binary tree over n hosts (fold.h): played[x] = 1 for
 * the hosts played, *nplayed of them; rep[t * n + x] the played host
 * whose role in tree t (depth, height, children) is x's (x itself when
 * played). Starts at both roots, then the nmust hosts must[] (where a
 * run's faults strike: each then stands for the hosts of its roles),
 * then (up_lat, 2 x n, may be NULL: the route latency from host x to
 * its parent in tree t) per tree each other role's host with the
 * slowest route to its parent (*nslow of them); a neighbour of a played
 * host whose role no played host has yet is played too. NSIM_ENOMEM. */
int nsim__plan_tree_fold(uint32_t n, const uint32_t *must, uint32_t nmust,
                         const nsim_time *up_lat, uint8_t *played,
                         uint32_t *rep, uint32_t *nplayed, uint32_t *nslow);
/* For a plan with req.fold_tree: the hosts of hl it plays (*played per
 * host, *rep as above, *nplayed of them) when that is fewer than all;
 * otherwise (or without fold_tree) both NULL and *nplayed = hosts. The
 * caller frees both. NSIM_ENOMEM. */
int nsim__plan_tree_played(nsim_topo *t, nsim_plan *p, const host_list *hl,
                           uint8_t **played, uint32_t **rep,
                           uint32_t *nplayed);

#endif
