/* SPDX-License-Identifier: MIT
 *
 * test_pat.c - PAT AllGather / ReduceScatter (one GPU per host): NET
 * connections to the ranks at distance 2^s, bytes per rank by hand
 * count ((n-1)/n x S), every block delivered once, PAT's chunk rule,
 * the tuner's PAT model and picks, refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/exec.h"
#include "sim/plan/plan.h"
#include "sim/plan/tune.h"

#define DATA NSIM_SOURCE_DIR "/tests/data/"
#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static nsim_plan_req req_of(nsim_coll c, nsim_algo a, uint64_t bytes)
{
    nsim_plan_req r = {c, a, NSIM_PROTO_SIMPLE, bytes, 4,
                       0, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    return r;
}

static nsim_topo *load(const char *path)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(path, &t, &err));
    return t;
}

/* Hand count, 4 ranks (phases at distance 1 and 2), 4 channels, AllGather
 * of S = 64 MiB: block B = 16 MiB, 4 MiB per channel. Phase 0 sends one
 * block's channel part (4 MiB) to r+1, phase 1 two (8 MiB) to r+2: 12
 * MiB per channel and rank, 48 MiB = 3/4 S per rank. Chunk: one 512 KiB
 * slot (512 KiB x 4 x 32 = 64 MiB is not above S). */
static void test_plan_counts(void)
{
    nsim_err err = {0};
    nsim_topo *t = load(DATA "h100-4host-1gpu.topo.json");
    nsim_plan *p = NULL;
    uint64_t S = 64u << 20;
    nsim_plan_req r = req_of(NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT, S);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 4);
    CU_ASSERT_EQUAL(p->nthreads, 640);
    CU_ASSERT_EQUAL(p->chunk_bytes, 524288);
    CU_ASSERT_EQUAL(p->nconns, 4 * 4 * 2);
    uint64_t per_rank[4] = {0};
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        uint32_t s = i % 2;
        CU_ASSERT_EQUAL(c->transport, NSIM_TRANSPORT_NET);
        CU_ASSERT_EQUAL(c->to, (c->from + (1u << s)) % 4);
        const nsim_plan_lane *l = &p->lanes[c->send_lane];
        CU_ASSERT(l->per_step_conns);
        uint64_t b = 0;
        for (uint32_t k = 0; k < l->nops; k++)
            if ((l->ops[k].prim & NSIM_PRIM_SEND) && l->ops[k].step == s)
                b += l->ops[k].bytes;
        CU_ASSERT_EQUAL(b, (s + 1) * (4u << 20));
        per_rank[c->from] += b;
    }
    for (int k = 0; k < 4; k++)
        CU_ASSERT_EQUAL(per_rank[k], 3 * S / 4);
    nsim_plan_destroy(p);
    /* the chunk rule: 1 MiB AllGather halves 512 KiB down to 64 KiB (x
     * 4 x 32 still above S, but no more than 64 KiB); ReduceScatter
     * of 16 MiB: 512 KiB x 4 x 16 = 32 MiB > 16 MiB -> 256 KiB */
    r.bytes = 1u << 20;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->chunk_bytes, 65536);
    nsim_plan_destroy(p);
    r = req_of(NSIM_COLL_REDUCESCATTER, NSIM_ALGO_PAT, 16u << 20);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->chunk_bytes, 262144);
    /* ReduceScatter sends to r - 2^s */
    for (uint32_t i = 0; i < p->nconns; i++)
        CU_ASSERT_EQUAL(p->conns[i].to,
                        (p->conns[i].from + 4 - (1u << (i % 2))) % 4);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* A run: every connection's bytes arrive, each rank sends (n-1)/n x S,
 * and (AllGather) each rank receives every other rank's block exactly
 * once and never its own; (ReduceScatter) each rank's last phase brings
 * its own block, whole. */
static void run_and_check(nsim_topo *t, nsim_coll coll, uint64_t S)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_exec_result res;
    nsim_params_defaults(&prm);
    nsim_plan_req r = req_of(coll, NSIM_ALGO_PAT, S);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    nsim_exec_opts o = {1, 1, NULL};
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    CU_ASSERT(res.time_ps > 0);
    uint32_t n = p->nranks;
    uint64_t sent[16] = {0}, B = S / n;
    for (uint32_t i = 0; i < p->nconns; i++) {
        CU_ASSERT_EQUAL(res.conns[i].bytes, res.conns[i].recv_bytes);
        CU_ASSERT_EQUAL(res.conns[i].slices, res.conns[i].recv_slices);
        sent[p->conns[i].from] += res.conns[i].bytes;
    }
    CU_ASSERT_EQUAL(res.bytes_moved, (n - 1) * S);
    for (uint32_t k = 0; k < n; k++) {
        CU_ASSERT_EQUAL(sent[k], (n - 1) * B);
        uint64_t got[16] = {0}, last = 0;
        for (uint32_t c = 0; c < p->nchannels; c++) {
            const nsim_plan_lane *l = &p->lanes[c * n + k];
            for (uint32_t i = 0; i < l->nops; i++) {
                const nsim_plan_op *op = &l->ops[i];
                if (!(op->prim & NSIM_PRIM_RECV))
                    continue;
                got[op->chunk] += op->bytes;
                if (op->step == 0 && op->chunk == k)
                    last += op->bytes;
            }
        }
        for (uint32_t b = 0; b < n; b++)
            if (coll == NSIM_COLL_ALLGATHER)
                CU_ASSERT_EQUAL(got[b], b == k ? 0 : B);
        if (coll == NSIM_COLL_REDUCESCATTER)
            CU_ASSERT_EQUAL(last, B);
    }
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
}

static void test_delivery(void)
{
    nsim_topo *t3 = load(DATA "h100-3host-1gpu.topo.json");
    nsim_topo *t4 = load(DATA "h100-4host-1gpu.topo.json");
    nsim_topo *t8 = load(DATA "h100-8host-1gpu.topo.json");
    run_and_check(t3, NSIM_COLL_ALLGATHER, 3u << 20);
    run_and_check(t3, NSIM_COLL_REDUCESCATTER, 3u << 20);
    run_and_check(t4, NSIM_COLL_ALLGATHER, 16u << 20);
    run_and_check(t4, NSIM_COLL_REDUCESCATTER, 16u << 20);
    run_and_check(t8, NSIM_COLL_ALLGATHER, 8u << 20);
    run_and_check(t8, NSIM_COLL_REDUCESCATTER, 1u << 20);
    nsim_topo_destroy(t3);
    nsim_topo_destroy(t4);
    nsim_topo_destroy(t8);
}

/* NCCL's PAT model on 4 hosts: busBw = nCh x bwInter x 0.75, not
 * converted; latency 8 + floor(log2 4) x 14 / 3.5 + 2.8 x 4 = 27.2 us.
 * The tuner considers PAT for AllGather / ReduceScatter with one GPU per
 * host (and may pick it), never for AllReduce, LL or 8 GPUs per host. */
static void test_tuner(void)
{
    nsim_err err = {0};
    nsim_topo *t4 = load(DATA "h100-4host-1gpu.topo.json");
    nsim_topo *dgx = load(SCEN "dgx-h100-2node.topo.json");
    nsim_topo *one = load(DATA "pcie-2gpu.topo.json");
    nsim_plan_graph g;
    nsim_plan_graph_get(t4, &g);
    double us = nsim_tune_time_us(&g, NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT,
                                  NSIM_PROTO_SIMPLE, 1u << 30);
    CU_ASSERT(g.bw_inter > 0);
    CU_ASSERT_DOUBLE_EQUAL(
        us, 27.2 + 1073741824.0 / (1000 * g.nchannels * g.bw_inter * 0.75),
        1e-6);
    CU_ASSERT_EQUAL(nsim_tune_time_us(&g, NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT,
                                      NSIM_PROTO_LL, 1u << 30), -1);
    CU_ASSERT_EQUAL(nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_PAT,
                                      NSIM_PROTO_SIMPLE, 1u << 30), -1);
    nsim_plan_graph_get(dgx, &g);
    CU_ASSERT_EQUAL(nsim_tune_time_us(&g, NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT,
                                      NSIM_PROTO_SIMPLE, 1u << 30), -1);
    nsim_algo a;
    nsim_proto pr;
    NSIM_ASSERT_OK(nsim_tune_pick(dgx, NSIM_COLL_ALLGATHER, 1u << 20, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a != NSIM_ALGO_PAT);
    NSIM_ASSERT_OK(nsim_tune_pick(t4, NSIM_COLL_ALLGATHER, 1u << 20, 1, 0,
                                  &(nsim_algo){NSIM_ALGO_PAT}, &pr, &us,
                                  &err));
    CU_ASSERT(pr == NSIM_PROTO_SIMPLE && us > 0);
    /* NCCL_PAT_ENABLE=0: PAT is never picked, forcing it is an error */
    uint32_t off = 1u << NSIM_ALGO_PAT;
    NSIM_ASSERT_OK(nsim_tune_pick(t4, NSIM_COLL_ALLGATHER, 1u << 20, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_PAT);
    NSIM_ASSERT_OK(nsim_tune_pick_without(t4, NSIM_COLL_ALLGATHER, 1u << 20,
                                          0, 0, off, &a, &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_RING);
    a = NSIM_ALGO_PAT;
    CU_ASSERT_EQUAL(nsim_tune_pick_without(t4, NSIM_COLL_ALLGATHER, 1u << 20,
                                           1, 0, off, &a, &pr, &us, &err),
                    NSIM_ECONFIG);
    /* refusals, each with its reason */
    CU_ASSERT_EQUAL(nsim_tune_check(dgx, NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT,
                                    NSIM_PROTO_SIMPLE, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exactly one GPU per host"));
    CU_ASSERT_EQUAL(nsim_tune_check(one, NSIM_COLL_ALLGATHER, NSIM_ALGO_PAT,
                                    NSIM_PROTO_SIMPLE, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than one host"));
    CU_ASSERT_EQUAL(nsim_tune_check(t4, NSIM_COLL_ALLREDUCE, NSIM_ALGO_PAT,
                                    NSIM_PROTO_SIMPLE, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "allgather and reducescatter"));
    CU_ASSERT_EQUAL(nsim_tune_check(t4, NSIM_COLL_REDUCESCATTER,
                                    NSIM_ALGO_PAT, NSIM_PROTO_LL128, &err),
                    NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Simple protocol only"));
    nsim_topo_destroy(t4);
    nsim_topo_destroy(dgx);
    nsim_topo_destroy(one);
}

CU_TestInfo nsim_test_pat[] = {
    {"plan: NET peers at 2^s, bytes by hand count, chunk rule",
     test_plan_counts},
    {"run: (n-1)/n x S per rank, every block delivered, 3/4/8 hosts",
     test_delivery},
    {"tuner: NCCL's PAT model, picks, refusals", test_tuner},
    CU_TEST_INFO_NULL,
};
