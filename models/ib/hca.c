/* SPDX-License-Identifier: MIT
 *
 * hca.c - HCA, RC QPs and CQs (see hca.h).
 *
 * A packet moves in three pieces: the DMA read of its payload (memory ->
 * NIC over PCIe), the wire (NIC -> network -> NIC), and the DMA write at
 * the responder (NIC -> memory). Splitting there lets the requester count
 * reads in flight and the responder ACK on receipt, as the hardware does.
 */
#include "hca.h"

#include <stdlib.h>
#include <string.h>

typedef struct wr_ent {
    nsim_send_wr wr;
    uint64_t sent;      /* bytes packetized so far */
    uint32_t psn_last;  /* PSN of the last packet, once packetized */
    uint8_t fetched;    /* WQE fetched by the HCA */
    uint8_t done_tx;    /* every packet handed to the port */
} wr_ent;

struct nsim_cq {
    nsim_hca *h;
    nsim_wc *ring;
    uint32_t depth, head, len;
    nsim_wc *pend;   /* CQEs on their way to host memory, in order */
    uint32_t pend_cap, pend_head, pend_len;
    nsim_cq_notify_fn *fn;
    void *ctx;
    nsim_cq *next_owned;
};

struct nsim_qp {
    nsim_hca *h;
    uint32_t qpn;
    nsim_cq *scq, *rcq;
    nsim_qp *remote;
    wr_ent *sq;
    uint32_t sq_depth, sq_head, sq_next, sq_tail; /* indices mod depth */
    uint64_t *rq;
    uint32_t rq_depth, rq_head, rq_len;
    uint32_t next_psn, acked_psn, rx_since_ack;
    uint32_t *read_path, nread;     /* local memory -> local NIC */
    uint32_t *net_path, nnet;       /* local NIC -> remote NIC */
    uint32_t *write_path, nwrite;   /* remote NIC -> remote memory */
    uint32_t *ack_path, nack;       /* remote NIC -> local NIC */
    nsim_time read_delay;
    uint32_t mtu;
    int in_ready;
    nsim_qp_counters st;
    nsim_qp_land_fn *land_fn; /* responder side: a WR landed in memory */
    void *land_ctx;
    nsim_qp *next_owned;
};

struct nsim_hca {
    nsim_sim *sim;
    nsim_fabric *fab;
    nsim_topo *topo;
    const nsim_params *p;
    uint32_t dev;
    nsim_qp **ready;              /* round-robin ring of QPs with work */
    uint32_t ready_cap, ready_head, ready_len;
    uint32_t reads_in_flight;
    uint32_t next_qpn;
    nsim_qp *qps;
    nsim_cq *cqs;
    nsim_hca_counters st;
};

int nsim_hca_create(nsim_sim *sim, nsim_fabric *fab, nsim_topo *topo,
                    const nsim_params *p, uint32_t nic_dev, nsim_hca **out,
                    nsim_err *err)
{
    nsim_hca *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    *h = (nsim_hca){.sim = sim, .fab = fab, .topo = topo, .p = p,
                    .dev = nic_dev, .next_qpn = 0x100 + nic_dev * 0x1000};
    *out = h;
    return NSIM_OK;
}

void nsim_hca_destroy(nsim_hca *h)
{
    if (h == NULL)
        return;
    while (h->qps != NULL) {
        nsim_qp *q = h->qps;
        h->qps = q->next_owned;
        free(q->sq);
        free(q->rq);
        free(q->read_path);
        free(q->net_path);
        free(q->write_path);
        free(q->ack_path);
        free(q);
    }
    while (h->cqs != NULL) {
        nsim_cq *c = h->cqs;
        h->cqs = c->next_owned;
        free(c->ring);
        free(c->pend);
        free(c);
    }
    free(h->ready);
    free(h);
}

uint32_t nsim_hca_device(const nsim_hca *h) { return h->dev; }
nsim_hca_counters nsim_hca_get_counters(const nsim_hca *h) { return h->st; }
uint32_t nsim_qp_num(const nsim_qp *qp) { return qp->qpn; }
nsim_qp_counters nsim_qp_get_counters(const nsim_qp *qp) { return qp->st; }

int nsim_cq_create(nsim_hca *h, uint32_t depth, nsim_cq_notify_fn *fn,
                   void *ctx, nsim_cq **out)
{
    nsim_cq *c = calloc(1, sizeof *c);
    if (c == NULL || (c->ring = calloc(depth, sizeof *c->ring)) == NULL ||
        (c->pend = calloc(depth, sizeof *c->pend)) == NULL) {
        if (c != NULL)
            free(c->ring);
        free(c->pend);
        free(c);
        return NSIM_ENOMEM;
    }
    c->pend_cap = depth;
    c->h = h;
    c->depth = depth;
    c->fn = fn;
    c->ctx = ctx;
    c->next_owned = h->cqs;
    h->cqs = c;
    *out = c;
    return NSIM_OK;
}

int nsim_cq_poll(nsim_cq *cq, int max, nsim_wc *wc)
{
    int n = 0;
    while (n < max && cq->len > 0) {
        wc[n++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->depth;
        cq->len--;
    }
    return n;
}

static void on_cqe(nsim_sim *sim, nsim_event *ev)
{
    nsim_cq *cq = ev->target;
    nsim_wc wc = cq->pend[cq->pend_head];
    cq->pend_head = (cq->pend_head + 1) % cq->pend_cap;
    cq->pend_len--;
    if (cq->len == cq->depth) {
        nsim_sim_fail(sim, NSIM_ESIM, "CQ overflow (depth %u)", cq->depth);
        return;
    }
    cq->ring[(cq->head + cq->len++) % cq->depth] = wc;
    if (cq->len == 1 && cq->fn != NULL)
        cq->fn(cq->ctx, cq);
}

/* The CQE reaches host memory one DMA write later; every CQE takes the same
 * delay, so the pending ones land in order. */
static void push_cqe(nsim_hca *h, nsim_cq *cq, const nsim_wc *wc)
{
    if (cq->pend_len == cq->pend_cap) {
        nsim_sim_fail(h->sim, NSIM_ESIM, "CQ overflow (depth %u)", cq->depth);
        return;
    }
    cq->pend[(cq->pend_head + cq->pend_len++) % cq->pend_cap] = *wc;
    if (nsim_sim_schedule(h->sim, h->p->hca_cqe_write_ps, on_cqe, cq, 0, 0,
                          NULL) != NSIM_OK)
        nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
}

int nsim_qp_create(nsim_hca *h, nsim_cq *send_cq, nsim_cq *recv_cq,
                   uint32_t sq_depth, nsim_qp **out)
{
    nsim_qp *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NSIM_ENOMEM;
    q->h = h;
    q->qpn = h->next_qpn++;
    q->scq = send_cq;
    q->rcq = recv_cq;
    q->sq_depth = sq_depth;
    q->rq_depth = sq_depth;
    q->sq = calloc(sq_depth, sizeof *q->sq);
    q->rq = calloc(q->rq_depth, sizeof *q->rq);
    q->next_owned = h->qps;
    h->qps = q;
    if (q->sq == NULL || q->rq == NULL)
        return NSIM_ENOMEM;
    *out = q;
    return NSIM_OK;
}

static int copy_route(nsim_topo *t, uint32_t a, uint32_t b, uint32_t pick,
                      uint32_t **out, uint32_t *n, nsim_err *err)
{
    const nsim_route *r;
    NSIM_TRY(nsim_topo_route(t, a, b, &r, err));
    *out = malloc((r->hops + 1) * sizeof **out);
    if (*out == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    const uint32_t *l = &r->links[(pick % r->npaths) * r->hops];
    for (uint32_t i = 0; i < r->hops; i++)
        (*out)[i] = nsim_fabric_link_server(l[i]);
    *n = r->hops;
    return NSIM_OK;
}

/* RoCE source-port entropy from the QP numbers (hardware-facts 3.6). */
static uint32_t ecmp_pick(const nsim_qp *a, const nsim_qp *b, int roce)
{
    if (!roce)
        return a->h->dev * 31 + b->h->dev; /* IB: one LID route per pair */
    uint64_t v = (uint64_t)a->qpn * b->qpn;
    v ^= v >> 20;
    v ^= v >> 40;
    uint32_t fl = (uint32_t)(v & 0xFFFFF);
    return 0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14));
}

int nsim_qp_connect(nsim_qp *qp, nsim_qp *remote, uint32_t local_mem,
                    uint32_t remote_mem, nsim_err *err)
{
    nsim_hca *h = qp->h, *rh = remote->h;
    nsim_topo *t = h->topo;
    const nsim_device *ln = nsim_topo_device(t, h->dev);
    const nsim_device *rn = nsim_topo_device(t, rh->dev);
    int roce = ln->link_layer == NSIM_LL_ROCE;
    uint32_t pick = ecmp_pick(qp, remote, roce);
    const nsim_route *r;
    qp->remote = remote;
    qp->mtu = ln->mtu_bytes < rn->mtu_bytes ? ln->mtu_bytes : rn->mtu_bytes;
    NSIM_TRY(copy_route(t, local_mem, h->dev, 0, &qp->read_path, &qp->nread,
                        err));
    NSIM_TRY(copy_route(t, h->dev, rh->dev, pick, &qp->net_path, &qp->nnet,
                        err));
    NSIM_TRY(copy_route(t, rh->dev, remote_mem, 0, &qp->write_path,
                        &qp->nwrite, err));
    NSIM_TRY(copy_route(t, rh->dev, h->dev, pick, &qp->ack_path, &qp->nack,
                        err));
    NSIM_TRY(nsim_topo_route(t, h->dev, local_mem, &r, err));
    /* the read request travels to the memory, which answers later */
    qp->read_delay = r->lat_ps + h->p->gpu_memory_latency_ps;
    return NSIM_OK;
}

static void hca_kick(nsim_hca *h);

static void ready_push(nsim_hca *h, nsim_qp *q)
{
    if (q->in_ready)
        return;
    if (h->ready_len == h->ready_cap) {
        uint32_t cap = h->ready_cap ? h->ready_cap * 2 : 16;
        nsim_qp **r = malloc(cap * sizeof *r);
        if (r == NULL) {
            nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
            return;
        }
        for (uint32_t i = 0; i < h->ready_len; i++)
            r[i] = h->ready[(h->ready_head + i) % h->ready_cap];
        free(h->ready);
        h->ready = r;
        h->ready_cap = cap;
        h->ready_head = 0;
    }
    h->ready[(h->ready_head + h->ready_len++) % h->ready_cap] = q;
    q->in_ready = 1;
}

static int qp_has_ready_work(const nsim_qp *q)
{
    return q->sq_next != q->sq_tail && q->sq[q->sq_next % q->sq_depth].fetched;
}

static void on_wqe_fetched(nsim_sim *sim, nsim_event *ev)
{
    nsim_qp *q = ev->target;
    (void)sim;
    q->sq[ev->arg.u64 % q->sq_depth].fetched = 1;
    if (qp_has_ready_work(q)) {
        ready_push(q->h, q);
        hca_kick(q->h);
    }
}

int nsim_qp_post_send(nsim_qp *q, const nsim_send_wr *wr)
{
    if (q->remote == NULL)
        return NSIM_ESTATE;
    if (q->sq_tail - q->sq_head == q->sq_depth)
        return NSIM_EAGAIN;
    uint32_t idx = q->sq_tail++;
    q->sq[idx % q->sq_depth] = (wr_ent){*wr, 0, 0, 0, 0};
    q->st.wrs++;
    return nsim_sim_schedule(q->h->sim,
                             q->h->p->hca_doorbell_ps + q->h->p->hca_wqe_fetch_ps,
                             on_wqe_fetched, q, 0, idx, NULL);
}

void nsim_qp_set_land_hook(nsim_qp *qp, nsim_qp_land_fn *fn, void *ctx)
{
    qp->land_fn = fn;
    qp->land_ctx = ctx;
}

int nsim_qp_post_recv(nsim_qp *q, uint64_t wr_id)
{
    if (q->rq_len == q->rq_depth)
        return NSIM_EAGAIN;
    q->rq[(q->rq_head + q->rq_len++) % q->rq_depth] = wr_id;
    return NSIM_OK;
}

/* ---- requester: packets out ------------------------------------------ */

#define TAG(idx, psn) (((uint64_t)(idx) << 32) | (psn))
#define TAG_IDX(t) ((uint32_t)((t) >> 32))
#define TAG_PSN(t) ((uint32_t)(t))

static void on_wire_done(nsim_sim *sim, nsim_piece *p);
static void on_ack(nsim_sim *sim, nsim_piece *p);

static void on_read_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    nsim_hca *h = q->h;
    nsim_piece *w;
    (void)sim;
    h->reads_in_flight--;
    if (nsim_fabric_piece(h->fab, &w) != NSIM_OK) {
        nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
        return;
    }
    *w = (nsim_piece){q->net_path, q->nnet, 0, p->bytes, p->hdr_flags,
                      on_wire_done, q, p->tag, 0, NULL};
    h->st.packets_tx++;
    h->st.bytes_tx += p->bytes;
    if (nsim_fabric_send(h->fab, w) != NSIM_OK)
        nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
    hca_kick(h);
}

/* Cuts the next packet of q's current WR and starts its payload read. */
static int send_packet(nsim_hca *h, nsim_qp *q)
{
    uint32_t idx = q->sq_next;
    wr_ent *e = &q->sq[idx % q->sq_depth];
    uint64_t left = e->wr.bytes - e->sent;
    uint64_t n = left < q->mtu ? left : q->mtu;
    uint32_t flags = (e->sent == 0 ? NSIM_PIECE_FIRST : 0);
    e->sent += n;
    uint32_t psn = q->next_psn++;
    if (e->sent == e->wr.bytes) {
        flags |= NSIM_PIECE_LAST;
        e->psn_last = psn;
        e->done_tx = 1;
        q->sq_next++;
    }
    nsim_piece *p;
    NSIM_TRY(nsim_fabric_piece(h->fab, &p));
    *p = (nsim_piece){q->read_path, q->nread, 0, n, flags, on_read_done, q,
                      TAG(idx, psn), q->read_delay, NULL};
    q->st.packets++;
    q->st.bytes += n;
    h->reads_in_flight++;
    return nsim_fabric_send(h->fab, p);
}

static void hca_kick(nsim_hca *h)
{
    while (h->ready_len > 0 &&
           h->reads_in_flight < h->p->hca_dma_read_outstanding) {
        nsim_qp *q = h->ready[h->ready_head];
        h->ready_head = (h->ready_head + 1) % h->ready_cap;
        h->ready_len--;
        q->in_ready = 0;
        if (!qp_has_ready_work(q))
            continue;
        if (send_packet(h, q) != NSIM_OK) {
            nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
            return;
        }
        if (qp_has_ready_work(q))
            ready_push(h, q);
    }
}

/* ---- responder -------------------------------------------------------- */

static void on_write_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx; /* the requester QP; the responder is q->remote */
    nsim_qp *r = q->remote;
    (void)sim;
    if (!(p->hdr_flags & NSIM_PIECE_LAST))
        return;
    const wr_ent *e = &q->sq[TAG_IDX(p->tag) % q->sq_depth];
    if (r->land_fn != NULL)
        r->land_fn(r->land_ctx, r, e->wr.wr_id, e->wr.bytes);
    if (e->wr.opcode != NSIM_WR_RDMA_WRITE_WITH_IMM)
        return;
    if (r->rq_len == 0) {
        /* RNR: NCCL always pre-posts; treat as a model error */
        nsim_sim_fail(sim, NSIM_ESIM,
                      "QP 0x%x: WRITE_WITH_IMM with no receive posted",
                      r->qpn);
        return;
    }
    uint64_t wr_id = r->rq[r->rq_head];
    r->rq_head = (r->rq_head + 1) % r->rq_depth;
    r->rq_len--;
    nsim_wc wc = {wr_id, NSIM_WC_SUCCESS, NSIM_WC_RECV_RDMA_WITH_IMM,
                  e->wr.bytes, e->wr.imm, r->qpn};
    push_cqe(r->h, r->rcq, &wc);
}

static void on_wire_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    nsim_hca *rh = q->remote->h;
    nsim_piece *w;
    (void)sim;
    rh->st.packets_rx++;
    rh->st.bytes_rx += p->bytes;
    int last = (p->hdr_flags & NSIM_PIECE_LAST) != 0;
    if (last || ++q->remote->rx_since_ack >= rh->p->ib_ack_every_packets) {
        q->remote->rx_since_ack = 0;
        if (nsim_fabric_piece(rh->fab, &w) != NSIM_OK)
            goto oom;
        *w = (nsim_piece){q->ack_path, q->nack, 0, 0, NSIM_PIECE_ACK, on_ack,
                          q, p->tag, 0, NULL};
        rh->st.acks_tx++;
        if (nsim_fabric_send(rh->fab, w) != NSIM_OK)
            goto oom;
    }
    if (nsim_fabric_piece(rh->fab, &w) != NSIM_OK)
        goto oom;
    *w = (nsim_piece){q->write_path, q->nwrite, 0, p->bytes, p->hdr_flags,
                      on_write_done, q, p->tag, 0, NULL};
    if (nsim_fabric_send(rh->fab, w) != NSIM_OK)
        goto oom;
    return;
oom:
    nsim_sim_fail(rh->sim, NSIM_ENOMEM, "hca: out of memory");
}

/* ---- requester: ACKs and send completions ----------------------------- */

static void on_ack(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    uint32_t psn = TAG_PSN(p->tag);
    (void)sim;
    q->st.acks++;
    if (psn + 1 > q->acked_psn)
        q->acked_psn = psn + 1;
    while (q->sq_head != q->sq_next) {
        wr_ent *e = &q->sq[q->sq_head % q->sq_depth];
        if (!e->done_tx || e->psn_last >= q->acked_psn)
            break;
        if (e->wr.signaled) {
            nsim_wc wc = {e->wr.wr_id, NSIM_WC_SUCCESS, NSIM_WC_RDMA_WRITE,
                          e->wr.bytes, 0, q->qpn};
            push_cqe(q->h, q->scq, &wc);
        }
        q->sq_head++;
    }
}
