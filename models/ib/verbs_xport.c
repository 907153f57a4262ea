/* SPDX-License-Identifier: MIT
 *
 * verbs_xport.c - the verbs hardware backend, beside the NET model
 * (net.c): one process per rank, the ranks joined by the TCP bootstrap
 * (sim/exec/bootstrap.h). Per plan connection, nqps RC QP pairs; the
 * receiver's NCCL_STEPS slots are one registered buffer; the sender
 * stages a slice in its own registered buffer and writes it with
 * IBV_WR_RDMA_WRITE_WITH_IMM (immediate: the slice number) into the
 * receiver's slot, one QP per slice round robin (NCCL_IB_SPLIT_DATA_ON_QPS
 * 0); the receiver learns of it from the receive completion of the
 * immediate and, when done with the slot, RDMA-writes its consumed count
 * into the sender's clear-to-send FIFO (NCCL's CTS, nccl-internals 5.3),
 * which is the sender's credit. One CQ per process, polled by whichever
 * waiting lane holds its lock.
 *
 * Without libibverbs at build time, or without an RDMA device at run
 * time, it stops at once with an error naming what it looked for.
 */
#include "sim/exec/hwbackends.h"

#include <stdio.h>
#include <string.h>

#ifndef NSIM_HAVE_IBVERBS

int nsim_verbs_check(const nsim_verbs_opts *o, nsim_err *err)
{
    (void)o;
    return NSIM_ERR(err, NSIM_ENOTSUP,
                    "verbs backend: not built: libibverbs (libibverbs-dev, "
                    "infiniband/verbs.h) was not found when ncclsim was "
                    "built");
}

int nsim_verbs_measure(const nsim_verbs_opts *o, const nsim_plan *plan,
                       nsim_hdt dt, nsim_hop op, uint32_t warmup,
                       uint32_t iters, int check, nsim_hwx_measure *m,
                       nsim_err *err)
{
    (void)plan, (void)dt, (void)op, (void)warmup, (void)iters, (void)check;
    (void)m;
    return nsim_verbs_check(o, err);
}

#else

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "sim/exec/bootstrap.h"

#define MAX_QPS 16
#define RECV_DEPTH 64

enum { WR_DATA = 1, WR_CTS = 2, WR_RECV = 3 };

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* What one side of a connection tells the other. */
typedef struct side_info {
    uint32_t valid, nqps;
    uint32_t qpn[MAX_QPS];
    uint32_t psn, lid;
    uint8_t gid[16];
    uint64_t addr; /* receiver: its slots; sender: its CTS FIFO */
    uint32_t rkey, pad;
} side_info;

typedef struct vconn {
    int send_side, recv_side; /* this process sends / receives on it */
    uint32_t nqps;
    struct ibv_qp *qp[MAX_QPS];
    struct ibv_mr *buf_mr;  /* sender: staging; receiver: slots */
    uint8_t *buf;
    struct ibv_mr *cts_mr;  /* sender: the CTS FIFO; receiver: its source */
    _Atomic uint64_t *cts;  /* inflight words */
    side_info peer;
    _Atomic uint64_t *arrived;   /* receiver: per slot, seq + 1 */
    _Atomic uint64_t *send_done; /* sender: per slot, seq + 1 */
    _Atomic uint64_t consumed;   /* receiver: slices consumed */
} vconn;

typedef struct vctx {
    const nsim_plan *plan;
    uint32_t rank, inflight;
    uint64_t slice;
    double timeout_s;
    _Atomic int *abort;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_port_attr port;
    union ibv_gid gid;
    vconn *conns;
    pthread_mutex_t poll_lock;
    char failure[256];
} vctx;

int nsim_verbs_check(const nsim_verbs_opts *o, nsim_err *err)
{
    int n = 0;
    (void)o;
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    int e = errno;
    if (list != NULL)
        ibv_free_device_list(list);
    if (list == NULL || n == 0)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "verbs backend: no RDMA device: ibv_get_device_list() "
                        "returned %s%s%s (looked for an InfiniBand/RoCE HCA "
                        "under /sys/class/infiniband; each rank's process "
                        "needs one)",
                        list == NULL ? "NULL" : "no devices",
                        e ? ": " : "", e ? strerror(e) : "");
    return NSIM_OK;
}

static int vfail(vctx *c, nsim_err *err, const char *fmt, const char *what,
                 uint32_t conn)
{
    const nsim_plan_conn *pc = &c->plan->conns[conn];
    return NSIM_ERR(err, NSIM_EIO, fmt, what, conn, pc->from, pc->to);
}

/* Polls the CQ once (if no other lane is): completions move the
 * connections' counters. */
static int poll_once(vctx *c, nsim_err *err)
{
    struct ibv_wc wc[16];
    if (pthread_mutex_trylock(&c->poll_lock) != 0)
        return NSIM_OK;
    int n = ibv_poll_cq(c->cq, 16, wc);
    int rc = NSIM_OK;
    for (int i = 0; i < n && rc == NSIM_OK; i++) {
        uint64_t id = wc[i].wr_id;
        uint32_t kind = (uint32_t)(id >> 62), conn = (uint32_t)(id >> 40) & 0x3fffff;
        uint64_t low = id & ((1ull << 40) - 1);
        vconn *v = &c->conns[conn];
        if (wc[i].status != IBV_WC_SUCCESS) {
            rc = vfail(c, err, "verbs: %s on connection %u (rank %u -> %u)",
                       ibv_wc_status_str(wc[i].status), conn);
            break;
        }
        if (kind == WR_DATA) {
            atomic_store(&v->send_done[low % c->inflight], low + 1);
        } else if (kind == WR_RECV) {
            uint64_t base = atomic_load(&v->consumed);
            uint32_t imm = ntohl(wc[i].imm_data);
            uint64_t seq = base + (uint32_t)(imm - (uint32_t)base);
            atomic_store(&v->arrived[seq % c->inflight], seq + 1);
            struct ibv_recv_wr wr = {0}, *bad;
            wr.wr_id = id;
            if (ibv_post_recv(v->qp[low], &wr, &bad) != 0)
                rc = vfail(c, err, "verbs: %s on connection %u (rank %u -> "
                           "%u)", "cannot repost a receive", conn);
        }
    }
    if (n < 0)
        rc = NSIM_ERR(err, NSIM_EIO, "verbs: ibv_poll_cq failed");
    pthread_mutex_unlock(&c->poll_lock);
    return rc;
}

/* Waits until *w == want (or >= want when at_least), polling the CQ. */
static int vwait(vctx *c, _Atomic uint64_t *w, uint64_t want, int at_least,
                 uint32_t conn, const char *what, nsim_err *err)
{
    uint32_t spins = 0;
    int64_t deadline = now_ns() + (int64_t)(c->timeout_s * 1e9);
    for (;;) {
        uint64_t v = atomic_load_explicit(w, memory_order_acquire);
        if (at_least ? v >= want : v == want)
            return NSIM_OK;
        NSIM_TRY(poll_once(c, err));
        nsim_hw_relax(&spins);
        if ((spins & 1023) != 0)
            continue;
        if (atomic_load(c->abort))
            return NSIM_ERR(err, NSIM_ESTATE, "stopped: another lane failed");
        if (now_ns() > deadline) {
            const nsim_plan_conn *pc = &c->plan->conns[conn];
            return NSIM_ERR(err, NSIM_ESTATE,
                            "verbs: timed out after %.0f s waiting for %s on "
                            "connection %u (rank %u -> %u): the peer is lost "
                            "or stalled", c->timeout_s, what, conn, pc->from,
                            pc->to);
        }
    }
}

static void *v_send_buf(void *ctx, uint32_t conn, uint64_t seq)
{
    vctx *c = ctx;
    return c->conns[conn].buf + (seq % c->inflight) * c->slice;
}

static int v_wait_credit(void *ctx, uint32_t conn, uint64_t seq,
                         nsim_err *err)
{
    vctx *c = ctx;
    vconn *v = &c->conns[conn];
    if (seq < c->inflight)
        return NSIM_OK;
    uint64_t prev = seq - c->inflight;
    /* the staging slot's last write has completed, and the receiver has
     * sent CTS for the slot (consumed prev) */
    NSIM_TRY(vwait(c, &v->send_done[prev % c->inflight], prev + 1, 1, conn,
                   "the completion of an earlier write", err));
    return vwait(c, &v->cts[seq % c->inflight], prev + 1, 1, conn,
                 "clear-to-send", err);
}

static int v_post(void *ctx, uint32_t conn, uint64_t seq, uint64_t bytes,
                  nsim_err *err)
{
    vctx *c = ctx;
    vconn *v = &c->conns[conn];
    uint32_t slot = (uint32_t)(seq % c->inflight);
    struct ibv_sge sge = {(uintptr_t)(v->buf + slot * c->slice),
                          (uint32_t)bytes, v->buf_mr->lkey};
    struct ibv_send_wr wr = {0}, *bad;
    wr.wr_id = (uint64_t)WR_DATA << 62 | (uint64_t)conn << 40 |
               (seq & ((1ull << 40) - 1));
    wr.sg_list = bytes ? &sge : NULL;
    wr.num_sge = bytes ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl((uint32_t)seq);
    wr.wr.rdma.remote_addr = v->peer.addr + slot * c->slice;
    wr.wr.rdma.rkey = v->peer.rkey;
    if (ibv_post_send(v->qp[seq % v->nqps], &wr, &bad) != 0)
        return vfail(c, err, "verbs: %s on connection %u (rank %u -> %u)",
                     "ibv_post_send of a slice failed", conn);
    return NSIM_OK;
}

static int v_wait_arrived(void *ctx, uint32_t conn, uint64_t seq,
                          const void **data, nsim_err *err)
{
    vctx *c = ctx;
    vconn *v = &c->conns[conn];
    NSIM_TRY(vwait(c, &v->arrived[seq % c->inflight], seq + 1, 0, conn,
                   "a slice", err));
    *data = v->buf + (seq % c->inflight) * c->slice;
    return NSIM_OK;
}

/* CTS: the consumed count into the sender's FIFO word of the slot. */
static int v_consumed(void *ctx, uint32_t conn, uint64_t seq, nsim_err *err)
{
    vctx *c = ctx;
    vconn *v = &c->conns[conn];
    uint32_t slot = (uint32_t)(seq % c->inflight);
    atomic_store(&v->consumed, seq + 1);
    atomic_store(&v->cts[slot], seq + 1); /* the source of the write */
    struct ibv_sge sge = {(uintptr_t)&v->cts[slot], 8, v->cts_mr->lkey};
    struct ibv_send_wr wr = {0}, *bad;
    wr.wr_id = (uint64_t)WR_CTS << 62 | (uint64_t)conn << 40;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = v->peer.addr + slot * 8;
    wr.wr.rdma.rkey = v->peer.rkey;
    if (ibv_post_send(v->qp[0], &wr, &bad) != 0)
        return vfail(c, err, "verbs: %s on connection %u (rank %u -> %u)",
                     "ibv_post_send of a CTS failed", conn);
    return NSIM_OK;
}

static const nsim_hw_xport_ops verbs_ops = {
    .name = "verbs",
    .send_buf = v_send_buf,
    .wait_credit = v_wait_credit,
    .post = v_post,
    .wait_arrived = v_wait_arrived,
    .consumed = v_consumed,
};

static int open_device(vctx *c, nsim_err *err)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list == NULL || n == 0) {
        if (list)
            ibv_free_device_list(list);
        return nsim_verbs_check(NULL, err);
    }
    c->ctx = ibv_open_device(list[0]);
    const char *name = ibv_get_device_name(list[0]);
    ibv_free_device_list(list);
    if (c->ctx == NULL)
        return NSIM_ERR(err, NSIM_EIO, "verbs: cannot open %s: %s", name,
                        strerror(errno));
    if (ibv_query_port(c->ctx, 1, &c->port) != 0 ||
        ibv_query_gid(c->ctx, 1, 0, &c->gid) != 0)
        return NSIM_ERR(err, NSIM_EIO, "verbs: %s port 1: cannot query it",
                        name);
    if (c->port.state != IBV_PORT_ACTIVE)
        return NSIM_ERR(err, NSIM_EIO, "verbs: %s port 1 is not active", name);
    c->pd = ibv_alloc_pd(c->ctx);
    c->cq = c->pd ? ibv_create_cq(c->ctx, 4096, NULL, NULL, 0) : NULL;
    if (c->cq == NULL)
        return NSIM_ERR(err, NSIM_EIO, "verbs: %s: cannot create a PD/CQ",
                        name);
    return NSIM_OK;
}

static int make_side(vctx *c, uint32_t i, int send, side_info *me,
                     nsim_err *err)
{
    vconn *v = &c->conns[i];
    size_t bytes = (size_t)c->inflight * c->slice;
    v->nqps = c->plan->conns[i].nqps ? c->plan->conns[i].nqps : 1;
    if (v->nqps > MAX_QPS)
        return NSIM_ERR(err, NSIM_ENOTSUP, "verbs: connection %u: %u QPs "
                        "(at most %d here)", i, v->nqps, MAX_QPS);
    v->buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    v->cts = aligned_alloc(64, (c->inflight * 8 + 63) / 64 * 64);
    v->arrived = calloc(c->inflight, sizeof *v->arrived);
    v->send_done = calloc(c->inflight, sizeof *v->send_done);
    if (!v->buf || !v->cts || !v->arrived || !v->send_done)
        return NSIM_ERR(err, NSIM_ENOMEM, "verbs: out of memory");
    memset((void *)v->cts, 0, c->inflight * 8);
    int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    v->buf_mr = ibv_reg_mr(c->pd, v->buf, bytes ? bytes : 1, acc);
    v->cts_mr = ibv_reg_mr(c->pd, (void *)v->cts, c->inflight * 8, acc);
    if (!v->buf_mr || !v->cts_mr)
        return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u: ibv_reg_mr: %s",
                        i, strerror(errno));
    me->valid = 1;
    me->nqps = v->nqps;
    me->lid = c->port.lid;
    memcpy(me->gid, c->gid.raw, 16);
    me->psn = (uint32_t)(now_ns() & 0xffffff);
    me->addr = send ? (uintptr_t)v->cts : (uintptr_t)v->buf;
    me->rkey = send ? v->cts_mr->rkey : v->buf_mr->rkey;
    for (uint32_t k = 0; k < v->nqps; k++) {
        struct ibv_qp_init_attr qa = {0};
        qa.send_cq = qa.recv_cq = c->cq;
        qa.qp_type = IBV_QPT_RC;
        qa.cap.max_send_wr = 2 * c->inflight + 8;
        qa.cap.max_recv_wr = RECV_DEPTH;
        qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
        qa.cap.max_inline_data = 16;
        v->qp[k] = ibv_create_qp(c->pd, &qa);
        if (v->qp[k] == NULL)
            return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u: "
                            "ibv_create_qp: %s", i, strerror(errno));
        me->qpn[k] = v->qp[k]->qp_num;
        struct ibv_qp_attr a = {0};
        a.qp_state = IBV_QPS_INIT;
        a.port_num = 1;
        a.qp_access_flags = acc;
        if (ibv_modify_qp(v->qp[k], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                            IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
            return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u QP %u: "
                            "INIT failed", i, k);
    }
    return NSIM_OK;
}

static int connect_qps(vctx *c, uint32_t i, const side_info *me,
                       nsim_err *err)
{
    vconn *v = &c->conns[i];
    const side_info *p = &v->peer;
    if (!p->valid || p->nqps != v->nqps)
        return NSIM_ERR(err, NSIM_ECONFIG, "verbs: connection %u: the peer "
                        "sent no matching QPs", i);
    for (uint32_t k = 0; k < v->nqps; k++) {
        struct ibv_qp_attr a = {0};
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = c->port.active_mtu;
        a.dest_qp_num = p->qpn[k];
        a.rq_psn = p->psn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = (uint16_t)p->lid;
        a.ah_attr.port_num = 1;
        if (c->port.link_layer == IBV_LINK_LAYER_ETHERNET) { /* RoCE */
            a.ah_attr.is_global = 1;
            memcpy(a.ah_attr.grh.dgid.raw, p->gid, 16);
            a.ah_attr.grh.hop_limit = 64;
        }
        if (ibv_modify_qp(v->qp[k], &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                              IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
            return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u QP %u: RTR "
                            "failed", i, k);
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_RTS;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = me->psn;
        a.max_rd_atomic = 1;
        if (ibv_modify_qp(v->qp[k], &a,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                              IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                              IBV_QP_MAX_QP_RD_ATOMIC))
            return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u QP %u: RTS "
                            "failed", i, k);
        for (uint32_t d = 0; v->recv_side && d < RECV_DEPTH; d++) {
            struct ibv_recv_wr wr = {0}, *bad;
            wr.wr_id = (uint64_t)WR_RECV << 62 | (uint64_t)i << 40 | k;
            if (ibv_post_recv(v->qp[k], &wr, &bad) != 0)
                return NSIM_ERR(err, NSIM_EIO, "verbs: connection %u QP %u: "
                                "ibv_post_recv failed", i, k);
        }
    }
    return NSIM_OK;
}

static void teardown(vctx *c)
{
    if (c->conns != NULL)
        for (uint32_t i = 0; i < c->plan->nconns; i++) {
            vconn *v = &c->conns[i];
            for (uint32_t k = 0; k < v->nqps; k++)
                if (v->qp[k])
                    ibv_destroy_qp(v->qp[k]);
            if (v->buf_mr)
                ibv_dereg_mr(v->buf_mr);
            if (v->cts_mr)
                ibv_dereg_mr(v->cts_mr);
            free(v->buf);
            free((void *)v->cts);
            free((void *)v->arrived);
            free((void *)v->send_done);
        }
    free(c->conns);
    if (c->cq)
        ibv_destroy_cq(c->cq);
    if (c->pd)
        ibv_dealloc_pd(c->pd);
    if (c->ctx)
        ibv_close_device(c->ctx);
}

static int boot_sync(void *arg, double *max_v, double *sum_v, nsim_err *err)
{
    return nsim_boot_sync(arg, max_v, sum_v, err);
}

/* Every rank's side_info for every connection, all-gathered; each takes
 * its peer's. */
static int exchange(vctx *c, nsim_boot *b, nsim_err *err)
{
    const nsim_plan *p = c->plan;
    size_t per = (size_t)p->nconns * 2 * sizeof(side_info);
    side_info *mine = calloc(1, per ? per : 1);
    side_info *all = calloc(p->nranks, per ? per : 1);
    int rc = mine && all ? NSIM_OK
                         : NSIM_ERR(err, NSIM_ENOMEM, "verbs: out of memory");
    for (uint32_t i = 0; rc == NSIM_OK && i < p->nconns; i++) {
        vconn *v = &c->conns[i];
        v->send_side = p->conns[i].from == c->rank;
        v->recv_side = p->conns[i].to == c->rank;
        if (v->send_side && v->recv_side)
            rc = NSIM_ERR(err, NSIM_ECONFIG, "verbs: connection %u joins rank "
                          "%u to itself", i, c->rank);
        else if (v->send_side || v->recv_side)
            rc = make_side(c, i, v->send_side, &mine[2 * i + v->recv_side],
                           err);
    }
    if (rc == NSIM_OK)
        rc = nsim_boot_allgather(b, mine, per, all, err);
    for (uint32_t i = 0; rc == NSIM_OK && i < p->nconns; i++) {
        vconn *v = &c->conns[i];
        if (!v->send_side && !v->recv_side)
            continue;
        uint32_t peer = v->send_side ? p->conns[i].to : p->conns[i].from;
        v->peer = all[(size_t)peer * p->nconns * 2 + 2 * i + v->send_side];
        rc = connect_qps(c, i, &mine[2 * i + v->recv_side], err);
    }
    free(mine);
    free(all);
    return rc;
}

int nsim_verbs_measure(const nsim_verbs_opts *o, const nsim_plan *plan,
                       nsim_hdt dt, nsim_hop op, uint32_t warmup,
                       uint32_t iters, int check, nsim_hwx_measure *m,
                       nsim_err *err)
{
    NSIM_TRY(nsim_verbs_check(o, err)); /* no device: stop at once */
    if (o->rank < 0 || (uint32_t)o->rank >= plan->nranks)
        return NSIM_ERR(err, NSIM_EINVAL, "verbs: --rank R (0..%u) is needed: "
                        "one process per rank", plan->nranks - 1);
    vctx c = {0};
    nsim_boot *b = NULL;
    nsim_hwx *x = NULL;
    void *ctl = NULL;
    c.plan = plan;
    c.rank = (uint32_t)o->rank;
    c.inflight = NSIM_NCCL_STEPS / plan->slice_steps;
    c.slice = plan->slice_bytes;
    c.timeout_s = o->timeout_s;
    pthread_mutex_init(&c.poll_lock, NULL);
    c.conns = calloc(plan->nconns ? plan->nconns : 1, sizeof *c.conns);
    int rc = c.conns ? open_device(&c, err)
                     : NSIM_ERR(err, NSIM_ENOMEM, "verbs: out of memory");
    if (rc == NSIM_OK)
        rc = nsim_boot_connect(c.rank, plan->nranks, o->hosts, o->token,
                               o->timeout_s, &b, err);
    if (rc == NSIM_OK)
        rc = exchange(&c, b, err);
    if (rc == NSIM_OK) {
        ctl = calloc(1, nsim_hwx_ctl_size(plan));
        nsim_hwx_cfg xc = {plan, dt, op, &verbs_ops, &c, o->rank, o->timeout_s,
                           -1, -1, boot_sync, b};
        rc = ctl ? nsim_hwx_create(&xc, ctl, &x, err)
                 : NSIM_ERR(err, NSIM_ENOMEM, "verbs: out of memory");
    }
    if (rc == NSIM_OK) {
        c.abort = nsim_hwx_abort_flag(x);
        rc = nsim_hwx_start(x, err);
    }
    if (rc == NSIM_OK)
        rc = nsim_hwx_measure_size(x, warmup, iters, check, 0, NULL, NULL, m,
                                   err);
    if (x != NULL) {
        if (rc == NSIM_OK)
            rc = nsim_hwx_run(x, NSIM_HWX_JOB_QUIT, 0, 0, 0, NULL, NULL, NULL,
                              err);
        else
            nsim_hwx_fail(x, err->msg);
        nsim_hwx_join(x);
        nsim_hwx_destroy(x);
    }
    free(ctl);
    nsim_boot_close(b);
    teardown(&c);
    pthread_mutex_destroy(&c.poll_lock);
    return rc;
}

#endif
