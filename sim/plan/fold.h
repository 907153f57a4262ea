/* SPDX-License-Identifier: MIT
 *
 * fold.h - symmetry folding: a run on identical hosts, where every host
 * does the same work, played by two of them.
 *
 * Rings (AllReduce, AllGather, ReduceScatter): on identical hosts a ring
 * repeats from host to host: every rank runs the same ops at the same
 * moments as its twin m hosts further, when the ring, its connections,
 * their NICs and the ops repeat with a period of m hosts. The run of m
 * hosts alone, each receiving from the host before it as in the whole
 * ring, then takes the whole ring's time. The folded plan keeps the rank
 * count, the steps and the slice sizes (the ops are still the n-rank
 * ring's) and drops the lanes and connections of the other hosts; the
 * connection that leaves the last played host enters the first, on the
 * twin of its NIC. The check is exact on the hosts (devices, their links
 * and ranks match device for device) and on the plan (successors,
 * transports, QPs, NICs and op arrays repeat). The network between
 * hosts is not checked for symmetry: a ring runs at the pace of its
 * slowest hop, so the played hosts start at the sender of the plan's
 * slowest NET route; every other route is compared with its twin's as
 * played (a narrower one refuses the fold; the others are counted).
 * Where a run's faults strike one place (a rank, a NIC, a host's link:
 * nsim_plan_req fold_play), the played hosts cover the struck ones, each
 * of which then stands for its twins: 1 host in m struck instead of 1
 * in the whole ring, which, running at its slowest hop, is as slow.
 *
 * AllToAll: every host sends and receives the same. Two played hosts
 * each plan their own sends (nsim_plan_fold_prepare, before planning)
 * and receive every send of the other that crosses the network, on the
 * rank and NIC of the receiver's local index: each then sends, receives
 * and proxies what a host does. Routes of another bandwidth than the
 * played one refuse; RoCE (ECMP hashing) refuses. SendRecv (rank r to
 * r + 1) folds the same way, on the host whose route to the next is the
 * slowest and that next host. An AllToAll whose faults strike one host
 * (nsim_plan_req fold_play) plays that host first.
 *
 * Broadcast and Reduce: a chain along the ring from the root (to it),
 * a pipeline of alike hosts whose time grows by one delay per host: it
 * is played twice, on NSIM_FOLD_CHAIN_HOSTS hosts from the one before
 * the root's and on half as many, and each host not played adds the
 * delay per host between the two (nsim_run_size; fold.c).
 *
 * Tree and NVLSTree AllReduce: a host's work depends on its roles in
 * NCCL's two trees; the hosts played are one per role (about
 * 2 log2(hosts)), the others their phantom peers (fold.c). Hosts a run's
 * faults strike are played, each for its roles.
 *
 * Cost: hosts / 2 times less (trees: hosts / 2 log2(hosts)). What no fold sees: contention between
 * hosts' flows in the fabric beyond the played hosts' switches.
 *
 * Owns: the check and the in-place rewrite; nothing after the call.
 */
#ifndef NSIM_PLAN_FOLD_H
#define NSIM_PLAN_FOLD_H

#include <stdint.h>

#include "sim/core/err.h"
#include "sim/plan/plan.h"

/* When runs fold (scenario "fold", --fold): auto folds flow-fidelity
 * runs, on folds packet runs too, off never folds. */
typedef enum nsim_fold_mode {
    NSIM_FOLD_AUTO,
    NSIM_FOLD_OFF,
    NSIM_FOLD_ON,
} nsim_fold_mode;

const char *nsim_fold_mode_name(nsim_fold_mode m);
int nsim_fold_mode_parse(const char *s, nsim_fold_mode *out);

/* 1 when req plans a Broadcast or Reduce chain along the ring, which
 * folds by playing a few hosts twice (below, chain_hosts). */
int nsim_plan_req_is_chain(const nsim_plan_req *req);

/* A size that does not divide evenly over ranks leaves twins' payloads
 * a little apart: a played lane plays every op at the largest payload of
 * the lanes it stands for, the run of the size rounded up to whole
 * chunks (fold.c). Given the size's predicted time (nsim_plan_req
 * fold_row_ps, as runs give it), the fold is refused where those bytes,
 * through a lane's share of the narrowest NET route, would take more
 * than NSIM_FOLD_LAT_TOL of it; without one, where twins' payloads
 * differ by more than this fraction, or the merge adds more than it to
 * a lane's payload. */
#define NSIM_FOLD_BYTES_TOL 0.02

/* A ring played on two hosts plays every host hop at the route of its
 * slowest (the ring runs at the pace of its slowest hop where it is
 * bandwidth-bound); where it is latency-bound, a step waits on its own
 * hop's latency, and the hops that are faster in the whole ring (under
 * one leaf, where the played one crosses the spine) add their
 * difference to every lap. Where that sum, over the laps of the ring's
 * chain (two for AllReduce, one for AllGather and ReduceScatter), would
 * pass this fraction of NCCL's predicted time for the size, the fold
 * plays more hosts (a longer run of them, so that fewer of its hops
 * cross): 4, 6, 8 ... of them, the fewest that keep under it (fold.c,
 * docs/fold.md). */
#define NSIM_FOLD_LAT_TOL 0.01

/* A Broadcast or Reduce chain (fold.c) is played on this many hosts and
 * again on half as many; the hosts neither run plays are each added at
 * the delay per host between the two (what the last half of the first
 * run's hosts added, on average). The delay one host adds is not the
 * same all along a chain: where two channels share a NIC port their
 * slices fall in and out of step from host to host, and it settles only
 * after some tens of hosts (DGX A100, 1 GiB: 309.5 us a host over hosts
 * 8-16, 301.7-304.8 from 24 on), so the runs are long and the delay is taken
 * from their deeper half (docs/fold.md). A cluster of fewer than three
 * times this many hosts plays every host. */
#define NSIM_FOLD_CHAIN_HOSTS 64

/* A Tree AllReduce chains each NCCL node's ranks (nccl-internals 3.3);
 * where a node is an NVLink domain of many GPUs (a GB200 NVL72 rack: a
 * chain of 72 ranks a channel) every rank past the chain's first two
 * only relays along NVLink, and each adds about the same delay to the
 * run. A channel's chain starts at one of nbase ranks (tree.c: half the
 * channels), so once it runs nbase + 1 ranks past its start some rank
 * relays in every channel's chain, and its NVLink port carries what a
 * whole chain's do; shorter, no port does, and the run is faster than
 * the line (two racks, 512 MiB: 1434.21 us at 8 ranks where the line
 * through 16 and more gives 1556). In flow fidelity, on 2 NCCL nodes
 * or more whose GPUs are alike and number at least 52, each node's
 * chain is played to NSIM_FOLD_TREE_CHAIN ranks past those nbase + 1,
 * and again to NSIM_FOLD_TREE_CHAIN_SHORT past them (16 channels: 26
 * and 10 of 72); the ranks neither plays are added at the delay per
 * rank between the two. That delay wavers by a few % over a few ranks,
 * so the runs lie 16 ranks apart: within 1.6 % of the whole chains on
 * 2, 4 and 8 racks from 1 MiB to 512 MiB (docs/fold.md). On one node
 * the line starts later (512 MiB: 10.5 us a rank from 24 ranks, 48
 * from 10 to 26), and in packet fidelity the delay is less even (14.3
 * then 16.0 us a rank from 8 to 16 to 24 ranks, four racks, 64 MiB):
 * both play the chains whole. */
#define NSIM_FOLD_TREE_CHAIN 17
#define NSIM_FOLD_TREE_CHAIN_SHORT 1
/* Nodes of fewer ranks play their chains whole: twice the longer run's
 * chain with 16 channels (8 starts, the head, 17), below which the two
 * runs would cost about what the whole chain does. */
#define NSIM_FOLD_TREE_CHAIN_NODE_MIN (2 * (8 + 1 + NSIM_FOLD_TREE_CHAIN))

typedef struct nsim_fold_info {
    uint32_t hosts;     /* hosts of the plan */
    uint32_t played;    /* hosts played: < hosts when folded */
    uint32_t first_played; /* the first of them (then first + 1, ...);
                            * AllToAll: one of the two */
    uint32_t partner;    /* AllToAll: the other; UINT32_MAX for rings */
    uint32_t net_conns; /* NET connections of the whole plan */
    uint32_t net_unlike; /* of those, with a faster route than their
                          * twin's as played (the played ring has the
                          * slowest: see above) */
    nsim_time lat_diff_ps; /* the largest latency difference there */
    nsim_time lat_added_ps; /* their differences summed over the laps of
                             * the ring's chain, on its slowest channel:
                             * what the played routes add where the ring
                             * is latency-bound (<= NSIM_FOLD_LAT_TOL of
                             * the size's predicted time) */
    double bytes_diff;  /* the largest relative difference between a
                         * lane's payload and its twin's (<= TOL) */
    double bytes_added; /* what playing every chunk at its largest adds
                         * to a played lane's payload, at most (<= TOL
                         * without a predicted time) */
    nsim_time bytes_time_ps; /* those bytes' time through a lane's share
                              * of the narrowest NET route, at most (<=
                              * NSIM_FOLD_LAT_TOL of the predicted time) */
    uint32_t phantom_conns; /* trees: connections to or from a host
                             * that is not played (fold.c) */
    uint32_t slow_roles; /* trees: roles played by the host of the
                          * slowest route to its parent (plan.h) */
    uint32_t struck;    /* rings: hosts the run must play (its faults
                         * strike them: nsim_plan_req fold_play), played;
                         * each stands for its twins */
    uint32_t fabric_links; /* rings: links between switches faults strike
                            * (nsim_plan_req fold_links) */
    uint32_t fabric_conns; /* NET connections whose paths cross them */
    uint32_t chain_hosts;  /* a Broadcast or Reduce chain: the hosts
                            * played (the second run plays half as many);
                            * 0: not a chain */
    int64_t chain_lat_ps;  /* what the whole chain's routes add to the
                            * played hosts' and to the hosts added at
                            * their delay, on its slowest channel (may
                            * be negative) */
    nsim_time chain_host_ps; /* the delay each host adds to the chain:
                              * what the second half of the played
                              * hosts added, per host (nsim_run_size
                              * sets it) */
    uint32_t tree_chain; /* a Tree's chains folded: each node's chain
                          * played with this many ranks (the second run
                          * tree_chain_short); 0: played whole */
    uint32_t tree_chain_short; /* the second run's */
    uint32_t tree_chain_of; /* the ranks of a node's whole chain */
    nsim_time tree_chain_rank_ps; /* the delay each rank adds to the
                                   * run (nsim_run_size sets it) */
    char why_not[256];  /* not folded: why; empty when folded */
} nsim_fold_info;

/* Before planning: an AllToAll on alike hosts (see fold.c) plans two
 * hosts' sends alone (req->fold_senders, fold_host); info says why not.
 * Other collectives are left as they are. Fails only when out of
 * memory. */
NSIM_NODISCARD int nsim_plan_fold_prepare(nsim_topo *t, nsim_plan_req *req,
                                          nsim_fold_info *info,
                                          nsim_err *err);

/* Before planning a Tree AllReduce (a compact plan) in flow fidelity:
 * the ranks of each node's chain to play in *played (req.fold_tree_chain,
 * NSIM_FOLD_TREE_CHAIN), or 0 where the chains are played whole (nodes
 * of fewer than twice that many ranks or of different sizes, GPUs not
 * alike). Fails only when out of memory. */
NSIM_NODISCARD int nsim_plan_tree_chain(nsim_topo *t,
                                        const nsim_plan_req *req,
                                        uint32_t *played);

/* Folds p in place when it repeats (see above); otherwise leaves it as
 * it is and says why in info->why_not. Only a compact plan
 * (req.compact_ops) folds: its twins share their op arrays. An AllToAll
 * planned for one host's senders (nsim_plan_fold_prepare) gets its
 * receiving host. Fails only when out of memory (p is then unchanged). */
NSIM_NODISCARD int nsim_plan_fold(nsim_topo *t, nsim_plan *p,
                                  nsim_fold_info *info, nsim_err *err);

#endif
