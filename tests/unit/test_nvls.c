/* SPDX-License-Identifier: MIT
 *
 * test_nvls.c - NVLS AllReduce: the plan's chunks and connections, the
 * traffic the in-switch reduction and multicast put on each GPU's
 * NVLinks (S + S/nHeads per direction), NVLS against the ring, the
 * tuner's NVLS model and picks, refusals.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nsim_test.h"
#include "sim/exec/exec.h"
#include "sim/plan/plan.h"
#include "sim/plan/tune.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static nsim_plan_req req_of(nsim_algo a, uint64_t bytes, uint32_t nch)
{
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, a, NSIM_PROTO_SIMPLE, bytes, 4,
                       nch, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    return r;
}

/* 64 MiB, 16 channels, 8 heads: 64 MiB < 64 x 128 x 128 KiB -> 64 KiB
 * chunks (not < 8 x 128 x 64 KiB); per channel 4 MiB = 8 loops of 8
 * chunks; every up connection carries its rank's 4 MiB once. */
static void test_plan_counts(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_plan_req r = req_of(NSIM_ALGO_NVLS, 64u << 20, 0);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 16);
    CU_ASSERT_EQUAL(p->nvls_heads, 8);
    CU_ASSERT_EQUAL(p->chunk_bytes, 65536);
    CU_ASSERT_EQUAL(p->nconns, 2 * 16 * 8);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_lane *l = &p->lanes[i];
        uint64_t b = 0;
        CU_ASSERT_EQUAL(l->nops, 64);
        for (uint32_t k = 0; k < l->nops; k++)
            b += l->ops[k].bytes;
        CU_ASSERT_EQUAL(b, 4u << 20);
        CU_ASSERT_EQUAL(p->conns[i].transport, NSIM_TRANSPORT_NVLS);
    }
    /* the head of channel c's chunk k: (k + c) mod heads, and the chunk
     * of a loop head h takes, its inverse */
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t h = 0; h < 8; h++) {
            uint32_t k = nsim_plan_nvls_part(p, c, h);
            CU_ASSERT(k < 8);
            CU_ASSERT_EQUAL(nsim_plan_nvls_head(p, c, k), h);
            CU_ASSERT_EQUAL(nsim_plan_nvls_head(p, c, k + 8 * 5), h);
            CU_ASSERT_EQUAL(nsim_plan_nvls_head(p, c, h), (h + c) % 8);
        }
    nsim_plan_destroy(p);
    /* 1 MiB: under 2 x 128 x 32 KiB -> 16 KiB */
    r = req_of(NSIM_ALGO_NVLS, 1u << 20, 0);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->chunk_bytes, 16384);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static double run_at(nsim_topo *t, nsim_algo a, uint64_t bytes,
                     const nsim_params *prm, nsim_fidelity fidelity,
                     nsim_exec_result *res)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_plan_req r = req_of(a, bytes, a == NSIM_ALGO_NVLS ? 0 : 24);
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    nsim_exec_opts o = {.seed = 1, .want_stats = 1, .fidelity = fidelity};
    NSIM_ASSERT_OK(nsim_exec_run(t, p, prm, &o, res, &err));
    nsim_plan_destroy(p);
    double alg = (double)bytes / ((double)res->time_ps / 1e12) / 1e9;
    return alg * 2 * 7 / 8;
}

static double run_with(nsim_topo *t, nsim_algo a, uint64_t bytes,
                       const nsim_params *prm, nsim_exec_result *res)
{
    return run_at(t, a, bytes, prm, NSIM_FIDELITY_PACKET, res);
}

static double run(nsim_topo *t, nsim_algo a, uint64_t bytes,
                  nsim_exec_result *res)
{
    nsim_params prm;
    nsim_params_defaults(&prm);
    return run_with(t, a, bytes, &prm, res);
}

/* Checks every GPU <-> NVSwitch port carried S + S/8 of payload (its
 * data once up to the switch plus its heads' stores; the multicast plus
 * the reduced chunks it heads back down) and, on the wire, 128-B packets
 * with a 16-B header and a 16-B response from the other direction, all
 * x 100/pct for multimem traffic. */
static void check_ports(nsim_topo *t, const nsim_exec_result *res,
                        uint64_t S, double pct)
{
    uint32_t up = 0, down = 0;
    uint64_t payload = S + S / 8, packets = payload / 128;
    double wire = (double)(payload + 2 * packets * 16) * 100.0 / pct;
    for (uint32_t i = 0; i < res->nlinks; i++) {
        const nsim_link *l = nsim_topo_link(t, res->links[i].link);
        const nsim_device *a = nsim_topo_device(t, l->src);
        const nsim_device *b = nsim_topo_device(t, l->dst);
        int is_up = a->type == NSIM_DEV_GPU && b->type == NSIM_DEV_NVSWITCH;
        int is_down = b->type == NSIM_DEV_GPU && a->type == NSIM_DEV_NVSWITCH;
        if (!is_up && !is_down)
            continue;
        up += (uint32_t)is_up;
        down += (uint32_t)is_down;
        CU_ASSERT_EQUAL(res->links[i].bytes, payload);
        double w = (double)res->links[i].wire_bytes;
        CU_ASSERT(w > wire * 0.999 && w < wire * 1.001);
    }
    CU_ASSERT(up == 8 && down == 8);
}

/* The mechanism: each port carries S + S/8 per direction where a ring
 * carries 2(n-1)/n S, so with multimem moving bytes as fast as stores
 * NVLS beats the ring by more than 1.3x at 64 MiB; at Hopper's 85 % it
 * holds each port 100/85 as long per byte and loses about that much
 * (NCCL's nvlsEfficiency), still ahead of the ring. */
static void test_traffic_and_speed(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_exec_result res;
    nsim_params full;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    const uint64_t S = 64u << 20;
    nsim_params_defaults(&full);
    full.nvls_multimem_pct_sm90 = 100;
    double nvls_full = run_with(t, NSIM_ALGO_NVLS, S, &full, &res);
    check_ports(t, &res, S, 100);
    nsim_exec_result_free(&res);
    double nvls = run(t, NSIM_ALGO_NVLS, S, &res);
    check_ports(t, &res, S, 85);
    nsim_exec_result_free(&res);
    double ring = run(t, NSIM_ALGO_RING, S, &res);
    nsim_exec_result_free(&res);
    if (!(nvls_full > 1.3 * ring) || !(nvls > 1.1 * ring))
        fprintf(stderr, "\n  busbw NVLS %.1f (multimem 100 %%: %.1f), "
                        "ring %.1f\n", nvls, nvls_full, ring);
    CU_ASSERT(nvls_full > 1.3 * ring);
    CU_ASSERT(nvls > 1.1 * ring);
    CU_ASSERT(nvls / nvls_full > 0.82 && nvls / nvls_full < 0.90);
    nsim_topo_destroy(t);
}

/* In flow fidelity NVLS busbw rises with the size, as the ports' share
 * of the run's fixed costs falls. Without NVLink responses the solver
 * once left each GPU's up link at 56 % from 1 GiB on (a bottleneck with
 * 0.1 % spare taken for one with room: docs/fidelity.md): 417, 434 and
 * 297 GB/s at 64 MiB, 256 MiB and 1 GiB. */
static void test_flow_rises_with_size(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_params prm;
    nsim_params_defaults(&prm);
    prm.nvlink_response_bytes = 0;
    prm.flow_check = 1;
    double prev = 0;
    for (uint64_t bytes = 64u << 20; bytes <= 1u << 30; bytes <<= 2) {
        nsim_exec_result res;
        double busbw = run_at(t, NSIM_ALGO_NVLS, bytes, &prm,
                              NSIM_FIDELITY_FLOW, &res);
        if (!(busbw > 0.98 * prev))
            fprintf(stderr, "\n  flow NVLS %llu B: %.2f GB/s after %.2f\n",
                    (unsigned long long)bytes, busbw, prev);
        CU_ASSERT(busbw > 0.98 * prev);
        /* fewer than 1 % of the flows looked at below max-min (38 % at
         * 1 GiB then; the rest is the passes' limit) */
        fprintf(stderr, "%s%.2f GB/s, %llu of %llu below max-min",
                prev > 0 ? "; " : "\n  flow NVLS, no responses: ", busbw,
                (unsigned long long)res.flow.below,
                (unsigned long long)res.flow.checked);
        CU_ASSERT(res.flow.checked > 0 &&
                  res.flow.below * 100 < res.flow.checked);
        prev = busbw;
        nsim_exec_result_free(&res);
    }
    fprintf(stderr, "\n");
    nsim_topo_destroy(t);
}

/* Flow and packet within 3 % on one DGX H100 (NVLink responses on, the
 * default). Every channel's reduced chunk k once went to head k mod 8:
 * the 16 channels, in step under max-min sharing, all had one head
 * reduce at a time, its links carrying 16 reduced chunks while the
 * other heads' idled. Every GPU's NVLink ports were 87.8 % busy with
 * flows on them 98.8-99.6 % of the run (--stats; 99.4 % busy now), flow
 * 342.40 / 410.95 / 417.91 GB/s at 16 MiB / 256 MiB / 1 GiB against
 * packet 368.16 / 460.01 / 469.07, whose FIFO ports let the channels
 * drift apart. NCCL's heads reduce their parts of a loop at once;
 * channel c's turn now starts at head c mod 8. */
static void test_flow_agrees(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_params prm;
    nsim_params_defaults(&prm);
    for (uint64_t bytes = 16u << 20; bytes <= 1u << 30; bytes <<= 2) {
        nsim_exec_result res;
        double pk = run_at(t, NSIM_ALGO_NVLS, bytes, &prm,
                           NSIM_FIDELITY_PACKET, &res);
        nsim_exec_result_free(&res);
        double fl = run_at(t, NSIM_ALGO_NVLS, bytes, &prm,
                           NSIM_FIDELITY_FLOW, &res);
        nsim_exec_result_free(&res);
        fprintf(stderr, "%s%llu MiB %.2f / %.2f",
                bytes == 16u << 20 ? "\n  NVLS packet / flow GB/s: " : ", ",
                (unsigned long long)(bytes >> 20), pk, fl);
        CU_ASSERT(fl > 0.97 * pk && fl < 1.03 * pk);
    }
    fprintf(stderr, "\n");
    nsim_topo_destroy(t);
}

/* n H100s on one NVLS-capable NVSwitch (18 NVLinks each) and a CPU. */
static nsim_topo *h100_switch(uint32_t n)
{
    char text[8192];
    size_t k = (size_t)snprintf(
        text, sizeof text,
        "{\"format\": \"ncclsim-topology\", \"version\": 1, "
        "\"name\": \"nvs%u\", \"devices\": ["
        "{\"id\": \"nvs\", \"type\": \"nvswitch\", \"host\": 0, "
        "\"nvls\": true, \"latency\": \"0 ns\"}, "
        "{\"id\": \"cpu\", \"type\": \"cpu\", \"host\": 0}",
        n);
    for (uint32_t g = 0; g < n; g++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              ", {\"id\": \"gpu%u\", \"type\": \"gpu\", "
                              "\"gen\": \"h100\", \"host\": 0}",
                              g);
    k += (size_t)snprintf(text + k, sizeof text - k, "], \"links\": [");
    for (uint32_t g = 0; g < n; g++)
        k += (size_t)snprintf(
            text + k, sizeof text - k,
            "%s{\"a\": \"gpu%u\", \"b\": \"nvs\", \"type\": \"nvlink\", "
            "\"bw\": \"25 GB/s\", \"count\": 18, \"latency\": \"250 ns\"}, "
            "{\"a\": \"gpu%u\", \"b\": \"cpu\", \"type\": \"pcie\", "
            "\"bw\": \"3.938 GB/s\", \"count\": 16, "
            "\"latency\": \"115 ns\"}",
            g ? ", " : "", g, g);
    k += (size_t)snprintf(text + k, sizeof text - k, "]}");
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_parse(text, k, "nvs-n", &t, &err));
    return t;
}

/* NCCL issue #1455 (5..8 H100, NVLS forced, 2-4 GiB): algbw 258 / 265 /
 * 270 / 273 GB/s, i.e. constant x n/(n+1): each port carries S + S/n.
 * The model's algbw x (1 + 1/n) is the same at every n (within 2 %),
 * so its algbw grows with n as published, and 8 GPUs land at 1.2-1.4x
 * the ring's busbw (published 480 / 370 = 1.30). */
static void test_scaling_with_gpus(void)
{
    const uint64_t S = 256u << 20;
    double eff[9] = {0};
    for (uint32_t n = 5; n <= 8; n++) {
        nsim_topo *t = h100_switch(n);
        nsim_exec_result res;
        nsim_err err = {0};
        nsim_plan *p = NULL;
        nsim_params prm;
        nsim_params_defaults(&prm);
        nsim_plan_req r = req_of(NSIM_ALGO_NVLS, S, 0);
        NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
        nsim_exec_opts o = {1, 0, NULL};
        NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
        double alg = (double)S / ((double)res.time_ps / 1e12) / 1e9;
        eff[n] = alg * (1.0 + 1.0 / n);
        if (n == 8) {
            double ring = run(t, NSIM_ALGO_RING, S, &res);
            nsim_exec_result_free(&res);
            double ratio = alg * 2 * 7 / 8 / ring;
            if (!(ratio > 1.2 && ratio < 1.4))
                fprintf(stderr, "\n  NVLS / ring busbw %.2f\n", ratio);
            CU_ASSERT(ratio > 1.2 && ratio < 1.4);
        }
        nsim_plan_destroy(p);
        nsim_topo_destroy(t);
    }
    for (uint32_t n = 6; n <= 8; n++) {
        if (!(eff[n] > 0.98 * eff[5] && eff[n] < 1.02 * eff[5]))
            fprintf(stderr, "\n  n=%u: algbw x (1+1/n) %.1f vs %.1f at 5\n",
                    n, eff[n], eff[5]);
        CU_ASSERT(eff[n] > 0.98 * eff[5] && eff[n] < 1.02 * eff[5]);
    }
}

/* NCCL's model: 8 heads at 40 GB/s (8 x 60, 8 x 50 exceed 370.8),
 * busBw 8 x 2 x 40 x 0.85 x 7/8 = 476, algBw 272, latency 25 us; NVLS
 * wins large AllReduce on a DGX H100, never small ones, never without
 * an NVLS switch or across hosts. */
static void test_tuner(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL, *hgx = NULL, *two = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "hgx-h100.topo.json", &hgx, &err));
    hgx = nsim_test_without_nvls(hgx); /* an NVSwitch without NVLS */
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &two,
                                  &err));
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    double us = nsim_tune_time_us(&g, NSIM_COLL_ALLREDUCE, NSIM_ALGO_NVLS,
                                  NSIM_PROTO_SIMPLE, 1u << 30);
    CU_ASSERT_DOUBLE_EQUAL(us, 25 + 1073741824.0 / (1000 * 476 * 8 / 14),
                           1e-6);
    nsim_algo a;
    nsim_proto pr;
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0, &a,
                                  &pr, &us, &err));
    CU_ASSERT(a == NSIM_ALGO_NVLS && pr == NSIM_PROTO_SIMPLE);
    NSIM_ASSERT_OK(nsim_tune_pick(t, NSIM_COLL_ALLREDUCE, 8, 0, 0, &a, &pr,
                                  &us, &err));
    CU_ASSERT(a == NSIM_ALGO_RING && pr == NSIM_PROTO_LL);
    NSIM_ASSERT_OK(nsim_tune_pick(hgx, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a != NSIM_ALGO_NVLS);
    NSIM_ASSERT_OK(nsim_tune_pick(two, NSIM_COLL_ALLREDUCE, 1u << 30, 0, 0,
                                  &a, &pr, &us, &err));
    CU_ASSERT(a != NSIM_ALGO_NVLS);
    CU_ASSERT_NOT_EQUAL(nsim_tune_check(hgx, NSIM_COLL_ALLREDUCE,
                                        NSIM_ALGO_NVLS, NSIM_PROTO_SIMPLE,
                                        &err), 0);
    nsim_plan *p = NULL;
    nsim_plan_req r = req_of(NSIM_ALGO_NVLS, 1u << 20, 0);
    CU_ASSERT_NOT_EQUAL(nsim_plan_build(two, &r, &p, &err), 0);
    CU_ASSERT_PTR_NULL(p);
    nsim_topo_destroy(t);
    nsim_topo_destroy(hgx);
    nsim_topo_destroy(two);
}

CU_TestInfo nsim_test_nvls[] = {
    {"plan: NVLS channels, heads (channel c's turn from head c), chunks, "
     "connections",
     test_plan_counts},
    {"traffic S + S/8 per link direction; faster than ring",
     test_traffic_and_speed},
    {"tuner: NCCL's NVLS model and picks, refusals", test_tuner},
    {"flow: busbw rises with the size", test_flow_rises_with_size},
    {"flow within 3 % of packet, 16 MiB - 1 GiB", test_flow_agrees},
    {"algbw x (1 + 1/n) constant over 5..8 GPUs (NCCL #1455)",
     test_scaling_with_gpus},
    CU_TEST_INFO_NULL,
};
