/* SPDX-License-Identifier: MIT
 *
 * test_nvlstree.c - NVLSTree AllReduce (NVLS inside hosts, NCCL's double
 * binary tree between the hosts' heads over NET): connections and bytes
 * per network connection by hand count on 2 and 4 hosts, every byte
 * delivered, the NVLink traffic (S + S/8 per direction, as NVLS), the
 * tuner's NVLSTree model and picks, refusals.
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

static nsim_plan_req req_of(nsim_algo a, uint64_t bytes)
{
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, a, NSIM_PROTO_SIMPLE, bytes, 4,
                       0, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    return r;
}

/* nodes x DGX H100 on a rail fat tree, NVSwitches marked "nvls" (the
 * built-in preset leaves them unmarked). */
/* A cluster of DGX H100 (their NVSwitches NVLS-capable, as built). */
static nsim_topo *dgx_nvls(uint32_t nodes)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", nodes, &cfg, &t, &err));
    return t;
}



/* Hand count. 16 channels (sm90), 8 heads per host. 64 MiB: 128 KiB
 * chunks (not under 4 x 128 x 128 KiB), per channel 4 MiB = 4 loops of
 * 8 chunks, head h's part 4 x 128 KiB = 512 KiB = S / (16 x 8). Per
 * channel and head each of the H - 1 tree edges is an up and a down NET
 * connection carrying that part: 2 hosts 256 NET connections, 4 hosts
 * 768 (tree 0 of 4: 1->2, 3->2, 2->0). 8 MiB on 4 hosts: 64 KiB chunks
 * (under 4 x 128 x 128 KiB, not under 1 x 128 x 64 KiB), one loop,
 * again S / 128 per connection. */
static void check_counts(nsim_topo *t, uint32_t hosts, uint64_t S,
                         uint64_t chunk)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_plan_req r = req_of(NSIM_ALGO_NVLSTREE, S);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 16);
    CU_ASSERT_EQUAL(p->nhosts, hosts);
    CU_ASSERT_EQUAL(p->nvls_heads, 8);
    CU_ASSERT_EQUAL(p->chunk_bytes, chunk);
    uint32_t n = 8 * hosts, nvls = 4 * 16 * n, net = 0;
    CU_ASSERT_EQUAL(p->nconns, nvls + 2 * (hosts - 1) * 16 * 8);
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        if (i < nvls) {
            CU_ASSERT_EQUAL(c->transport, NSIM_TRANSPORT_NVLS);
            continue;
        }
        net++;
        CU_ASSERT_EQUAL(c->transport, NSIM_TRANSPORT_NET);
        /* head i of one host to head i of another */
        CU_ASSERT_EQUAL(c->from % 8, c->to % 8);
        CU_ASSERT_NOT_EQUAL(c->from / 8, c->to / 8);
        uint64_t b = 0;
        const nsim_plan_lane *l = &p->lanes[c->send_lane];
        for (uint32_t k = 0; k < l->nops; k++)
            b += l->ops[k].bytes;
        CU_ASSERT_EQUAL(b, S / 128);
    }
    CU_ASSERT_EQUAL(net, 2 * (hosts - 1) * 16 * 8);
    /* head i's tree lanes (lane 2 of its four) on channel c take chunk
     * (i - c) mod 8 of every loop: the channels' heads take turns from
     * their own head, not all from head 0 */
    for (uint32_t c = 0; c < 16; c++)
        for (uint32_t i = 0; i < 8; i++) {
            const nsim_plan_lane *l = &p->lanes[((c * hosts) * 8 + i) * 4 + 2];
            uint32_t part = (i + 8 - c % 8) % 8;
            CU_ASSERT_EQUAL(nsim_plan_nvls_part(p, c, i), part);
            CU_ASSERT(l->nops > 0);
            for (uint32_t k = 0; k < l->nops; k++) {
                const nsim_plan_op *op = nsim_plan_lane_op(l, k);
                CU_ASSERT_EQUAL(op->chunk % 8, part);
                CU_ASSERT_EQUAL(nsim_plan_nvls_head(p, c, op->chunk), i);
            }
        }
    nsim_plan_destroy(p);
}

static void test_plan_counts(void)
{
    nsim_err err = {0};
    nsim_topo *two = NULL, *four = dgx_nvls(4);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &two,
                                  &err));
    check_counts(two, 2, 64u << 20, 131072);
    check_counts(four, 4, 64u << 20, 131072);
    check_counts(four, 4, 8u << 20, 65536);
    nsim_topo_destroy(two);
    nsim_topo_destroy(four);
}

/* A run: every connection's bytes sent are received, each NET
 * connection carries S / 128, each GPU's NVLinks carry S + S/8 per
 * direction (scatter + its heads' stores up; multicast + its heads'
 * reduced parts down). */
static void run_and_check(nsim_topo *t, uint64_t S)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_exec_result res;
    nsim_params_defaults(&prm);
    nsim_plan_req r = req_of(NSIM_ALGO_NVLSTREE, S);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    nsim_exec_opts o = {1, 1, NULL};
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    CU_ASSERT(res.time_ps > 0);
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_conn_stats *s = &res.conns[i];
        const nsim_plan_conn *c = &p->conns[i];
        if (c->send_lane != UINT32_MAX && c->recv_lane != UINT32_MAX) {
            CU_ASSERT_EQUAL(s->bytes, s->recv_bytes);
            CU_ASSERT_EQUAL(s->slices, s->recv_slices);
        }
        if (c->transport == NSIM_TRANSPORT_NET)
            CU_ASSERT_EQUAL(s->recv_bytes, S / 128);
        if (c->transport == NSIM_TRANSPORT_NVLS && c->nvls_role == 0 &&
            c->send_lane != UINT32_MAX)
            CU_ASSERT_EQUAL(s->bytes, S / 16); /* scatter: the channel */
        if (c->nvls_role == 0 && c->recv_lane != UINT32_MAX &&
            c->transport == NSIM_TRANSPORT_NVLS)
            CU_ASSERT_EQUAL(s->recv_bytes, S / 16); /* gather */
        if (c->nvls_role != 0) /* reduced in, final out: the head's part */
            CU_ASSERT_EQUAL(s->bytes + s->recv_bytes, S / 128);
    }
    uint32_t links = 0;
    for (uint32_t i = 0; i < res.nlinks; i++) {
        const nsim_link *l = nsim_topo_link(t, res.links[i].link);
        nsim_dev_type a = nsim_topo_device(t, l->src)->type;
        nsim_dev_type b = nsim_topo_device(t, l->dst)->type;
        if ((a == NSIM_DEV_GPU && b == NSIM_DEV_NVSWITCH) ||
            (b == NSIM_DEV_GPU && a == NSIM_DEV_NVSWITCH)) {
            CU_ASSERT_EQUAL(res.links[i].bytes, S + S / 8);
            links++;
        }
    }
    CU_ASSERT_EQUAL(links, 2 * p->nranks);
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
}

static void test_delivery(void)
{
    nsim_err err = {0};
    nsim_topo *two = NULL, *four = dgx_nvls(4);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &two,
                                  &err));
    run_and_check(two, 16u << 20);
    run_and_check(four, 8u << 20);
    nsim_topo_destroy(two);
    nsim_topo_destroy(four);
}

static double busbw(nsim_topo *t, nsim_algo a, uint64_t bytes)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_exec_result res;
    nsim_params_defaults(&prm);
    nsim_plan_req r = req_of(a, bytes);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    nsim_exec_opts o = {1, 0, NULL};
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    double alg = (double)bytes / ((double)res.time_ps / 1e12) / 1e9;
    uint32_t n = p->nranks;
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    return alg * 2 * (n - 1) / n;
}

/* End to end on two DGX H100 at 64 MiB: NVLSTree moves S + S/8 over
 * each NVLink direction and S/8 over each NIC (two hosts: each part
 * crosses once each way), so it beats the tree, which carries S per
 * NIC direction through the chain. */
static void test_end_to_end(void)
{
    nsim_err err = {0};
    nsim_topo *two = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &two,
                                  &err));
    double nt = busbw(two, NSIM_ALGO_NVLSTREE, 64u << 20);
    double tr = busbw(two, NSIM_ALGO_TREE, 64u << 20);
    if (!(nt > tr && nt > 200 && nt < 600))
        fprintf(stderr, "\n  busbw NVLSTree %.1f, Tree %.1f\n", nt, tr);
    CU_ASSERT(nt > tr && nt > 200 && nt < 600);
    nsim_topo_destroy(two);
}

/* NCCL's model on 2 x DGX H100: 8 heads at 40 GB/s; intraBw 2 x 40 x
 * 0.85 x 7/8 = 59.5, interBw 2 x 40, cap 57.7 -> busBw 8 x 57.7, algBw
 * x 16/30; latency 25 + 2 x 1 x 20.9 us. 4 hosts: interBw 40 (there
 * the ring's model is faster at 1 GiB). NVLSTree wins 1 GiB on two NVLS
 * hosts, not 1 KiB, never without NVLS switches, on
 * one host, or with LL. */
static void test_tuner(void)
{
    nsim_err err = {0};
    nsim_topo *two = NULL, *one = NULL, *four = dgx_nvls(4);
    nsim_topo *plain = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &two,
                                  &err));
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &one, &err));
    plain = nsim_test_without_nvls(dgx_nvls(2));
    nsim_plan_graph g;
    nsim_plan_graph_get(two, &g);
    double us = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE,
                                  NSIM_ALGO_NVLSTREE, NSIM_PROTO_SIMPLE,
                                  1u << 30);
    CU_ASSERT_DOUBLE_EQUAL(
        us, 66.8 + 1073741824.0 / (1000 * 8 * 57.7 * 16 / 30), 1e-6);
    CU_ASSERT_EQUAL(nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE,
                                      NSIM_ALGO_NVLSTREE, NSIM_PROTO_LL,
                                      1u << 30), -1);
    nsim_plan_graph_get(four, &g);
    us = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_NVLSTREE,
                           NSIM_PROTO_SIMPLE, 1u << 30);
    CU_ASSERT_DOUBLE_EQUAL(
        us, 25 + 4 * 20.9 + 1073741824.0 / (1000 * 8 * 40 * 32 / 62.0), 1e-6);
    nsim_algo a;
    nsim_proto pr;
    NSIM_ASSERT_OK(nsim_tune_pick(two, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_NVLSTREE && pr == NSIM_PROTO_SIMPLE);
    NSIM_ASSERT_OK(nsim_tune_pick(two, NSIM_COLL_ALLREDUCE, 1024, 0, 0, &a,
                                  &pr, &us, &err));
    CU_ASSERT(a != NSIM_ALGO_NVLSTREE);
    NSIM_ASSERT_OK(nsim_tune_pick(plain, NSIM_COLL_ALLREDUCE, 1u << 30, 0,
                                  0, &a, &pr, &us, &err));
    CU_ASSERT(a != NSIM_ALGO_NVLSTREE);
    NSIM_ASSERT_OK(nsim_tune_pick(one, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_NVLS);
    /* refusals, each with its reason */
    CU_ASSERT_EQUAL(nsim_tune_check(plain, NSIM_COLL_ALLREDUCE,
                                    NSIM_ALGO_NVLSTREE, NSIM_PROTO_SIMPLE,
                                    &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "\"nvls\": true"));
    CU_ASSERT_EQUAL(nsim_tune_check(one, NSIM_COLL_ALLREDUCE,
                                    NSIM_ALGO_NVLSTREE, NSIM_PROTO_SIMPLE,
                                    &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than one host"));
    CU_ASSERT_EQUAL(nsim_tune_check(two, NSIM_COLL_ALLREDUCE,
                                    NSIM_ALGO_NVLSTREE, NSIM_PROTO_LL128,
                                    &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(nsim_tune_check(two, NSIM_COLL_ALLGATHER,
                                    NSIM_ALGO_NVLSTREE, NSIM_PROTO_SIMPLE,
                                    &err), NSIM_ECONFIG);
    nsim_topo_destroy(two);
    nsim_topo_destroy(one);
    nsim_topo_destroy(four);
    nsim_topo_destroy(plain);
}

CU_TestInfo nsim_test_nvlstree[] = {
    {"plan: NET connections and bytes by hand count, 2 and 4 hosts",
     test_plan_counts},
    {"run: every byte delivered, NET S/128, NVLink S + S/8",
     test_delivery},
    {"end to end on 2 x DGX H100: faster than Tree", test_end_to_end},
    {"tuner: NCCL's NVLSTree model, picks, refusals", test_tuner},
    CU_TEST_INFO_NULL,
};
