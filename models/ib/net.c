/* SPDX-License-Identifier: MIT
 *
 * net.c - NCCL's NET transport over the IB verbs model (nccl-internals
 * 5.2-5.9).
 *
 * A comm is one plugin connection pair: NCCL_IB_QPS_PER_CONNECTION data
 * QPs on the sending NIC and their peers on the receiving NIC, one CQ on
 * each side. A plan connection (channel, from, to) owns a comm (channel
 * mode "dedicated"), or shares one with the other channels between the
 * same two ranks on the same NICs (mode "shared", NCCL_NET_SHARED_COMMS):
 * then their requests interleave on the same QPs and CQs.
 *
 * Receive side: the proxy keeps NCCL_STEPS/sliceSteps receives posted per
 * connection. Each receive takes the comm's next request id r, posts a
 * receive WR on every QP the request will use - QP (r x nq + j) mod nqps,
 * nq = 1, or nqps with NCCL_IB_SPLIT_DATA_ON_QPS=1 - and RDMA-writes a
 * 64-byte CTS entry (carrying r) into the sender's FIFO on QP 0. On
 * shared comms and in runs with faults the receiver matches by id
 * instead: generic receive WRs stay posted on every QP (reposted as they
 * complete) and the immediate names the request slot and piece (see
 * net_int.h). Every receive completion is checked against the write that
 * landed; per connection the transport counts the slices and bytes it
 * sent and accepted (nsim_xport_conn_counters).
 * Send side: the GPU stages the slice (GPU memory with GPUDirect RDMA,
 * host memory without) and bumps tail; once the matching CTS is in the
 * FIFO the proxy posts, on each QP of the request, its 128-byte-aligned
 * piece as one signaled RDMA_WRITE_WITH_IMM - or, with adaptive routing
 * and a piece above NCCL_IB_AR_THRESHOLD, an unsignaled RDMA_WRITE and a
 * separate zero-byte signaled WRITE_WITH_IMM, so the completion cannot
 * overtake reordered data. A slice is done on a side when every QP that
 * carries a piece of it has completed (the channel synchronizes all its
 * QPs); slices are released in order. The receive completion makes the
 * slice visible (after a GDR flush read before Hopper, or the GPU's read
 * from host memory without GDR); the send completion frees the staging
 * slot. Every proxy action (post, poll, repost) takes proxy_action_ps of
 * the rank's one proxy thread.
 */
#include <stdlib.h>
#include <string.h>

#include "models/ib/hca.h"
#include "models/transport.h"

#include "models/ib/net_int.h"
#include "sim/core/hugemem.h"
#include "models/tracelog.h"

static int get_hca(net_shared *sh, uint32_t dev, nsim_hca **out, nsim_err *err)
{
    const nsim_xport_env *e = sh->env;
    if (sh->hca[dev] == NULL)
        NSIM_TRY(nsim_hca_create(e->sim, e->fab, e->topo, e->params, dev,
                                 &sh->hca[dev], err));
    *out = sh->hca[dev];
    return NSIM_OK;
}

static int net_init(const nsim_xport_env *env, void **shared, nsim_err *err)
{
    net_shared *sh = calloc(1, sizeof *sh);
    if (sh == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    sh->env = env;
    sh->hca = calloc(nsim_topo_ndevices(env->topo), sizeof *sh->hca);
    sh->proxies = calloc(env->plan->nranks, sizeof *sh->proxies);
    sh->conn_of = calloc(env->plan->nconns, sizeof *sh->conn_of);
    sh->nic_down = calloc(nsim_topo_ndevices(env->topo), 1);
    *shared = sh;
    if (sh->hca == NULL || sh->proxies == NULL || sh->conn_of == NULL ||
        sh->nic_down == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    sh->max_ports = 1;
    for (uint32_t d = 0; d < nsim_topo_ndevices(env->topo); d++) {
        const nsim_device *dev = nsim_topo_device(env->topo, d);
        if (dev->type == NSIM_DEV_NIC && dev->nic_ports > sh->max_ports)
            sh->max_ports = dev->nic_ports;
    }
    return NSIM_OK;
}

static void net_fini(void *shared)
{
    net_shared *sh = shared;
    if (sh == NULL)
        return;
    for (uint32_t d = 0; sh->hca && d < nsim_topo_ndevices(sh->env->topo); d++)
        nsim_hca_destroy(sh->hca[d]);
    for (uint32_t i = 0; i < sh->ncomms; i++) {
        free(sh->comms[i]->reqs);
        free(sh->comms[i]->users);
        free(sh->comms[i]);
    }
    free(sh->comms);
    free(sh->hca);
    free(sh->proxies);
    free(sh->conn_of);
    free(sh->nic_down);
    nsim_xport_stats_free(&sh->log);
    free(sh);
}

/* ---- the proxy thread ------------------------------------------------- */

static void on_conn_action(nsim_sim *sim, nsim_event *ev);
static void on_comm_action(nsim_sim *sim, nsim_event *ev);

/* Queues an action on a rank's proxy: it runs after the proxy's earlier
 * actions, proxy_action_ps each. One waiting pass of a kind serves all
 * that is pending of that kind (the proxy loop's behaviour). A folded
 * tree's phantom end (m->shadow) runs it after the actions of the proxy
 * standing in for it instead: that proxy runs what the phantom's runs in
 * the whole run (its other channels and trees, and this transfer's
 * counterpart), where the phantom's own runs only this transfer. */
static void proxy_do(net_comm *m, int side, nsim_event_fn *fn, void *target,
                     act a)
{
    net_shared *sh = m->sh;
    const nsim_xport_env *e = sh->env;
    proxy *px = &sh->proxies[side ? m->to : m->from];
    uint32_t shadow = m->shadow[side];
    nsim_time busy = shadow == UINT32_MAX ? px->free_at
                                          : sh->proxies[shadow].free_at;
    nsim_time now = nsim_sim_now(e->sim);
    px->free_at = (busy > now ? busy : now) + e->params->proxy_action_ps;
    if (nsim_sim_schedule_at(e->sim, px->free_at, fn, target, 0, a, NULL))
        nsim_sim_fail(e->sim, NSIM_ENOMEM, "net: out of memory");
}

static void conn_do(net_conn *c, act a)
{
    if (a == ACT_ISEND && c->queued[0])
        return;
    if (a == ACT_ISEND)
        c->queued[0] = 1;
    proxy_do(c->m, a != ACT_ISEND, on_conn_action, c, a);
}

static void comm_do(net_comm *m, act a)
{
    int side = a == ACT_POLL_RECV;
    if (m->queued[side])
        return;
    m->queued[side] = 1;
    m->queued_at[side] = nsim_sim_now(m->sh->env->sim);
    proxy_do(m, side, on_comm_action, m, a);
}

void nsim__net_fail(net_conn *c, const char *what)
{
    nsim_sim_fail(c->sh->env->sim, NSIM_ESIM, "net: %s on connection %u",
                  what, c->conn);
}

/* The comm's QPs still in RTS, in index order. */
void nsim__net_live(net_comm *m)
{
    m->nlive = 0;
    for (uint32_t i = 0; i < m->nqps; i++)
        if (!m->dead[i])
            m->live[m->nlive++] = i;
}

/* Piece j of slice k: its offset and length (nccl 5.3: 128-B aligned). */
static uint64_t piece_span(uint32_t np, uint64_t size, uint32_t j,
                           uint64_t *off)
{
    uint64_t per = ((size + np - 1) / np + 127) / 128 * 128;
    *off = per * j < size ? per * j : size;
    return size - *off < per ? size - *off : per;
}

/* Posts piece j of slice k on its QP: its 128-byte-aligned share of the
 * slice as one signaled RDMA_WRITE_WITH_IMM, or with adaptive routing
 * above the threshold an unsignaled RDMA_WRITE plus a zero-byte
 * WRITE_WITH_IMM. */
void nsim__net_post_piece(net_conn *c, uint64_t k, uint32_t j)
{
    net_comm *m = c->m;
    uint64_t off, n = piece_span(c->snpieces[k % SLOTS], c->sizes[k % SLOTS],
                                 j, &off);
    nsim_qp *q = m->qs[c->pq[j].sqmap[k % SLOTS]];
    uint64_t at = (k % SLOTS) * SLOT_BYTES + off;
    uint32_t lk = nsim_mr_lkey(c->mr_send), rk = nsim_mr_rkey(c->mr_recv);
    /* the immediate: the size (matching by index) or the request id */
    uint32_t im = m->by_id ? IMM_ID(c->user * SLOTS + k % SLOTS, k, j)
                           : (uint32_t)n;
    nsim_send_wr imm = {WR_ID(c->conn, j, k), NSIM_WR_RDMA_WRITE_WITH_IMM, n,
                        im, 1, lk, at, rk, at};
    if (m->ar && n > c->sh->env->net->ar_threshold) {
        nsim_send_wr data = {WR_ID(c->conn, j, k), NSIM_WR_RDMA_WRITE, n, 0, 0,
                             lk, at, rk, at};
        imm.bytes = 0;
        if (nsim_qp_post_send(q, &data) != NSIM_OK)
            return nsim__net_fail(c, "send queue full");
    }
    if (nsim_qp_post_send(q, &imm) != NSIM_OK)
        return nsim__net_fail(c, "send queue full");
    if (c->sh->env->tlog != NULL)
        nsim_tlog_add(c->sh->env->tlog,
                      &(nsim_trec){.t = nsim_sim_now(c->sh->env->sim),
                                   .slice = k, .val = n, .conn = c->conn,
                                   .qp = c->pq[j].qmap[k % SLOTS],
                                   .piece = j,
                                   .kind = NSIM_TR_WR_POST});
}

static void post_slice(net_conn *c, uint64_t k)
{
    uint32_t np = c->npieces[k % SLOTS];
    c->rsizes[k % SLOTS] = c->sizes[k % SLOTS];
    c->snpieces[k % SLOTS] = (uint8_t)np;
    for (uint32_t j = 0; j < np; j++) {
        c->pq[j].sqmap[k % SLOTS] = c->pq[j].qmap[k % SLOTS];
        c->pq[j].got_send[k % SLOTS] = 0;
    }
    c->send_left[k % SLOTS] = (uint8_t)np;
    for (uint32_t j = 0; j < np; j++)
        nsim__net_post_piece(c, k, j);
}

/* Posts the slices that are staged and granted. On a shared comm each
 * connection takes its own CTS entries wherever they sit in the FIFO
 * (matched by tag): were the sender held to FIFO order (NCCL's isend
 * takes slot fifoHead only, nccl 5.3), a channel whose slice is not
 * staged would hold back the others, and two channels whose rings cross
 * the same two comms in turn would wait on each other for ever. Writes
 * then leave out of request order, which matching by id absorbs. */
void nsim__net_try_isend(net_conn *c)
{
    nsim_time now = nsim_sim_now(c->sh->env->sim);
    if (c->cts_since != NSIM_TIME_MAX && c->posted < c->cts) {
        c->cts_wait_ps += now - c->cts_since;
        c->cts_since = NSIM_TIME_MAX;
    }
    while (!c->paused && c->posted < c->written && c->posted < c->cts)
        post_slice(c, c->posted++);
    if (!c->paused && c->posted < c->written && c->posted >= c->cts &&
        c->cts_since == NSIM_TIME_MAX)
        c->cts_since = now; /* staged, not yet granted */
}

void nsim__net_post_recv_piece(net_conn *c, uint64_t k, uint32_t j)
{
    if (c->m->by_id)
        return; /* the QPs' receive WRs are pre-posted */
    nsim_qp *q = c->m->qr[c->pq[j].qmap[k % SLOTS]];
    if (nsim_qp_post_recv(q, WR_ID(c->conn, j, k)) != NSIM_OK)
        nsim__net_fail(c, "receive queue full");
}

/* The CTS entry for receive k, RDMA-written into the sender's FIFO on the
 * first live QP; unsignaled except once per 256 FIFO slots, which is
 * enough to drain the send queue (nccl 5.3). */
void nsim__net_post_cts(net_conn *c, uint64_t k)
{
    net_comm *m = c->m;
    uint64_t cts_bytes = c->sh->env->params->cts_entry_bytes;
    uint64_t off = (k % CTS_FIFO_SLOTS) * cts_bytes;
    nsim_send_wr cts = {WR_ID(c->conn, 0, k), NSIM_WR_RDMA_WRITE, cts_bytes, 0,
                        k % CTS_FIFO_SLOTS == 0, nsim_mr_lkey(c->mr_shadow),
                        off, nsim_mr_rkey(c->mr_fifo), off};
    if (nsim_qp_post_send(m->qr[m->live[0]], &cts) != NSIM_OK)
        nsim__net_fail(c, "CTS send queue full");
}

/* A receive takes the comm's next request id r and maps its pieces onto
 * QP (r x nq + j) over the live QPs (nq = 1, or all of them when data is
 * split), then grants it with a CTS. */
void nsim__net_post_receive(net_conn *c)
{
    net_comm *m = c->m;
    if (c->paused) {
        c->deferred++;
        return;
    }
    uint64_t k = c->recv_posted++, r = m->next_req++;
    uint32_t nq = m->nq < m->nlive ? m->nq : m->nlive;
    nsim__net_bind_req(m, c, k, r);
    c->npieces[k % SLOTS] = (uint8_t)nq;
    c->recv_left[k % SLOTS] = (uint8_t)nq;
    for (uint32_t j = 0; j < nq; j++) {
        c->pq[j].got_recv[k % SLOTS] = 0;
        c->pq[j].qmap[k % SLOTS] =
            (uint8_t)m->live[(r * nq + j) % m->nlive];
        nsim__net_post_recv_piece(c, k, j);
    }
    nsim__net_post_cts(c, k);
}

static void on_conn_action(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    if ((act)ev->arg.u64 == ACT_ISEND) {
        c->queued[0] = 0;
        nsim__net_try_isend(c);
    } else {
        nsim__net_post_receive(c);
    }
}

static void on_visible(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    c->sh->env->arrived(c->sh->env->exec, c->conn);
}

static void on_host_read(nsim_sim *sim, nsim_piece *p)
{
    net_conn *c = p->ctx;
    c->host_read_ps += nsim_sim_now(sim) - c->host_read_at[p->tag % SLOTS];
    c->sh->env->arrived(c->sh->env->exec, c->conn);
}

/* Receives complete in the order they were posted (NCCL tests the oldest
 * request first); a slice is in when all its QPs completed. */
static void release_recvs(net_conn *c)
{
    const nsim_xport_env *e = c->sh->env;
    while (c->recv_done < c->recv_posted &&
           c->recv_left[c->recv_done % SLOTS] == 0) {
        uint64_t k = c->recv_done++;
        c->recv_left[k % SLOTS] = 0xff; /* not posted */
        c->n.rx_slices++;
        if (!c->gdr) {
            /* the data sits in host memory; the GPU reads it over PCIe */
            nsim_piece *p;
            if (nsim_fabric_piece(e->fab, &p) != NSIM_OK)
                return nsim__net_fail(c, "out of memory");
            *p = (nsim_piece){c->host_read, c->nhost_read, 0,
                              c->sizes[k % SLOTS], 0, on_host_read, c, k, 0};
            c->host_read_at[k % SLOTS] = nsim_sim_now(e->sim);
            if (nsim_fabric_send(e->fab, p) != NSIM_OK)
                return nsim__net_fail(c, "out of memory");
        } else if (c->need_flush && c->m->flush != NULL) {
            /* Simple over GDR before Hopper: a 1-byte RDMA READ of the
             * slot on the loopback flush QP orders the GPU's view of the
             * data (nccl 5.4); its completion releases the slice */
            nsim_send_wr rd = {WR_ID(c->conn, 0xff, k), NSIM_WR_RDMA_READ, 1,
                               0, 1, 0, 0, 0, 0};
            if (nsim_qp_post_send(c->m->flush, &rd) != NSIM_OK)
                return nsim__net_fail(c, "flush queue full");
        } else if (nsim_sim_schedule(e->sim, 0, on_visible, c, 0, k, NULL) !=
                   NSIM_OK) {
            return nsim__net_fail(c, "out of memory");
        }
    }
}

static void release_sends(net_conn *c)
{
    while (c->send_done < c->posted && c->send_left[c->send_done % SLOTS] == 0) {
        c->send_left[c->send_done++ % SLOTS] = 0xff;
        c->sh->env->credit(c->sh->env->exec, c->conn);
    }
}

void nsim__net_release(net_conn *c)
{
    release_recvs(c);
    release_sends(c);
}

/* A piece completed; a duplicate (the piece was also sent again after a
 * failover) counts once. */
static void piece_done(net_conn *c, int side, uint32_t k, uint32_t j)
{
    /* slices in flight on this side: [lo, hi) */
    uint64_t lo = side ? c->recv_done : c->send_done;
    uint64_t hi = side ? c->recv_posted : c->posted;
    uint8_t *got = side ? &c->pq[j].got_recv[k % SLOTS]
                        : &c->pq[j].got_send[k % SLOTS];
    uint8_t *left = side ? &c->recv_left[k % SLOTS] : &c->send_left[k % SLOTS];
    uint32_t np = side ? c->npieces[k % SLOTS] : c->snpieces[k % SLOTS];
    if ((uint32_t)(k - (uint32_t)lo) >= hi - lo || j >= np || *got ||
        *left == 0xff || *left == 0) {
        c->n.dup_pieces += side;
        return;
    }
    *got = 1;
    (*left)--;
    if (side) {
        uint64_t off;
        c->n.rx_bytes += piece_span(np, c->rsizes[k % SLOTS], j, &off);
        release_recvs(c);
    } else {
        release_sends(c);
    }
}

/* Tracing: piece j of slice k completed on QP qi (and the
 * retransmissions the QP has made since the last look). */
static void trace_done(net_comm *m, net_conn *c, int side, uint32_t k,
                       uint32_t j, uint32_t qi)
{
    const nsim_xport_env *e = m->sh->env;
    nsim_time now = nsim_sim_now(e->sim);
    nsim_tlog_add(e->tlog, &(nsim_trec){.t = now, .slice = k, .conn = c->conn,
                                        .qp = (uint16_t)qi, .piece = j,
                                        .side = (uint8_t)side,
                                        .kind = NSIM_TR_WR_DONE});
    if (side || qi >= m->nqps)
        return;
    uint64_t rx = nsim_qp_get_counters(m->qs[qi]).retransmits;
    if (rx > m->tr_retx[qi])
        nsim_tlog_add(e->tlog, &(nsim_trec){.t = now, .slice = k,
                                            .val = rx, .conn = c->conn,
                                            .qp = (uint16_t)qi, .piece = j,
                                            .kind = NSIM_TR_RETX});
    m->tr_retx[qi] = rx;
}

/* Matching by id: the slice the immediate names, or NULL (a request of
 * an earlier life of the slot). */
static net_conn *match_id(net_comm *m, uint32_t imm, uint32_t *k)
{
    uint32_t slot = imm >> 16;
    if (slot >= m->nusers * SLOTS)
        return NULL;
    const net_req *q = &m->reqs[slot];
    if (q->c == NULL || (q->k & 0xff) != ((imm >> 8) & 0xff))
        return NULL;
    *k = (uint32_t)q->k;
    return q->c;
}

/* A receive completion: find its slice (by the receive WR, or by the
 * immediate), check it is the data that landed, and take the piece. */
static void recv_done(net_comm *m, const nsim_wc *wc)
{
    net_conn *c;
    uint32_t k, j, i;
    if (m->by_id) {
        i = (uint32_t)(wc->wr_id & 0xff);
        /* the proxy reposts the pre-posted receive it used */
        if (nsim_qp_post_recv(m->qr[i], PREPOST_ID(i)) != NSIM_OK)
            return (void)nsim_sim_fail(m->sh->env->sim, NSIM_ESIM,
                                       "net: receive queue full");
        j = wc->imm & 0xff;
        if ((c = match_id(m, wc->imm, &k)) == NULL)
            return;
    } else {
        c = m->sh->conn_of[WR_CONN(wc->wr_id)];
        k = WR_SLICE(wc->wr_id);
        j = WR_PIECE(wc->wr_id);
        i = c->pq[j].qmap[k % SLOTS];
    }
    if (WR_ID(c->conn, j, k) != wc->src_wr_id) {
        nsim_sim_fail(m->sh->env->sim, NSIM_ESIM,
                      "net: connection %u: the receive for slice %u piece %u "
                      "took the data of connection %u slice %u piece %u "
                      "(writes and receive WRs out of order on QP 0x%x)",
                      c->conn, k, j, WR_CONN(wc->src_wr_id),
                      WR_SLICE(wc->src_wr_id), WR_PIECE(wc->src_wr_id),
                      wc->qp_num);
        return;
    }
    if (m->sh->env->tlog != NULL)
        trace_done(m, c, 1, k, j, i);
    piece_done(c, 1, k, j);
}

static void poll_cq(net_comm *m, int side)
{
    nsim_wc wc[4]; /* NCCL polls 4 CQEs at a time, while it finds some */
    int n;
    m->polls[side]++;
    while ((n = nsim_cq_poll(side ? m->cq_r : m->cq_s, 4, wc)) > 0) {
        m->polls[side]++;
        m->cqes[side] += (uint64_t)n;
        for (int i = 0; i < n; i++) {
            if (wc[i].status != NSIM_WC_SUCCESS) {
                nsim__net_on_error(m, &wc[i]);
                continue;
            }
            if (side && wc[i].opcode == NSIM_WC_RDMA_WRITE)
                continue; /* a signaled CTS write drained the send queue */
            if (side && wc[i].opcode == NSIM_WC_RECV_RDMA_WITH_IMM) {
                recv_done(m, &wc[i]);
                continue;
            }
            net_conn *c = m->sh->conn_of[WR_CONN(wc[i].wr_id)];
            if (side && wc[i].opcode == NSIM_WC_RDMA_READ) {
                /* GDR flush done: the slice is visible to the GPU */
                c->sh->env->arrived(c->sh->env->exec, c->conn);
                continue;
            }
            if (m->sh->env->tlog != NULL)
                trace_done(m, c, side, WR_SLICE(wc[i].wr_id),
                           WR_PIECE(wc[i].wr_id),
                           c->pq[WR_PIECE(wc[i].wr_id)]
                               .sqmap[WR_SLICE(wc[i].wr_id) % SLOTS]);
            piece_done(c, side, WR_SLICE(wc[i].wr_id), WR_PIECE(wc[i].wr_id));
        }
    }
    if (n < 0 && !m->retired) {
        nsim_sim_fail(m->sh->env->sim, NSIM_ESIM, "net: CQ overrun");
        return;
    }
    m->empty_polls[side]++; /* the poll that ends the loop finds none */
}

static void on_comm_action(nsim_sim *sim, nsim_event *ev)
{
    net_comm *m = ev->target;
    int side = (act)ev->arg.u64 == ACT_POLL_RECV;
    m->queued[side] = 0;
    m->poll_wait_ps[side] += nsim_sim_now(sim) - m->queued_at[side];
    poll_cq(m, side);
}

/* ---- notifications ------------------------------------------------------ */

static void on_cq_send(void *ctx, nsim_cq *cq)
{
    (void)cq;
    comm_do(ctx, ACT_POLL_SEND);
}

static void on_cq_recv(void *ctx, nsim_cq *cq)
{
    (void)cq;
    comm_do(ctx, ACT_POLL_RECV);
}

/* A CTS entry landed in the sender's FIFO (host memory). */
static void on_cts(void *ctx, nsim_qp *qp, uint64_t wr_id, uint64_t bytes)
{
    net_comm *m = ctx;
    net_conn *c = m->sh->conn_of[WR_CONN(wr_id)];
    (void)qp;
    (void)bytes;
    if (c->m != m || WR_SLICE(wr_id) != (uint32_t)c->cts)
        return; /* a CTS of an abandoned comm, or one sent again */
    c->cts++;
    if (c->sh->env->tlog != NULL)
        nsim_tlog_add(c->sh->env->tlog,
                      &(nsim_trec){.t = nsim_sim_now(c->sh->env->sim),
                                   .slice = c->cts - 1, .conn = c->conn,
                                   .kind = NSIM_TR_CTS});
    conn_do(c, ACT_ISEND);
}

static void on_staged(nsim_sim *sim, nsim_piece *p)
{
    net_conn *c = p->ctx;
    (void)sim;
    c->written++;
    conn_do(c, ACT_ISEND);
}

/* ---- setup -------------------------------------------------------------- */

static uint32_t host_cpu(nsim_topo *t, uint32_t gpu)
{
    /* the CPU nearest to the GPU: fewest hops */
    uint32_t cpu;
    return nsim_topo_nearest(t, gpu, NSIM_DEV_CPU, &cpu) == NSIM_OK
               ? cpu
               : UINT32_MAX;
}

static int copy_path(net_conn *c, uint32_t a, uint32_t b, uint32_t *out,
                     uint32_t max, uint32_t *n, nsim_err *err)
{
    return nsim_fabric_route_path(c->sh->env->fab, a, b, 0, out, max, n, err);
}

/* Where the buffers live and how data gets in and out of them. */
static int setup_paths(net_conn *c, const nsim_plan_conn *pc, uint32_t *mem_s,
                       uint32_t *mem_r, nsim_err *err)
{
    nsim_topo *t = c->sh->env->topo;
    uint32_t gs = nsim_topo_rank_device(t, pc->from);
    uint32_t gr = nsim_topo_rank_device(t, pc->to);
    const nsim_device *ns = nsim_topo_device(t, pc->send_nic);
    const nsim_device *nr = nsim_topo_device(t, pc->recv_nic);
    c->gdr = ns->gdr && nr->gdr;
    uint32_t cs = host_cpu(t, gs), cr = host_cpu(t, gr);
    if (!c->gdr && (cs == UINT32_MAX || cr == UINT32_MAX))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "net: no GPUDirect RDMA on %s/%s and no CPU to stage "
                        "through",
                        ns->name, nr->name);
    *mem_s = c->gdr ? gs : cs;
    *mem_r = c->gdr ? gr : cr;
    c->nstage = 1; /* [0] = the thread block, filled per send */
    uint32_t pxn = c->gdr ? nsim_topo_pxn_gpu(t, gs, pc->send_nic) : UINT32_MAX;
    if (pxn != UINT32_MAX) {
        *mem_s = pxn;
        NSIM_TRY(copy_path(c, gs, pxn, c->stage_path + 1, 63, &c->nstage,
                           err));
        c->nstage++;
    }
    if (!c->gdr) {
        NSIM_TRY(copy_path(c, gs, cs, c->stage_path + 1, 63, &c->nstage, err));
        c->nstage++;
        NSIM_TRY(copy_path(c, cr, gr, c->host_read, 64, &c->nhost_read, err));
    }
    c->need_flush = c->gdr && nsim_topo_device(t, gr)->sm < 90 &&
                    c->sh->env->plan->req.proto == NSIM_PROTO_SIMPLE;
    return NSIM_OK;
}

static int comm_qps(net_comm *m, uint32_t mem_s, uint32_t mem_r, nsim_err *err)
{
    net_shared *sh = m->sh;
    nsim_topo *t = sh->env->topo;
    nsim_hca *hs, *hr;
    NSIM_TRY(get_hca(sh, m->send_nic, &hs, err));
    NSIM_TRY(get_hca(sh, m->recv_nic, &hr, err));
    /* CQ sizes as NCCL's (nccl-internals 5.2) */
    if (nsim_cq_create(hs, 256 * m->nqps, on_cq_send, m, &m->cq_s) ||
        nsim_cq_create(hr, 512 * m->nqps, on_cq_recv, m, &m->cq_r))
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    uint32_t cs = host_cpu(t, nsim_topo_rank_device(t, m->from));
    uint32_t cr = host_cpu(t, nsim_topo_rank_device(t, m->to));
    for (uint32_t i = 0; i < m->nqps; i++) {
        if (nsim_qp_create(hs, m->cq_s, m->cq_s, 512, &m->qs[i]) ||
            nsim_qp_create(hr, m->cq_r, m->cq_r, 512, &m->qr[i]))
            return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
        NSIM_TRY(nsim_qp_connect(m->qs[i], m->qr[i], mem_s, mem_r, err));
        /* the receiver's QPs carry the CTS writes to host memory */
        NSIM_TRY(nsim_qp_connect(m->qr[i], m->qs[i],
                                 cr != UINT32_MAX ? cr : mem_r,
                                 cs != UINT32_MAX ? cs : mem_s, err));
        nsim_qp_set_land_hook(m->qs[i], on_cts, m);
    }
    /* the receiver's loopback flush QP (GDR before Hopper, nccl 5.2) */
    uint32_t gr = nsim_topo_rank_device(t, m->to);
    if (mem_r == gr && nsim_topo_device(t, gr)->sm < 90) {
        if (nsim_qp_create(hr, m->cq_r, m->cq_r, 512, &m->flush))
            return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
        NSIM_TRY(nsim_qp_connect(m->flush, m->flush,
                                 cr != UINT32_MAX ? cr : mem_r, gr, err));
    }
    return NSIM_OK;
}

/* A new comm between the connection's ranks on the given NICs. */
int nsim__net_new_comm(net_shared *sh, const nsim_plan_conn *pc,
                       uint32_t send_nic, uint32_t recv_nic, uint32_t mem_s,
                       uint32_t mem_r, net_comm **out, nsim_err *err)
{
    const nsim_net_knobs *k = sh->env->net;
    if (sh->ncomms == sh->comms_cap) {
        uint32_t cap = sh->comms_cap ? sh->comms_cap * 2 : 64;
        net_comm **a = realloc(sh->comms, cap * sizeof *a);
        if (a == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
        sh->comms = a;
        sh->comms_cap = cap;
    }
    const nsim_device *ns = nsim_topo_device(sh->env->topo, send_nic);
    const nsim_device *nr = nsim_topo_device(sh->env->topo, recv_nic);
    uint32_t ports = ns->nic_ports > nr->nic_ports ? ns->nic_ports
                                                   : nr->nic_ports;
    /* QPs per connection x ports; every message is split over the ports
     * (one QP per port), or over all QPs with SPLIT_DATA_ON_QPS (5.2-5.3) */
    uint32_t nqps = (pc->nqps ? pc->nqps : 1) * ports;
    if (nqps > MAX_QPS)
        return NSIM_ERR(err, NSIM_EINVAL, "net: at most %d QPs", MAX_QPS);
    /* the per-QP arrays after the comm, in one block: a comm holds what
     * its nqps QPs need, not MAX_QPS of each (4 KB) */
    size_t per_qp = 2 * sizeof(nsim_qp *) + sizeof(uint64_t) +
                    sizeof(uint32_t) + sizeof(uint8_t);
    net_comm *m = calloc(1, sizeof *m + nqps * per_qp);
    if (m == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    sh->comms[sh->ncomms++] = m;
    *m = (net_comm){.sh = sh, .from = pc->from, .to = pc->to,
                    .send_nic = send_nic, .recv_nic = recv_nic,
                    .nqps = nqps};
    /* a folded tree's phantom end: its lane is its stand-in's */
    const nsim_plan *plan = sh->env->plan;
    uint32_t lane[2] = {pc->send_lane, pc->recv_lane};
    uint32_t rank[2] = {pc->from, pc->to};
    for (int side = 0; side < 2; side++) {
        uint32_t r = lane[side] < plan->nlanes ? plan->lanes[lane[side]].rank
                                               : rank[side];
        m->shadow[side] = r != rank[side] ? r : UINT32_MAX;
    }
    char *arrays = (char *)(m + 1);
    m->qs = (nsim_qp **)arrays;
    m->qr = m->qs + nqps;
    m->tr_retx = (uint64_t *)(m->qr + nqps);
    m->live = (uint32_t *)(m->tr_retx + nqps);
    m->dead = (uint8_t *)(m->live + nqps);
    m->nq = k->split_data_on_qps ? m->nqps : ports;
    m->ar = k->adaptive_routing < 0 ? ns->link_layer == NSIM_LL_IB
                                    : k->adaptive_routing;
    /* NCCL's port failover matches by id over pre-posted receive WRs
     * (nccl 5.3): runs with faults do, so that a piece sent again on
     * another QP finds a receive wherever it lands; so do shared comms,
     * whose channels send out of request order */
    m->by_id = sh->env->faults->nfaults > 0 || k->shared_comms;
    nsim__net_live(m);
    *out = m;
    return comm_qps(m, mem_s, mem_r, err);
}

/* c uses m; by id, the request table covers every slice of every user. */
int nsim__net_add_user(net_comm *m, net_conn *c)
{
    if (m->nq > c->npq)
        return NSIM_EINVAL; /* its maps are sized for fewer pieces */
    if (m->nusers == m->users_cap) {
        uint32_t cap = m->users_cap ? 2 * m->users_cap : 4;
        net_conn **u = realloc(m->users, cap * sizeof *u);
        if (u == NULL)
            return NSIM_ENOMEM;
        m->users = u;
        m->users_cap = cap;
    }
    c->user = m->nusers++;
    if (!m->by_id)
        return NSIM_OK;
    /* pre-posted receives: enough for every piece the users may have in
     * flight even if all land on one QP, at most NCCL's receive queue
     * depth (nccl 5.2: max_recv_wr 256); beyond, a write waits out an
     * RNR NAK until the proxy reposts */
    uint32_t want = m->nusers * SLOTS * m->nq;
    want = want < 256 ? want : 256;
    for (uint32_t i = 0; i < m->nqps; i++)
        for (uint32_t n = m->prepost; n < want; n++)
            if (nsim_qp_post_recv(m->qr[i], PREPOST_ID(i)) != NSIM_OK)
                return NSIM_ENOMEM;
    m->prepost = want;
    net_req *t = realloc(m->reqs, m->users_cap * SLOTS * sizeof *t);
    if (t == NULL)
        return NSIM_ENOMEM;
    memset(t + c->user * SLOTS, 0, SLOTS * sizeof *t);
    m->reqs = t;
    return NSIM_OK;
}

/* Slice k of c is request r of m. */
void nsim__net_bind_req(net_comm *m, net_conn *c, uint64_t k, uint64_t r)
{
    c->req[k % SLOTS] = r;
    if (m->by_id)
        m->reqs[c->user * SLOTS + k % SLOTS] = (net_req){c, k};
}

/* The comm for a connection: a new one, or (shared mode) the one already
 * set up between the same ranks on the same NICs. */
static int get_comm(net_shared *sh, const nsim_plan_conn *pc, uint32_t mem_s,
                    uint32_t mem_r, net_comm **out, nsim_err *err)
{
    for (uint32_t i = 0; sh->env->net->shared_comms && i < sh->ncomms; i++) {
        net_comm *m = sh->comms[i];
        if (m->from == pc->from && m->to == pc->to && !m->retired &&
            m->send_nic == pc->send_nic && m->recv_nic == pc->recv_nic) {
            *out = m;
            return NSIM_OK;
        }
    }
    return nsim__net_new_comm(sh, pc, pc->send_nic, pc->recv_nic, mem_s, mem_r,
                              out, err);
}

/* The connection's buffers, registered on the comm's NICs. */
int nsim__net_register(net_conn *c, uint32_t mem_s, uint32_t mem_r,
                       nsim_err *err)
{
    net_shared *sh = c->sh;
    nsim_topo *t = sh->env->topo;
    nsim_hca *hs = sh->hca[c->m->send_nic], *hr = sh->hca[c->m->recv_nic];
    uint32_t cs = host_cpu(t, nsim_topo_rank_device(t, c->from));
    uint32_t cr = host_cpu(t, nsim_topo_rank_device(t, c->to));
    cs = cs != UINT32_MAX ? cs : mem_s;
    cr = cr != UINT32_MAX ? cr : mem_r;
    uint64_t fifo = CTS_FIFO_SLOTS * sh->env->params->cts_entry_bytes;
    NSIM_TRY(nsim_mr_reg(hs, mem_s, SLOTS * SLOT_BYTES, 0, &c->mr_send, err));
    NSIM_TRY(nsim_mr_reg(hr, mem_r, SLOTS * SLOT_BYTES,
                         NSIM_ACCESS_LOCAL_WRITE | NSIM_ACCESS_REMOTE_WRITE,
                         &c->mr_recv, err));
    NSIM_TRY(nsim_mr_reg(hs, cs, fifo,
                         NSIM_ACCESS_LOCAL_WRITE | NSIM_ACCESS_REMOTE_WRITE,
                         &c->mr_fifo, err));
    return nsim_mr_reg(hr, cr, fifo, 0, &c->mr_shadow, err);
}

static void on_prepost(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    for (uint32_t k = 0; k < SLOTS / c->sh->env->plan->slice_steps; k++)
        conn_do(c, ACT_REPOST);
}

static int net_setup(void *shared, const nsim_xport_env *env, uint32_t conn,
                     void **state, nsim_err *err)
{
    net_shared *sh = shared;
    const nsim_plan_conn *pc = &env->plan->conns[conn];
    /* a slice is split into at most as many pieces as a comm has QPs:
     * the plan's QPs x the ports of the widest NIC (any pair it may be
     * moved to by a failover) */
    uint32_t npq = (pc->nqps ? pc->nqps : 1) * sh->max_ports;
    if (npq > MAX_QPS)
        npq = MAX_QPS;
    /* on a line of its own (its layout is by line: net_int.h) */
    net_conn *c = nsim_line_calloc(1, sizeof(net_conn) + npq * sizeof(net_pq));
    uint32_t mem_s = 0, mem_r = 0;
    if (c == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    *state = c;
    c->npq = npq;
    c->sh = sh;
    c->conn = conn;
    c->from = pc->from;
    c->to = pc->to;
    sh->conn_of[conn] = c;
    memset(c->recv_left, 0xff, sizeof c->recv_left);
    memset(c->send_left, 0xff, sizeof c->send_left);
    c->cts_since = NSIM_TIME_MAX;
    NSIM_TRY(setup_paths(c, pc, &mem_s, &mem_r, err));
    NSIM_TRY(get_comm(sh, pc, mem_s, mem_r, &c->m, err));
    int rc = nsim__net_add_user(c->m, c);
    if (rc == NSIM_EINVAL)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "net: connection %u: its comm splits a slice over %u "
                        "QPs, more than the %u its QP count allows",
                        conn, c->m->nq, c->npq);
    if (rc != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    c->mem_s = mem_s;
    c->mem_r = mem_r;
    NSIM_TRY(nsim__net_register(c, mem_s, mem_r, err));
    return nsim_sim_schedule(env->sim, 0, on_prepost, c, 0, 0, NULL);
}

static void net_teardown(void *state) { free(state); }

static int net_send(void *state, uint32_t sm_server, uint64_t bytes,
                    nsim_time *sm_done)
{
    net_conn *c = state;
    const nsim_xport_env *e = c->sh->env;
    uint64_t k = c->issued++; /* slices are staged in order */
    c->n.tx_slices++;
    c->n.tx_bytes += bytes;
    nsim_piece *p;
    NSIM_TRY(nsim_fabric_piece(e->fab, &p));
    c->stage_path[0] = sm_server;
    c->sizes[k % SLOTS] = bytes;
    *p = (nsim_piece){c->stage_path, c->nstage, 0, bytes, 0, on_staged, c, k,
                      0};
    NSIM_TRY(nsim_fabric_send(e->fab, p));
    *sm_done = nsim_fabric_free_at(e->fab, sm_server);
    return NSIM_OK;
}

static int net_consumed(void *state)
{
    conn_do(state, ACT_REPOST);
    return NSIM_OK;
}

static void net_conn_counters(const void *state, nsim_xport_conn_counters *out)
{
    *out = ((const net_conn *)state)->n;
}

/* ---- reports ------------------------------------------------------------ */

static int report_comm(const net_comm *m, uint32_t id, nsim_xport_stats *st)
{
    for (uint32_t i = 0; i < m->nqps; i++)
        for (uint32_t side = 0; side < 2; side++) {
            const nsim_qp *q = side ? m->qr[i] : m->qs[i];
            const nsim_qp *peer = side ? m->qs[i] : m->qr[i];
            nsim_qp_counters k = nsim_qp_get_counters(q);
            static const char *const states[] = {"RESET", "INIT", "RTR",
                                                 "RTS", "ERR"};
            nsim_qp_state qs = nsim_qp_get_state(q);
            nsim_qp_record r = {id, i, side,
                                side ? m->recv_nic : m->send_nic,
                                side ? m->send_nic : m->recv_nic,
                                nsim_qp_num(q), nsim_qp_num(peer),
                                (unsigned)qs < 5 ? states[qs] : "?",
                                k.wrs, k.bytes, k.packets, k.acks,
                                k.retransmits, k.naks, k.timeouts};
            NSIM_TRY(nsim_xport_stats_add_qp(st, &r));
        }
    for (uint32_t side = 0; side < 2; side++) {
        nsim_cq_record r = {id, side, (side ? 512 : 256) * m->nqps,
                            m->cqes[side], m->polls[side],
                            m->empty_polls[side]};
        NSIM_TRY(nsim_xport_stats_add_cq(st, &r));
    }
    return NSIM_OK;
}

/* Records name the first plan connection that uses each comm. */
static int net_report(void *shared, nsim_xport_stats *st)
{
    net_shared *sh = shared;
    for (uint32_t i = 0; i < sh->ncomms; i++) {
        uint32_t id = 0;
        for (uint32_t c = 0; c < sh->env->plan->nconns; c++)
            if (sh->conn_of[c] != NULL && sh->conn_of[c]->m == sh->comms[i]) {
                id = c;
                break;
            }
        NSIM_TRY(report_comm(sh->comms[i], id, st));
    }
    for (uint32_t d = 0; d < nsim_topo_ndevices(sh->env->topo); d++) {
        if (sh->hca[d] == NULL)
            continue;
        nsim_hca_counters k = nsim_hca_get_counters(sh->hca[d]);
        nsim_port_record r = {d, k.packets_tx, k.packets_rx, k.bytes_tx,
                              k.bytes_rx, k.acks_tx, k.packets_lost};
        NSIM_TRY(nsim_xport_stats_add_port(st, &r));
    }
    for (uint32_t i = 0; i < sh->log.nfailovers; i++)
        NSIM_TRY(nsim_xport_stats_add_failover(st, &sh->log.failovers[i]));
    for (uint32_t i = 0; i < sh->env->plan->nconns; i++) {
        const net_conn *c = sh->conn_of[i];
        if (c == NULL)
            continue;
        nsim_wait_record w = {i, c->cts_wait_ps,
                              {c->m->poll_wait_ps[0], c->m->poll_wait_ps[1]},
                              c->host_read_ps};
        NSIM_TRY(nsim_xport_stats_add_wait(st, &w));
    }
    return NSIM_OK;
}

const nsim_transport_ops nsim_net_transport = {
    .name = "NET",
    .init = net_init,
    .fini = net_fini,
    .setup = net_setup,
    .teardown = net_teardown,
    .send = net_send,
    .consumed = net_consumed,
    .report = net_report,
    .fault = nsim__net_fault,
    .conn_counters = net_conn_counters,
};
