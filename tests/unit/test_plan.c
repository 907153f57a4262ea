/* SPDX-License-Identifier: MIT
 *
 * test_plan.c - the planner: the ring AllReduce cut against a hand count
 * of steps, slices and bytes; rings and transports on the presets; channel
 * counts; errors for requests that cannot be planned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/exec.h"
#include "sim/plan/plan.h"
#include "sim/plan/tune.h"
#include "sim/topo/cluster.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static nsim_plan_req req_of(uint64_t bytes, uint32_t nch)
{
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       bytes, 4, nch, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    return r;
}

/* Hand count: 8 ranks, 1 channel, 64 MiB: chunk 2 MiB, loop 16 MiB ->
 * 4 loops; per loop 2n-1 = 15 primitives x 2 slices of 1 MiB; sends
 * 2(n-1) = 14 per loop, receives 14 per loop. */
static void test_hand_count(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_req r = req_of(64u << 20, 1);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 1);
    CU_ASSERT_EQUAL(p->step_bytes, 512 * 1024);
    CU_ASSERT_EQUAL(p->slice_bytes, 1024 * 1024);
    CU_ASSERT_EQUAL(p->chunk_bytes, 2 * 1024 * 1024);
    for (uint32_t rank = 0; rank < 8; rank++) {
        const nsim_plan_lane *l = &p->lanes[rank];
        uint32_t sends = 0, recvs = 0;
        uint64_t sent = 0, rcvd = 0;
        CU_ASSERT_EQUAL(l->nops, 4 * 15 * 2);
        for (uint32_t i = 0; i < l->nops; i++) {
            const nsim_plan_op *op = &l->ops[i];
            CU_ASSERT(op->bytes == 1024 * 1024);
            if (op->prim & NSIM_PRIM_SEND) {
                sends++;
                sent += op->bytes;
            }
            if (op->prim & NSIM_PRIM_RECV) {
                recvs++;
                rcvd += op->bytes;
            }
        }
        CU_ASSERT_EQUAL(sends, 4 * 14 * 2);
        CU_ASSERT_EQUAL(recvs, 4 * 14 * 2);
        /* each rank sends 2(n-1)/n of the buffer and receives as much */
        CU_ASSERT_EQUAL(sent, (uint64_t)(64u << 20) / 8 * 14);
        CU_ASSERT_EQUAL(rcvd, sent);
        /* first op sends, last op only receives and copies out */
        CU_ASSERT_EQUAL(l->ops[0].prim, NSIM_PRIM_SEND);
        CU_ASSERT_EQUAL(l->ops[l->nops - 1].prim,
                        NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT);
    }
    /* every byte of the buffer is reduced once per rank: the chunks a rank
     * finishes (recvReduceCopySend) cover 1/n of the buffer */
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* A size that does not fill a loop: the last chunk shrinks and empty
 * slices are still posted (nccl-internals 3.3). */
static void test_partial_loop_and_empty_slices(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_req r = req_of(40 * 1024, 1); /* 40 KiB over 8 ranks */
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    const nsim_plan_lane *l = &p->lanes[0];
    CU_ASSERT_EQUAL(l->nops, 15 * 2);
    uint64_t total = 0;
    uint32_t empty = 0;
    for (uint32_t i = 0; i < l->nops; i++) {
        total += l->ops[i].bytes;
        empty += l->ops[i].bytes == 0;
    }
    CU_ASSERT(empty > 0);
    /* 15 primitives over 5 KiB chunks */
    CU_ASSERT_EQUAL(total, 15 * 5 * 1024);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static void test_rings_and_transports(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    CU_ASSERT_EQUAL(nsim_plan_default_channels(t), 16);
    nsim_plan_req r = req_of(1u << 30, 0);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 16);
    uint32_t net = 0;
    uint32_t nic_use[64] = {0};
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        if (c->transport != NSIM_TRANSPORT_NET) {
            CU_ASSERT_EQUAL(c->path, NSIM_PATH_NVL);
            continue;
        }
        net++;
        /* rail aligned: both NICs on the same rail */
        CU_ASSERT_EQUAL(nsim_topo_device(t, c->send_nic)->rail,
                        nsim_topo_device(t, c->recv_nic)->rail);
        nic_use[c->send_nic % 64]++;
    }
    CU_ASSERT_EQUAL(net, 2 * 16); /* two host crossings per ring */
    /* channels spread over the NICs: each NIC sends for 2 channels */
    for (uint32_t i = 0; i < 64; i++)
        CU_ASSERT(nic_use[i] == 0 || nic_use[i] == 2);
    /* ring 0 from NCCL's search, exactly file 21's channel 0:
     * 0 7 6 5 4 3 2 1 9 10 11 12 13 14 15 8 */
    static const uint32_t want[16] = {0, 7, 6,  5,  4,  3,  2,  1,
                                      9, 10, 11, 12, 13, 14, 15, 8};
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(p->ring[i], want[i]);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static void test_default_channels(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    /* 18 x 20.6 = 370.8 GB/s: 6 x 60, duplicated to 12, doubled: 24 */
    CU_ASSERT_EQUAL(nsim_plan_default_channels(t), 24);
    nsim_topo_destroy(t);
}


static nsim_plan *plan_of(nsim_topo *t, nsim_coll c, uint64_t bytes,
                          uint32_t nch, uint32_t root)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_plan_req r = req_of(bytes, nch);
    r.coll = c;
    r.root = root;
    if (nsim_plan_build(t, &r, &p, &err) != NSIM_OK) {
        fprintf(stderr, "plan: %s\n", err.msg);
        return NULL;
    }
    return p;
}

typedef struct lane_count {
    uint32_t sends, recvs;
    uint64_t sent, rcvd;
} lane_count;

static lane_count count_lane(const nsim_plan_lane *l)
{
    lane_count k = {0};
    for (uint32_t i = 0; i < l->nops; i++) {
        if (l->ops[i].prim & NSIM_PRIM_SEND) {
            k.sends++;
            k.sent += l->ops[i].bytes;
        }
        if (l->ops[i].prim & NSIM_PRIM_RECV) {
            k.recvs++;
            k.rcvd += l->ops[i].bytes;
        }
    }
    return k;
}

/* AllGather / ReduceScatter, 8 ranks, 1 channel, 64 MiB (8 MiB blocks):
 * chunks of 2 MiB -> 4 loops of n = 8 primitives x 2 slices; n-1 = 7
 * sends and receives per loop; each rank sends (n-1)/n of the buffer. */
static void test_allgather_reducescatter_hand_count(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    for (int rs = 0; rs < 2; rs++) {
        nsim_plan *p = plan_of(t, rs ? NSIM_COLL_REDUCESCATTER
                                     : NSIM_COLL_ALLGATHER,
                               64u << 20, 1, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->chunk_steps, 4);
        CU_ASSERT_EQUAL(p->slice_steps, 2);
        CU_ASSERT_EQUAL(p->chan_bytes[0], 8u << 20);
        for (uint32_t rank = 0; rank < 8; rank++) {
            const nsim_plan_lane *l = &p->lanes[rank];
            lane_count k = count_lane(l);
            CU_ASSERT_EQUAL(l->nops, 4 * 8 * 2);
            CU_ASSERT_EQUAL(k.sends, 4 * 7 * 2);
            CU_ASSERT_EQUAL(k.recvs, 4 * 7 * 2);
            CU_ASSERT_EQUAL(k.sent, 7ull * (8u << 20));
            CU_ASSERT_EQUAL(k.rcvd, k.sent);
            CU_ASSERT_EQUAL(l->ops[0].prim, NSIM_PRIM_SEND);
            CU_ASSERT_EQUAL(l->ops[l->nops - 1].prim,
                            NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT |
                                (rs ? NSIM_PRIM_REDUCE : 0));
            /* AllGather's first send is the rank's own block;
             * ReduceScatter's last receive is */
            CU_ASSERT_EQUAL(rs ? l->ops[l->nops - 1].chunk : l->ops[0].chunk,
                            rank);
        }
        nsim_plan_destroy(p);
    }
    nsim_topo_destroy(t);
}

/* Broadcast / Reduce from/to root 3, 4 MiB on 1 channel: chunks of one
 * 512 KiB step -> 8 ops per rank; the chain's far end sends nothing and
 * 7 x 4 MiB cross connections. */
static void test_broadcast_reduce_hand_count(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    for (int red = 0; red < 2; red++) {
        nsim_plan *p = plan_of(t, red ? NSIM_COLL_REDUCE : NSIM_COLL_BROADCAST,
                               4u << 20, 1, 3);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->chunk_bytes, 512 * 1024);
        CU_ASSERT_EQUAL(p->slice_steps, 1);
        uint64_t total = 0;
        for (uint32_t rank = 0; rank < 8; rank++) {
            const nsim_plan_lane *l = &p->lanes[rank];
            lane_count k = count_lane(l);
            CU_ASSERT_EQUAL(l->nops, 8);
            total += k.sent;
            uint32_t first = red ? 4 : 3, last = red ? 3 : 2;
            if (rank == first)
                CU_ASSERT_EQUAL(l->ops[0].prim, NSIM_PRIM_SEND);
            if (rank == last) {
                CU_ASSERT_EQUAL(k.sends, 0);
                CU_ASSERT(l->ops[0].prim & NSIM_PRIM_COPY_OUT);
            }
        }
        CU_ASSERT_EQUAL(total, 7ull * (4u << 20));
        nsim_plan_destroy(p);
    }
    nsim_topo_destroy(t);
}

/* SendRecv 256 MiB on a DGX H100 (24 comm channels -> 32 p2p channels;
 * 18 NVLinks -> 36 -> 64 channels per peer; nMin 4; parts double from 4
 * while a part exceeds 32 x 512 KiB: 16 parts of 16 MiB, each 32 ops of
 * one 512 KiB p2p chunk). AllToAll 32 MiB: 4 parts per peer on
 * distinct channels, self copy included. */
static void test_p2p_hand_count(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan *p = plan_of(t, NSIM_COLL_SENDRECV, 256u << 20, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->nchannels, 32);
    CU_ASSERT_EQUAL(p->parts_per_peer, 16);
    CU_ASSERT_EQUAL(p->chunk_bytes, 512 * 1024);
    CU_ASSERT_EQUAL(p->nlanes, 8 * 16 * 2);
    CU_ASSERT_EQUAL(p->nconns, 8 * 16);
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        CU_ASSERT_EQUAL(c->to, (c->from + 1) % 8);
        CU_ASSERT_EQUAL(p->lanes[c->send_lane].nops, 32);
        lane_count k = count_lane(&p->lanes[c->send_lane]);
        CU_ASSERT_EQUAL(k.sent, 16u << 20);
        k = count_lane(&p->lanes[c->recv_lane]);
        CU_ASSERT_EQUAL(k.rcvd, 16u << 20);
    }
    nsim_plan_destroy(p);
    p = plan_of(t, NSIM_COLL_SENDRECV, 32u << 20, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->parts_per_peer, 4);
    nsim_plan_destroy(p);
    p = plan_of(t, NSIM_COLL_ALLTOALL, 32u << 20, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->parts_per_peer, 4);
    CU_ASSERT_EQUAL(p->nconns, 8 * 7 * 4);
    CU_ASSERT_EQUAL(p->nlanes, 8 * (7 * 4 * 2 + 4));
    uint64_t sent = 0;
    uint32_t chan_pairs[32] = {0};
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        sent += count_lane(&p->lanes[c->send_lane]).sent;
        if (c->from == 0)
            chan_pairs[c->channel]++;
    }
    CU_ASSERT_EQUAL(sent, 8ull * 7 * (4u << 20));
    for (uint32_t c = 0; c < 32; c++) /* rank 0: one peer per channel */
        CU_ASSERT(chan_pairs[c] <= 1);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* nccl-tests' sizes and counts (nccl-internals 8.2). */
static void test_nccl_tests_sizes(void)
{
    uint64_t count;
    CU_ASSERT_EQUAL(nsim_coll_test_bytes(NSIM_COLL_ALLGATHER, 8, 4, 1000,
                                         &count), 896);
    CU_ASSERT_EQUAL(count, 28);
    CU_ASSERT_EQUAL(nsim_coll_test_bytes(NSIM_COLL_ALLTOALL, 8, 8, 33554432,
                                         &count), 33554432);
    CU_ASSERT_EQUAL(count, 524288);
    CU_ASSERT_EQUAL(nsim_coll_test_bytes(NSIM_COLL_BROADCAST, 8, 4, 1000,
                                         &count), 1000);
    CU_ASSERT_EQUAL(count, 250);
    CU_ASSERT_DOUBLE_EQUAL(nsim_coll_busbw_factor(NSIM_COLL_ALLGATHER, 8),
                           7.0 / 8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(nsim_coll_busbw_factor(NSIM_COLL_SENDRECV, 8), 1.0,
                           1e-12);
    CU_ASSERT_STRING_EQUAL(nsim_coll_test_name(NSIM_COLL_REDUCESCATTER),
                           "reduce_scatter_perf");
}


/* Protocol cuts (nccl-internals 3.2-3.4): LL 32 KiB of data per 64 KiB
 * step, LL128 576,000 per 614,400; 1/1 steps; lines on the wire; LL128
 * refused without NVLink. */
static void test_protocol_cuts(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL, *pci = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_req r = req_of(1u << 20, 1);
    r.proto = NSIM_PROTO_LL;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->chunk_bytes, 32768);
    CU_ASSERT_EQUAL(p->chunk_steps, 1);
    CU_ASSERT_EQUAL(nsim_plan_wire_bytes(p, 32768), 65536);
    CU_ASSERT_EQUAL(nsim_plan_wire_bytes(p, 4), 16);
    /* 1 MiB over 8 ranks: 8 loops of 15 primitives of 16 KiB */
    CU_ASSERT_EQUAL(p->lanes[0].nops, 4 * 15);
    nsim_plan_destroy(p);
    r.proto = NSIM_PROTO_LL128;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->chunk_bytes, 576000);
    CU_ASSERT_EQUAL(p->nthreads, 640);
    CU_ASSERT_EQUAL(nsim_plan_wire_bytes(p, 576000), 614400);
    nsim_plan_destroy(p);
    CU_ASSERT_PTR_NULL(nsim_plan_ll128_refusal(t));
    NSIM_ASSERT_OK(nsim_topo_load(NSIM_SOURCE_DIR "/tests/data/pcie-2gpu.topo.json",
                                  &pci, &err));
    CU_ASSERT_PTR_NOT_NULL(nsim_plan_ll128_refusal(pci));
    r.nchannels = 1;
    CU_ASSERT_EQUAL(nsim_plan_build(pci, &r, &p, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NVLink"));
    /* LL drops channels below nc x 512 threads x 8 B x nranks */
    r = req_of(64 * 1024, 16);
    r.proto = NSIM_PROTO_LL;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 2);
    nsim_plan_destroy(p);
    nsim_topo_destroy(pci);
    nsim_topo_destroy(t);
}


/* NCCL's worked example (nccl-internals 4.4): 8 H100 on one host, graph
 * 12 x 30 GB/s NVL: Ring AllReduce latencies 15.0 / 40.6 / 56.0 us and
 * algorithm bandwidths 80.6 / 189.3 / 205.7 GB/s for LL / LL128 /
 * Simple; the tuner picks LL small, Simple large; forced pairs NCCL
 * would not run are refused with the constraint. */
static void test_tuner_worked_example(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL, *pci = NULL;
    nsim_plan_graph g;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_graph_get(t, &g);
    CU_ASSERT_EQUAL(g.nchannels, 12);
    CU_ASSERT_DOUBLE_EQUAL(g.bw_intra, 30, 1e-9);
    CU_ASSERT_EQUAL(g.type_intra, NSIM_PATH_NVL);
    const nsim_proto pr[3] = {NSIM_PROTO_LL, NSIM_PROTO_LL128,
                              NSIM_PROTO_SIMPLE};
    const double lat[3] = {15.0, 40.6, 56.0}, alg[3] = {80.57, 189.26, 205.71};
    for (int i = 0; i < 3; i++) {
        double t0 = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING,
                                      pr[i], 0);
        double t1 = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING,
                                      pr[i], 1000000000ull);
        CU_ASSERT_DOUBLE_EQUAL(t0, lat[i], 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(1e9 / 1e3 / (t1 - t0), alg[i], 0.01);
    }
    nsim_algo a = NSIM_ALGO_RING;
    nsim_proto p = NSIM_PROTO_SIMPLE;
    double us;
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 8, 0, 0, &a, &p, &us,
                                  &err));
    CU_ASSERT_EQUAL(p, NSIM_PROTO_LL);
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0, &a,
                                  &p, &us, &err));
    CU_ASSERT_EQUAL(p, NSIM_PROTO_SIMPLE);
    CU_ASSERT_EQUAL(nsim_tune_check(t, NSIM_COLL_ALLGATHER, NSIM_ALGO_TREE,
                                    NSIM_PROTO_SIMPLE, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "allreduce only"));
    NSIM_ASSERT_OK(nsim_topo_load(NSIM_SOURCE_DIR "/tests/data/pcie-2gpu.topo.json",
                                  &pci, &err));
    CU_ASSERT_EQUAL(nsim_tune_check(pci, NSIM_COLL_ALLREDUCE, NSIM_ALGO_NVLS,
                                    NSIM_PROTO_SIMPLE, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sm >= 90"));
    /* the tuner never picks LL128 where it is not allowed */
    NSIM_ASSERT_OK(nsim_tune_pick(pci, NSIM_COLL_ALLREDUCE, 16u << 20, 0, 0,
                                  &a, &p, &us, &err));
    CU_ASSERT_NOT_EQUAL(p, NSIM_PROTO_LL128);
    nsim_topo_destroy(pci);
    nsim_topo_destroy(t);
}

static void test_bad_requests(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_req r = req_of(1001, 1); /* not a multiple of 4 */
    CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "multiple of the type size"));
    r = req_of(1024, 1);
    r.qps_per_conn = 0;
    CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EINVAL);
    r = req_of(1024, 65);
    CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EINVAL);
    r = req_of(1024, 1);
    r.coll = NSIM_COLL_REDUCE;
    r.root = 8;
    CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "root 8"));
    r = req_of(1024, 1);
    r.buffsize = 1000;
    CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EINVAL);
    CU_ASSERT_PTR_NULL(p);
    nsim_topo_destroy(t);
}

/* The executor gives the same time, events and bytes from both plans. */
static void assert_same_run(nsim_topo *t, const nsim_plan *a,
                            const nsim_plan *b)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_params_defaults(&prm);
    nsim_exec_opts o = {1, 0, NULL};
    nsim_exec_result ra, rb;
    NSIM_ASSERT_OK(nsim_exec_run(t, a, &prm, &o, &ra, &err));
    NSIM_ASSERT_OK(nsim_exec_run(t, b, &prm, &o, &rb, &err));
    CU_ASSERT_EQUAL(ra.time_ps, rb.time_ps);
    CU_ASSERT_EQUAL(ra.events, rb.events);
    CU_ASSERT_EQUAL(ra.bytes_moved, rb.bytes_moved);
    nsim_exec_result_free(&ra);
    nsim_exec_result_free(&rb);
}

/* compact_ops: the same ops without placement, ring and tree lanes that
 * then match share one array (AllReduce and AllGather rings, the Tree:
 * far fewer arrays than the 16 channels x 16 ranks; an AllReduce whose
 * size does not divide evenly gives each ring position its own ops, then
 * shared by the channels of the same byte count), and the executor
 * gives the same result from either. */
static void test_compact_ops(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    const nsim_coll colls[] = {NSIM_COLL_ALLREDUCE, NSIM_COLL_ALLGATHER,
                               NSIM_COLL_BROADCAST, NSIM_COLL_ALLREDUCE,
                               NSIM_COLL_ALLREDUCE};
    for (size_t k = 0; k < 5; k++) {
        /* k == 4: 3,000,000 floats, uneven over 16 ranks' chunks */
        nsim_plan_req r = req_of(k == 4 ? 12000000u : 64u << 20, 16);
        r.coll = colls[k];
        if (k == 3)
            r.algo = NSIM_ALGO_TREE; /* lanes share by role */
        nsim_plan *full = NULL, *cp = NULL;
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &full, &err));
        r.compact_ops = 1;
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &cp, &err));
        CU_ASSERT_EQUAL_FATAL(full->nlanes, cp->nlanes);
        uint32_t owners = 0;
        uint32_t patched = 0;
        for (uint32_t i = 0; i < cp->nlanes; i++) {
            const nsim_plan_lane *a = &full->lanes[i], *b = &cp->lanes[i];
            owners += !b->ops_shared;
            patched += b->npatch > 0;
            CU_ASSERT_EQUAL(a->npatch, 0);
            CU_ASSERT_EQUAL_FATAL(a->nops, b->nops);
            for (uint32_t j = 0; j < a->nops; j++) {
                const nsim_plan_op *x = &a->ops[j];
                const nsim_plan_op *y = nsim_plan_lane_op(b, j);
                CU_ASSERT_EQUAL(x->prim, y->prim);
                CU_ASSERT_EQUAL(x->slice, y->slice);
                /* a compact chain leaves out each rank's place along
                 * it (the step), so that its middle ranks share */
                if (colls[k] == NSIM_COLL_BROADCAST) {
                    CU_ASSERT_EQUAL(y->step, 0);
                } else {
                    CU_ASSERT_EQUAL(x->step, y->step);
                }
                CU_ASSERT_EQUAL(x->bytes, y->bytes);
                CU_ASSERT_EQUAL(y->offset, 0);
                CU_ASSERT_EQUAL(y->chunk, 0);
            }
        }
        /* a Broadcast chain: the first, the middle and the last ranks'
         * ops, per channel at most */
        if (colls[k] == NSIM_COLL_BROADCAST) {
            CU_ASSERT(owners >= 1 && owners <= 3 * cp->nchannels);
        } else {
            CU_ASSERT(owners >= 1 && owners < cp->nlanes / 4);
        }
        if (k == 4) {
            /* every position's ops differ where its short chunk falls:
             * one array per distinct channel byte count, and patches */
            uint32_t distinct = 0;
            for (uint32_t c = 0; c < cp->nchannels; c++) {
                uint32_t j = 0;
                while (cp->chan_bytes[j] != cp->chan_bytes[c])
                    j++;
                distinct += j == c;
            }
            CU_ASSERT(owners >= 1);
            CU_ASSERT(owners <= distinct);
            CU_ASSERT(distinct < cp->nchannels);
            CU_ASSERT(patched > cp->nlanes / 2);
        } else {
            CU_ASSERT_EQUAL(patched, 0);
        }
        assert_same_run(t, full, cp);
        nsim_plan_destroy(full);
        nsim_plan_destroy(cp);
    }
    nsim_topo_destroy(t);
}

/* An uneven ring AllReduce in a compact plan: positions share one array
 * and keep patches, whose ops are the whole plan's op for op (without
 * placement), at rank counts that are not powers of two, sizes of one
 * and several loops, few short or empty chunks and as many empty as
 * full (each position keeps its own array then), each protocol; the compact plan holds a
 * fraction of the whole one's bytes, and runs the same. */
static void test_compact_uneven(void)
{
    nsim_err err = {0};
    const uint32_t nodes[] = {3, 6};
    const uint64_t sizes[] = {12000000, (100u << 20) + 48, 4000, 768,
                              1u << 20};
    const nsim_proto protos[] = {NSIM_PROTO_SIMPLE, NSIM_PROTO_LL,
                                 NSIM_PROTO_LL128};
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    for (size_t h = 0; h < 2; h++) {
        nsim_topo *t = NULL;
        NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", nodes[h], &cfg, &t,
                                          &err));
        for (size_t z = 0; z < 5; z++)
            for (size_t q = 0; q < 3; q++) {
                nsim_plan_req r = req_of(sizes[z], 4);
                r.proto = protos[q];
                nsim_plan *full = NULL, *cp = NULL;
                NSIM_ASSERT_OK(nsim_plan_build(t, &r, &full, &err));
                r.compact_ops = 1;
                NSIM_ASSERT_OK(nsim_plan_build(t, &r, &cp, &err));
                CU_ASSERT_EQUAL_FATAL(full->nlanes, cp->nlanes);
                uint32_t patched = 0, owners = 0;
                for (uint32_t i = 0; i < cp->nlanes; i++) {
                    const nsim_plan_lane *a = &full->lanes[i];
                    const nsim_plan_lane *b = &cp->lanes[i];
                    patched += b->npatch > 0;
                    owners += !b->ops_shared;
                    CU_ASSERT_EQUAL_FATAL(a->nops, b->nops);
                    for (uint32_t j = 1; j < b->npatch; j++)
                        CU_ASSERT(b->patch[j - 1].at < b->patch[j].at);
                    for (uint32_t j = 0; j < a->nops; j++) {
                        const nsim_plan_op *x = &a->ops[j];
                        const nsim_plan_op *y = nsim_plan_lane_op(b, j);
                        if (x->prim != y->prim || x->slice != y->slice ||
                            x->step != y->step || x->bytes != y->bytes ||
                            y->chunk != 0 || y->offset != 0) {
                            CU_FAIL("a compact op differs from the whole "
                                    "plan's");
                            fprintf(stderr, "\n  %u nodes, %llu B, proto "
                                    "%d: lane %u op %u\n", nodes[h],
                                    (unsigned long long)sizes[z], (int)q, i,
                                    j);
                            break;
                        }
                    }
                }
                /* 768 B over 4 channels of 24 or 48 ranks: 48 floats a
                 * channel, 12 chunks of 4 and the rest empty: patches
                 * would not save much, each position keeps its array */
                if (sizes[z] == 768) {
                    CU_ASSERT_EQUAL(patched, 0);
                } else {
                    CU_ASSERT(patched > 0);
                    CU_ASSERT(owners <= cp->nchannels);
                    CU_ASSERT(cp->build.held * 4 < full->build.held);
                }
                if (z == 0 && h == 0)
                    assert_same_run(t, full, cp);
                nsim_plan_destroy(full);
                nsim_plan_destroy(cp);
            }
        nsim_topo_destroy(t);
    }
}

/* req.max_plan_bytes: the build counts its op lists, lanes and
 * connections, stops with NSIM_EBUDGET when they would pass the limit
 * (no plan handed out), and builds in full at the limit it counted (no
 * projection refuses it early); far over the limit, the projection from
 * the first lanes stops it with what the whole would need. */
static void test_plan_budget(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    const nsim_coll colls[] = {NSIM_COLL_ALLREDUCE, NSIM_COLL_ALLREDUCE,
                               NSIM_COLL_ALLTOALL, NSIM_COLL_ALLREDUCE};
    const nsim_algo algos[] = {NSIM_ALGO_RING, NSIM_ALGO_TREE,
                               NSIM_ALGO_RING, NSIM_ALGO_NVLSTREE};
    for (size_t k = 0; k < 4; k++) {
        nsim_plan_req r = req_of(64u << 20, k == 3 ? 0 : 16);
        r.coll = colls[k];
        r.algo = algos[k];
        nsim_plan *p = NULL;
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
        uint64_t listed = (uint64_t)p->nconns * sizeof *p->conns +
                          (uint64_t)p->nlanes * sizeof *p->lanes;
        for (uint32_t i = 0; i < p->nlanes; i++)
            if (!p->lanes[i].ops_shared)
                listed += (uint64_t)p->lanes[i].nops * sizeof(nsim_plan_op);
        /* held counts what was allocated: arrays' capacity, not use */
        CU_ASSERT(p->build.held >= listed);
        CU_ASSERT_PTR_NULL(p->building);
        uint64_t full = p->build.held;
        nsim_plan_destroy(p);
        if (k == 0) { /* the compact plan shares: it holds less */
            r.compact_ops = 1;
            NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
            CU_ASSERT(p->build.held < full / 4);
            nsim_plan_destroy(p);
            r.compact_ops = 0;
        }
        r.max_plan_bytes = full;
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
        CU_ASSERT_EQUAL(p->build.held, full);
        nsim_plan_destroy(p);
        p = NULL;
        r.max_plan_bytes = full / 2;
        CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EBUDGET);
        CU_ASSERT_PTR_NULL(p);
        /* over by half: the limit stops it (or the projection, which
         * may overestimate by up to twice) */
        CU_ASSERT(strstr(err.msg, "the plan alone needs ") != NULL);
        /* far over: the op lists of the first lanes (a tree's, an
         * NVLSTree's), projected to every lane, stop the build there and
         * say about what it needs (a ring's 256 reach the limit first) */
        r.max_plan_bytes = full / 4;
        CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EBUDGET);
        CU_ASSERT_PTR_NULL(p);
        if (k == 1 || k == 3) {
            const char *at = strstr(err.msg, "needs about ");
            double v = 0;
            char unit[4] = "";
            CU_ASSERT_FATAL(at != NULL && strstr(at, "(projected)") != NULL);
            CU_ASSERT_FATAL(sscanf(at, "needs about %lf %3s", &v, unit) == 2);
            CU_ASSERT_STRING_EQUAL(unit, "MiB");
            v *= 1048576;
            CU_ASSERT(v > 0.9 * (double)full && v < 1.5 * (double)full);
        }
        r.max_plan_bytes = 1; /* refused at the first allocation counted */
        CU_ASSERT_EQUAL(nsim_plan_build(t, &r, &p, &err), NSIM_EBUDGET);
        CU_ASSERT_PTR_NULL(p);
    }
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_plan[] = {
    {"memory budget: counted, refused, met", test_plan_budget},
    {"compact ops: shared, same run", test_compact_ops},
    {"compact uneven AllReduce: patches", test_compact_uneven},
    {"ring AllReduce hand count", test_hand_count},
    {"partial loop, empty slices", test_partial_loop_and_empty_slices},
    {"rings, rails and transports", test_rings_and_transports},
    {"default channels as NCCL", test_default_channels},
    {"AllGather/ReduceScatter hand count",
     test_allgather_reducescatter_hand_count},
    {"Broadcast/Reduce hand count", test_broadcast_reduce_hand_count},
    {"SendRecv/AllToAll hand count", test_p2p_hand_count},
    {"nccl-tests sizes and factors", test_nccl_tests_sizes},
    {"protocol cuts, wire lines, LL128 rule", test_protocol_cuts},
    {"tuner: NCCL's worked example, picks, refusals",
     test_tuner_worked_example},
    {"bad requests", test_bad_requests},
    CU_TEST_INFO_NULL,
};
