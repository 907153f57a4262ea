/* SPDX-License-Identifier: MIT
 *
 * test_hca.c - the RC QP / MR / CQ model as the verbs API reports it: the
 * state machine and posting in the wrong state, opcodes and their
 * completions, unsignaled WRs holding send queue slots, READ limits, local
 * and remote protection errors, CQ overflow, loss with go-back-N recovery
 * (every byte delivered exactly once), retry exhaustion (RETRY_EXC_ERR and
 * flushed WRs), receiver-not-ready (RNR NAK, wait, resend, rnr_retry),
 * rate limits, determinism.
 *
 * Topology: two hosts, each a GPU and a 400 Gb/s NIC under one PCIe link,
 * the NICs on one IB switch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/ib/hca.h"
#include "nsim_test.h"
#include "sim/topo/cluster.h"

#define MAXWR 256

typedef struct rig {
    nsim_err err;
    nsim_sim *sim;
    nsim_topo *t;
    nsim_params p;
    nsim_fabric *fab;
    nsim_hca *ha, *hb;
    nsim_cq *ca, *cb;
    nsim_qp *a, *b;
    uint32_t gpu[2], nic[2];
    uint32_t land_count[MAXWR];
    uint64_t land_bytes[MAXWR];
} rig;

static nsim_topo *two_hosts(rig *r)
{
    nsim_topo *t = NULL;
    uint32_t sw;
    char name[32];
    if (nsim_topo_create("hca", &t, &r->err) != NSIM_OK ||
        nsim_test_ib_device(t, NSIM_DEV_SWITCH, "ib", -1, &sw, &r->err) !=
            NSIM_OK)
        return NULL;
    for (int h = 0; h < 2; h++) {
        snprintf(name, sizeof name, "gpu%d", h);
        if (nsim_test_ib_device(t, NSIM_DEV_GPU, name, h, &r->gpu[h], &r->err))
            return NULL;
        snprintf(name, sizeof name, "nic%d", h);
        if (nsim_test_ib_device(t, NSIM_DEV_NIC, name, h, &r->nic[h],
                                &r->err) ||
            nsim_topo_add_link(t, r->gpu[h], r->nic[h], NSIM_LINK_PCIE, 4e9,
                               100000, 16, NULL, &r->err) ||
            nsim_topo_add_link(t, r->nic[h], sw, NSIM_LINK_IB, 50e9, 60000,
                               1, NULL, &r->err))
            return NULL;
    }
    if (nsim_topo_finalize(t, "hca", &r->err) != NSIM_OK)
        return NULL;
    return t;
}

static void on_land(void *ctx, nsim_qp *qp, uint64_t wr_id, uint64_t bytes)
{
    rig *r = ctx;
    (void)qp;
    if (wr_id < MAXWR) {
        r->land_count[wr_id]++;
        r->land_bytes[wr_id] += bytes;
    }
}

/* Two HCAs with one CQ each and QPs a -> b created (RESET). */
static int rig_create(rig *r, uint64_t seed, uint32_t sq_depth,
                      uint32_t cq_depth)
{
    memset(r, 0, sizeof *r);
    nsim_params_defaults(&r->p);
    if (nsim_sim_create(seed, &r->sim, &r->err) != NSIM_OK ||
        (r->t = two_hosts(r)) == NULL ||
        nsim_fabric_create(r->sim, r->t, &r->p, &r->fab, &r->err) ||
        nsim_hca_create(r->sim, r->fab, r->t, &r->p, r->nic[0], &r->ha,
                        &r->err) ||
        nsim_hca_create(r->sim, r->fab, r->t, &r->p, r->nic[1], &r->hb,
                        &r->err) ||
        nsim_cq_create(r->ha, cq_depth, NULL, NULL, &r->ca) ||
        nsim_cq_create(r->hb, cq_depth, NULL, NULL, &r->cb) ||
        nsim_qp_create(r->ha, r->ca, r->ca, sq_depth, &r->a) ||
        nsim_qp_create(r->hb, r->cb, r->cb, sq_depth, &r->b))
        return -1;
    nsim_qp_set_land_hook(r->b, on_land, r);
    return 0;
}

/* ... and connected both ways. */
static int rig_up(rig *r, uint64_t seed, uint32_t sq_depth, uint32_t cq_depth)
{
    if (rig_create(r, seed, sq_depth, cq_depth) != 0 ||
        nsim_qp_connect(r->a, r->b, r->gpu[0], r->gpu[1], &r->err) ||
        nsim_qp_connect(r->b, r->a, r->gpu[1], r->gpu[0], &r->err))
        return -1;
    return 0;
}

static void rig_down(rig *r)
{
    nsim_hca_destroy(r->ha);
    nsim_hca_destroy(r->hb);
    nsim_fabric_destroy(r->fab);
    nsim_topo_destroy(r->t);
    nsim_sim_destroy(r->sim);
}

static int run(rig *r) { return nsim_sim_run(r->sim, NSIM_TIME_MAX); }

/* Polls everything (up to max) into wc. */
static int drain(nsim_cq *cq, nsim_wc *wc, int max)
{
    int n = 0, k;
    while (n < max && (k = nsim_cq_poll(cq, max - n, wc + n)) > 0)
        n += k;
    return n;
}

static nsim_send_wr wr_write(uint64_t id, uint64_t bytes, int signaled)
{
    nsim_send_wr w = {id, NSIM_WR_RDMA_WRITE, bytes, 0, signaled};
    return w;
}

static void short_timeout(nsim_qp *q, uint32_t t, uint32_t retry)
{
    nsim_err err = {0};
    nsim_qp_attr a = {.mask = NSIM_QP_ATTR_TIMEOUT | NSIM_QP_ATTR_RETRY_CNT,
                      .timeout = t, .retry_cnt = retry};
    NSIM_ASSERT_OK(nsim_qp_modify(q, NSIM_QPS_RTS, &a, &err));
}

/* ---- state machine ------------------------------------------------------ */

static void test_state_machine(void)
{
    rig r;
    nsim_err err = {0};
    nsim_wc wc[8];
    CU_ASSERT_EQUAL_FATAL(rig_create(&r, 1, 8, 64), 0);
    nsim_send_wr w = wr_write(1, 100, 1);
    nsim_qp_attr at = {.dest_qp = r.b, .local_mem = r.gpu[0],
                       .remote_mem = r.gpu[1]};
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_RESET);
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &w), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_post_recv(r.a, 1), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTR, &at, &err), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTS, &at, &err), NSIM_ESTATE);
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_INIT, NULL, &err));
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_INIT, NULL, &err));
    NSIM_ASSERT_OK(nsim_qp_post_recv(r.a, 7)); /* allowed from INIT */
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &w), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTS, &at, &err), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTR, NULL, &err),
                    NSIM_EINVAL); /* RTR needs the peer */
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RTR, &at, &err));
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &w), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_INIT, NULL, &err),
                    NSIM_ESTATE);
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RTS, NULL, &err));
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RTS, NULL, &err));
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTR, &at, &err), NSIM_ESTATE);
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_RTS);
    /* -> ERR flushes the posted receive; posts in ERR are flushed too */
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_ERR, NULL, &err));
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_ERR);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(nsim_qp_post_recv(r.a, 8));
    CU_ASSERT_EQUAL(nsim_qp_modify(r.a, NSIM_QPS_RTS, NULL, &err), NSIM_ESTATE);
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 3);
    CU_ASSERT(wc[0].wr_id == 7 && wc[0].status == NSIM_WC_WR_FLUSH_ERR &&
              wc[0].opcode == NSIM_WC_RECV);
    CU_ASSERT(wc[1].wr_id == 1 && wc[1].status == NSIM_WC_WR_FLUSH_ERR);
    CU_ASSERT(wc[2].wr_id == 8 && wc[2].status == NSIM_WC_WR_FLUSH_ERR);
    /* ERR -> RESET -> a fresh bring-up works */
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RESET, NULL, &err));
    NSIM_ASSERT_OK(nsim_qp_connect(r.a, r.b, r.gpu[0], r.gpu[1], &err));
    NSIM_ASSERT_OK(nsim_qp_connect(r.b, r.a, r.gpu[1], r.gpu[0], &err));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    CU_ASSERT_EQUAL(r.land_count[1], 1);
    rig_down(&r);
}

/* A responder still in INIT drops everything: the requester retries, then
 * fails with RETRY_EXC_ERR. */
static void test_responder_not_ready(void)
{
    rig r;
    nsim_err err = {0};
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_create(&r, 1, 8, 64), 0);
    NSIM_ASSERT_OK(nsim_qp_connect(r.a, r.b, r.gpu[0], r.gpu[1], &err));
    NSIM_ASSERT_OK(nsim_qp_modify(r.b, NSIM_QPS_INIT, NULL, &err));
    short_timeout(r.a, 2, 3);
    nsim_send_wr w = wr_write(1, 5000, 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_RETRY_EXC_ERR);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.a).timeouts, 4);
    CU_ASSERT_EQUAL(r.land_count[1], 0);
    rig_down(&r);
}

/* ---- opcodes ------------------------------------------------------------ */

static void test_opcodes(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 16, 64), 0);
    NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, 100));
    NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, 101));
    nsim_send_wr w0 = wr_write(0, 10000, 1);
    nsim_send_wr w1 = {1, NSIM_WR_RDMA_WRITE_WITH_IMM, 20000, 0xabcd, 1};
    nsim_send_wr w2 = {2, NSIM_WR_SEND, 3000, 0, 1};
    nsim_send_wr w3 = {3, NSIM_WR_RDMA_WRITE_WITH_IMM, 0, 42, 0}; /* 0 B */
    nsim_send_wr bad = {4, (nsim_wr_opcode)99, 1, 0, 1};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w0));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w1));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w2));
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &bad), NSIM_EINVAL);
    NSIM_ASSERT_OK(run(&r));
    /* the first two receives are taken, in message order */
    CU_ASSERT_EQUAL_FATAL(drain(r.cb, wc, 8), 2);
    CU_ASSERT(wc[0].wr_id == 100 &&
              wc[0].opcode == NSIM_WC_RECV_RDMA_WITH_IMM &&
              wc[0].imm == 0xabcd && wc[0].byte_len == 20000 &&
              wc[0].status == NSIM_WC_SUCCESS &&
              wc[0].qp_num == nsim_qp_num(r.b));
    CU_ASSERT(wc[1].wr_id == 101 && wc[1].opcode == NSIM_WC_RECV &&
              wc[1].byte_len == 3000);
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 3);
    CU_ASSERT(wc[0].wr_id == 0 && wc[0].opcode == NSIM_WC_RDMA_WRITE);
    CU_ASSERT(wc[1].wr_id == 1 && wc[1].opcode == NSIM_WC_RDMA_WRITE);
    CU_ASSERT(wc[2].wr_id == 2 && wc[2].opcode == NSIM_WC_SEND &&
              wc[2].qp_num == nsim_qp_num(r.a));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(r.land_count[i], 1);
    CU_ASSERT_EQUAL(r.land_bytes[1], 20000);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).rx_bytes, 33000);
    /* a 0-byte write-with-immediate still consumes a receive */
    NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, 102));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w3));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.cb, wc, 8), 1);
    CU_ASSERT(wc[0].wr_id == 102 && wc[0].imm == 42 && wc[0].byte_len == 0);
    CU_ASSERT_EQUAL(drain(r.ca, wc, 8), 0); /* unsignaled */
    rig_down(&r);
}

static void test_read(void)
{
    rig r;
    nsim_err err = {0};
    nsim_wc wc[4];
    nsim_mr *lm, *rm;
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 16, 64), 0);
    NSIM_ASSERT_OK(nsim_mr_reg(r.ha, r.gpu[0], 1 << 20,
                               NSIM_ACCESS_LOCAL_WRITE, &lm, &err));
    NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 1 << 20,
                               NSIM_ACCESS_REMOTE_READ, &rm, &err));
    CU_ASSERT(nsim_mr_lkey(lm) != 0 && nsim_mr_lkey(lm) != nsim_mr_rkey(rm));
    nsim_send_wr w = {9, NSIM_WR_RDMA_READ, 1 << 20, 0, 1,
                      nsim_mr_lkey(lm), 0, nsim_mr_rkey(rm), 0};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    CU_ASSERT(wc[0].wr_id == 9 && wc[0].opcode == NSIM_WC_RDMA_READ &&
              wc[0].status == NSIM_WC_SUCCESS && wc[0].byte_len == 1 << 20);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.a).read_bytes, 1 << 20);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).rx_bytes, 0);
    rig_down(&r);
}

/* 32 small READs: with max_rd_atomic 1 each waits for the previous one's
 * round trip; with the default 16 they overlap. */
static nsim_time reads_time(uint32_t max_rd)
{
    rig r;
    nsim_err err = {0};
    nsim_wc wc[64];
    if (rig_up(&r, 1, 64, 64) != 0)
        return 0;
    nsim_qp_attr a = {.mask = NSIM_QP_ATTR_MAX_RD_ATOMIC,
                      .max_rd_atomic = max_rd};
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RTS, &a, &err));
    for (uint64_t i = 0; i < 32; i++) {
        nsim_send_wr w = {i, NSIM_WR_RDMA_READ, 256, 0, 1};
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    }
    NSIM_ASSERT_OK(run(&r));
    nsim_time t = nsim_sim_now(r.sim);
    CU_ASSERT_EQUAL(drain(r.ca, wc, 64), 32);
    for (int i = 0; i < 32; i++)
        CU_ASSERT(wc[i].wr_id == (uint64_t)i &&
                  wc[i].status == NSIM_WC_SUCCESS);
    rig_down(&r);
    return t;
}

static void test_read_limit(void)
{
    nsim_time one = reads_time(1), many = reads_time(16);
    CU_ASSERT(one > 0 && many > 0);
    CU_ASSERT(one > 4 * many);
    CU_ASSERT(one > 32 * 2 * 400000); /* 32 round trips of >= 0.8 us */
}

/* ---- send queue depth, unsignaled WRs ----------------------------------- */

static void test_unsignaled_slots(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[16];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    nsim_send_wr u = wr_write(0, 1000, 0), s = wr_write(7, 1000, 1);
    for (int i = 0; i < 7; i++)
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &s));
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &u), NSIM_EAGAIN);
    NSIM_ASSERT_OK(run(&r));
    /* the one signaled completion frees all eight slots */
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 16), 1);
    CU_ASSERT_EQUAL(wc[0].wr_id, 7);
    CU_ASSERT(nsim_qp_get_counters(r.a).blocked_ps > 0);
    /* eight unsignaled WRs: all delivered, but the slots stay taken */
    for (int i = 0; i < 8; i++)
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL(drain(r.ca, wc, 16), 0);
    CU_ASSERT_EQUAL(r.land_count[0], 15);
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &u), NSIM_EAGAIN);
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &s), NSIM_EAGAIN);
    rig_down(&r);
}

/* Queues and CQs start small and grow with what is outstanding: 300 WRs
 * posted at once on a 512-deep QP, with a 512-deep CQ, all land and
 * complete in order; the depth still bounds the queue. */
static void test_queues_grow_to_depth(void)
{
    nsim_err err = {0};
    rig r;
    static nsim_wc wc[600];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 512, 512), 0);
    for (uint64_t i = 0; i < 300; i++) {
        nsim_send_wr w = wr_write(i % MAXWR, 5000, 1);
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    }
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 600), 300);
    int in_order = 1;
    for (int i = 0; i < 300; i++)
        in_order &= wc[i].wr_id == (uint64_t)i % MAXWR &&
                    wc[i].status == NSIM_WC_SUCCESS;
    CU_ASSERT(in_order);
    /* 512 unsignaled WRs fill the depth exactly; one more is refused */
    nsim_send_wr u = wr_write(0, 100, 0);
    for (int i = 0; i < 511; i++)
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    u.signaled = 1;
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &u), NSIM_EAGAIN);
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL(drain(r.ca, wc, 600), 1);
    rig_down(&r);
}

/* The send queue's ring holds what is not yet completed, not what still
 * counts against the depth: 511 unsignaled writes posted one at a time,
 * each completed before the next (as a CTS QP posts them), charge no
 * more memory than the first; the depth still counts them all until a
 * signaled one is polled. */
static void test_unsignaled_ring_stays_small(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 512, 512), 0);
    nsim_send_wr u = wr_write(0, 100, 0);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    NSIM_ASSERT_OK(run(&r));
    uint64_t charged = nsim_sim_charged(r.sim);
    for (int i = 1; i < 511; i++) {
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
        NSIM_ASSERT_OK(run(&r));
    }
    CU_ASSERT_EQUAL(nsim_sim_charged(r.sim), charged);
    CU_ASSERT_EQUAL(r.land_count[0], 511);
    u.signaled = 1;
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    CU_ASSERT_EQUAL(nsim_qp_post_send(r.a, &u), NSIM_EAGAIN);
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL(drain(r.ca, wc, 4), 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &u));
    rig_down(&r);
}

static void test_recv_queue_full(void)
{
    nsim_err err = {0};
    rig r;
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 4, 64), 0);
    for (int i = 0; i < 4; i++)
        NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, i));
    CU_ASSERT_EQUAL(nsim_qp_post_recv(r.b, 4), NSIM_EAGAIN);
    rig_down(&r);
}

/* ---- protection errors -------------------------------------------------- */

/* Posts bad then good on a -> b; both sides' completions into wa / wb. */
static void two_wrs(rig *r, const nsim_send_wr *bad, nsim_wc *wa, int na,
                    nsim_wc *wb, int nb)
{
    nsim_err err = {0};
    nsim_send_wr good = wr_write(50, 4096, 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r->a, bad));
    NSIM_ASSERT_OK(nsim_qp_post_send(r->a, &good));
    CU_ASSERT_EQUAL(run(r), NSIM_OK);
    CU_ASSERT_EQUAL(drain(r->ca, wa, 8), na);
    CU_ASSERT_EQUAL(drain(r->cb, wb, 8), nb);
    if (na == 2) {
        CU_ASSERT_EQUAL(wa[0].wr_id, bad->wr_id);
        CU_ASSERT(wa[1].wr_id == 50 &&
                  wa[1].status == NSIM_WC_WR_FLUSH_ERR);
    }
    CU_ASSERT_EQUAL(nsim_qp_get_state(r->a), NSIM_QPS_ERR);
}

static void test_local_protection(void)
{
    for (int c = 0; c < 4; c++) {
        rig r;
        nsim_err err = {0};
        nsim_mr *mr, *ro;
        nsim_wc wa[8], wb[8];
        CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
        NSIM_ASSERT_OK(nsim_mr_reg(r.ha, r.gpu[0], 8192,
                                   NSIM_ACCESS_LOCAL_WRITE, &mr, &err));
        NSIM_ASSERT_OK(nsim_mr_reg(r.ha, r.gpu[0], 8192, 0, &ro, &err));
        nsim_send_wr w = {1, NSIM_WR_RDMA_WRITE, 4096, 0, 1,
                          nsim_mr_lkey(mr), 0, 0, 0};
        if (c == 0)
            w.lkey = 0x7777; /* no such key */
        else if (c == 1)
            w.local_off = 6000; /* past the end */
        else if (c == 2) { /* READ into an MR without LOCAL_WRITE */
            w.opcode = NSIM_WR_RDMA_READ;
            w.lkey = nsim_mr_lkey(ro);
        } else { /* key of the other HCA */
            nsim_mr *other;
            NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 8192,
                                       NSIM_ACCESS_LOCAL_WRITE, &other, &err));
            w.lkey = nsim_mr_lkey(other);
        }
        two_wrs(&r, &w, wa, 2, wb, 0);
        CU_ASSERT_EQUAL(wa[0].status, NSIM_WC_LOC_PROT_ERR);
        CU_ASSERT_EQUAL(r.land_count[1] + r.land_count[50], 0);
        CU_ASSERT_EQUAL(nsim_qp_get_state(r.b), NSIM_QPS_RTS);
        rig_down(&r);
    }
    /* a deregistered MR is a protection error too */
    rig r;
    nsim_err err = {0};
    nsim_mr *mr;
    nsim_wc wa[8], wb[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    NSIM_ASSERT_OK(nsim_mr_reg(r.ha, r.gpu[0], 8192, 0, &mr, &err));
    nsim_send_wr w = {1, NSIM_WR_RDMA_WRITE, 4096, 0, 1, nsim_mr_lkey(mr)};
    nsim_mr_dereg(mr);
    two_wrs(&r, &w, wa, 2, wb, 0);
    CU_ASSERT_EQUAL(wa[0].status, NSIM_WC_LOC_PROT_ERR);
    rig_down(&r);
}

static void test_remote_access(void)
{
    for (int c = 0; c < 5; c++) {
        rig r;
        nsim_err err = {0};
        nsim_mr *wr_mr, *rd_mr;
        nsim_wc wa[8], wb[8];
        CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
        NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 65536,
                                   NSIM_ACCESS_REMOTE_WRITE, &wr_mr, &err));
        NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 65536,
                                   NSIM_ACCESS_REMOTE_READ, &rd_mr, &err));
        NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, 200));
        nsim_send_wr w = {1, NSIM_WR_RDMA_WRITE, 16384, 0, 1, 0, 0,
                          nsim_mr_rkey(wr_mr), 0};
        if (c == 0)
            w.rkey = 0x1234; /* bad rkey */
        else if (c == 1)
            w.remote_off = 60000; /* out of range */
        else if (c == 2)
            w.rkey = nsim_mr_rkey(rd_mr); /* no REMOTE_WRITE */
        else if (c == 3)
            w.opcode = NSIM_WR_RDMA_READ; /* no REMOTE_READ */
        else
            w.remote_off = (uint64_t)-8; /* offset wraps */
        two_wrs(&r, &w, wa, 2, wb, 1);
        CU_ASSERT_EQUAL(wa[0].status, NSIM_WC_REM_ACCESS_ERR);
        /* the responder goes to ERR and flushes its receive */
        CU_ASSERT_EQUAL(nsim_qp_get_state(r.b), NSIM_QPS_ERR);
        CU_ASSERT(wb[0].wr_id == 200 && wb[0].status == NSIM_WC_WR_FLUSH_ERR);
        CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).naks_tx, 1);
        CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).rx_bytes, 0);
        rig_down(&r);
    }
    /* a correct rkey works, and so does the QP-level access check */
    rig r;
    nsim_err err = {0};
    nsim_mr *m;
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 65536,
                               NSIM_ACCESS_REMOTE_WRITE, &m, &err));
    nsim_send_wr w = {1, NSIM_WR_RDMA_WRITE, 16384, 0, 1, 0, 0,
                      nsim_mr_rkey(m), 65536 - 16384};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    rig_down(&r);
}

static void test_recv_too_short(void)
{
    rig r;
    nsim_err err = {0};
    nsim_mr *m;
    nsim_wc wa[8], wb[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    NSIM_ASSERT_OK(nsim_mr_reg(r.hb, r.gpu[1], 65536,
                               NSIM_ACCESS_LOCAL_WRITE, &m, &err));
    nsim_recv_wr rw = {300, nsim_mr_lkey(m), 0, 4096};
    NSIM_ASSERT_OK(nsim_qp_post_recv_wr(r.b, &rw));
    nsim_send_wr w = {1, NSIM_WR_SEND, 8192, 0, 1};
    two_wrs(&r, &w, wa, 2, wb, 1);
    CU_ASSERT_EQUAL(wa[0].status, NSIM_WC_REM_INV_REQ_ERR);
    CU_ASSERT(wb[0].wr_id == 300 && wb[0].status == NSIM_WC_LOC_LEN_ERR);
    rig_down(&r);
}

/* ---- CQ ----------------------------------------------------------------- */

static void test_cq_overflow(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[16];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 16, 4), 0);
    for (uint64_t i = 0; i < 8; i++) {
        nsim_send_wr w = wr_write(i, 1000, 1);
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    }
    CU_ASSERT_EQUAL(run(&r), NSIM_OK); /* no abort: an error in the model */
    CU_ASSERT_EQUAL(nsim_cq_in_error(r.ca), 1);
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_ERR);
    CU_ASSERT_EQUAL(nsim_cq_poll(r.ca, 16, wc), 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(wc[i].wr_id == (uint64_t)i &&
                  wc[i].status == NSIM_WC_SUCCESS);
    CU_ASSERT_EQUAL(nsim_cq_poll(r.ca, 16, wc), NSIM_EIO);
    nsim_cq_counters c = nsim_cq_get_counters(r.ca);
    CU_ASSERT(c.cqes == 4 && c.polls == 2 && c.empty_polls == 1 &&
              c.overflows >= 1);
    CU_ASSERT_EQUAL(nsim_cq_in_error(r.cb), 0);
    rig_down(&r);
}

/* ---- loss, go-back-N, retries ------------------------------------------- */

typedef struct loss_out {
    nsim_time end;
    nsim_qp_counters ca, cb;
    uint64_t lost;
} loss_out;

/* 64 WRITE_WITH_IMM of 64 KiB with packet loss on both HCAs; every WR
 * completes, lands once and consumes one receive. flow: in flow
 * fidelity (each message one flow of 16 wire packets). */
static loss_out lossy_run_in(uint64_t seed, double prob, int flow)
{
    nsim_err err = {0};
    rig r;
    loss_out o = {0};
    nsim_wc wc[128];
    CU_ASSERT_EQUAL_FATAL(rig_create(&r, seed, 64, 256), 0);
    if (flow)
        NSIM_ASSERT_OK(nsim_fabric_set_flow(r.fab, &err));
    NSIM_ASSERT_OK(nsim_qp_connect(r.a, r.b, r.gpu[0], r.gpu[1], &err));
    NSIM_ASSERT_OK(nsim_qp_connect(r.b, r.a, r.gpu[1], r.gpu[0], &err));
    short_timeout(r.a, 4, 7); /* 65.5 us */
    NSIM_ASSERT_OK(nsim_hca_set_loss(r.ha, prob, 11));
    NSIM_ASSERT_OK(nsim_hca_set_loss(r.hb, prob, 12));
    for (uint64_t i = 0; i < 64; i++) {
        nsim_send_wr w = {i, NSIM_WR_RDMA_WRITE_WITH_IMM, 65536, (uint32_t)i,
                          1};
        NSIM_ASSERT_OK(nsim_qp_post_recv(r.b, 1000 + i));
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    }
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL(drain(r.ca, wc, 128), 64);
    for (int i = 0; i < 64; i++)
        CU_ASSERT(wc[i].wr_id == (uint64_t)i &&
                  wc[i].status == NSIM_WC_SUCCESS);
    CU_ASSERT_EQUAL(drain(r.cb, wc, 128), 64);
    for (int i = 0; i < 64; i++) {
        CU_ASSERT(wc[i].wr_id == 1000u + i && wc[i].imm == (uint32_t)i &&
                  wc[i].byte_len == 65536 && wc[i].status == NSIM_WC_SUCCESS);
        CU_ASSERT(r.land_count[i] == 1 && r.land_bytes[i] == 65536);
    }
    o.end = nsim_sim_now(r.sim);
    o.ca = nsim_qp_get_counters(r.a);
    o.cb = nsim_qp_get_counters(r.b);
    o.lost = nsim_hca_get_counters(r.ha).packets_lost +
             nsim_hca_get_counters(r.hb).packets_lost;
    CU_ASSERT_EQUAL(o.cb.rx_bytes, 64u * 65536); /* exactly once */
    if (!flow) /* (flow counts a resumed message's packets twice) */
        CU_ASSERT_EQUAL(o.cb.rx_packets, 64u * 16);
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_RTS);
    rig_down(&r);
    return o;
}

static loss_out lossy_run(uint64_t seed, double prob)
{
    return lossy_run_in(seed, prob, 0);
}

static void test_loss_recovery(void)
{
    loss_out clean = lossy_run(5, 0);
    loss_out a = lossy_run(5, 0.02), b = lossy_run(5, 0.02);
    loss_out c = lossy_run(6, 0.02);
    CU_ASSERT_EQUAL(clean.ca.retransmits, 0);
    CU_ASSERT(a.lost > 0 && a.ca.retransmits > 0);
    CU_ASSERT(a.ca.naks + a.ca.timeouts > 0);
    CU_ASSERT(a.cb.rx_dup + a.cb.rx_out_of_seq > 0);
    CU_ASSERT(a.end > clean.end);
    /* same seed, same run; another seed, another run */
    CU_ASSERT(a.end == b.end && a.lost == b.lost &&
              a.ca.retransmits == b.ca.retransmits);
    CU_ASSERT(a.end != c.end || a.lost != c.lost);
}

/* Flow fidelity draws the loss per wire packet as a message is sent: a
 * message of 16 packets at 2 % each is lost with 1 - 0.98^16 = 28 %, so
 * about 18 of the 64 first sends alone (drawn once per message with 2 %,
 * as before, about 1); the requester goes back to the first lost packet
 * (a resumed pass lands the whole message once), and the run is
 * deterministic. Seeds 5 to 8 lose 23 to 43 (the resends draw too). */
static void test_loss_flow(void)
{
    loss_out clean = lossy_run_in(5, 0, 1);
    CU_ASSERT_EQUAL(clean.ca.retransmits, 0);
    for (uint64_t seed = 5; seed <= 8; seed++) {
        loss_out a = lossy_run_in(seed, 0.02, 1), b = lossy_run_in(seed, 0.02, 1);
        CU_ASSERT(a.lost >= 10 && a.lost <= 100);
        CU_ASSERT(a.ca.retransmits > 0 && a.end > clean.end);
        CU_ASSERT(a.end == b.end && a.lost == b.lost);
    }
}

/* One packet in the middle lost once: the next one draws a NAK (PSN
 * sequence error) and the requester goes back to it. */
static void test_nak_go_back_n(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    nsim_qp_drop_psn(r.a, 3, 1);
    nsim_send_wr w = wr_write(1, 10 * 4096, 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    nsim_qp_counters ca = nsim_qp_get_counters(r.a);
    nsim_qp_counters cb = nsim_qp_get_counters(r.b);
    CU_ASSERT_EQUAL(ca.dropped, 1);
    CU_ASSERT_EQUAL(ca.naks, 1);
    CU_ASSERT_EQUAL(cb.naks_tx, 1);
    CU_ASSERT_EQUAL(ca.timeouts, 0);
    CU_ASSERT(ca.retransmits >= 1 && ca.retransmits <= 7);
    CU_ASSERT_EQUAL(ca.packets, 10 + ca.retransmits);
    CU_ASSERT_EQUAL(cb.rx_packets, 10);
    CU_ASSERT_EQUAL(cb.rx_bytes, 10 * 4096);
    CU_ASSERT(cb.rx_out_of_seq >= 1);
    CU_ASSERT_EQUAL(r.land_count[1], 1);
    rig_down(&r);
}

/* The last packet lost once: nothing follows to draw a NAK, so the
 * transport timer recovers it. */
static void test_timeout_recovery(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    short_timeout(r.a, 3, 7); /* 32.8 us */
    nsim_qp_drop_psn(r.a, 4, 1);
    nsim_send_wr w = wr_write(1, 5 * 4096, 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    nsim_qp_counters ca = nsim_qp_get_counters(r.a);
    CU_ASSERT_EQUAL(ca.timeouts, 1);
    CU_ASSERT_EQUAL(ca.naks, 0);
    /* no ACK came back (coalesced up to the lost last packet): all five
     * go again, four are duplicates at the responder */
    CU_ASSERT_EQUAL(ca.retransmits, 5);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).rx_dup, 4);
    CU_ASSERT(nsim_sim_now(r.sim) > 8ull * 4096000);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.b).rx_bytes, 5 * 4096);
    rig_down(&r);
}

/* A packet lost on every try: after retry_cnt retries the WR fails with
 * RETRY_EXC_ERR, the others are flushed, and so are later posts. */
static void test_retry_exceeded(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    short_timeout(r.a, 2, 3);
    nsim_qp_drop_psn(r.a, 6, UINT32_MAX);
    for (uint64_t i = 0; i < 4; i++) {
        nsim_send_wr w = wr_write(i, 3 * 4096, i != 1); /* 1: unsignaled */
        NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    }
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_ERR);
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 3);
    CU_ASSERT(wc[0].wr_id == 0 && wc[0].status == NSIM_WC_SUCCESS);
    CU_ASSERT(wc[1].wr_id == 2 && wc[1].status == NSIM_WC_RETRY_EXC_ERR);
    CU_ASSERT(wc[2].wr_id == 3 && wc[2].status == NSIM_WC_WR_FLUSH_ERR);
    nsim_qp_counters ca = nsim_qp_get_counters(r.a);
    CU_ASSERT_EQUAL(ca.naks + ca.timeouts, 4); /* 3 retries + the last */
    CU_ASSERT_EQUAL(ca.dropped, 4);
    nsim_send_wr w = wr_write(9, 100, 0);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 1);
    CU_ASSERT(wc[0].wr_id == 9 && wc[0].status == NSIM_WC_WR_FLUSH_ERR);
    /* WR 1 (unsignaled, before the failure) landed; 2 and 3 did not */
    CU_ASSERT(r.land_count[0] == 1 && r.land_count[1] == 1);
    CU_ASSERT(r.land_count[2] == 0 && r.land_count[3] == 0);
    rig_down(&r);
}

/* ---- receiver not ready ------------------------------------------------- */

static void rnr_attrs(rig *r, uint32_t timer, uint32_t retry)
{
    nsim_err err = {0};
    nsim_qp_attr b = {.mask = NSIM_QP_ATTR_MIN_RNR_TIMER,
                      .min_rnr_timer = timer};
    nsim_qp_attr a = {.mask = NSIM_QP_ATTR_RNR_RETRY, .rnr_retry = retry};
    NSIM_ASSERT_OK(nsim_qp_modify(r->b, NSIM_QPS_RTS, &b, &err));
    NSIM_ASSERT_OK(nsim_qp_modify(r->a, NSIM_QPS_RTS, &a, &err));
}

static void on_post_recvs(nsim_sim *sim, nsim_event *ev)
{
    rig *r = ev->target;
    (void)sim;
    for (uint64_t i = 0; i < ev->arg.u64; i++)
        CU_ASSERT_EQUAL(nsim_qp_post_recv(r->b, 100 + i), NSIM_OK);
}

/* A SEND and a two-packet WRITE_WITH_IMM reach a responder with no
 * receive WR: RNR NAK, the requester waits min_rnr_timer (12 = 0.64 ms,
 * NCCL's) and resends from the NAKed PSN until the receives are posted
 * (at 1.5 ms: three NAKs); nothing lands twice, nothing is lost. */
static void test_rnr_wait_and_resend(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    CU_ASSERT_EQUAL(r.p.ib_min_rnr_timer, 12);
    CU_ASSERT_EQUAL(r.p.ib_rnr_retry, 7);
    nsim_send_wr s = {1, NSIM_WR_SEND, 1000, 0, 1};
    nsim_send_wr w = {2, NSIM_WR_RDMA_WRITE_WITH_IMM, 8192, 77, 1};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &s));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(nsim_sim_schedule(r.sim, 1500000000ull, on_post_recvs, &r,
                                     0, 2, NULL));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 2);
    CU_ASSERT(wc[0].wr_id == 1 && wc[0].status == NSIM_WC_SUCCESS);
    CU_ASSERT(wc[1].wr_id == 2 && wc[1].status == NSIM_WC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(drain(r.cb, wc, 8), 2);
    CU_ASSERT(wc[0].wr_id == 100 && wc[0].opcode == NSIM_WC_RECV &&
              wc[0].byte_len == 1000 && wc[0].src_wr_id == 1);
    CU_ASSERT(wc[1].wr_id == 101 &&
              wc[1].opcode == NSIM_WC_RECV_RDMA_WITH_IMM &&
              wc[1].imm == 77 && wc[1].src_wr_id == 2);
    nsim_qp_counters ca = nsim_qp_get_counters(r.a);
    nsim_qp_counters cb = nsim_qp_get_counters(r.b);
    CU_ASSERT_EQUAL(ca.rnr_naks, 3); /* at ~0, 0.64 and 1.28 ms */
    CU_ASSERT_EQUAL(cb.rnr_naks_tx, 3);
    CU_ASSERT_EQUAL(ca.timeouts, 0);
    CU_ASSERT(nsim_sim_now(r.sim) > 1920000000ull); /* the third wait */
    CU_ASSERT_EQUAL(cb.rx_bytes, 1000 + 8192);
    CU_ASSERT(r.land_count[1] == 1 && r.land_count[2] == 1);
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_RTS);
    rig_down(&r);
}

/* rnr_retry 2 and no receive ever: the third RNR NAK fails the WR with
 * RNR_RETRY_EXC_ERR, the next is flushed; rnr_retry 7 waits for ever,
 * here 40 waits of 10 us (code 1) until a receive comes. */
static void test_rnr_retry(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[8];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    rnr_attrs(&r, 1, 2);
    nsim_send_wr s = {1, NSIM_WR_SEND, 1000, 0, 1};
    nsim_send_wr s2 = {2, NSIM_WR_SEND, 1000, 0, 1};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &s));
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &s2));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 2);
    CU_ASSERT(wc[0].wr_id == 1 && wc[0].status == NSIM_WC_RNR_RETRY_EXC_ERR);
    CU_ASSERT(wc[1].wr_id == 2 && wc[1].status == NSIM_WC_WR_FLUSH_ERR);
    CU_ASSERT_STRING_EQUAL(nsim_wc_status_str(wc[0].status),
                           "RNR_RETRY_EXC_ERR");
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.a).rnr_naks, 3);
    CU_ASSERT_EQUAL(nsim_qp_get_state(r.a), NSIM_QPS_ERR);
    CU_ASSERT_EQUAL(r.land_count[1], 0);
    rig_down(&r);

    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 1, 8, 64), 0);
    rnr_attrs(&r, 1, 7);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &s));
    NSIM_ASSERT_OK(nsim_sim_schedule(r.sim, 400000000ull, on_post_recvs, &r,
                                     0, 1, NULL));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 8), 1);
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    uint64_t naks = nsim_qp_get_counters(r.a).rnr_naks;
    CU_ASSERT(naks >= 35 && naks <= 41); /* 10 us + a round trip each */
    CU_ASSERT_EQUAL(r.land_count[1], 1);
    rig_down(&r);
}

/* A lost READ response is asked for again. */
static void test_read_loss(void)
{
    nsim_err err = {0};
    rig r;
    nsim_wc wc[4];
    CU_ASSERT_EQUAL_FATAL(rig_up(&r, 3, 8, 64), 0);
    short_timeout(r.a, 4, 7);
    NSIM_ASSERT_OK(nsim_hca_set_loss(r.hb, 0.05, 21));
    nsim_send_wr w = {1, NSIM_WR_RDMA_READ, 256 * 4096, 0, 1};
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    CU_ASSERT_EQUAL_FATAL(drain(r.ca, wc, 4), 1);
    if (wc[0].status != NSIM_WC_SUCCESS)
        fprintf(stderr, "\n  READ: %s\n", nsim_wc_status_str(wc[0].status));
    CU_ASSERT_EQUAL(wc[0].status, NSIM_WC_SUCCESS);
    CU_ASSERT(nsim_hca_get_counters(r.hb).packets_lost > 0);
    CU_ASSERT(nsim_qp_get_counters(r.a).retransmits > 0);
    CU_ASSERT_EQUAL(nsim_qp_get_counters(r.a).read_bytes, 256 * 4096);
    rig_down(&r);
}

/* ---- rate limit, parameters ------------------------------------------- */

static nsim_time write_time(uint64_t rate_mbps)
{
    rig r;
    nsim_err err = {0};
    if (rig_up(&r, 1, 8, 64) != 0)
        return 0;
    nsim_qp_attr a = {.mask = NSIM_QP_ATTR_RATE_LIMIT,
                      .rate_limit_mbps = rate_mbps};
    NSIM_ASSERT_OK(nsim_qp_modify(r.a, NSIM_QPS_RTS, &a, &err));
    nsim_send_wr w = wr_write(1, 1 << 20, 1);
    NSIM_ASSERT_OK(nsim_qp_post_send(r.a, &w));
    NSIM_ASSERT_OK(run(&r));
    nsim_time t = nsim_sim_now(r.sim);
    rig_down(&r);
    return t;
}

static void test_rate_limit(void)
{
    nsim_time free_t = write_time(0), slow = write_time(10000);
    /* 1 MiB at 10 Gb/s: 839 us */
    CU_ASSERT(free_t < 100 * NSIM_PS_PER_US);
    CU_ASSERT(slow > 838 * NSIM_PS_PER_US && slow < 860 * NSIM_PS_PER_US);
}

static void test_params(void)
{
    nsim_params p;
    nsim_params_defaults(&p);
    CU_ASSERT_EQUAL(p.ib_timeout_exp, 20);
    CU_ASSERT_EQUAL(p.ib_retry_cnt, 7);
    CU_ASSERT_EQUAL(p.ib_max_rd_atomic, 16);
    CU_ASSERT_EQUAL(p.qp_rate_limit_mbps, 0);
    /* NCCL's default: 4.096 us x 2^20 = 4.29 s */
    CU_ASSERT_EQUAL(p.ib_timeout_unit_ps << p.ib_timeout_exp,
                    4096000ull << 20);
    CU_ASSERT_STRING_EQUAL(nsim_wc_status_str(NSIM_WC_RETRY_EXC_ERR),
                           "RETRY_EXC_ERR");
}

/* 172 DGX H100 (4,724 devices): NICs past device 4,094 register memory
 * and take QPs like the others. Their keys once carried the device id in
 * 12 bits and overflowed: every WR on those hosts failed with
 * LOC_PROT_ERR. A SendRecv over every host must now complete, with
 * 24-bit QPNs and no QP in error. */
static void test_keys_past_4095_devices(void)
{
    nsim_topo *t = NULL;
    nsim_plan *p = NULL;
    nsim_params prm;
    nsim_exec_result res = {0};
    nsim_err err;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 172, &cfg, &t, &err));
    CU_ASSERT(nsim_topo_ndevices(t) > 4095);
    nsim_plan_req r = {0};
    r.coll = NSIM_COLL_SENDRECV;
    r.proto = NSIM_PROTO_SIMPLE;
    r.bytes = 1u << 20;
    r.type_size = 4;
    r.qps_per_conn = 1;
    r.buffsize = 4u << 20;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    nsim_params_defaults(&prm);
    nsim_exec_opts o = {1, 1, NULL};
    o.fidelity = NSIM_FIDELITY_FLOW;
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    uint32_t past = 0;
    for (uint32_t i = 0; i < res.xport.nqps; i++) {
        const nsim_qp_record *q = &res.xport.qps[i];
        CU_ASSERT(q->qpn < (1u << 24) && q->qpn >= 0x100);
        CU_ASSERT_STRING_EQUAL(q->state, "RTS");
        past += q->nic > 4094;
    }
    CU_ASSERT(past > 0);
    nsim_exec_result_free(&res);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_hca[] = {
    {"queues and CQs grow to their depth", test_queues_grow_to_depth},
    {"completed unsignaled WRs hold no ring", test_unsignaled_ring_stays_small},
    {"keys and QPNs past 4,095 devices", test_keys_past_4095_devices},
    {"state machine, posts in the wrong state", test_state_machine},
    {"responder not ready -> retries -> ERR", test_responder_not_ready},
    {"opcodes and their completions", test_opcodes},
    {"RDMA READ with keys", test_read},
    {"max_rd_atomic bounds READs in flight", test_read_limit},
    {"unsignaled WRs hold send queue slots", test_unsignaled_slots},
    {"receive queue depth", test_recv_queue_full},
    {"local protection errors", test_local_protection},
    {"remote access errors", test_remote_access},
    {"receive buffer too short", test_recv_too_short},
    {"CQ overflow -> CQ error, QP ERR", test_cq_overflow},
    {"loss: go-back-N, exactly once, deterministic", test_loss_recovery},
    {"loss in flow fidelity: per wire packet, from the lost one",
     test_loss_flow},
    {"NAK sequence error and go-back-N", test_nak_go_back_n},
    {"tail loss recovered by the timer", test_timeout_recovery},
    {"retry_cnt exceeded: RETRY_EXC_ERR + flush", test_retry_exceeded},
    {"lost READ responses", test_read_loss},
    {"RNR NAK: wait min_rnr_timer, resend", test_rnr_wait_and_resend},
    {"rnr_retry: RNR_RETRY_EXC_ERR, 7 = for ever", test_rnr_retry},
    {"per-QP rate limit", test_rate_limit},
    {"parameters", test_params},
    CU_TEST_INFO_NULL,
};
