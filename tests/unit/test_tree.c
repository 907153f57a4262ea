/* SPDX-License-Identifier: MIT
 *
 * test_tree.c - Tree AllReduce: NCCL's double binary tree, hand counts of
 * bytes per connection on 1, 2, 3 and 4 hosts, chunk sizes, the tuner's
 * tree model and picks, end-to-end runs on the executor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/exec.h"
#include "sim/plan/fold.h"
#include "sim/plan/plan.h"
#include "sim/plan/plan_int.h"
#include "sim/plan/tune.h"
#include "sim/topo/cluster.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static nsim_plan_req tree_req(uint64_t bytes, uint32_t nch, nsim_proto pr)
{
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_TREE, pr, bytes, 4, nch,
                       1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    return r;
}

static nsim_topo *hosts(uint32_t h)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_SWITCH, 0, 1, 0, 0, 0};
    if (h == 1)
        NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    else
        NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", h, &cfg, &t, &err));
    return t;
}

/* Every host but the root has one parent that lists it as its child
 * d0 or d1 (child type), for both trees and 1..17 hosts; tree 1 is the
 * mirror (even) or the shift (odd) of tree 0. */
static void test_dtree_shape(void)
{
    for (int n = 1; n <= 17; n++)
        for (int tr = 0; tr < 2; tr++) {
            int roots = 0;
            for (int i = 0; i < n; i++) {
                int u, d0, d1, ct, pu, pd0, pd1, pct;
                nsim__plan_dtree(n, i, tr, &u, &d0, &d1, &ct);
                if (u < 0) {
                    roots++;
                    continue;
                }
                nsim__plan_dtree(n, u, tr, &pu, &pd0, &pd1, &pct);
                CU_ASSERT(ct == 0 ? pd0 == i : pd1 == i);
            }
            CU_ASSERT_EQUAL(roots, 1);
        }
    int u, d0, d1, ct;
    nsim__plan_dtree(4, 0, 0, &u, &d0, &d1, &ct); /* root, one child 2 */
    CU_ASSERT(u == -1 && d0 == -1 && d1 == 2);
    nsim__plan_dtree(4, 2, 0, &u, &d0, &d1, &ct);
    CU_ASSERT(u == 0 && d0 == 1 && d1 == 3 && ct == 1);
    nsim__plan_dtree(4, 3, 1, &u, &d0, &d1, &ct); /* mirror: 3 is root */
    CU_ASSERT(u == -1 && d1 == 1);
    nsim__plan_dtree(3, 1, 1, &u, &d0, &d1, &ct); /* shift: 1 is root */
    CU_ASSERT(u == -1 && d1 == 0);
}

/* Sum of the payload each connection carries: the sender lane sends
 * every op's bytes on each of its send connections. */
static uint64_t conn_bytes(const nsim_plan *p, uint32_t ci)
{
    const nsim_plan_lane *l = &p->lanes[p->conns[ci].send_lane];
    uint64_t b = 0;
    for (uint32_t i = 0; i < l->nops; i++)
        if (l->ops[i].prim & NSIM_PRIM_SEND)
            b += l->ops[i].bytes;
    return b;
}

/* Hand count, 8 MiB on 2 channels (one per tree), 8 GPUs per host:
 * per channel 2(n-1) connections (an up and a down one per tree edge),
 * each carrying the channel's 4 MiB once; 2(H-1) of them cross hosts;
 * chunk 512 KiB halved while 8 MiB / (2 x chunk) < 8 x depth (depth
 * 7 + log2 H): 128 KiB on 1-3 hosts, then < 4 x depth: 64 KiB on 4. */
static void test_hand_count_hosts(void)
{
    static const uint64_t chunk[5] = {0, 131072, 131072, 131072, 65536};
    for (uint32_t h = 1; h <= 4; h++) {
        nsim_err err = {0};
        nsim_topo *t = hosts(h);
        nsim_plan *p = NULL;
        nsim_plan_req r = tree_req(8u << 20, 2, NSIM_PROTO_SIMPLE);
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
        uint32_t n = p->nranks;
        CU_ASSERT_EQUAL(n, 8 * h);
        CU_ASSERT_EQUAL(p->nchannels, 2);
        CU_ASSERT_EQUAL(p->chunk_bytes, chunk[h]);
        CU_ASSERT_EQUAL(p->nconns, 2 * 2 * (n - 1));
        uint32_t net = 0, copied[2] = {0, 0};
        for (uint32_t i = 0; i < p->nconns; i++) {
            CU_ASSERT_EQUAL(conn_bytes(p, i), 4u << 20);
            net += p->conns[i].transport == NSIM_TRANSPORT_NET;
        }
        CU_ASSERT_EQUAL(net, 2 * 2 * (h - 1));
        for (uint32_t i = 0; i < p->nlanes; i++) {
            const nsim_plan_lane *l = &p->lanes[i];
            uint64_t out = 0;
            CU_ASSERT(l->nrecv_more <= 2 && l->nsend_more <= 2);
            for (uint32_t k = 0; k < l->nops; k++)
                if (l->ops[k].prim & NSIM_PRIM_COPY_OUT)
                    out += l->ops[k].bytes;
            if (out != 0) {
                CU_ASSERT_EQUAL(out, 4u << 20); /* every rank gets it all */
                CU_ASSERT_EQUAL(l->nops, (4u << 20) / chunk[h]);
                copied[l->channel]++;
            }
        }
        CU_ASSERT(copied[0] == n && copied[1] == n);
        nsim_plan_destroy(p);
        nsim_topo_destroy(t);
    }
}

/* 4 hosts, channel 0 (tree 0): host 1 (chain[0] = rank 8) hangs under
 * host 2's chain[1] (rank 17, child type 0); hosts 2 and 3 under
 * chain[0] of hosts 0 and 2 (child type 1). Channel 1 (tree 1, mirror):
 * host 3 is the root, so rank 24's up connection does not exist. */
static void test_inter_host_edges(void)
{
    nsim_err err = {0};
    nsim_topo *t = hosts(4);
    nsim_plan *p = NULL;
    nsim_plan_req r = tree_req(8u << 20, 2, NSIM_PROTO_SIMPLE);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    uint32_t parent[2][32];
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t i = 0; i < 32; i++)
            parent[c][i] = UINT32_MAX;
    for (uint32_t i = 0; i < p->nconns; i += 2) /* (up, down) pairs */
        parent[p->conns[i].channel][p->conns[i].from] = p->conns[i].to;
    CU_ASSERT_EQUAL(parent[0][8], 17);
    CU_ASSERT_EQUAL(parent[0][16], 0);
    CU_ASSERT_EQUAL(parent[0][24], 16);
    CU_ASSERT_EQUAL(parent[0][0], UINT32_MAX);
    CU_ASSERT_EQUAL(parent[0][9], 8); /* intra chain */
    CU_ASSERT_EQUAL(parent[1][24], UINT32_MAX);
    CU_ASSERT_EQUAL(parent[1][0], 8); /* mirror: host 0 under host 1, type 1 */
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* NCCL's tree model by hand, 2 x DGX H100 (graph 8 x 45 GB/s, sm90):
 * Simple busBw min(0.92 x 360, 8 x 41.4) = 331.2, algBw 165.6, x 0.9 at
 * 256 MiB; latency 8.4 + 2 x (7 x 4.0 + 1 x 14) = 92.4 us. */
static void test_tuner_tree(void)
{
    /* NVSwitches without NVLS: the tuner chooses between Tree and Ring */
    nsim_topo *t = nsim_test_without_nvls(hosts(2));
    nsim_topo *one = nsim_test_without_nvls(hosts(1));
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    CU_ASSERT_EQUAL(g.nchannels, 8);
    /* the search finds 8 x 48 (crossNic 2; test_search), the tree model
     * caps at 8 x 41.4 either way */
    CU_ASSERT_DOUBLE_EQUAL(g.bw_intra, 48, 1e-9);
    double us = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_TREE,
                                  NSIM_PROTO_SIMPLE, 256u << 20);
    CU_ASSERT_DOUBLE_EQUAL(us, 92.4 + 268435456.0 / (1000 * 165.6 * 0.9),
                           1e-6);
    CU_ASSERT_EQUAL(nsim_tune_time_us(&g, NSIM_COLL_ALLGATHER, NSIM_ALGO_TREE,
                                      NSIM_PROTO_SIMPLE, 1 << 20), -1);
    nsim_err err = {0};
    nsim_algo a;
    nsim_proto pr;
    /* 2 hosts: Tree/LL small, Tree/LL128 medium, Ring large */
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 1024, 0, 0, &a, &pr,
                                  &us, &err));
    CU_ASSERT(a == NSIM_ALGO_TREE && pr == NSIM_PROTO_LL);
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 4u << 20, 0, 0, &a,
                                  &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_TREE && pr == NSIM_PROTO_LL128);
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 256u << 20, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_RING);
    /* 1 host: the chain is slower than the ring at every size */
    for (uint64_t b = 8; b <= (1u << 30); b *= 8) {
        a = NSIM_ALGO_RING;
        NSIM_ASSERT_OK(nsim_tune_pick(one, NSIM_COLL_ALLREDUCE, b, 0, 0, &a,
                                      &pr, &us, &err));
        CU_ASSERT(a != NSIM_ALGO_TREE);
    }
    /* Tree forced: the protocol is still NCCL's pick */
    a = NSIM_ALGO_TREE;
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 1024, 1, 0, &a, &pr,
                                  &us, &err));
    CU_ASSERT(a == NSIM_ALGO_TREE && pr == NSIM_PROTO_LL && us > 0);
    nsim_topo_destroy(t);
    nsim_topo_destroy(one);
}

/* End to end: every connection carries what the plan says, every rank's
 * thread blocks finish (no deadlock with 3-way receives), for each
 * protocol on 2 hosts and Simple on 3. */
static void test_end_to_end(void)
{
    static const struct {
        uint32_t h;
        nsim_proto pr;
    } cases[] = {{2, NSIM_PROTO_SIMPLE}, {2, NSIM_PROTO_LL},
                 {2, NSIM_PROTO_LL128}, {3, NSIM_PROTO_SIMPLE},
                 {1, NSIM_PROTO_SIMPLE}};
    nsim_params prm;
    nsim_params_defaults(&prm);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nsim_err err = {0};
        nsim_topo *t = hosts(cases[i].h);
        nsim_plan *p = NULL;
        nsim_plan_req r = tree_req(2u << 20, 4, cases[i].pr);
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
        nsim_exec_opts o = {1, 1, NULL};
        nsim_exec_result res;
        NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
        CU_ASSERT(res.time_ps > 0);
        CU_ASSERT_EQUAL(res.bytes_moved,
                        2ull * (p->nranks - 1) * (2u << 20));
        for (uint32_t c = 0; c < p->nconns; c++)
            CU_ASSERT_EQUAL(res.conns[c].bytes, conn_bytes(p, c));
        nsim_exec_result_free(&res);
        nsim_plan_destroy(p);
        nsim_topo_destroy(t);
    }
}

/* A folded tree plays, for each role whose hosts' routes to their
 * parents differ, the one with the slowest route: on 64 hosts, hosts of
 * one role as up_lat gives them (a route across the spine to a parent
 * on another leaf of 8 hosts). With latencies all alike the breadth
 * first choice stands: the same hosts as without any. */
static void test_fold_slowest_route(void)
{
    enum { N = 64 };
    nsim_err err = {0}; /* NSIM_ASSERT_OK prints it */
    uint8_t played[N], played_bfs[N];
    uint32_t rep[2 * N], rep_bfs[2 * N], np, np_bfs, nslow;
    nsim_time lat[2 * N], alike[2 * N];
    for (int t = 0; t < 2; t++)
        for (int x = 0; x < N; x++) {
            int u, d0, d1, ct;
            nsim__plan_dtree(N, x, t, &u, &d0, &d1, &ct);
            alike[t * N + x] = u < 0 ? 0 : 1000;
            lat[t * N + x] = u < 0 ? 0 : x / 8 != u / 8 ? 2000 : 1000;
        }
    NSIM_ASSERT_OK(nsim__plan_tree_fold(N, NULL, 0, NULL, played_bfs,
                                        rep_bfs, &np_bfs, &nslow));
    CU_ASSERT_EQUAL(nslow, 0);
    NSIM_ASSERT_OK(nsim__plan_tree_fold(N, NULL, 0, alike, played, rep,
                                        &np, &nslow));
    CU_ASSERT_EQUAL(nslow, 0);
    CU_ASSERT_EQUAL(np, np_bfs);
    CU_ASSERT(memcmp(played, played_bfs, N) == 0);
    NSIM_ASSERT_OK(nsim__plan_tree_fold(N, NULL, 0, lat, played, rep, &np,
                                        &nslow));
    CU_ASSERT(np < N && nslow > 0);
    uint32_t crossing_roles = 0;
    for (int t = 0; t < 2; t++)
        for (int x = 0; x < N; x++) {
            uint32_t s = rep[t * N + x];
            CU_ASSERT_FATAL(s < N && played[s]);
            /* the stand-in's route is at least as slow as x's, and a
             * breadth first stand-in of a crossing host may not be */
            CU_ASSERT(lat[t * N + s] >= lat[t * N + x]);
            crossing_roles += lat[t * N + x] > lat[t * N + rep_bfs[t * N + x]];
        }
    fprintf(stderr, "\n  64 hosts: %u played (breadth first %u), %u roles "
                    "by their slowest route; %u hosts whose breadth first "
                    "stand-in had a faster route\n",
            np, np_bfs, nslow, crossing_roles);
    CU_ASSERT(crossing_roles > 0);
}

/* GPU time of a Tree AllReduce on t in flow fidelity, each node's chain
 * played to `extra` ranks past where its channels' chains start (0:
 * whole); *played: the ranks of a node's chain the plan played (0:
 * all), *ranks_with_ops: the ranks of channel 0 with ops. */
static nsim_time tree_chain_run(nsim_topo *t, uint32_t extra,
                                uint32_t *played, uint32_t *ranks_with_ops)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_params_defaults(&prm);
    nsim_plan *p = NULL;
    nsim_plan_req r = tree_req(4u << 20, 4, NSIM_PROTO_SIMPLE);
    r.compact_ops = 1;
    r.fold_tree_chain = extra;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    *played = p->tree_chain_played;
    *ranks_with_ops = 0;
    for (uint32_t l = 0; l < p->nlanes; l++)
        *ranks_with_ops += p->lanes[l].channel == 0 && p->lanes[l].nops > 0 &&
                           p->lanes[l].shares_sm == 0;
    nsim_exec_opts o = {1, 0, NULL};
    o.fidelity = NSIM_FIDELITY_FLOW;
    nsim_exec_result res;
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    nsim_time gpu = res.gpu_ps;
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    return gpu;
}

/* Two NVL72 racks (NCCL nodes of 72 ranks): their Tree chains fold
 * (nsim_plan_tree_chain), a chain played short ends past the ranks its
 * channels' chains start at (4 channels: 2, and the head) by the ranks
 * asked for, and the whole chains' time extrapolated from the two
 * lengths (per rank, the delay between them) lies within 1 % of the
 * whole run's. One rack, hosts of 8 GPUs, rings and plans that keep
 * their placement do not fold their chains. */
static void test_chain_fold_domains(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL, *one = NULL, *h = hosts(4);
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("gb200-nvl", 36, &cfg, &t, &err));
    NSIM_ASSERT_OK(nsim_cluster_build("gb200-nvl", 18, &cfg, &one, &err));
    CU_ASSERT_EQUAL_FATAL(nsim_topo_nnodes(t), 2);
    nsim_plan_req r = tree_req(4u << 20, 4, NSIM_PROTO_SIMPLE);
    uint32_t k = 99;
    NSIM_ASSERT_OK(nsim_plan_tree_chain(t, &r, &k));
    CU_ASSERT_EQUAL(k, 0); /* placement kept */
    r.compact_ops = 1;
    NSIM_ASSERT_OK(nsim_plan_tree_chain(t, &r, &k));
    CU_ASSERT_EQUAL(k, NSIM_FOLD_TREE_CHAIN);
    NSIM_ASSERT_OK(nsim_plan_tree_chain(one, &r, &k));
    CU_ASSERT_EQUAL(k, 0); /* one node */
    NSIM_ASSERT_OK(nsim_plan_tree_chain(h, &r, &k));
    CU_ASSERT_EQUAL(k, 0); /* 8 ranks a node */
    r.algo = NSIM_ALGO_RING;
    NSIM_ASSERT_OK(nsim_plan_tree_chain(t, &r, &k));
    CU_ASSERT_EQUAL(k, 0);
    uint32_t p_whole, p_long, p_short, n_whole, n_long, n_short;
    nsim_time whole = tree_chain_run(t, 0, &p_whole, &n_whole);
    nsim_time lng = tree_chain_run(t, NSIM_FOLD_TREE_CHAIN, &p_long, &n_long);
    nsim_time shrt =
        tree_chain_run(t, NSIM_FOLD_TREE_CHAIN_SHORT, &p_short, &n_short);
    CU_ASSERT_EQUAL(p_whole, 0);
    CU_ASSERT_EQUAL(p_long, 2 + 1 + NSIM_FOLD_TREE_CHAIN);
    CU_ASSERT_EQUAL(p_short, 2 + 1 + NSIM_FOLD_TREE_CHAIN_SHORT);
    CU_ASSERT_EQUAL(n_whole, 144);
    CU_ASSERT_EQUAL(n_long, 2 * p_long);
    CU_ASSERT_EQUAL(n_short, 2 * p_short);
    CU_ASSERT_FATAL(lng > shrt && whole > lng);
    double per = (double)(lng - shrt) / (p_long - p_short);
    double est = (double)lng + per * (72 - p_long);
    fprintf(stderr, "\n  2 NVL72 racks, Tree 4 MiB, 4 channels: whole %.2f "
                    "us, chains of %u / %u ranks %.2f / %.2f us, %.3f us a "
                    "rank, extrapolated %.2f us (%+.2f %%)\n",
            (double)whole / 1e6, p_long, p_short, (double)lng / 1e6,
            (double)shrt / 1e6, per / 1e6, est / 1e6,
            (est / (double)whole - 1) * 100);
    CU_ASSERT(fabs(est / (double)whole - 1) < 0.01);
    nsim_topo_destroy(t);
    nsim_topo_destroy(one);
    nsim_topo_destroy(h);
}

CU_TestInfo nsim_test_tree[] = {
    {"ncclGetBtree / ncclGetDtree shapes, 1..17 hosts", test_dtree_shape},
    {"hand count: bytes per connection on 1-4 hosts", test_hand_count_hosts},
    {"inter-host edges of trees 0 and 1 on 4 hosts", test_inter_host_edges},
    {"tuner: NCCL's tree model and picks", test_tuner_tree},
    {"end to end: Simple, LL, LL128 on 1-3 hosts", test_end_to_end},
    {"fold: each role played by its slowest route", test_fold_slowest_route},
    {"fold: NVLink domains' chains played short, twice",
     test_chain_fold_domains},
    CU_TEST_INFO_NULL,
};
