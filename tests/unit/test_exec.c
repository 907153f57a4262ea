/* SPDX-License-Identifier: MIT
 *
 * test_exec.c - the executor on the models: ring AllReduce on ideal links
 * against the alpha-beta formula; channels help until a link saturates;
 * more QPs never lose bytes; the seed example's two channels carry their
 * halves; the same seed gives the same result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/exec.h"
#include "sim/exec/scenario.h"
#include "sim/plan/plan.h"
#include "models/fabric.h"
#include "models/transport.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

/* n GPUs on one NVSwitch, each with one link of bw bytes/s, hop_ps per hop. */
static nsim_topo *star(uint32_t n, double bw, nsim_time hop_ps)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    if (nsim_topo_create("star", &t, &err) != NSIM_OK)
        return NULL;
    nsim_device sw = {.type = NSIM_DEV_NVSWITCH, .rank = -1};
    snprintf(sw.name, sizeof sw.name, "nvs");
    uint32_t swi;
    if (nsim_topo_add_device(t, &sw, &swi, &err) != NSIM_OK)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        nsim_device g = {.type = NSIM_DEV_GPU, .rank = -1};
        snprintf(g.name, sizeof g.name, "gpu%u", i);
        snprintf(g.gen, sizeof g.gen, "h100");
        uint32_t gi;
        if (nsim_topo_add_device(t, &g, &gi, &err) != NSIM_OK ||
            nsim_topo_add_link(t, gi, swi, NSIM_LINK_NVLINK, bw, hop_ps, 1,
                               NULL, &err) != NSIM_OK)
            return NULL;
    }
    if (nsim_topo_finalize(t, "star", &err) != NSIM_OK)
        return NULL;
    return t;
}

/* Ideal: no headers, no per-step costs, thread blocks far faster than
 * the links. */
static void ideal_params(nsim_params *p)
{
    nsim_params_defaults(p);
    p->nvlink_header_bytes = 0;
    p->nvlink_response_bytes = 0;
    p->kernel_launch_ps = 0;
    p->p2p_step_sync_ps = 0;
    p->h100_hbm_bw = 1e18;
    p->stream_chunk_bytes = 16384;
}

static void test_ideal_links_match_alpha_beta(void)
{
    const uint32_t ns[] = {2, 4, 8};
    const uint64_t sizes[] = {256u << 20, 1u << 30};
    const double bw = 50e9;
    const nsim_time hop = 250000; /* 250 ns per hop, alpha = 500 ns */
    nsim_params prm;
    ideal_params(&prm);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 2; j++) {
            nsim_err err = {0};
            nsim_topo *t = star(ns[i], bw, hop);
            CU_ASSERT_PTR_NOT_NULL_FATAL(t);
            nsim_plan *p = NULL;
            nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING,
                               NSIM_PROTO_SIMPLE, sizes[j], 4, 1, 1, 4u << 20,
                               NSIM_CHANNEL_DEDICATED};
            NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
            nsim_exec_opts o = {1, 0, NULL};
            nsim_exec_result res;
            NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
            double n = ns[i], S = (double)sizes[j];
            double want = 2 * (n - 1) / n * S / bw + 2 * (n - 1) * 2 * hop / 1e12;
            double got = (double)res.time_ps / 1e12;
            double e = fabs(got - want) / want;
            if (e >= 0.01)
                fprintf(stderr, "\n  n=%u S=%llu: simulated %g s, formula %g s\n",
                        ns[i], (unsigned long long)sizes[j], got, want);
            CU_ASSERT(e < 0.01);
            CU_ASSERT(got >= want * 0.999); /* never faster than the wire */
            nsim_exec_result_free(&res);
            nsim_plan_destroy(p);
            nsim_topo_destroy(t);
        }
}

static double busbw(nsim_topo *t, const nsim_params *prm, uint64_t bytes,
                    uint32_t nch, uint32_t qps, uint64_t *moved)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       bytes, 4, nch, qps, 4u << 20, NSIM_CHANNEL_DEDICATED};
    nsim_exec_opts o = {1, 0, NULL};
    nsim_exec_result res;
    if (nsim_plan_build(t, &r, &p, &err) != NSIM_OK ||
        nsim_exec_run(t, p, prm, &o, &res, &err) != NSIM_OK) {
        fprintf(stderr, "\n  %s\n", err.msg);
        nsim_plan_destroy(p);
        return -1;
    }
    double alg = (double)bytes / ((double)res.time_ps / 1e12) / 1e9;
    double bb = alg * nsim_coll_busbw_factor(NSIM_COLL_ALLREDUCE, p->nranks);
    if (moved != NULL)
        *moved = res.bytes_moved;
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    return bb;
}

static void test_channels_help_until_saturation(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    const uint32_t nch[] = {1, 2, 4, 8, 16, 24, 32, 48};
    double bb[8];
    for (int i = 0; i < 8; i++)
        bb[i] = busbw(t, &prm, 256u << 20, nch[i], 1, NULL);
    /* growing while the thread blocks are the limit ... */
    for (int i = 1; i < 5; i++)
        CU_ASSERT(bb[i] > bb[i - 1] * 1.5);
    /* ... then flat once NVLink is: 18 links x 25 GB/s x 128/160 */
    CU_ASSERT(bb[7] < 360.0 * 1.01);
    CU_ASSERT(fabs(bb[7] - bb[6]) / bb[6] < 0.02);
    nsim_topo_destroy(t);
}

static void test_qps_never_lose_bytes(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    const uint64_t S = 64u << 20;
    for (uint32_t q = 1; q <= 8; q *= 2) {
        uint64_t moved = 0;
        double bb = busbw(t, &prm, S, 16, q, &moved);
        CU_ASSERT(bb > 0);
        /* ring AllReduce: 2(n-1) x S over all connections */
        CU_ASSERT_EQUAL(moved, 2 * 15 * S);
    }
    nsim_topo_destroy(t);
}

static void test_seed_example_halves(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "seed-4gpu.topo.json", &t, &err));
    nsim_plan *p = NULL;
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       8u << 20, 4, 2, 2, 4u << 20, NSIM_CHANNEL_DEDICATED};
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    CU_ASSERT_EQUAL(p->nchannels, 2);
    CU_ASSERT_EQUAL(p->chan_bytes[0], 4u << 20);
    CU_ASSERT_EQUAL(p->chan_bytes[1], 4u << 20);
    nsim_exec_opts o = {1, 1, NULL};
    nsim_exec_result res;
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    uint64_t per_chan[2] = {0, 0};
    for (uint32_t i = 0; i < p->nconns; i++)
        per_chan[p->conns[i].channel] += res.conns[i].bytes;
    /* each channel moves 2(n-1) x its half */
    CU_ASSERT_EQUAL(per_chan[0], 6 * (4u << 20));
    CU_ASSERT_EQUAL(per_chan[1], 6 * (4u << 20));
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static void test_same_seed_same_result(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    double a = busbw(t, &prm, 32u << 20, 16, 2, NULL);
    double b = busbw(t, &prm, 32u << 20, 16, 2, NULL);
    CU_ASSERT(a > 0);
    CU_ASSERT(a == b);
    nsim_topo_destroy(t);
}

/* Runs 2-node, 16 channels, q QPs with the given NET knobs and returns
 * the result with statistics. */
static int run_knobs(nsim_topo *t, uint32_t q, const nsim_net_knobs *k,
                     nsim_exec_result *res, uint64_t *send_qp_bytes_min,
                     uint64_t *send_qp_bytes_max, uint64_t *send_wrs)
{
    nsim_err err = {0};
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_params_defaults(&prm);
    nsim_plan_req r = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       32u << 20, 4, 16, q, 4u << 20, NSIM_CHANNEL_DEDICATED};
    nsim_exec_opts o = {1, 1, k};
    if (nsim_plan_build(t, &r, &p, &err) != NSIM_OK ||
        nsim_exec_run(t, p, &prm, &o, res, &err) != NSIM_OK) {
        fprintf(stderr, "\n  %s\n", err.msg);
        nsim_plan_destroy(p);
        return -1;
    }
    *send_qp_bytes_min = UINT64_MAX;
    *send_qp_bytes_max = 0;
    *send_wrs = 0;
    for (uint32_t i = 0; i < res->xport.nqps; i++) {
        const nsim_qp_record *qr = &res->xport.qps[i];
        if (qr->side != 0)
            continue;
        *send_wrs += qr->wrs;
        if (qr->bytes < *send_qp_bytes_min)
            *send_qp_bytes_min = qr->bytes;
        if (qr->bytes > *send_qp_bytes_max)
            *send_qp_bytes_max = qr->bytes;
    }
    nsim_plan_destroy(p);
    return 0;
}

static void test_net_knobs(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    nsim_exec_result base, split, shared, noar;
    uint64_t mn, mx, wrs_base, wrs_split, wrs_shared, wrs_noar;
    nsim_net_knobs kb = NSIM_NET_KNOBS_DEFAULT;
    CU_ASSERT_EQUAL_FATAL(run_knobs(t, 4, &kb, &base, &mn, &mx, &wrs_base), 0);
    /* messages rotate over the 4 QPs: every QP carries some */
    CU_ASSERT(mn > 0);
    nsim_net_knobs ks = kb;
    ks.split_data_on_qps = 1;
    CU_ASSERT_EQUAL_FATAL(run_knobs(t, 4, &ks, &split, &mn, &mx, &wrs_split), 0);
    /* every message split in 4: 4x the WRs, balanced bytes per QP */
    CU_ASSERT_EQUAL(wrs_split, 4 * wrs_base);
    CU_ASSERT(mx - mn <= mx / 50);
    nsim_net_knobs kh = kb;
    kh.shared_comms = 1;
    CU_ASSERT_EQUAL_FATAL(run_knobs(t, 4, &kh, &shared, &mn, &mx, &wrs_shared),
                          0);
    /* channels c and c+8 share a comm: half the QPs, the same WRs */
    CU_ASSERT_EQUAL(shared.xport.nqps * 2, base.xport.nqps);
    CU_ASSERT_EQUAL(wrs_shared, wrs_base);
    nsim_net_knobs kn = kb;
    kn.adaptive_routing = 0;
    CU_ASSERT_EQUAL_FATAL(run_knobs(t, 4, &kn, &noar, &mn, &mx, &wrs_noar), 0);
    /* IB's adaptive routing adds a zero-byte WRITE_WITH_IMM per message
     * above 8 KiB; without it, one WR per message */
    CU_ASSERT(wrs_noar < wrs_base);
    /* the same bytes in every mode */
    CU_ASSERT_EQUAL(base.bytes_moved, split.bytes_moved);
    CU_ASSERT_EQUAL(base.bytes_moved, shared.bytes_moved);
    CU_ASSERT_EQUAL(base.bytes_moved, noar.bytes_moved);
    nsim_exec_result_free(&base);
    nsim_exec_result_free(&split);
    nsim_exec_result_free(&shared);
    nsim_exec_result_free(&noar);
    nsim_topo_destroy(t);
}

/* Time (ps) and payload moved by one collective with a protocol. */
static nsim_time run_coll(nsim_topo *t, nsim_coll c, nsim_proto proto,
                          uint64_t bytes, uint32_t nch, uint64_t *moved)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    nsim_plan_req r = {c, NSIM_ALGO_RING, proto, bytes, 4, nch, 1, 4u << 20,
                       NSIM_CHANNEL_DEDICATED, 0, 0};
    nsim_exec_opts o = {1, 0};
    nsim_exec_result res;
    if (nsim_plan_build(t, &r, &p, &err) != NSIM_OK ||
        nsim_exec_run(t, p, &prm, &o, &res, &err) != NSIM_OK) {
        fprintf(stderr, "\n  %s\n", err.msg);
        nsim_plan_destroy(p);
        return 0;
    }
    if (moved != NULL)
        *moved = res.bytes_moved;
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    return res.time_ps;
}

/* LL's flag polling makes small messages fast; its 50 % lines halve the
 * bandwidth of large ones, where Simple wins (hwdata 15, nccl 3.1). */
static void test_protocols_small_and_large(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100.topo.json", &t, &err));
    nsim_time s8 = run_coll(t, NSIM_COLL_ALLREDUCE, NSIM_PROTO_SIMPLE, 8, 0,
                            NULL);
    nsim_time l8 = run_coll(t, NSIM_COLL_ALLREDUCE, NSIM_PROTO_LL, 8, 0, NULL);
    nsim_time m8 = run_coll(t, NSIM_COLL_ALLREDUCE, NSIM_PROTO_LL128, 8, 0,
                            NULL);
    CU_ASSERT(l8 > 0 && l8 < m8 && m8 < s8);
    nsim_time sl = run_coll(t, NSIM_COLL_ALLREDUCE, NSIM_PROTO_SIMPLE,
                            32u << 20, 0, NULL);
    nsim_time ll = run_coll(t, NSIM_COLL_ALLREDUCE, NSIM_PROTO_LL, 32u << 20,
                            0, NULL);
    CU_ASSERT(sl > 0 && ll > (nsim_time)(1.5 * (double)sl));
    nsim_topo_destroy(t);
}

/* Every collective moves the payload its pattern implies, end to end on
 * the seed example (NVLink and IB): ring AG/RS (n-1) x S, chain
 * Broadcast/Reduce (n-1) x S, SendRecv n x S, AllToAll n(n-1)/n x S. */
static void test_collectives_conserve_bytes(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "seed-4gpu.topo.json", &t, &err));
    const uint64_t S = 1u << 20;
    const struct {
        nsim_coll c;
        uint64_t moved;
    } want[] = {{NSIM_COLL_ALLGATHER, 3 * S},   {NSIM_COLL_REDUCESCATTER, 3 * S},
                {NSIM_COLL_BROADCAST, 3 * S},   {NSIM_COLL_REDUCE, 3 * S},
                {NSIM_COLL_SENDRECV, 4 * S},    {NSIM_COLL_ALLTOALL, 3 * S}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t moved = 0;
        CU_ASSERT(run_coll(t, want[i].c, NSIM_PROTO_SIMPLE, S, 2, &moved) > 0);
        CU_ASSERT_EQUAL(moved, want[i].moved);
    }
    nsim_topo_destroy(t);
}

/* Runs a scenario's largest size with its fault plan; every connection
 * must deliver each slice exactly once. */
static int run_faulty(const char *file, nsim_exec_result *res, double *t_us)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_plan *p = NULL;
    nsim_fault_plan fp;
    char path[1024];
    snprintf(path, sizeof path, "%s/faults/%s", NSIM_TEST_DATA, file);
    int rc = nsim_scenario_load(path, &s, &err);
    nsim_plan_req r;
    if (rc == NSIM_OK) {
        r = nsim_scenario_request(s, s->max_bytes);
        rc = nsim_plan_build(s->topo, &r, &p, &err);
    }
    if (rc == NSIM_OK)
        rc = nsim_scenario_fault_plan(s, p->nchannels, &fp, &err);
    nsim_exec_opts o = {s ? s->seed : 1, 1, s ? &s->net : NULL, &fp};
    if (rc == NSIM_OK)
        rc = nsim_exec_run(s->topo, p, &s->params, &o, res, &err);
    if (rc != NSIM_OK)
        fprintf(stderr, "\n  %s: %s\n", file, err.msg);
    for (uint32_t i = 0; rc == NSIM_OK && i < res->nconns; i++) {
        CU_ASSERT_EQUAL(res->conns[i].bytes, res->conns[i].recv_bytes);
        CU_ASSERT_EQUAL(res->conns[i].slices, res->conns[i].recv_slices);
    }
    if (rc == NSIM_OK)
        *t_us = (double)res->time_ps / 1e6;
    nsim_plan_destroy(p);
    nsim_scenario_destroy(s);
    return rc;
}

static uint32_t qps_in_err(const nsim_exec_result *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->xport.nqps; i++)
        n += strcmp(r->xport.qps[i].state, "ERR") == 0;
    return n;
}

static void test_failover_exactly_once(void)
{
    nsim_exec_result r;
    double t = 0, t0 = 0;
    /* the seed example: QP 0 of channel 1 dies, its work moves to QP 1 */
    char seed[1024];
    snprintf(seed, sizeof seed, "../../../scenarios/seed-failover.json");
    CU_ASSERT_EQUAL_FATAL(run_faulty(seed, &r, &t), 0);
    CU_ASSERT_EQUAL(r.xport.nfailovers, 2); /* both directions of channel 1 */
    CU_ASSERT_EQUAL(r.xport.failovers[0].channel, 1);
    CU_ASSERT_EQUAL(r.xport.failovers[0].action, NSIM_FAILOVER_REBIND_QP);
    CU_ASSERT_EQUAL(qps_in_err(&r), 4); /* two QP pairs */
    nsim_exec_result_free(&r);
    /* a port down moves channels to other NICs after the setup cost */
    CU_ASSERT_EQUAL_FATAL(run_faulty("port_down_rebind_nic.json", &r, &t), 0);
    CU_ASSERT(r.xport.nfailovers >= 4);
    CU_ASSERT_EQUAL(r.xport.failovers[0].action, NSIM_FAILOVER_REBIND_NIC);
    CU_ASSERT(t > 1000.0); /* the reconnect (1 ms) is on the critical path */
    nsim_exec_result_free(&r);
    /* a dead link is found by RC timeouts, then the NIC is changed */
    CU_ASSERT_EQUAL_FATAL(run_faulty("link_down_timeout_rebind_nic.json", &r,
                                     &t), 0);
    CU_ASSERT(r.xport.nfailovers >= 2);
    nsim_exec_result_free(&r);
    /* random loss: go-back-N recovers, nothing to fail over */
    CU_ASSERT_EQUAL_FATAL(run_faulty("loss_retransmit.json", &r, &t), 0);
    uint64_t retx = 0;
    for (uint32_t i = 0; i < r.xport.nqps; i++)
        retx += r.xport.qps[i].retransmits;
    CU_ASSERT(retx > 0);
    CU_ASSERT_EQUAL(r.xport.nfailovers, 0);
    nsim_exec_result_free(&r);
    /* a degraded rail slows the whole ring */
    CU_ASSERT_EQUAL_FATAL(run_faulty("link_degraded.json", &r, &t), 0);
    nsim_exec_result_free(&r);
    CU_ASSERT_EQUAL_FATAL(run_faulty("loss_retransmit.json", &r, &t0), 0);
    nsim_exec_result_free(&r);
    CU_ASSERT(t > t0 * 1.5);
}

static void test_failover_policy_fail(void)
{
    nsim_exec_result r;
    double t;
    CU_ASSERT_NOT_EQUAL(run_faulty("policy_fail.json", &r, &t), 0);
}

/* A dual-port NIC stripes the QPs over its ports and splits every
 * message in two; before Hopper every Simple receive is followed by a
 * 1-byte RDMA READ flush on a loopback QP. */
static void test_ports_and_flush(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_exec_result r;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(NSIM_TEST_DATA "/seed-dualport.topo.json",
                                  &t, &err));
    nsim_plan_req q = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       16u << 20, 4, 2, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    nsim_exec_opts o = {1, 1, NULL, NULL};
    NSIM_ASSERT_OK(nsim_plan_build(t, &q, &p, &err));
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &r, &err));
    uint64_t port_bytes[2] = {0, 0};
    uint32_t np = 0;
    for (uint32_t i = 0; i < r.nlinks; i++) {
        const nsim_link *l = nsim_topo_link(t, r.links[i].link);
        if (l->type == NSIM_LINK_IB &&
            strcmp(nsim_topo_device(t, l->src)->name, "h0.nic") == 0 && np < 2)
            port_bytes[np++] = r.links[i].bytes;
    }
    CU_ASSERT_EQUAL(np, 2);
    CU_ASSERT(port_bytes[0] > 0 && port_bytes[1] > 0);
    double ratio = (double)port_bytes[0] / (double)port_bytes[1];
    CU_ASSERT(ratio > 0.99 && ratio < 1.01);
    nsim_exec_result_free(&r);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);

    NSIM_ASSERT_OK(nsim_topo_load(NSIM_TEST_DATA "/dgx-a100-2node.topo.json",
                                  &t, &err));
    nsim_plan_req qa = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                        8u << 20, 4, 16, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    NSIM_ASSERT_OK(nsim_plan_build(t, &qa, &p, &err));
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &r, &err));
    uint64_t cqes = 0, recv_slices = 0;
    for (uint32_t i = 0; i < r.xport.ncqs; i++)
        if (r.xport.cqs[i].side == 1)
            cqes += r.xport.cqs[i].cqes;
    for (uint32_t i = 0; i < r.nconns; i++)
        if (p->conns[i].transport == NSIM_TRANSPORT_NET)
            recv_slices += r.conns[i].recv_slices;
    /* one receive completion and one flush completion per slice (the
     * CTS writes signal once per 256 and add a few) */
    CU_ASSERT(cqes >= 2 * recv_slices);
    CU_ASSERT(cqes < 2 * recv_slices + recv_slices / 64 + 64);
    nsim_exec_result_free(&r);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* GPUs without P2P (GeForce-class) stage through host memory (SHM):
 * the data crosses the CPU's PCIe link twice, the second time as read
 * completions, so busbw falls below the P2P figure on the same wires. */
static void test_shm_without_p2p(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "pcie-2gpu-nop2p.topo.json", &t, &err));
    nsim_plan *p = NULL;
    nsim_plan_req q = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE,
                       64u << 20, 4, 2, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    NSIM_ASSERT_OK(nsim_plan_build(t, &q, &p, &err));
    for (uint32_t i = 0; i < p->nconns; i++)
        CU_ASSERT_EQUAL(p->conns[i].transport, NSIM_TRANSPORT_SHM);
    nsim_plan_destroy(p);
    uint64_t moved = 0;
    double shm = busbw(t, &prm, 64u << 20, 2, 1, &moved);
    CU_ASSERT_EQUAL(moved, 2 * 1 * (64u << 20)); /* 2(n-1) x S, n = 2 */
    nsim_topo_destroy(t);
    /* the same box with P2P allowed */
    NSIM_ASSERT_OK(nsim_topo_load(NSIM_TEST_DATA "/pcie-2gpu-p2p.topo.json", &t,
                                  &err));
    double p2p = busbw(t, &prm, 64u << 20, 2, 1, NULL);
    CU_ASSERT(shm > 0 && p2p > 1.5 * shm);
    nsim_topo_destroy(t);
}

/* When the receiver of an SHM connection (P2P transport, staged through
 * host memory) sees one slice of bytes: the P2P transport driven alone,
 * one send on the pcie-2gpu-nop2p box. */
static nsim_time on_arrived_at;
static void note_arrived(void *exec, uint32_t conn)
{
    nsim_sim *sim = exec;
    (void)conn;
    on_arrived_at = nsim_sim_now(sim);
}
static void no_credit(void *exec, uint32_t conn)
{
    (void)exec;
    (void)conn;
}

static nsim_time shm_slice_arrival(nsim_proto proto, uint64_t bytes)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_plan *p = NULL;
    nsim_sim *sim = NULL;
    nsim_fabric *fab = NULL;
    void *state = NULL;
    uint32_t sm;
    nsim_time sm_done;
    static const nsim_net_knobs knobs = NSIM_NET_KNOBS_DEFAULT;
    static const nsim_fault_plan none = {NULL, 0, {NSIM_FAILOVER_REBIND_QP}};
    nsim_params_defaults(&prm);
    prm.stream_min_pieces = 1; /* 64 KiB pieces, as counted below */
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "pcie-2gpu-nop2p.topo.json", &t, &err));
    nsim_plan_req q = {NSIM_COLL_ALLREDUCE, NSIM_ALGO_RING, proto, bytes, 4,
                       1, 1, 4u << 20, NSIM_CHANNEL_DEDICATED};
    NSIM_ASSERT_OK(nsim_plan_build(t, &q, &p, &err));
    CU_ASSERT_EQUAL_FATAL(p->conns[0].transport, NSIM_TRANSPORT_SHM);
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_fabric_create(sim, t, &prm, &fab, &err));
    nsim_xport_env env = {sim,          fab,  t,           &prm, p, &knobs,
                          &none,        sim,  note_arrived, no_credit, NULL};
    NSIM_ASSERT_OK(nsim_p2p_transport.setup(NULL, &env, 0, &state, &err));
    NSIM_ASSERT_OK(nsim_fabric_add_server(fab, 20e9, 0, NSIM_WIRE_RAW, &sm));
    on_arrived_at = 0;
    NSIM_ASSERT_OK(nsim_p2p_transport.send(state, sm, bytes, &sm_done));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    nsim_time at = on_arrived_at;
    nsim_p2p_transport.teardown(state);
    nsim_fabric_destroy(fab);
    nsim_sim_destroy(sim);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
    return at;
}

/* With Simple the sender posts a slice by a tail store after all its
 * data, so the receiver reads the slice back from host memory once the
 * whole of it is in; LL and LL128 carry flags with the data and are read
 * piece by piece as they land. One 1 MiB slice (16 pieces of 64 KiB) over
 * 15.76 GB/s PCIe links: the write costs 1.09 wire bytes a byte (73 us),
 * the read's completions 1.31 (87 us). Simple: the write, its last piece
 * through two more hops, then the read: 174 us. LL: the reads from the
 * first piece's landing on: 106 us. */
static void test_shm_simple_reads_whole_slice(void)
{
    const uint64_t bytes = 1u << 20;
    nsim_time simple = shm_slice_arrival(NSIM_PROTO_SIMPLE, bytes);
    nsim_time ll = shm_slice_arrival(NSIM_PROTO_LL, bytes);
    CU_ASSERT(ll > 95000000 && ll < 115000000); /* ps */
    CU_ASSERT(simple > 165000000 && simple < 185000000);
    CU_ASSERT(simple > ll + 60000000);
}

/* A link type's efficiency scales that type's rate alone: on ideal
 * NVLink at 50 % the ring takes the alpha-beta time of half the rate. */
static void test_link_efficiency(void)
{
    const double bw = 50e9;
    const uint64_t size = 256u << 20;
    nsim_params prm;
    ideal_params(&prm);
    prm.nvlink_efficiency_pct = 50;
    prm.pcie_efficiency_pct = 10; /* no PCIe on the path: no effect */
    nsim_topo *t = star(4, bw, 250000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double got = busbw(t, &prm, size, 1, 1, NULL);
    /* busbw of an ideal ring is the link rate */
    CU_ASSERT(fabs(got * 1e9 - bw * 0.5) / (bw * 0.5) < 0.01);
    prm.nvlink_efficiency_pct = 100;
    double full = busbw(t, &prm, size, 1, 1, NULL);
    CU_ASSERT(fabs(full / got - 2.0) < 0.02);
    nsim_topo_destroy(t);
}

/* Staged copies pass their CPU's memory: SHM writes there and reads back
 * (two passes per byte), a NET send without GPUDirect RDMA stages there
 * and the NIC reads it (two more on the receiving host). A slow host
 * memory bounds busbw by those passes; the default (307 GB/s) does not
 * bind these boxes. */
static void test_host_memory_staging(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_params prm;
    nsim_params_defaults(&prm);
    const uint64_t size = 64u << 20;
    /* SHM, 2 GPUs under one CPU: 2 ranks x S bytes x 2 passes */
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "pcie-2gpu-nop2p.topo.json", &t, &err));
    double fast = busbw(t, &prm, size, 2, 1, NULL);
    prm.host_mem_bw = 2e9;
    double slow = busbw(t, &prm, size, 2, 1, NULL);
    double bound = 2e9 / (2 * 2) / 1e9; /* GB/s, busbw factor 1 at n = 2 */
    CU_ASSERT(slow <= bound * 1.001);
    CU_ASSERT(slow >= bound * 0.8);
    CU_ASSERT(fast > 2 * slow);
    nsim_topo_destroy(t);
    /* NET without GDR, one GPU per host: per host S bytes out and S in,
     * two passes each */
    nsim_params_defaults(&prm);
    NSIM_ASSERT_OK(nsim_topo_load(NSIM_TEST_DATA
                                  "/a100pcie-2host-hdr-nogdr.topo.json",
                                  &t, &err));
    fast = busbw(t, &prm, size, 2, 1, NULL);
    prm.host_mem_bw = 4e9;
    slow = busbw(t, &prm, size, 2, 1, NULL);
    bound = 4e9 / 4 / 1e9;
    CU_ASSERT(slow <= bound * 1.001);
    CU_ASSERT(slow >= bound * 0.8);
    CU_ASSERT(fast > 2 * slow);
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_exec[] = {
    {"a link type's efficiency scales its rate", test_link_efficiency},
    {"staged copies pass host memory", test_host_memory_staging},
    {"GPUs without P2P go through host memory", test_shm_without_p2p},
    {"SHM with Simple: a slice read back once it is all in",
     test_shm_simple_reads_whole_slice},
    {"dual-port NICs and the GDR flush read", test_ports_and_flush},
    {"failover: every byte delivered exactly once",
     test_failover_exactly_once},
    {"failover policy fail stops the run", test_failover_policy_fail},
    {"NET knobs: split data, shared comms, adaptive routing", test_net_knobs},
    {"ideal links match the alpha-beta formula",
     test_ideal_links_match_alpha_beta},
    {"channels help until a link saturates",
     test_channels_help_until_saturation},
    {"more QPs never lose bytes", test_qps_never_lose_bytes},
    {"seed example: two channels, two halves", test_seed_example_halves},
    {"same seed, same result", test_same_seed_same_result},
    {"LL fast when small, Simple when large", test_protocols_small_and_large},
    {"collectives conserve bytes", test_collectives_conserve_bytes},
    CU_TEST_INFO_NULL,
};
