/* SPDX-License-Identifier: MIT
 *
 * hca.c - HCA, RC QPs, MRs and CQs (see hca.h).
 *
 * A request packet moves in three pieces: the DMA read of its payload
 * (memory -> NIC over PCIe), the wire (NIC -> network -> NIC), and the DMA
 * write at the responder (NIC -> memory). Splitting there lets the
 * requester count reads in flight and the responder check the PSN and ACK
 * on receipt, as the hardware does. A READ response moves the other way in
 * the same three pieces.
 *
 * Every piece carries a tag: kind (4 bits), the QP's epoch (4 bits, bumped
 * on RESET and ERR, so pieces of an earlier life are ignored), the
 * requester's rewind generation (8 bits, so DMA reads of an abandoned
 * go-back-N pass are not sent), the send queue slot (16 bits) and the PSN
 * (32 bits; for responder landings the landing record's sequence number).
 *
 * Send queue: absolute indices free <= head <= next <= tail. [free, head)
 * are completed WRs whose slots wait for a later signaled completion;
 * [head, next) are fully packetized and wait for their ACK (READs also for
 * their data to land); next is being packetized; [next, tail) wait.
 * Receive queue: head <= cons <= tail; [head, cons) are consumed by
 * incoming messages whose data is still landing.
 */
#include "hca.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum pkind {
    PK_DATA,
    PK_READ_REQ,
    PK_READ_RESP,
    PK_ACK,
    PK_NAK_SEQ,
    PK_NAK_RACC,
    PK_NAK_RINV,
    PK_NAK_ROP,
    PK_LAND,
    PK_NAK_RNR, /* slot field: the responder's min_rnr_timer code */
};

#define TAG(kind, epoch, gen, slot, psn)                                     \
    (((uint64_t)(kind) << 60) | ((uint64_t)((epoch) & 15) << 56) |           \
     ((uint64_t)((gen) & 255) << 48) | ((uint64_t)((slot) & 0xFFFF) << 32) | \
     (uint32_t)(psn))
#define TAG_KIND(t) ((unsigned)((t) >> 60))
#define TAG_EPOCH(t) ((unsigned)((t) >> 56) & 15u)
#define TAG_GEN(t) ((unsigned)((t) >> 48) & 255u)
#define TAG_SLOT(t) ((uint32_t)((t) >> 32) & 0xFFFFu)
#define TAG_PSN(t) ((uint32_t)(t))

#define NONE UINT64_MAX
#define FLOW_MSG_MTU (1u << 31) /* > SLOT_BYTES: every WR one "packet" */
#define MAX_WR 32768u    /* hw 4.2: max_qp_wr */
/* Queues and CQs start with room for RING_MIN entries and double (up to
 * their depth) when what is outstanding fills them: memory follows what is
 * in flight, not the depth (tens of thousands of NET connections post a
 * few WRs each). Depth limits are checked against the depth, as before.
 * A ring is used round robin, so all of its capacity is touched: at 16
 * entries a NET connection's rings (two send queues, a receive queue, the
 * landing records, two CQs with their pending rings) cycled through ~110
 * lines where a few entries are in flight. */
#define RING_MIN 2u
/* MR keys: key = tag << 20 | (MR index + 1), tag = HCA_TAG(device): 12
 * bits that tell a key of another HCA (a protection error) from this
 * one's, as a real HCA's key space does (keys of two HCAs 4,095 devices
 * apart may coincide, as real keys may). QPNs are 24 bits (IB):
 * 0x100 + HCA_TAG(device) x 0x1000 up, per HCA. Before the tag was the
 * device id + 1 itself, and a cluster with NICs past device 4,094
 * overflowed the key: every WR there failed with LOC_PROT_ERR. */
#define KEY_IDX_BITS 20u
#define HCA_TAG(dev) ((dev) % 4095u + 1u)
#define QPN_MASK 0xFFFFFFu

typedef struct wr_ent {
    nsim_send_wr wr;
    nsim_mr *lmr;       /* local MR (NULL: the QP's default memory) */
    uint64_t sent;      /* bytes packetized (READ: requested) this pass */
    uint32_t psn_first, npkts, psn_last;
    /* flow fidelity: wire packets of the message before the first one a
     * random loss took; the go-back resends from there (as go-back-N
     * resends from the lost packet), 0 once the rest is in */
    uint32_t resume_pkts;
    /* flow fidelity: this pass's message lost by chance at wire packet
     * lost_at - 1 of the WR (drawn as it is sent); 0: not lost */
    uint32_t lost_at;
    uint8_t fetched;    /* WQE fetched by the HCA */
    uint8_t assigned;   /* PSNs assigned (kept across rewinds) */
    uint8_t done_tx;    /* every packet cut in this pass */
    uint8_t landed;     /* READ: the last response is in memory */
    uint8_t rd_counted; /* READ: counted against max_rd_atomic */
} wr_ent;

typedef struct land_rec {   /* a message arriving at a responder */
    uint64_t req_wr_id, bytes;
    uint64_t recv;          /* receive queue index, or NONE */
    uint32_t imm;
    uint8_t op;             /* nsim_wc_opcode of the receive CQE */
    uint8_t landed;
} land_rec;

struct nsim_mr {
    nsim_hca *h;
    uint32_t key, access, mem;
    uint64_t length;
    int valid;
    const uint32_t *to_nic, *from_nic; /* interned (fabric.h) */
    uint32_t nto, nfrom;               /* memory -> NIC, NIC -> memory */
    nsim_time read_delay;
    nsim_mr *next_owned;
};

struct nsim_cq {
    nsim_hca *h;
    /* [head, head + len): CQEs in host memory, to poll; then pend_len
     * CQEs on their way there, in order (each lands one DMA write after
     * it was pushed, so they land in the order they were pushed, and
     * landing moves nothing: len grows by one) */
    nsim_wc *ring;
    uint32_t depth, head, len, pend_len;
    uint32_t ring_cap; /* a power of two, grown up to what is held */
    int error;
    nsim_cq_counters st;
    nsim_cq_notify_fn *fn;
    void *ctx;
    nsim_cq *next_owned;
};

/* Laid out for the packet path, which visits hundreds of QPs per NIC in
 * turn: what a requester touches per packet (hca_kick, send_packet,
 * on_read_done, the ACK) fills the first three cache lines, what a
 * responder touches (on_wire_done, rx_data, on_land) the next two; setup,
 * error, retry and flow-only state come after. The QP is 64-byte
 * aligned. */
struct nsim_qp {
    /* requester, per packet */
    nsim_hca *h;
    wr_ent *sq;      /* ring of sq_cap: WR j at j & (sq_cap - 1) */
    uint64_t sq_next, sq_tail;
    nsim_qp_state state;
    uint8_t epoch, gen;
    uint8_t rnr_wait; /* stopped by an RNR NAK until its timer expires */
    uint32_t sq_cap;
    uint32_t flow_busy; /* flow_key of the message on the wire, or 0: the
                         * QP sends its messages one after the other */
    uint32_t rd_out, max_rd_atomic;
    uint32_t next_psn, acked_psn;
    uint64_t rate_mbps;
    int in_ready;
    int wake_pending;
    uint32_t mtu;
    uint32_t local_mem; /* device holding the buffers it reads */
    uint32_t *flow_path, nflow;
    uint32_t nread;   /* read: local memory -> local NIC */
    /* paths (RTR), interned by the fabric */
    const uint32_t *read_path, *net_path;
    nsim_time read_delay;
    uint32_t nnet;    /* net: local NIC -> remote NIC */
    int timer_armed;
    nsim_event_handle timer;
    nsim_time timeout_ps;
    nsim_qp *remote;
    uint64_t sq_free, sq_head;
    uint32_t retries, rnr_retries;
    uint32_t drop_psn, drop_times;
    /* responder, per packet */
    uint32_t epsn, rx_since_ack;
    uint8_t nak_sent;
    const uint32_t *rx_path;
    uint32_t rx_npath;
    uint32_t lq_cap; /* power of two */
    land_rec *lq;
    uint64_t lq_head, lq_tail;
    uint64_t rx_rec;
    const uint32_t *ack_path;
    uint32_t nack;    /* ack: remote NIC -> local NIC */
    uint32_t qpn;
    nsim_qp_land_fn *land_fn; /* responder side: a WR landed in memory */
    void *land_ctx;
    nsim_cq *scq, *rcq;
    /* receive queue */
    nsim_recv_wr *rq; /* ring of rq_cap: WR j at j & (rq_cap - 1) */
    uint32_t rq_depth, rq_cap;
    uint64_t rq_head, rq_cons, rq_tail;
    nsim_qp_counters st;
    /* the rest of the send queue and requester */
    uint32_t sq_depth;
    uint8_t resp_gap;           /* a READ response gap was acted upon */
    nsim_time next_tx_ps;
    uint32_t retry_cnt;
    uint32_t min_rnr_timer, rnr_retry;
    int blocked;
    nsim_time blocked_since;
    uint32_t access;
    /* paths (RTR), interned by the fabric */
    const uint32_t *write_path, *rread_path, *lwrite_path;
    uint32_t nwrite;  /* write: remote NIC -> remote memory */
    uint32_t nrread;  /* rread: remote memory -> remote NIC */
    uint32_t nlwrite; /* lwrite: local NIC -> local memory */
    nsim_time rread_delay;
    uint32_t mtu_attr;
    /* flow fidelity: a message is one packet of the QP's (mtu is
     * FLOW_MSG_MTU) and one flow over read ++ net ++ write paths, cut in
     * wire_mtu packets for its header and ACK costs */
    uint32_t wire_mtu;
    /* flows may finish out of order, the wire is FIFO: messages are handed
     * to the responder in PSN order (parked until their turn) */
    uint32_t flow_key, flow_dpsn;
    nsim_piece *flow_wire; /* the message on the wire while flow_busy */
    int flow_pipe;      /* the next message's DMA read overlapped the last
                         * one's wire time (the HCA reads ahead) */
    nsim_piece *park;
    uint32_t park_cap; /* power of two */
    nsim_qp *next_owned;
} __attribute__((aligned(64)));

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
    nsim_mr *mrs_owned;
    nsim_mr **mrs;                /* by key index */
    uint32_t nmrs, mrs_cap;
    double loss;
    gsl_rng *rng;
    nsim_hca_counters st;
};

static void oom(nsim_hca *h)
{
    nsim_sim_fail(h->sim, NSIM_ENOMEM, "hca: out of memory");
}

/* ---- growing rings --------------------------------------------------- */

/* The first power of two >= n (n <= 2^31). */
static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t c = 1;
    while (c < n)
        c <<= 1;
    return c;
}

static uint32_t ring_start(uint32_t depth)
{
    uint32_t full = pow2_at_least(depth ? depth : 1);
    return full < RING_MIN ? full : RING_MIN;
}

/* Doubles a ring of *cap elements of size sz, keeping every entry at
 * absolute index j in [tail - *cap, tail) at j & (cap - 1), so a lookup by
 * the low bits of an index finds what it found before. */
static int ring_grow(nsim_sim *sim, void **ring, uint32_t *cap, size_t sz,
                     uint64_t tail)
{
    uint32_t oc = *cap, nc = oc * 2;
    if (nsim_sim_charge(sim, (size_t)oc * sz) != NSIM_OK)
        return NSIM_EBUDGET;
    char *n = malloc((size_t)nc * sz), *o = *ring;
    if (n == NULL)
        return NSIM_ENOMEM;
    uint64_t from = tail > oc ? tail - oc : 0;
    for (uint64_t j = from; j < tail; j++)
        memcpy(n + (j & (nc - 1)) * sz, o + (j & (oc - 1)) * sz, sz);
    free(o);
    *ring = n;
    *cap = nc;
    return NSIM_OK;
}

/* A FIFO of *cap entries from *head: doubled, its len entries moved to
 * the front in order. */
static int fifo_grow(nsim_sim *sim, nsim_wc **ring, uint32_t *cap,
                     uint32_t *head, uint32_t len)
{
    uint32_t nc = *cap * 2;
    if (nsim_sim_charge(sim, (size_t)*cap * sizeof **ring) != NSIM_OK)
        return NSIM_EBUDGET;
    nsim_wc *n = malloc((size_t)nc * sizeof *n);
    if (n == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < len; i++)
        n[i] = (*ring)[(*head + i) & (*cap - 1)];
    free(*ring);
    *ring = n;
    *cap = nc;
    *head = 0;
    return NSIM_OK;
}

#define SQ_AT(q, j) (&(q)->sq[(j) & ((q)->sq_cap - 1)])
#define RQ_AT(q, j) (&(q)->rq[(j) & ((q)->rq_cap - 1)])

/* ---- HCA ---------------------------------------------------------------- */

int nsim_hca_create(nsim_sim *sim, nsim_fabric *fab, nsim_topo *topo,
                    const nsim_params *p, uint32_t nic_dev, nsim_hca **out,
                    nsim_err *err)
{
    nsim_hca *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    *h = (nsim_hca){.sim = sim, .fab = fab, .topo = topo, .p = p,
                    .dev = nic_dev,
                    .next_qpn = 0x100 + (HCA_TAG(nic_dev) - 1) * 0x1000};
    *out = h;
    return NSIM_OK;
}

static void free_paths(nsim_qp *q)
{
    /* the fabric owns the interned ones */
    q->read_path = q->net_path = q->write_path = NULL;
    q->ack_path = q->rread_path = q->lwrite_path = NULL;
    free(q->flow_path);
    q->flow_path = NULL;
}

void nsim_hca_destroy(nsim_hca *h)
{
    if (h == NULL)
        return;
    while (h->qps != NULL) {
        nsim_qp *q = h->qps;
        h->qps = q->next_owned;
        if (q->timer_armed)
            (void)nsim_sim_cancel(h->sim, q->timer);
        free(q->sq);
        free(q->rq);
        free(q->lq);
        free(q->park);
        free_paths(q);
        free(q);
    }
    while (h->cqs != NULL) {
        nsim_cq *c = h->cqs;
        h->cqs = c->next_owned;
        free(c->ring);
        free(c);
    }
    while (h->mrs_owned != NULL) {
        nsim_mr *m = h->mrs_owned;
        h->mrs_owned = m->next_owned;
        free(m);
    }
    free(h->mrs);
    free(h->ready);
    free(h);
}

uint32_t nsim_hca_device(const nsim_hca *h) { return h->dev; }
nsim_hca_counters nsim_hca_get_counters(const nsim_hca *h) { return h->st; }
uint32_t nsim_qp_num(const nsim_qp *qp) { return qp->qpn; }
nsim_qp_state nsim_qp_get_state(const nsim_qp *qp) { return qp->state; }
nsim_qp_counters nsim_qp_get_counters(const nsim_qp *qp) { return qp->st; }

int nsim_hca_set_loss(nsim_hca *h, double prob, uint64_t stream_id)
{
    if (!(prob >= 0 && prob <= 1))
        return NSIM_EINVAL;
    if (prob > 0)
        NSIM_TRY(nsim_sim_stream(h->sim, stream_id, &h->rng));
    h->loss = prob;
    return NSIM_OK;
}

void nsim_qp_drop_psn(nsim_qp *qp, uint32_t psn, uint32_t times)
{
    qp->drop_psn = psn;
    qp->drop_times = times;
}

const char *nsim_wc_status_str(nsim_wc_status s)
{
    static const char *const names[] = {
        "SUCCESS",         "WR_FLUSH_ERR",   "LOC_LEN_ERR",
        "LOC_PROT_ERR",    "REM_ACCESS_ERR", "REM_INV_REQ_ERR",
        "REM_OP_ERR",      "RETRY_EXC_ERR",  "RNR_RETRY_EXC_ERR",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* Wire packets of q in a piece of bytes (a flow-fidelity message is one
 * piece for all of them; a packet's piece is one). */
static uint64_t wire_packets(const nsim_qp *q, uint64_t bytes)
{
    return bytes ? (bytes + q->wire_mtu - 1) / q->wire_mtu : 1;
}

/* Draws whether a piece of k wire packets, each lost with the sending
 * HCA's probability p, loses any: 1 - (1 - p)^k (p itself for one, so
 * that a packet's draw is exact). */
static int draw_loss(nsim_hca *sender, uint64_t k)
{
    double p = k == 1 ? sender->loss
                      : -expm1((double)k * log1p(-sender->loss));
    return sender->loss > 0 && gsl_rng_uniform(sender->rng) < p;
}

static void count_lost(nsim_hca *sender, nsim_qp *q, int request)
{
    sender->st.packets_lost++;
    if (request)
        q->st.dropped++;
}

/* Is this packet (or flow-fidelity piece of bytes) lost? Injected per
 * QP and PSN (requests only; 2) and per sending HCA with a probability
 * per wire packet (1, draw_loss: drawn once per message with p, flow
 * lost a message of 17 packets 17 times too rarely). A flow-fidelity
 * request message is drawn as it is sent (send_flow), not here. */
static int lost(nsim_hca *sender, nsim_qp *q, uint32_t psn, int request,
                uint64_t bytes)
{
    if (request && q->drop_times > 0 && psn == q->drop_psn) {
        if (q->drop_times != UINT32_MAX)
            q->drop_times--;
        count_lost(sender, q, request);
        return 2;
    }
    uint64_t k = wire_packets(q, bytes);
    if ((request && k > 1) || !draw_loss(sender, k))
        return 0; /* (a flow-fidelity message: drawn as it was sent) */
    count_lost(sender, q, request);
    return 1;
}

/* Of a flow-fidelity message of k > 1 wire packets that a random loss
 * took, the first lost packet (0 .. k-1): P(j) = (1 - p)^j p / (1 - (1 -
 * p)^k), drawn by its inverse. One more draw, flow only. */
static uint32_t first_lost(nsim_hca *sender, uint64_t k)
{
    double p = sender->loss, l = log1p(-p);
    double u = gsl_rng_uniform(sender->rng);
    double j = floor(log1p(u * expm1((double)k * l)) / l);
    return j < 0 ? 0 : j >= (double)k ? (uint32_t)(k - 1) : (uint32_t)j;
}

/* ---- memory regions ----------------------------------------------------- */

/* The servers from device a to b, with the host-memory server of either
 * end that is a CPU (fabric.h), interned by the fabric. */
static int copy_route(nsim_hca *h, uint32_t a, uint32_t b, uint32_t pick,
                      const uint32_t **out, uint32_t *n, nsim_err *err)
{
    const nsim_route *r;
    NSIM_TRY(nsim_topo_route(h->topo, a, b, &r, err));
    uint32_t *ids = malloc((r->hops + 2) * sizeof *ids);
    if (ids == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    int rc = nsim_fabric_route_path(h->fab, a, b, pick, ids, r->hops + 2, n,
                                    err);
    if (rc == NSIM_OK && nsim_fabric_intern_path(h->fab, ids, *n, out) !=
                             NSIM_OK)
        rc = NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    free(ids);
    return rc;
}

/* A DMA read from mem: the request travels there, the memory answers. */
static int read_delay(nsim_hca *h, uint32_t mem, nsim_time *out,
                      nsim_err *err)
{
    const nsim_route *r;
    NSIM_TRY(nsim_topo_route(h->topo, h->dev, mem, &r, err));
    *out = r->lat_ps + h->p->gpu_memory_latency_ps;
    return NSIM_OK;
}

int nsim_mr_reg(nsim_hca *h, uint32_t mem_dev, uint64_t length,
                uint32_t access, nsim_mr **out, nsim_err *err)
{
    if (h->nmrs + 1 >= (1u << KEY_IDX_BITS))
        return NSIM_ERR(err, NSIM_EINVAL, "hca: too many MRs");
    if (h->nmrs == h->mrs_cap) {
        uint32_t cap = h->mrs_cap ? 2 * h->mrs_cap : 16;
        nsim_mr **m = realloc(h->mrs, cap * sizeof *m);
        if (m == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
        h->mrs = m;
        h->mrs_cap = cap;
    }
    nsim_mr *mr = calloc(1, sizeof *mr);
    if (mr == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
    mr->next_owned = h->mrs_owned; /* owned from here on */
    h->mrs_owned = mr;
    mr->h = h;
    mr->mem = mem_dev;
    mr->length = length;
    mr->access = access;
    NSIM_TRY(copy_route(h, mem_dev, h->dev, 0, &mr->to_nic, &mr->nto,
                        err));
    NSIM_TRY(copy_route(h, h->dev, mem_dev, 0, &mr->from_nic,
                        &mr->nfrom, err));
    NSIM_TRY(read_delay(h, mem_dev, &mr->read_delay, err));
    mr->key = (HCA_TAG(h->dev) << KEY_IDX_BITS) | (h->nmrs + 1);
    mr->valid = 1;
    h->mrs[h->nmrs++] = mr;
    *out = mr;
    return NSIM_OK;
}

void nsim_mr_dereg(nsim_mr *mr)
{
    if (mr != NULL)
        mr->valid = 0;
}

uint32_t nsim_mr_lkey(const nsim_mr *mr) { return mr->key; }
uint32_t nsim_mr_rkey(const nsim_mr *mr) { return mr->key; }

/* The MR of key on h if it is valid, covers [off, off + len) and grants
 * access; else NULL. */
static nsim_mr *mr_check(const nsim_hca *h, uint32_t key, uint64_t off,
                         uint64_t len, uint32_t access)
{
    uint32_t idx = (key & ((1u << KEY_IDX_BITS) - 1)) - 1;
    if ((key >> KEY_IDX_BITS) != HCA_TAG(h->dev) || idx >= h->nmrs)
        return NULL;
    nsim_mr *mr = h->mrs[idx];
    if (!mr->valid || (mr->access & access) != access ||
        off > mr->length || len > mr->length - off)
        return NULL;
    return mr;
}

/* ---- CQs ---------------------------------------------------------------- */

int nsim_cq_create(nsim_hca *h, uint32_t depth, nsim_cq_notify_fn *fn,
                   void *ctx, nsim_cq **out)
{
    if (depth == 0)
        return NSIM_EINVAL;
    nsim_cq *c = calloc(1, sizeof *c);
    uint32_t cap = ring_start(depth);
    if (c == NULL || (c->ring = calloc(cap, sizeof *c->ring)) == NULL) {
        free(c);
        return NSIM_ENOMEM;
    }
    c->h = h;
    c->depth = depth;
    c->ring_cap = cap;
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
    cq->st.polls++;
    while (n < max && cq->len > 0) {
        wc[n++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) & (cq->ring_cap - 1);
        cq->len--;
    }
    if (n == 0) {
        cq->st.empty_polls++;
        if (cq->error)
            return NSIM_EIO;
    }
    return n;
}

int nsim_cq_in_error(const nsim_cq *cq) { return cq->error; }
nsim_cq_counters nsim_cq_get_counters(const nsim_cq *cq) { return cq->st; }

static void on_cqe(nsim_sim *sim, nsim_event *ev)
{
    nsim_cq *cq = ev->target;
    (void)sim;
    cq->pend_len--;
    cq->len++; /* the oldest CQE on its way, already in the ring */
    cq->st.cqes++;
    if (cq->len == 1 && cq->fn != NULL)
        cq->fn(cq->ctx, cq);
}

static void qp_fail(nsim_qp *q, uint64_t sq_idx, nsim_wc_status s,
                    uint64_t rq_idx, nsim_wc_status rs);

/* The CQE reaches host memory one DMA write later; every CQE takes the same
 * delay, so the pending ones land in order. The HCA sees the consumer
 * index when it writes: a full CQ (counting CQEs on their way) overflows,
 * goes into error and takes the writing QP to ERR. */
static void push_cqe(nsim_qp *q, nsim_cq *cq, const nsim_wc *wc)
{
    nsim_hca *h = q->h;
    if (cq->error || cq->len + cq->pend_len >= cq->depth) {
        cq->error = 1;
        cq->st.overflows++;
        if (q->state != NSIM_QPS_ERR)
            qp_fail(q, NONE, NSIM_WC_WR_FLUSH_ERR, NONE, NSIM_WC_WR_FLUSH_ERR);
        return;
    }
    uint32_t held = cq->len + cq->pend_len;
    if (held == cq->ring_cap &&
        fifo_grow(h->sim, &cq->ring, &cq->ring_cap, &cq->head, held) !=
            NSIM_OK) {
        oom(h);
        return;
    }
    cq->ring[(cq->head + held) & (cq->ring_cap - 1)] = *wc;
    cq->pend_len++;
    if (nsim_sim_schedule(h->sim, h->p->hca_cqe_write_ps, on_cqe, cq, 0, 0,
                          NULL) != NSIM_OK)
        oom(h);
}

/* ---- QPs: creation, state machine ---------------------------------------- */

int nsim_qp_create_ex(nsim_hca *h, const nsim_qp_init_attr *a, nsim_qp **out)
{
    if (a->max_send_wr == 0 || a->max_send_wr > MAX_WR ||
        a->max_recv_wr > MAX_WR || a->send_cq == NULL || a->recv_cq == NULL)
        return NSIM_EINVAL;
    nsim_qp *q = aligned_alloc(64, sizeof *q);
    if (q != NULL)
        memset(q, 0, sizeof *q);
    if (q == NULL)
        return NSIM_ENOMEM;
    q->next_owned = h->qps;
    h->qps = q;
    q->h = h;
    q->qpn = h->next_qpn;
    h->next_qpn = (h->next_qpn + 1) & QPN_MASK;
    if (h->next_qpn < 0x100) /* 0 and 1 are special QPs, as on hardware */
        h->next_qpn = 0x100;
    q->scq = a->send_cq;
    q->rcq = a->recv_cq;
    q->sq_depth = a->max_send_wr;
    q->rq_depth = a->max_recv_wr;
    q->lq_cap = RING_MIN;
    q->sq_cap = ring_start(q->sq_depth);
    q->rq_cap = ring_start(q->rq_depth + 1);
    q->sq = calloc(q->sq_cap, sizeof *q->sq);
    q->rq = calloc(q->rq_cap, sizeof *q->rq);
    q->lq = calloc(q->lq_cap, sizeof *q->lq);
    if (q->sq == NULL || q->rq == NULL || q->lq == NULL)
        return NSIM_ENOMEM;
    const nsim_params *p = h->p;
    /* the attribute is 5 bits wide (0..31) */
    q->timeout_ps = p->ib_timeout_unit_ps
                    << (p->ib_timeout_exp < 31 ? p->ib_timeout_exp : 31);
    q->retry_cnt = (uint32_t)p->ib_retry_cnt;
    q->max_rd_atomic = (uint32_t)p->ib_max_rd_atomic;
    q->rate_mbps = p->qp_rate_limit_mbps;
    q->min_rnr_timer = (uint32_t)(p->ib_min_rnr_timer & 31);
    q->rnr_retry = p->ib_rnr_retry < 7 ? (uint32_t)p->ib_rnr_retry : 7;
    *out = q;
    return NSIM_OK;
}

int nsim_qp_create(nsim_hca *h, nsim_cq *send_cq, nsim_cq *recv_cq,
                   uint32_t sq_depth, nsim_qp **out)
{
    nsim_qp_init_attr a = {send_cq, recv_cq, sq_depth, sq_depth};
    return nsim_qp_create_ex(h, &a, out);
}

/* RoCE source-port entropy from the QP numbers (hardware-facts 3.6). */
static uint32_t ecmp_pick(const nsim_qp *a, const nsim_qp *b, int roce)
{
    /* a NIC with several ports stripes its QPs over them (nccl 5.2: QP k
     * on port k mod nPorts); consecutive QPNs take consecutive paths */
    if (nsim_topo_device(a->h->topo, a->h->dev)->nic_ports > 1)
        return a->qpn;
    if (!roce)
        return nsim_topo_ib_pick(a->h->dev, b->h->dev); /* IB: one LID
                                                          * route per pair */
    uint64_t v = (uint64_t)a->qpn * b->qpn;
    v ^= v >> 20;
    v ^= v >> 40;
    uint32_t fl = (uint32_t)(v & 0xFFFFF);
    return 0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14));
}

static int setup_paths(nsim_qp *qp, nsim_qp *remote, uint32_t local_mem,
                       uint32_t remote_mem, nsim_err *err)
{
    nsim_hca *h = qp->h, *rh = remote->h;
    nsim_topo *t = h->topo;
    const nsim_device *ln = nsim_topo_device(t, h->dev);
    const nsim_device *rn = nsim_topo_device(t, rh->dev);
    int roce = ln->link_layer == NSIM_LL_ROCE;
    uint32_t pick = ecmp_pick(qp, remote, roce);
    free_paths(qp);
    qp->mtu = ln->mtu_bytes < rn->mtu_bytes ? ln->mtu_bytes : rn->mtu_bytes;
    if (qp->mtu_attr != 0 && qp->mtu_attr < qp->mtu)
        qp->mtu = qp->mtu_attr;
    if (qp->mtu == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "hca: QP 0x%x: path MTU 0",
                        qp->qpn);
    NSIM_TRY(copy_route(h, local_mem, h->dev, 0, &qp->read_path, &qp->nread,
                        err));
    NSIM_TRY(copy_route(h, h->dev, rh->dev, pick, &qp->net_path, &qp->nnet,
                        err));
    NSIM_TRY(copy_route(h, rh->dev, remote_mem, 0, &qp->write_path,
                        &qp->nwrite, err));
    NSIM_TRY(copy_route(h, rh->dev, h->dev, pick, &qp->ack_path, &qp->nack,
                        err));
    NSIM_TRY(copy_route(h, remote_mem, rh->dev, 0, &qp->rread_path,
                        &qp->nrread, err));
    NSIM_TRY(copy_route(h, h->dev, local_mem, 0, &qp->lwrite_path,
                        &qp->nlwrite, err));
    NSIM_TRY(read_delay(h, local_mem, &qp->read_delay, err));
    qp->local_mem = local_mem;
    NSIM_TRY(read_delay(rh, remote_mem, &qp->rread_delay, err));
    qp->remote = remote;
    qp->wire_mtu = qp->mtu;
    if (nsim_fabric_is_flow(h->fab)) {
        uint32_t n = qp->nread + qp->nnet + qp->nwrite;
        qp->flow_path = malloc((n + 1) * sizeof *qp->flow_path);
        if (qp->flow_path == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "hca: out of memory");
        memcpy(qp->flow_path, qp->read_path, qp->nread * sizeof(uint32_t));
        memcpy(qp->flow_path + qp->nread, qp->net_path,
               qp->nnet * sizeof(uint32_t));
        memcpy(qp->flow_path + qp->nread + qp->nnet, qp->write_path,
               qp->nwrite * sizeof(uint32_t));
        qp->nflow = n;
        qp->mtu = FLOW_MSG_MTU;
    }
    return NSIM_OK;
}

static void timer_stop(nsim_qp *q)
{
    if (q->timer_armed)
        (void)nsim_sim_cancel(q->h->sim, q->timer);
    q->timer_armed = 0;
}

static void sq_release(nsim_qp *q, uint64_t upto)
{
    q->sq_free = upto;
    if (q->blocked) {
        q->st.blocked_ps += nsim_sim_now(q->h->sim) - q->blocked_since;
        q->blocked = 0;
    }
}

/* Empties every queue without completions (-> RESET). */
static void qp_clear(nsim_qp *q)
{
    timer_stop(q);
    q->epoch++;
    q->sq_free = q->sq_head = q->sq_next = q->sq_tail = 0;
    q->rq_head = q->rq_cons = q->rq_tail = 0;
    q->lq_head = q->lq_tail = 0;
    q->next_psn = q->acked_psn = q->epsn = 0;
    q->retries = q->rd_out = q->rx_since_ack = 0;
    q->resp_gap = q->nak_sent = q->rnr_wait = 0;
    q->rnr_retries = 0;
    if (q->blocked)
        sq_release(q, 0);
}

static nsim_wc_opcode wc_opcode(nsim_wr_opcode op)
{
    switch (op) {
    case NSIM_WR_SEND:
    case NSIM_WR_SEND_WITH_IMM:
        return NSIM_WC_SEND;
    case NSIM_WR_RDMA_READ:
        return NSIM_WC_RDMA_READ;
    default:
        return NSIM_WC_RDMA_WRITE;
    }
}

/* -> ERR: the WR at sq_idx completes with s, the receive at rq_idx with
 * rs, every other outstanding WR of either queue with WR_FLUSH_ERR
 * (signaled or not), in queue order. */
static void qp_fail(nsim_qp *q, uint64_t sq_idx, nsim_wc_status s,
                    uint64_t rq_idx, nsim_wc_status rs)
{
    if (q->state == NSIM_QPS_ERR)
        return;
    q->state = NSIM_QPS_ERR;
    timer_stop(q);
    q->epoch++;
    q->rnr_wait = 0;
    uint64_t head = q->sq_head, tail = q->sq_tail;
    uint64_t rhead = q->rq_head, rtail = q->rq_tail;
    q->sq_head = q->sq_next = q->sq_tail;
    q->rq_head = q->rq_cons = q->rq_tail;
    q->lq_head = q->lq_tail;
    q->rd_out = 0;
    for (uint64_t i = head; i < tail; i++) {
        const wr_ent *e = SQ_AT(q, i);
        nsim_wc wc = {e->wr.wr_id, i == sq_idx ? s : NSIM_WC_WR_FLUSH_ERR,
                      wc_opcode(e->wr.opcode), 0, 0, q->qpn};
        push_cqe(q, q->scq, &wc);
    }
    sq_release(q, tail);
    for (uint64_t i = rhead; i < rtail; i++) {
        nsim_wc wc = {RQ_AT(q, i)->wr_id,
                      i == rq_idx ? rs : NSIM_WC_WR_FLUSH_ERR, NSIM_WC_RECV,
                      0, 0, q->qpn};
        push_cqe(q, q->rcq, &wc);
    }
}

static int legal(nsim_qp_state from, nsim_qp_state to)
{
    switch (to) {
    case NSIM_QPS_RESET:
    case NSIM_QPS_ERR:
        return 1;
    case NSIM_QPS_INIT:
        return from == NSIM_QPS_RESET || from == NSIM_QPS_INIT;
    case NSIM_QPS_RTR:
        return from == NSIM_QPS_INIT;
    case NSIM_QPS_RTS:
        return from == NSIM_QPS_RTR || from == NSIM_QPS_RTS;
    }
    return 0;
}

static const char *state_name(nsim_qp_state s)
{
    static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "ERR"};
    return (unsigned)s < 5 ? n[s] : "?";
}

static void apply_rts(nsim_qp *q, const nsim_qp_attr *a, int first)
{
    uint32_t m = a ? a->mask : 0;
    const nsim_params *p = q->h->p;
    if (first) {
        q->next_psn = q->acked_psn = (m & NSIM_QP_ATTR_SQ_PSN) ? a->sq_psn : 0;
        q->retries = q->rnr_retries = 0;
    }
    if (m & NSIM_QP_ATTR_RNR_RETRY)
        q->rnr_retry = a->rnr_retry < 7 ? a->rnr_retry : 7;
    if (m & NSIM_QP_ATTR_MIN_RNR_TIMER) /* RTS -> RTS may change it */
        q->min_rnr_timer = a->min_rnr_timer & 31;
    if (m & NSIM_QP_ATTR_TIMEOUT)
        q->timeout_ps = p->ib_timeout_unit_ps
                        << (a->timeout < 31 ? a->timeout : 31);
    if (m & NSIM_QP_ATTR_RETRY_CNT)
        q->retry_cnt = a->retry_cnt;
    if (m & NSIM_QP_ATTR_MAX_RD_ATOMIC)
        q->max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
    if (m & NSIM_QP_ATTR_RATE_LIMIT)
        q->rate_mbps = a->rate_limit_mbps;
}

int nsim_qp_modify(nsim_qp *q, nsim_qp_state to, const nsim_qp_attr *a,
                   nsim_err *err)
{
    if (!legal(q->state, to))
        return NSIM_ERR(err, NSIM_ESTATE, "QP 0x%x: %s -> %s not allowed",
                        q->qpn, state_name(q->state), state_name(to));
    uint32_t m = a ? a->mask : 0;
    switch (to) {
    case NSIM_QPS_RESET:
        qp_clear(q);
        break;
    case NSIM_QPS_ERR:
        qp_fail(q, NONE, NSIM_WC_WR_FLUSH_ERR, NONE, NSIM_WC_WR_FLUSH_ERR);
        return NSIM_OK;
    case NSIM_QPS_INIT:
        if (m & NSIM_QP_ATTR_ACCESS)
            q->access = a->access_flags;
        break;
    case NSIM_QPS_RTR:
        if (a == NULL || a->dest_qp == NULL)
            return NSIM_ERR(err, NSIM_EINVAL,
                            "QP 0x%x: INIT -> RTR needs dest_qp", q->qpn);
        q->mtu_attr = (m & NSIM_QP_ATTR_PATH_MTU) ? a->path_mtu : 0;
        NSIM_TRY(setup_paths(q, a->dest_qp, a->local_mem, a->remote_mem,
                             err));
        q->epsn = (m & NSIM_QP_ATTR_RQ_PSN) ? a->rq_psn : 0;
        if (m & NSIM_QP_ATTR_MIN_RNR_TIMER)
            q->min_rnr_timer = a->min_rnr_timer & 31;
        q->nak_sent = 0;
        q->rx_since_ack = 0;
        break;
    case NSIM_QPS_RTS:
        apply_rts(q, a, q->state == NSIM_QPS_RTR);
        break;
    }
    q->state = to;
    return NSIM_OK;
}

int nsim_qp_connect(nsim_qp *qp, nsim_qp *remote, uint32_t local_mem,
                    uint32_t remote_mem, nsim_err *err)
{
    nsim_qp_attr a = {.mask = NSIM_QP_ATTR_ACCESS,
                      .access_flags = NSIM_ACCESS_LOCAL_WRITE |
                                      NSIM_ACCESS_REMOTE_WRITE |
                                      NSIM_ACCESS_REMOTE_READ,
                      .dest_qp = remote,
                      .local_mem = local_mem,
                      .remote_mem = remote_mem};
    NSIM_TRY(nsim_qp_modify(qp, NSIM_QPS_INIT, &a, err));
    NSIM_TRY(nsim_qp_modify(qp, NSIM_QPS_RTR, &a, err));
    return nsim_qp_modify(qp, NSIM_QPS_RTS, NULL, err);
}

void nsim_qp_set_land_hook(nsim_qp *qp, nsim_qp_land_fn *fn, void *ctx)
{
    qp->land_fn = fn;
    qp->land_ctx = ctx;
}

/* ---- posting ------------------------------------------------------------ */

static void hca_kick(nsim_hca *h);

static void ready_push(nsim_hca *h, nsim_qp *q)
{
    if (q->in_ready)
        return;
    if (h->ready_len == h->ready_cap) {
        uint32_t cap = h->ready_cap ? h->ready_cap * 2 : 16;
        nsim_qp **r = malloc(cap * sizeof *r);
        if (r == NULL) {
            oom(h);
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

static uint32_t flow_key(const nsim_qp *q)
{
    return ((uint32_t)q->epoch << 8 | q->gen) + 1;
}

static int qp_has_ready_work(const nsim_qp *q)
{
    if (q->state != NSIM_QPS_RTS || q->rnr_wait || q->sq_next == q->sq_tail)
        return 0;
    if (q->flow_busy != 0 && q->flow_busy == flow_key(q))
        return 0;
    const wr_ent *e = SQ_AT(q, q->sq_next);
    if (!e->fetched)
        return 0;
    return !(e->wr.opcode == NSIM_WR_RDMA_READ && !e->rd_counted &&
             q->rd_out >= q->max_rd_atomic);
}

static void wake(nsim_qp *q)
{
    if (qp_has_ready_work(q)) {
        ready_push(q->h, q);
        hca_kick(q->h);
    }
}

static void on_wqe_fetched(nsim_sim *sim, nsim_event *ev)
{
    nsim_qp *q = ev->target;
    (void)sim;
    if ((uint8_t)(ev->arg.u64 >> 32) != q->epoch)
        return;
    SQ_AT(q, (uint32_t)ev->arg.u64)->fetched = 1;
    wake(q);
}

int nsim_qp_post_send(nsim_qp *q, const nsim_send_wr *wr)
{
    if ((unsigned)wr->opcode > NSIM_WR_RDMA_READ)
        return NSIM_EINVAL;
    if (q->state == NSIM_QPS_ERR) {
        nsim_wc wc = {wr->wr_id, NSIM_WC_WR_FLUSH_ERR,
                      wc_opcode(wr->opcode), 0, 0, q->qpn};
        q->st.wrs++;
        push_cqe(q, q->scq, &wc);
        return NSIM_OK;
    }
    if (q->state != NSIM_QPS_RTS)
        return NSIM_ESTATE;
    if (q->sq_tail - q->sq_free == q->sq_depth) {
        if (!q->blocked) {
            q->blocked = 1;
            q->blocked_since = nsim_sim_now(q->h->sim);
        }
        return NSIM_EAGAIN;
    }
    /* the ring holds the WRs not yet completed, [sq_head, sq_tail): an
     * unsignaled WR that has completed still counts against the depth
     * until a signaled one behind it is polled (sq_free), but nothing
     * reads it again. A CTS QP posts 255 unsignaled writes for each
     * signaled one (nsim__net_post_cts); a ring sized by the depth's
     * count grew to 256 entries a connection, 44 MB on a 64-node ring,
     * cycled through once per 256 CTS and pushed the run's state out of
     * the last-level cache. */
    if (q->sq_tail - q->sq_head == q->sq_cap &&
        ring_grow(q->h->sim, (void **)&q->sq, &q->sq_cap, sizeof *q->sq, q->sq_tail) !=
            NSIM_OK)
        return NSIM_ENOMEM;
    uint64_t idx = q->sq_tail++;
    *SQ_AT(q, idx) = (wr_ent){.wr = *wr};
    q->st.wrs++;
    uint64_t arg = (uint64_t)(uint32_t)idx | ((uint64_t)q->epoch << 32);
    const nsim_params *p = q->h->p;
    return nsim_sim_schedule(q->h->sim,
                             p->hca_doorbell_ps + p->hca_wqe_fetch_ps,
                             on_wqe_fetched, q, 0, arg, NULL);
}

int nsim_qp_post_recv_wr(nsim_qp *q, const nsim_recv_wr *wr)
{
    if (q->state == NSIM_QPS_RESET)
        return NSIM_ESTATE;
    if (q->state == NSIM_QPS_ERR) {
        nsim_wc wc = {wr->wr_id, NSIM_WC_WR_FLUSH_ERR, NSIM_WC_RECV, 0, 0,
                      q->qpn};
        push_cqe(q, q->rcq, &wc);
        return NSIM_OK;
    }
    if (q->rq_tail - q->rq_head >= q->rq_depth)
        return NSIM_EAGAIN;
    if (q->rq_tail - q->rq_head == q->rq_cap &&
        ring_grow(q->h->sim, (void **)&q->rq, &q->rq_cap, sizeof *q->rq, q->rq_tail) !=
            NSIM_OK)
        return NSIM_ENOMEM;
    *RQ_AT(q, q->rq_tail++) = *wr;
    return NSIM_OK;
}

int nsim_qp_post_recv(nsim_qp *q, uint64_t wr_id)
{
    nsim_recv_wr wr = {wr_id, 0, 0, 0};
    return nsim_qp_post_recv_wr(q, &wr);
}

/* ---- requester: timer, retries ------------------------------------------- */

static void on_timer(nsim_sim *sim, nsim_event *ev);

static void timer_start(nsim_qp *q)
{
    if (q->timer_armed)
        return;
    if (nsim_sim_schedule(q->h->sim, q->timeout_ps, on_timer, q, 0, q->epoch,
                          &q->timer) != NSIM_OK) {
        oom(q->h);
        return;
    }
    q->timer_armed = 1;
}

/* Puts the packetizing cursor at psn: WRs wholly before it count as cut,
 * the one holding it resumes there, later ones start over. */
static void seek(nsim_qp *q, uint32_t psn)
{
    uint64_t i = q->sq_head;
    for (; i < q->sq_tail; i++) {
        wr_ent *e = SQ_AT(q, i);
        if (!e->assigned || e->psn_first + e->npkts > psn)
            break;
        e->sent = e->wr.bytes;
        e->done_tx = 1;
    }
    q->sq_next = i;
    for (uint64_t j = i; j < q->sq_tail; j++) {
        wr_ent *e = SQ_AT(q, j);
        e->done_tx = 0;
        e->sent = 0;
        if (j == i && e->assigned && psn > e->psn_first)
            e->sent = (uint64_t)(psn - e->psn_first) * q->mtu;
        else if (j == i && e->assigned && psn == e->psn_first)
            e->sent = (uint64_t)e->resume_pkts * q->wire_mtu;
    }
    q->next_psn = psn;
    /* flow: the rest of the message on the wire is not sent either */
    if (q->flow_wire != NULL && q->flow_busy == flow_key(q))
        nsim_fabric_cut(q->h->fab, q->flow_wire);
    q->gen++; /* DMA reads of the abandoned pass are not sent */
}

/* Go-back-N from the first unacknowledged PSN, or ERR after retry_cnt
 * retries without progress. */
static void retry(nsim_qp *q)
{
    if (q->retries >= q->retry_cnt) {
        qp_fail(q, q->sq_head, NSIM_WC_RETRY_EXC_ERR, NONE,
                NSIM_WC_WR_FLUSH_ERR);
        return;
    }
    q->retries++;
    if (q->flow_path == NULL) {
        q->st.retransmits += q->next_psn - q->acked_psn;
    } else {
        /* flow: a PSN is a message; count its wire packets, from where
         * its go-back resumes */
        for (uint64_t i = q->sq_head; i < q->sq_next; i++) {
            const wr_ent *e = SQ_AT(q, i);
            if (e->assigned && e->psn_first >= q->acked_psn)
                q->st.retransmits +=
                    wire_packets(q, e->wr.bytes) -
                    (e->psn_first == q->acked_psn ? e->resume_pkts : 0);
        }
    }
    seek(q, q->acked_psn);
    timer_stop(q);
    timer_start(q);
    wake(q);
}

static void on_timer(nsim_sim *sim, nsim_event *ev)
{
    nsim_qp *q = ev->target;
    (void)sim;
    q->timer_armed = 0;
    if (ev->arg.u64 != q->epoch || q->state != NSIM_QPS_RTS ||
        q->rnr_wait || q->acked_psn == q->next_psn)
        return;
    q->st.timeouts++;
    retry(q);
}

/* Completes, in order, the WRs the ACKs have covered. */
static void complete_acked(nsim_qp *q)
{
    int rd_freed = 0;
    while (q->sq_head < q->sq_next) {
        wr_ent *e = SQ_AT(q, q->sq_head);
        int rd = e->wr.opcode == NSIM_WR_RDMA_READ;
        if (e->psn_last >= q->acked_psn || (rd && !e->landed))
            break;
        if (rd) {
            q->rd_out--;
            rd_freed = 1;
        }
        uint64_t idx = q->sq_head++;
        if (e->wr.signaled) {
            nsim_wc wc = {e->wr.wr_id, NSIM_WC_SUCCESS,
                          wc_opcode(e->wr.opcode), e->wr.bytes, 0, q->qpn};
            sq_release(q, idx + 1);
            push_cqe(q, q->scq, &wc);
            if (q->state == NSIM_QPS_ERR)
                return;
        }
    }
    if (rd_freed)
        wake(q);
}

/* An ACK (or implicit ACK) for every PSN before psn. */
static void progress(nsim_qp *q, uint32_t psn)
{
    if (psn <= q->acked_psn)
        return;
    q->acked_psn = psn;
    q->retries = q->rnr_retries = 0;
    if (psn > q->next_psn) /* ACK of a packet sent before a rewind */
        seek(q, psn);
    timer_stop(q);
    if (q->acked_psn != q->next_psn && !q->rnr_wait)
        timer_start(q);
    complete_acked(q);
}

/* ---- requester: packets out ------------------------------------------ */

static void on_wire_done(nsim_sim *sim, nsim_piece *p);
static void on_ack(nsim_sim *sim, nsim_piece *p);

static void on_read_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    nsim_hca *h = q->h;
    nsim_piece *w;
    (void)sim;
    h->reads_in_flight--;
    if (TAG_EPOCH(p->tag) == (q->epoch & 15u) &&
        TAG_GEN(p->tag) == q->gen) {
        if (nsim_fabric_piece(h->fab, &w) != NSIM_OK) {
            oom(h);
            return;
        }
        *w = (nsim_piece){q->net_path, q->nnet, 0, p->bytes,
                          p->hdr_flags & ~NSIM_PIECE_READ, on_wire_done, q,
                          p->tag, 0};
        h->st.packets_tx++;
        h->st.bytes_tx += p->bytes;
        if (nsim_fabric_send(h->fab, w) != NSIM_OK)
            oom(h);
    }
    hca_kick(h);
}

/* First cut of a WR: assigns its PSNs and checks its local buffer. */
static int wr_start(nsim_qp *q, wr_ent *e)
{
    int rd = e->wr.opcode == NSIM_WR_RDMA_READ;
    if (!e->assigned) {
        e->psn_first = q->next_psn;
        e->npkts = e->wr.bytes ? (uint32_t)((e->wr.bytes + q->mtu - 1) / q->mtu)
                               : 1;
        e->psn_last = e->psn_first + e->npkts - 1;
        e->assigned = 1;
    }
    if (e->wr.lkey != 0) {
        e->lmr = mr_check(q->h, e->wr.lkey, e->wr.local_off, e->wr.bytes,
                          rd ? NSIM_ACCESS_LOCAL_WRITE : 0);
        if (e->lmr == NULL)
            return -1;
    }
    if (rd && !e->rd_counted) {
        e->rd_counted = 1;
        q->rd_out++;
    }
    return 0;
}

static void rate_wait(nsim_qp *q, uint64_t wire_bytes)
{
    nsim_time now = nsim_sim_now(q->h->sim);
    nsim_time start = q->next_tx_ps > now ? q->next_tx_ps : now;
    q->next_tx_ps = start + wire_bytes * 8000000ull / q->rate_mbps;
}

static void on_wire_done(nsim_sim *sim, nsim_piece *p);


/* Flow fidelity: the whole message reaches the responder's memory as one
 * flow; what the responder does on the wire then happens at once. */
static int park(nsim_qp *q, const nsim_piece *p)
{
    uint32_t psn = TAG_PSN(p->tag), cap = q->park_cap;
    if (psn - q->flow_dpsn >= cap) {
        uint32_t ncap = cap ? cap : 16;
        while (psn - q->flow_dpsn >= ncap)
            ncap *= 2;
        nsim_piece *n = calloc(ncap, sizeof *n);
        if (n == NULL)
            return NSIM_ENOMEM;
        for (uint32_t i = 0; i < cap; i++)
            if (q->park[i].ctx != NULL)
                n[TAG_PSN(q->park[i].tag) & (ncap - 1)] = q->park[i];
        free(q->park);
        q->park = n;
        q->park_cap = cap = ncap;
    }
    q->park[psn & (cap - 1)] = *p;
    return NSIM_OK;
}

static void on_flow_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    nsim_hca *h = q->h;
    h->st.packets_tx += wire_packets(q, p->bytes);
    h->st.bytes_tx += p->bytes;
    if (TAG_EPOCH(p->tag) != (q->epoch & 15u) || TAG_GEN(p->tag) != q->gen ||
        q->flow_key != flow_key(q))
        return; /* of an abandoned pass */
    uint32_t psn = TAG_PSN(p->tag);
    if (psn != q->flow_dpsn) {
        if (psn - q->flow_dpsn < (1u << 30) && park(q, p) != NSIM_OK)
            oom(h);
        return;
    }
    uint8_t epoch = q->epoch;
    on_wire_done(sim, p);
    q->flow_dpsn++;
    while (q->park_cap && q->epoch == epoch && q->flow_key == flow_key(q)) {
        nsim_piece *n = &q->park[q->flow_dpsn & (q->park_cap - 1)];
        if (n->ctx == NULL || TAG_PSN(n->tag) != q->flow_dpsn)
            break;
        nsim_piece w = *n;
        n->ctx = NULL;
        on_wire_done(sim, &w);
        q->flow_dpsn++;
    }
}

/* The message's bytes have left: the QP's next one may start. */
static void on_flow_drained(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    (void)sim;
    if (q->flow_wire == p)
        q->flow_wire = NULL;
    if (q->flow_busy == flow_key(q)) {
        q->flow_busy = 0;
        q->flow_pipe = 1;
        wake(q);
        q->flow_pipe = 0;
    }
}

static int send_flow(nsim_hca *h, nsim_qp *q, wr_ent *e, nsim_piece *p,
                     uint64_t n, uint32_t flags, uint32_t psn, uint64_t idx)
{
    /* random loss, per wire packet: the message is lost when any of its
     * k packets is, and then carries its packets up to the one after the
     * first lost (which shows the gap to the responder); the requester
     * sends on behind it until the NAK comes, as go-back-N does */
    uint64_t k = wire_packets(q, n);
    e->lost_at = 0;
    if (k > 1 && draw_loss(h, k)) {
        uint64_t j = first_lost(h, k);
        uint64_t before = (e->wr.bytes - n) / q->wire_mtu;
        e->lost_at = (uint32_t)(before + j + 1);
        if (j + 2 < k)
            n = (j + 2) * q->wire_mtu;
    }
    if (q->flow_key != flow_key(q)) {
        /* a new pass (first send, a rewind, a reset): deliver from here */
        q->flow_key = flow_key(q);
        q->flow_dpsn = psn;
        for (uint32_t i = 0; i < q->park_cap; i++)
            q->park[i].ctx = NULL;
    }
    *p = (nsim_piece){q->flow_path, q->nflow, 0, n, flags, on_flow_done, q,
                      TAG(PK_DATA, q->epoch, q->gen, idx, psn),
                      q->flow_pipe ? 0
                      : e->lmr     ? e->lmr->read_delay
                                   : q->read_delay};
    q->st.packets += wire_packets(q, n);
    q->st.bytes += n;
    if (q->rate_mbps)
        rate_wait(q, n + wire_packets(q, n) * h->p->ib_header_bytes);
    timer_start(q);
    if (n > h->p->flow_control_bytes) {
        q->flow_busy = flow_key(q);
        q->flow_wire = p;
    }
    return nsim_fabric_send_unit(h->fab, p, q->wire_mtu, q->nread,
                                 on_flow_drained);
}

/* Cuts the next packet of q's current WR (a READ: its request) and starts
 * its DMA read. */
static int send_packet(nsim_hca *h, nsim_qp *q)
{
    uint64_t idx = q->sq_next;
    wr_ent *e = SQ_AT(q, idx);
    int rd = e->wr.opcode == NSIM_WR_RDMA_READ;
    if (e->sent == 0 && wr_start(q, e) != 0) {
        qp_fail(q, idx, NSIM_WC_LOC_PROT_ERR, NONE, NSIM_WC_WR_FLUSH_ERR);
        return NSIM_OK;
    }
    uint64_t left = e->wr.bytes - e->sent;
    uint64_t n = rd ? 0 : (left < q->mtu ? left : q->mtu);
    /* (flow: a pass resumed past a random loss starts the message for
     * the responder, which never saw the lost one) */
    uint32_t flags = (e->sent == 0 || rd ||
                              (q->flow_path != NULL && e->resume_pkts &&
                               e->sent == (uint64_t)e->resume_pkts *
                                              q->wire_mtu)
                          ? NSIM_PIECE_FIRST
                          : 0);
    uint32_t psn = q->next_psn;
    e->sent = rd ? e->wr.bytes : e->sent + n;
    q->next_psn = rd ? e->psn_first + e->npkts : psn + 1;
    if (e->sent == e->wr.bytes) {
        flags |= rd ? 0 : NSIM_PIECE_LAST;
        e->done_tx = 1;
        q->sq_next++;
    }
    /* payload read from host memory comes back in RCB-sized completions
     * (hardware-facts 2.2); GPU memory answers in MPS-sized ones, which the
     * posted-write framing approximates */
    uint32_t mem = e->lmr && !rd ? e->lmr->mem : q->local_mem;
    if (nsim_topo_device(h->topo, mem)->type == NSIM_DEV_CPU)
        flags |= NSIM_PIECE_READ;
    nsim_piece *p;
    NSIM_TRY(nsim_fabric_piece(h->fab, &p));
    if (q->flow_path != NULL && !rd && mem == q->local_mem)
        return send_flow(h, q, e, p, n, flags, psn, idx);
    /* a READ request passes the DMA pipe empty, to stay behind earlier
     * packets */
    *p = (nsim_piece){e->lmr && !rd ? e->lmr->to_nic : q->read_path,
                      e->lmr && !rd ? e->lmr->nto : q->nread, 0, n, flags,
                      on_read_done, q,
                      TAG(rd ? PK_READ_REQ : PK_DATA, q->epoch, q->gen,
                          idx, psn),
                      e->lmr && !rd ? e->lmr->read_delay : q->read_delay};
    q->st.packets++;
    q->st.bytes += n;
    if (q->rate_mbps)
        rate_wait(q, n + h->p->ib_header_bytes);
    timer_start(q);
    h->reads_in_flight++;
    return nsim_fabric_send(h->fab, p);
}

static void on_rate_wake(nsim_sim *sim, nsim_event *ev)
{
    nsim_qp *q = ev->target;
    (void)sim;
    q->wake_pending = 0;
    wake(q);
}

static void hca_kick(nsim_hca *h)
{
    nsim_time now = nsim_sim_now(h->sim);
    while (h->ready_len > 0 &&
           h->reads_in_flight < h->p->hca_dma_read_outstanding) {
        nsim_qp *q = h->ready[h->ready_head];
        h->ready_head = (h->ready_head + 1) % h->ready_cap;
        h->ready_len--;
        q->in_ready = 0;
        if (!qp_has_ready_work(q))
            continue;
        if (q->rate_mbps && q->next_tx_ps > now) {
            if (!q->wake_pending &&
                nsim_sim_schedule_at(h->sim, q->next_tx_ps, on_rate_wake, q,
                                     0, 0, NULL) != NSIM_OK) {
                oom(h);
                return;
            }
            q->wake_pending = 1;
            continue;
        }
        if (send_packet(h, q) != NSIM_OK) {
            oom(h);
            return;
        }
        if (qp_has_ready_work(q))
            ready_push(h, q);
    }
}

/* ---- responder -------------------------------------------------------- */

static void send_ack(nsim_qp *q, unsigned kind, uint64_t req_tag,
                     uint32_t psn)
{
    nsim_qp *r = q->remote;
    nsim_hca *rh = q->remote->h;
    nsim_piece *w;
    if (nsim_fabric_piece(rh->fab, &w) != NSIM_OK) {
        oom(rh);
        return;
    }
    *w = (nsim_piece){q->ack_path, q->nack, 0, 0, NSIM_PIECE_ACK, on_ack, q,
                      TAG(kind, TAG_EPOCH(req_tag), 0,
                          kind == PK_NAK_RNR ? r->min_rnr_timer : 0, psn),
                      0};
    rh->st.acks_tx++;
    if (kind != PK_ACK)
        r->st.naks_tx++;
    if (kind == PK_NAK_RNR)
        r->st.rnr_naks_tx++;
    if (nsim_fabric_send(rh->fab, w) != NSIM_OK)
        oom(rh);
}

/* ACK every ib_ack_every_packets packets and every message's last. */
static void ack_maybe(nsim_qp *q, nsim_qp *r, uint64_t tag, int last)
{
    if (last || ++r->rx_since_ack >= r->h->p->ib_ack_every_packets) {
        r->rx_since_ack = 0;
        send_ack(q, PK_ACK, tag, r->epsn - 1);
    }
}

/* A responder error: NAK the requester and take the responder to ERR. */
static void rx_fail(nsim_qp *q, nsim_qp *r, uint64_t tag, unsigned nak,
                    uint64_t rq_idx, nsim_wc_status rs)
{
    send_ack(q, nak, tag, TAG_PSN(tag));
    qp_fail(r, NONE, NSIM_WC_WR_FLUSH_ERR, rq_idx, rs);
}

static int lq_push(nsim_qp *r, land_rec **out)
{
    if (r->lq_tail - r->lq_head == r->lq_cap) {
        uint32_t cap = 2 * r->lq_cap;
        if (nsim_sim_charge(r->h->sim, r->lq_cap * sizeof(land_rec)) != NSIM_OK)
            return NSIM_EBUDGET;
        land_rec *n = malloc(cap * sizeof *n);
        if (n == NULL)
            return NSIM_ENOMEM;
        for (uint64_t s = r->lq_head; s < r->lq_tail; s++)
            n[s % cap] = r->lq[s % r->lq_cap];
        free(r->lq);
        r->lq = n;
        r->lq_cap = cap;
    }
    r->rx_rec = r->lq_tail++;
    *out = &r->lq[r->rx_rec % r->lq_cap];
    return NSIM_OK;
}

/* Takes the next receive WR for an incoming message; with none posted
 * the packet is dropped and answered with an RNR NAK (the responder then
 * ignores later packets until this PSN comes again). */
static int take_recv(nsim_qp *q, nsim_qp *r, uint64_t tag, uint64_t *out)
{
    if (r->rq_cons == r->rq_tail) {
        r->nak_sent = 1;
        send_ack(q, PK_NAK_RNR, tag, TAG_PSN(tag));
        return -1;
    }
    *out = r->rq_cons++;
    return 0;
}

/* First packet of a message: access checks, receive WR for SEND, where
 * the data lands. Returns 0, or -1 after a NAK. */
static int rx_begin(nsim_qp *q, nsim_qp *r, const wr_ent *e, uint64_t tag)
{
    land_rec *rec;
    if (lq_push(r, &rec) != NSIM_OK) {
        oom(r->h);
        return -1;
    }
    *rec = (land_rec){e->wr.wr_id, e->wr.bytes, NONE, e->wr.imm, 0, 0};
    r->rx_path = q->write_path;
    r->rx_npath = q->nwrite;
    nsim_wr_opcode op = e->wr.opcode;
    if (op == NSIM_WR_RDMA_WRITE || op == NSIM_WR_RDMA_WRITE_WITH_IMM) {
        const nsim_mr *mr = NULL;
        if (!(r->access & NSIM_ACCESS_REMOTE_WRITE) ||
            (e->wr.rkey != 0 &&
             (mr = mr_check(r->h, e->wr.rkey, e->wr.remote_off, e->wr.bytes,
                            NSIM_ACCESS_REMOTE_WRITE)) == NULL)) {
            r->lq_tail--;
            rx_fail(q, r, tag, PK_NAK_RACC, NONE, NSIM_WC_WR_FLUSH_ERR);
            return -1;
        }
        if (mr != NULL) {
            r->rx_path = mr->from_nic;
            r->rx_npath = mr->nfrom;
        }
        return 0;
    }
    /* SEND: the receive WR's buffer */
    uint64_t ri;
    if (take_recv(q, r, tag, &ri) != 0) {
        r->lq_tail--; /* the message starts again after the RNR wait */
        return -1;
    }
    const nsim_recv_wr *rw = RQ_AT(r, ri);
    rec->recv = ri;
    rec->op = NSIM_WC_RECV;
    if (rw->lkey == 0)
        return 0;
    const nsim_mr *mr = mr_check(r->h, rw->lkey, rw->local_off, rw->length,
                                 NSIM_ACCESS_LOCAL_WRITE);
    if (mr == NULL || e->wr.bytes > rw->length) {
        r->lq_tail--;
        rx_fail(q, r, tag, mr == NULL ? PK_NAK_ROP : PK_NAK_RINV, ri,
                mr == NULL ? NSIM_WC_LOC_PROT_ERR : NSIM_WC_LOC_LEN_ERR);
        return -1;
    }
    r->rx_path = mr->from_nic;
    r->rx_npath = mr->nfrom;
    return 0;
}

static void on_land(nsim_sim *sim, nsim_piece *p);

/* An in-sequence request packet of a WRITE or SEND. */
static void rx_data(nsim_qp *q, nsim_qp *r, nsim_piece *p)
{
    wr_ent *e = SQ_AT(q, TAG_SLOT(p->tag));
    int last = (p->hdr_flags & NSIM_PIECE_LAST) != 0;
    if ((p->hdr_flags & NSIM_PIECE_FIRST) && rx_begin(q, r, e, p->tag) != 0)
        return;
    land_rec *rec = &r->lq[r->rx_rec % r->lq_cap];
    if (last && e->wr.opcode == NSIM_WR_RDMA_WRITE_WITH_IMM) {
        if (take_recv(q, r, p->tag, &rec->recv) != 0) {
            if (p->hdr_flags & NSIM_PIECE_FIRST)
                r->lq_tail--; /* a one-packet message starts again */
            return;
        }
        rec->op = NSIM_WC_RECV_RDMA_WITH_IMM;
    }
    r->epsn++;
    r->nak_sent = 0;
    r->st.rx_packets++;
    ack_maybe(q, r, p->tag, last);
    if (q->flow_path != NULL && p->path == q->flow_path) {
        /* flow fidelity: the flow ran through to memory already (the
         * whole message: a pass resumed past a random loss carries its
         * tail, the head landed before) */
        e->resume_pkts = 0;
        nsim_piece w = {.bytes = e->wr.bytes, .hdr_flags = p->hdr_flags,
                        .ctx = r,
                        .tag = TAG(PK_LAND, r->epoch, 0, 0, r->rx_rec)};
        r->st.rx_packets += wire_packets(q, p->bytes) - 1;
        on_land(r->h->sim, &w);
        return;
    }
    nsim_piece *w;
    if (nsim_fabric_piece(r->h->fab, &w) != NSIM_OK) {
        oom(r->h);
        return;
    }
    *w = (nsim_piece){r->rx_path, r->rx_npath, 0, p->bytes, p->hdr_flags,
                      on_land, r, TAG(PK_LAND, r->epoch, 0, 0, r->rx_rec),
                      0};
    if (nsim_fabric_send(r->h->fab, w) != NSIM_OK)
        oom(r->h);
}

/* Completes, in order, the messages whose data has landed. */
static void land_drain(nsim_qp *r)
{
    while (r->lq_head < r->lq_tail && r->lq[r->lq_head % r->lq_cap].landed) {
        land_rec rec = r->lq[r->lq_head++ % r->lq_cap];
        uint8_t epoch = r->epoch;
        if (r->land_fn != NULL)
            r->land_fn(r->land_ctx, r, rec.req_wr_id, rec.bytes);
        if (rec.recv == NONE || r->epoch != epoch)
            continue;
        nsim_wc wc = {RQ_AT(r, rec.recv)->wr_id,
                      NSIM_WC_SUCCESS, rec.op, rec.bytes, rec.imm, r->qpn,
                      rec.req_wr_id};
        r->rq_head = rec.recv + 1;
        push_cqe(r, r->rcq, &wc);
        if (r->epoch != epoch)
            return;
    }
}

static void on_land(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *r = p->ctx;
    (void)sim;
    if (TAG_EPOCH(p->tag) != (r->epoch & 15u))
        return;
    r->st.rx_bytes += p->bytes;
    if (!(p->hdr_flags & NSIM_PIECE_LAST))
        return;
    uint64_t seq = r->lq_head + (uint32_t)(TAG_PSN(p->tag) -
                                           (uint32_t)r->lq_head);
    r->lq[seq % r->lq_cap].landed = 1;
    land_drain(r);
}

static void on_resp_read(nsim_sim *sim, nsim_piece *p);

/* Sends READ response packets psn .. end-1 of WR e. */
static void respond(nsim_qp *q, nsim_qp *r, const wr_ent *e, uint64_t tag,
                    const nsim_mr *mr)
{
    uint32_t end = e->psn_first + e->npkts;
    for (uint32_t k = TAG_PSN(tag); k < end; k++) {
        uint64_t off = (uint64_t)(k - e->psn_first) * q->mtu;
        uint64_t left = e->wr.bytes - off;
        nsim_piece *w;
        if (nsim_fabric_piece(r->h->fab, &w) != NSIM_OK) {
            oom(r->h);
            return;
        }
        *w = (nsim_piece){mr ? mr->to_nic : q->rread_path,
                          mr ? mr->nto : q->nrread, 0,
                          left < q->mtu ? left : q->mtu,
                          k + 1 == end ? NSIM_PIECE_LAST : 0, on_resp_read, q,
                          TAG(PK_READ_RESP, TAG_EPOCH(tag), 0,
                              TAG_SLOT(tag), k),
                          mr ? mr->read_delay : q->rread_delay};
        if (nsim_fabric_send(r->h->fab, w) != NSIM_OK) {
            oom(r->h);
            return;
        }
    }
}

/* A READ request, new (in sequence) or repeated (duplicate). */
static void rx_read(nsim_qp *q, nsim_qp *r, nsim_piece *p, int dup)
{
    const wr_ent *e = SQ_AT(q, TAG_SLOT(p->tag));
    const nsim_mr *mr = NULL;
    if (!(r->access & NSIM_ACCESS_REMOTE_READ) ||
        (e->wr.rkey != 0 &&
         (mr = mr_check(r->h, e->wr.rkey, e->wr.remote_off, e->wr.bytes,
                        NSIM_ACCESS_REMOTE_READ)) == NULL)) {
        rx_fail(q, r, p->tag, PK_NAK_RACC, NONE, NSIM_WC_WR_FLUSH_ERR);
        return;
    }
    if (!dup) {
        r->epsn = e->psn_first + e->npkts;
        r->nak_sent = 0;
        r->st.rx_packets++;
    }
    respond(q, r, e, p->tag, mr);
}

/* A request packet past the expected PSN: a sequence error, NAKed once
 * until the expected one comes. */
static void rx_out_of_seq(nsim_qp *q, nsim_qp *r, uint64_t tag)
{
    r->st.rx_out_of_seq++;
    if (!r->nak_sent) {
        r->nak_sent = 1;
        send_ack(q, PK_NAK_SEQ, tag, r->epsn);
    }
}

/* A flow-fidelity message (piece p of WR e) lost by chance as it was
 * sent (send_flow): its packets before the first lost one reached
 * memory, so the go-back resends from there (the WR's resume_pkts,
 * seek); and where that packet was not the WR's last, the next one (the
 * piece carried it) reached the responder out of sequence, which NAKs,
 * as it does in packet fidelity (else the next message, or the timer,
 * shows the loss). */
static void flow_lost(nsim_qp *q, nsim_qp *r, const nsim_piece *p,
                      wr_ent *e)
{
    uint32_t at = e->lost_at - 1;
    uint32_t psn = TAG_PSN(p->tag);
    e->lost_at = 0;
    count_lost(q->h, q, 1);
    if (TAG_EPOCH(p->tag) != (q->epoch & 15u) || psn != r->epsn)
        return;
    /* the packets of this pass before the lost one came in order: a NAK
     * sent for an earlier gap is answered (resume_pkts: where the pass
     * started) */
    if (at > e->resume_pkts)
        r->nak_sent = 0;
    e->resume_pkts = at;
    if (at + 1 < wire_packets(q, e->wr.bytes) &&
        r->state >= NSIM_QPS_RTR && r->state != NSIM_QPS_ERR)
        rx_out_of_seq(q, r, p->tag);
}

static void on_wire_done(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx, *r = q->remote;
    uint32_t psn = TAG_PSN(p->tag);
    (void)sim;
    int gone = lost(q->h, q, psn, 1, p->bytes);
    wr_ent *e = SQ_AT(q, TAG_SLOT(p->tag));
    if (!gone && TAG_KIND(p->tag) == PK_DATA && q->flow_path != NULL &&
        p->path == q->flow_path && e->lost_at != 0) {
        flow_lost(q, r, p, e);
        gone = 1;
    }
    if (gone || TAG_EPOCH(p->tag) != (q->epoch & 15u) ||
        r->state < NSIM_QPS_RTR || r->state == NSIM_QPS_ERR)
        return; /* lost, stale, or the responder cannot receive */
    int rd = TAG_KIND(p->tag) == PK_READ_REQ;
    r->h->st.packets_rx++;
    r->h->st.bytes_rx += p->bytes;
    if (psn == r->epsn) {
        if (rd)
            rx_read(q, r, p, 0);
        else
            rx_data(q, r, p);
    } else if (psn < r->epsn) {
        r->st.rx_dup++;
        if (rd)
            rx_read(q, r, p, 1);
        else
            ack_maybe(q, r, p->tag, (p->hdr_flags & NSIM_PIECE_LAST) != 0);
    } else {
        rx_out_of_seq(q, r, p->tag);
    }
}

/* ---- requester: ACKs, READ responses ----------------------------------- */

static void on_read_landed(nsim_sim *sim, nsim_piece *p);
static void on_read_resp_wire(nsim_sim *sim, nsim_piece *p);

static void on_resp_read(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    nsim_hca *rh = q->remote->h;
    nsim_piece *w;
    (void)sim;
    if (nsim_fabric_piece(rh->fab, &w) != NSIM_OK) {
        oom(rh);
        return;
    }
    *w = *p;
    w->path = q->ack_path;
    w->nhops = q->nack;
    w->start_delay = 0;
    w->done = on_read_resp_wire;
    rh->st.packets_tx++;
    rh->st.bytes_tx += p->bytes;
    if (nsim_fabric_send(rh->fab, w) != NSIM_OK)
        oom(rh);
}

/* A READ response reached the requester's NIC: in order, it acknowledges
 * every earlier PSN and goes to memory; a gap is a sequence error. */
static void on_read_resp_wire(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    uint32_t psn = TAG_PSN(p->tag);
    nsim_piece *w;
    (void)sim;
    if (lost(q->remote->h, q, psn, 0, p->bytes) ||
        TAG_EPOCH(p->tag) != (q->epoch & 15u) || q->state != NSIM_QPS_RTS)
        return;
    if (psn != q->acked_psn) {
        if (psn > q->acked_psn && !q->resp_gap) {
            q->resp_gap = 1;
            q->st.naks++;
            retry(q);
        }
        return;
    }
    q->resp_gap = 0;
    const wr_ent *e = SQ_AT(q, TAG_SLOT(p->tag));
    if (nsim_fabric_piece(q->h->fab, &w) != NSIM_OK) {
        oom(q->h);
        return;
    }
    *w = (nsim_piece){e->lmr ? e->lmr->from_nic : q->lwrite_path,
                      e->lmr ? e->lmr->nfrom : q->nlwrite, 0, p->bytes,
                      p->hdr_flags, on_read_landed, q, p->tag, 0};
    if (nsim_fabric_send(q->h->fab, w) != NSIM_OK)
        oom(q->h);
    progress(q, psn + 1);
}

static void on_read_landed(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    (void)sim;
    if (TAG_EPOCH(p->tag) != (q->epoch & 15u))
        return;
    q->st.read_bytes += p->bytes;
    if (!(p->hdr_flags & NSIM_PIECE_LAST))
        return;
    SQ_AT(q, TAG_SLOT(p->tag))->landed = 1;
    complete_acked(q);
}

/* IBTA vol. 1 table 45 (ibv_modify_qp(3) min_rnr_timer): the RNR wait
 * of each code, in units of 10 us; code 0 is 655.36 ms. */
static nsim_time rnr_timer_ps(uint32_t code)
{
    static const uint32_t t10us[32] = {
        65536, 1,    2,    3,    4,    6,    8,    12,   16,    24,    32,
        48,    64,   96,   128,  192,  256,  384,  512,  768,   1024,  1536,
        2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
    return (nsim_time)t10us[code & 31] * 10000000ull;
}

static void on_rnr_timer(nsim_sim *sim, nsim_event *ev)
{
    nsim_qp *q = ev->target;
    (void)sim;
    if (ev->arg.u64 != q->epoch || q->state != NSIM_QPS_RTS || !q->rnr_wait)
        return;
    q->rnr_wait = 0;
    wake(q);
}

/* An RNR NAK for the first unacknowledged PSN: stop sending, wait the
 * responder's RNR timer, then resend from there; after rnr_retry RNR NAKs
 * without progress (7: never) the WR fails. */
static void rnr_nak(nsim_qp *q, uint32_t code)
{
    q->st.rnr_naks++;
    if (q->rnr_wait)
        return;
    if (q->rnr_retry < 7 && q->rnr_retries >= q->rnr_retry) {
        qp_fail(q, q->sq_head, NSIM_WC_RNR_RETRY_EXC_ERR, NONE,
                NSIM_WC_WR_FLUSH_ERR);
        return;
    }
    q->rnr_retries++;
    q->st.retransmits += q->next_psn - q->acked_psn;
    seek(q, q->acked_psn);
    timer_stop(q);
    q->rnr_wait = 1;
    if (nsim_sim_schedule(q->h->sim, rnr_timer_ps(code), on_rnr_timer, q, 0,
                          q->epoch, NULL) != NSIM_OK)
        oom(q->h);
}

static void on_ack(nsim_sim *sim, nsim_piece *p)
{
    nsim_qp *q = p->ctx;
    uint32_t psn = TAG_PSN(p->tag);
    unsigned kind = TAG_KIND(p->tag);
    (void)sim;
    if (lost(q->remote->h, q, psn, 0, p->bytes) ||
        TAG_EPOCH(p->tag) != (q->epoch & 15u) || q->state != NSIM_QPS_RTS)
        return;
    if (kind == PK_ACK) {
        q->st.acks++;
        progress(q, psn + 1);
        return;
    }
    q->st.naks++;
    if (psn < q->acked_psn)
        return; /* stale */
    progress(q, psn);
    if (q->state != NSIM_QPS_RTS)
        return;
    if (kind == PK_NAK_SEQ) {
        retry(q);
        return;
    }
    if (kind == PK_NAK_RNR) {
        rnr_nak(q, TAG_SLOT(p->tag));
        return;
    }
    /* the WR holding psn fails: it is the oldest outstanding one */
    qp_fail(q, q->sq_head,
            kind == PK_NAK_RACC   ? NSIM_WC_REM_ACCESS_ERR
            : kind == PK_NAK_RINV ? NSIM_WC_REM_INV_REQ_ERR
                                  : NSIM_WC_REM_OP_ERR,
            NONE, NSIM_WC_WR_FLUSH_ERR);
}
