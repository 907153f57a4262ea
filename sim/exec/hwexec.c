/* SPDX-License-Identifier: MIT
 *
 * hwexec.c - plays a plan on real hardware through a hardware transport
 * (see hwexec.h).
 */
#include "hwexec.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LANES 1024
#define LINE 64

/* ---- the control block (possibly shared between processes) --------- */

typedef struct ctl_hdr {
    _Atomic uint64_t gen;     /* job number; lanes start a job when it moves */
    uint32_t job, iters, in_place, record;
    int64_t t0_ns;
    _Atomic uint32_t lanes_done;
    _Atomic int abort;        /* 0 running, 1 message being written, 2 set */
    char msg[512];
} ctl_hdr;

typedef struct ctl_rank {
    _Atomic uint64_t iters_done; /* lane-iterations of this rank, ever */
    _Atomic uint64_t ready_gen;  /* check job: the leader has filled */
    int64_t wrong;
    char pad[LINE - 24];
} ctl_rank;

typedef struct ctl_lane {
    _Atomic int64_t end_ns; /* when the lane finished the current job */
    char pad[LINE - 8];
} ctl_lane;

typedef struct lane {
    nsim_hwx *x;
    uint32_t index, rank;
    const nsim_plan_lane *pl;
    uint64_t sseq, rseq;  /* next slice on the send / receive connection */
    uint64_t iters_done;  /* iterations this lane has run, ever */
    uint64_t span0;       /* index of its first op in the span array */
    int leader;           /* fills and checks its rank's buffers */
    pthread_t thread;
    int started;
} lane;

typedef struct rank_buf {
    uint8_t *in, *out;
} rank_buf;

struct nsim_hwx {
    nsim_hwx_cfg cfg;
    const nsim_plan *p;
    uint32_t ts, nlanes, nlocal; /* lanes; lanes in this process */
    int64_t wrong_total;         /* with sync: over the processes */
    uint64_t in_bytes, out_bytes, block;
    ctl_hdr *hdr;
    ctl_rank *ranks;
    ctl_lane *lane_ctl;
    nsim_op_span *spans;
    uint64_t nspans;
    uint32_t *lanes_of_rank;
    lane *lanes;
    rank_buf *bufs;
    int recorded;
};

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static size_t align_up(size_t v) { return (v + LINE - 1) / LINE * LINE; }

static uint64_t total_ops(const nsim_plan *p)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->nlanes; i++)
        n += p->lanes[i].nops;
    return n;
}

size_t nsim_hwx_ctl_size(const nsim_plan *p)
{
    return align_up(sizeof(ctl_hdr)) + align_up(p->nranks * sizeof(ctl_rank)) +
           align_up(p->nlanes * sizeof(ctl_lane)) +
           align_up((total_ops(p) + 1) * sizeof(nsim_op_span));
}

void nsim_hwx_buffer_bytes(const nsim_plan *p, uint64_t *in, uint64_t *out)
{
    uint64_t b = p->req.bytes;
    *in = *out = b;
    if (p->req.coll == NSIM_COLL_ALLGATHER)
        *in = b / p->nranks;
    if (p->req.coll == NSIM_COLL_REDUCESCATTER)
        *out = b / p->nranks;
}

void nsim_hwx_fail(nsim_hwx *x, const char *msg)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(&x->hdr->abort, &zero, 1)) {
        size_t n = strlen(msg);
        n = n < sizeof x->hdr->msg - 1 ? n : sizeof x->hdr->msg - 1;
        memcpy(x->hdr->msg, msg, n);
        x->hdr->msg[n] = '\0';
        atomic_store(&x->hdr->abort, 2);
    }
}

_Atomic int *nsim_hwx_abort_flag(nsim_hwx *x) { return &x->hdr->abort; }

/* ---- what an op reads and writes ------------------------------------ */

static int is_p2p(const nsim_plan *p) { return nsim_coll_is_p2p(p->req.coll); }

/* Byte offset of the op's input in the rank's send buffer and of its
 * output in the receive buffer (the plan's offset is in the collective's
 * full buffer: AllGather's output, ReduceScatter's input). UNUSED: the
 * op does not use that buffer. */
#define UNUSED INT64_MIN
static void op_offsets(const nsim_hwx *x, uint32_t rank,
                       const nsim_plan_op *op, int64_t *in_off,
                       int64_t *out_off)
{
    const nsim_plan *p = x->p;
    int recv = op->prim & NSIM_PRIM_RECV, send = op->prim & NSIM_PRIM_SEND;
    int red = op->prim & NSIM_PRIM_REDUCE, cp = op->prim & NSIM_PRIM_COPY_OUT;
    int64_t off = (int64_t)op->offset;
    *in_off = (!recv || red) ? off : UNUSED;
    *out_off = cp ? off : UNUSED;
    switch (p->req.coll) {
    case NSIM_COLL_ALLGATHER:
        *in_off = !recv ? off - (int64_t)(rank * x->block) : UNUSED;
        *out_off = (cp || !recv) ? off : UNUSED; /* its own block too */
        break;
    case NSIM_COLL_REDUCESCATTER:
        *out_off = cp ? off - (int64_t)(rank * x->block) : UNUSED;
        break;
    case NSIM_COLL_BROADCAST:
        if (!recv) /* the root copies its own input to its output */
            *out_off = off;
        break;
    case NSIM_COLL_SENDRECV:
        if (recv)
            *out_off = off - (int64_t)((uint64_t)op->chunk * p->req.bytes);
        break;
    case NSIM_COLL_ALLTOALL:
        if (!recv && !send) /* the rank's own block: a local copy */
            *in_off = off;
        break;
    default:
        break;
    }
}

static int check_plan(const nsim_hwx *x, nsim_err *err)
{
    const nsim_plan *p = x->p;
    if (!is_p2p(p) && p->req.algo != NSIM_ALGO_RING)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "the hardware executor plays Ring and "
                        "point-to-point plans; this plan is %s (force "
                        "\"algorithm\": \"Ring\" in the scenario)",
                        nsim_algo_name(p->req.algo));
    if (p->nlanes > MAX_LANES)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "the plan has %u lanes (one thread each); the "
                        "hardware executor takes at most %d",
                        p->nlanes, MAX_LANES);
    if (p->req.type_size != x->ts)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "the plan's type_size %u is not the data type's "
                        "(%s, %u bytes)",
                        p->req.type_size, nsim_hdt_name(x->cfg.dtype), x->ts);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_lane *l = &p->lanes[i];
        if (l->nrecv_more || l->nsend_more || l->per_step_conns)
            return NSIM_ERR(err, NSIM_ENOTSUP,
                            "lane %u has several peers (a tree or PAT "
                            "lane): not played on hardware", i);
        if (l->rank >= p->nranks)
            return NSIM_ERR(err, NSIM_ECONFIG, "lane %u: rank %u of %u", i,
                            l->rank, p->nranks);
        for (uint32_t k = 0; k < l->nops; k++) {
            const nsim_plan_op *op = nsim_plan_lane_op(l, k);
            int64_t io, oo;
            if (op->bytes % x->ts != 0 ||
                ((op->prim & NSIM_PRIM_SEND) && op->bytes > p->slice_bytes))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "lane %u op %u: %llu bytes (expected a "
                                "multiple of %u, at most the slice's %llu)",
                                i, k, (unsigned long long)op->bytes, x->ts,
                                (unsigned long long)p->slice_bytes);
            if (((op->prim & NSIM_PRIM_SEND) && l->send_conn >= p->nconns) ||
                ((op->prim & NSIM_PRIM_RECV) && l->recv_conn >= p->nconns))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "lane %u op %u: no connection to %s", i, k,
                                (op->prim & NSIM_PRIM_SEND) ? "send on"
                                                            : "receive from");
            op_offsets(x, l->rank, op, &io, &oo);
            if (op->bytes == 0) /* an empty slice: posted, nothing moved */
                continue;
            if (io != UNUSED &&
                (io < 0 || (uint64_t)io + op->bytes > x->in_bytes))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "lane %u op %u: input bytes %lld..+%llu "
                                "outside the %llu-byte buffer", i, k,
                                (long long)io, (unsigned long long)op->bytes,
                                (unsigned long long)x->in_bytes);
            if (oo != UNUSED &&
                (oo < 0 || (uint64_t)oo + op->bytes > x->out_bytes))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "lane %u op %u: output bytes %lld..+%llu "
                                "outside the %llu-byte buffer", i, k,
                                (long long)oo, (unsigned long long)op->bytes,
                                (unsigned long long)x->out_bytes);
        }
    }
    return NSIM_OK;
}

int nsim_hwx_create(const nsim_hwx_cfg *cfg, void *ctl, nsim_hwx **out,
                    nsim_err *err)
{
    const nsim_plan *p = cfg->plan;
    nsim_hwx *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    x->cfg = *cfg;
    x->p = p;
    x->ts = nsim_hdt_size(cfg->dtype);
    x->nlanes = p->nlanes;
    x->block = p->req.bytes / p->nranks;
    nsim_hwx_buffer_bytes(p, &x->in_bytes, &x->out_bytes);
    int rc = check_plan(x, err);
    if (rc != NSIM_OK) {
        free(x);
        return rc;
    }
    uint8_t *m = ctl;
    x->hdr = (ctl_hdr *)m;
    m += align_up(sizeof(ctl_hdr));
    x->ranks = (ctl_rank *)m;
    m += align_up(p->nranks * sizeof(ctl_rank));
    x->lane_ctl = (ctl_lane *)m;
    m += align_up(p->nlanes * sizeof(ctl_lane));
    x->spans = (nsim_op_span *)m;
    x->lanes = calloc(p->nlanes ? p->nlanes : 1, sizeof *x->lanes);
    x->lanes_of_rank = calloc(p->nranks, sizeof *x->lanes_of_rank);
    x->bufs = calloc(p->nranks, sizeof *x->bufs);
    if (x->lanes == NULL || x->lanes_of_rank == NULL || x->bufs == NULL) {
        nsim_hwx_destroy(x);
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    }
    uint64_t span0 = 0;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        lane *l = &x->lanes[i];
        l->x = x;
        l->index = i;
        l->pl = &p->lanes[i];
        l->rank = l->pl->rank;
        l->leader = x->lanes_of_rank[l->rank]++ == 0;
        if (cfg->only_rank < 0 || (uint32_t)cfg->only_rank == l->rank)
            x->nlocal++;
        l->span0 = span0;
        span0 += l->pl->nops;
    }
    *out = x;
    return NSIM_OK;
}

/* ---- a lane --------------------------------------------------------- */

static int aborted(const nsim_hwx *x) { return atomic_load(&x->hdr->abort); }

static int lane_fail(lane *l, nsim_err *err)
{
    char msg[600];
    snprintf(msg, sizeof msg, "rank %u lane %u (channel %u): %s", l->rank,
             l->index, l->pl->channel, err->msg);
    nsim_hwx_fail(l->x, msg);
    return err->code ? err->code : NSIM_ESTATE;
}

static int run_op(lane *l, uint32_t k, uint8_t *in, uint8_t *out, int record,
                  nsim_err *err)
{
    nsim_hwx *x = l->x;
    const nsim_hw_xport_ops *xp = x->cfg.xp;
    const nsim_plan_op *op = nsim_plan_lane_op(l->pl, k);
    uint8_t prim = op->prim;
    size_t nb = op->bytes, ne = nb / x->ts;
    const void *slot = NULL;
    uint8_t *dslot = NULL;
    int64_t io, oo;
    if (prim & NSIM_PRIM_RECV)
        NSIM_TRY(xp->wait_arrived(x->cfg.xp_ctx, l->pl->recv_conn, l->rseq,
                                  &slot, err));
    if (prim & NSIM_PRIM_SEND) {
        NSIM_TRY(xp->wait_credit(x->cfg.xp_ctx, l->pl->send_conn, l->sseq,
                                 err));
        dslot = xp->send_buf(x->cfg.xp_ctx, l->pl->send_conn, l->sseq);
    }
    int64_t t0 = record ? now_ns() : 0;
    op_offsets(x, l->rank, op, &io, &oo);
    uint8_t *ip = io != UNUSED && nb ? in + io : NULL;
    uint8_t *opp = oo != UNUSED && nb ? out + oo : NULL;
    if (nb == 0) {
        /* an empty slice still takes its slot and credit */
    } else if ((prim & NSIM_PRIM_RECV) && (prim & NSIM_PRIM_REDUCE)) {
        uint8_t *d = dslot != NULL ? dslot : opp;
        nsim_hdt_reduce(x->cfg.dtype, x->cfg.op, d, slot, ip, ne);
        if ((prim & NSIM_PRIM_COPY_OUT) && x->cfg.op == NSIM_HOP_AVG)
            nsim_hdt_postdiv(x->cfg.dtype, d, d, ne, x->p->nranks);
        if (dslot != NULL && opp != NULL)
            memcpy(opp, d, nb);
    } else if (prim & NSIM_PRIM_RECV) {
        if (opp != NULL)
            memcpy(opp, slot, nb);
        if (dslot != NULL)
            memcpy(dslot, slot, nb);
    } else if (prim & NSIM_PRIM_SEND) {
        memcpy(dslot, ip, nb);
        if (opp != NULL && opp != ip)
            memcpy(opp, ip, nb);
    } else if (opp != NULL && ip != NULL && opp != ip) {
        memmove(opp, ip, nb);
    }
    if (prim & NSIM_PRIM_SEND)
        NSIM_TRY(xp->post(x->cfg.xp_ctx, l->pl->send_conn, l->sseq++, nb, err));
    if (prim & NSIM_PRIM_RECV)
        NSIM_TRY(xp->consumed(x->cfg.xp_ctx, l->pl->recv_conn, l->rseq++,
                              err));
    if (record) {
        int64_t t1 = now_ns();
        x->spans[l->span0 + k] = (nsim_op_span){
            l->index, k, (nsim_time)(t0 - x->hdr->t0_ns) * 1000,
            (nsim_time)(t1 - x->hdr->t0_ns) * 1000};
    }
    return NSIM_OK;
}

/* Waits until *v >= want, bounded by the abort flag. */
static int wait_at_least(nsim_hwx *x, _Atomic uint64_t *v, uint64_t want,
                         const char *what, nsim_err *err)
{
    uint32_t spins = 0;
    int64_t deadline = now_ns() + (int64_t)(x->cfg.timeout_s * 1e9);
    while (atomic_load_explicit(v, memory_order_acquire) < want) {
        if (aborted(x))
            return NSIM_ERR(err, NSIM_ESTATE, "stopped: another lane failed");
        nsim_hw_relax(&spins);
        if ((spins & 1023) == 0 && now_ns() > deadline)
            return NSIM_ERR(err, NSIM_ESTATE,
                            "timed out after %.0f s waiting for %s",
                            x->cfg.timeout_s, what);
    }
    return NSIM_OK;
}

/* The buffers of a job: in place, the input is part of the output
 * (AllGather), the output part of the input (ReduceScatter), or both
 * the same. */
static void job_bufs(const nsim_hwx *x, uint32_t r, int in_place,
                     uint8_t **in, uint8_t **out)
{
    rank_buf *b = &x->bufs[r];
    *in = b->in;
    *out = b->out;
    if (!in_place)
        return;
    switch (x->p->req.coll) {
    case NSIM_COLL_ALLGATHER: *in = b->out + r * x->block; break;
    case NSIM_COLL_REDUCESCATTER: *out = b->in + r * x->block; break;
    default: *in = b->out; break;
    }
}

static void fill(nsim_hwx *x, uint32_t r, int in_place)
{
    uint8_t *in, *out;
    job_bufs(x, r, in_place, &in, &out);
    nsim_hwx_cfg *c = &x->cfg;
    uint64_t in_bytes = x->in_bytes;
    if (!in_place || x->p->req.coll == NSIM_COLL_ALLGATHER)
        memset(x->bufs[r].out, 0xff, x->out_bytes); /* NaN / -1: unwritten */
    nsim_hdt_fill(c->dtype, c->op, x->p->nranks, r, 0, in, in_bytes / x->ts);
}

static int64_t check(nsim_hwx *x, uint32_t r, int in_place)
{
    const nsim_plan *p = x->p;
    nsim_hwx_cfg *c = &x->cfg;
    uint8_t *in, *out;
    uint32_t n = p->nranks;
    uint64_t bad, wrong = 0, cnt = x->out_bytes / x->ts, blk = x->block / x->ts;
    job_bufs(x, r, in_place, &in, &out);
    switch (p->req.coll) {
    case NSIM_COLL_ALLREDUCE:
        return (int64_t)nsim_hdt_check(c->dtype, c->op, n, -1, 0, out, cnt, &bad);
    case NSIM_COLL_REDUCESCATTER:
        return (int64_t)nsim_hdt_check(c->dtype, c->op, n, -1, r * blk, out,
                                       blk, &bad);
    case NSIM_COLL_REDUCE:
        return r != p->req.root ? 0
                                : (int64_t)nsim_hdt_check(c->dtype, c->op, n,
                                                          -1, 0, out, cnt,
                                                          &bad);
    case NSIM_COLL_BROADCAST:
        return (int64_t)nsim_hdt_check(c->dtype, c->op, n,
                                       (int32_t)p->req.root, 0, out, cnt, &bad);
    case NSIM_COLL_ALLGATHER:
        for (uint32_t j = 0; j < n; j++)
            wrong += nsim_hdt_check(c->dtype, c->op, n, (int32_t)j, 0,
                                    out + j * x->block, blk, &bad);
        return (int64_t)wrong;
    case NSIM_COLL_SENDRECV:
        if (in_place)
            return -1;
        return (int64_t)nsim_hdt_check(c->dtype, c->op, n,
                                       (int32_t)((r + n - 1) % n), 0, out, cnt,
                                       &bad);
    default: /* AllToAll: block s came from rank s's block r */
        if (in_place)
            return -1;
        for (uint32_t s = 0; s < n; s++)
            wrong += nsim_hdt_check(c->dtype, c->op, n, (int32_t)s, r * blk,
                                    out + s * x->block, blk, &bad);
        return (int64_t)wrong;
    }
}

static int lane_job(lane *l, uint64_t gen, nsim_err *err)
{
    nsim_hwx *x = l->x;
    ctl_hdr *h = x->hdr;
    ctl_rank *cr = &x->ranks[l->rank];
    uint32_t nl = x->lanes_of_rank[l->rank];
    int chk = h->job == NSIM_HWX_JOB_CHECK;
    uint32_t iters = chk ? 1 : h->iters;
    uint8_t *in, *out;
    if (x->cfg.die_rank == (int32_t)l->rank && x->cfg.die_job >= 0 &&
        gen == (uint64_t)x->cfg.die_job + 1)
        raise(SIGKILL); /* tests: a rank lost mid-run */
    job_bufs(x, l->rank, (int)h->in_place, &in, &out);
    if (chk && l->leader) {
        fill(x, l->rank, (int)h->in_place);
        atomic_store_explicit(&cr->ready_gen, gen, memory_order_release);
    } else if (chk) {
        NSIM_TRY(wait_at_least(x, &cr->ready_gen, gen, "the rank's fill",
                               err));
    }
    for (uint32_t it = 0; it < iters; it++) {
        /* stream order: the rank's previous op has ended on every lane */
        NSIM_TRY(wait_at_least(x, &cr->iters_done, nl * l->iters_done,
                               "the rank's previous op", err));
        for (uint32_t k = 0; k < l->pl->nops; k++)
            NSIM_TRY(run_op(l, k, in, out, h->record && it == 0, err));
        l->iters_done++;
        atomic_fetch_add_explicit(&cr->iters_done, 1, memory_order_acq_rel);
    }
    if (chk && l->leader) {
        NSIM_TRY(wait_at_least(x, &cr->iters_done, nl * l->iters_done,
                               "the rank's lanes", err));
        cr->wrong = check(x, l->rank, (int)h->in_place);
    }
    return NSIM_OK;
}

static void *lane_main(void *arg)
{
    lane *l = arg;
    nsim_hwx *x = l->x;
    uint64_t seen = 0;
    nsim_err err = {0};
    for (;;) {
        uint32_t spins = 0;
        int64_t idle0 = now_ns();
        uint64_t g;
        while ((g = atomic_load_explicit(&x->hdr->gen,
                                         memory_order_acquire)) == seen) {
            if (aborted(x))
                return NULL;
            nsim_hw_relax(&spins);
            if (spins > 4096 && now_ns() - idle0 > 2000000) {
                /* idle for 2 ms (the controller fills or checks): sleep */
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
            }
        }
        seen = g;
        if (x->hdr->job == NSIM_HWX_JOB_QUIT)
            return NULL;
        if (lane_job(l, g, &err) != NSIM_OK) {
            lane_fail(l, &err);
            return NULL;
        }
        atomic_store(&x->lane_ctl[l->index].end_ns, now_ns());
        atomic_fetch_add_explicit(&x->hdr->lanes_done, 1, memory_order_acq_rel);
    }
}

int nsim_hwx_start(nsim_hwx *x, nsim_err *err)
{
    int32_t only = x->cfg.only_rank;
    for (uint32_t r = 0; r < x->p->nranks; r++) {
        if (only >= 0 && (uint32_t)only != r)
            continue;
        x->bufs[r].in = malloc(x->in_bytes ? x->in_bytes : 1);
        x->bufs[r].out = malloc(x->out_bytes ? x->out_bytes : 1);
        if (x->bufs[r].in == NULL || x->bufs[r].out == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM,
                            "rank %u: out of memory for %llu + %llu bytes of "
                            "buffers", r, (unsigned long long)x->in_bytes,
                            (unsigned long long)x->out_bytes);
        memset(x->bufs[r].in, 0, x->in_bytes);
        memset(x->bufs[r].out, 0, x->out_bytes);
    }
    for (uint32_t i = 0; i < x->nlanes; i++) {
        lane *l = &x->lanes[i];
        if (only >= 0 && (uint32_t)only != l->rank)
            continue;
        if (pthread_create(&l->thread, NULL, lane_main, l) != 0) {
            nsim_hwx_fail(x, "could not start a lane thread");
            return NSIM_ERR(err, NSIM_ENOMEM,
                            "could not start lane thread %u of %u", i,
                            x->nlanes);
        }
        l->started = 1;
    }
    return NSIM_OK;
}

void nsim_hwx_join(nsim_hwx *x)
{
    for (uint32_t i = 0; i < x->nlanes; i++)
        if (x->lanes[i].started) {
            pthread_join(x->lanes[i].thread, NULL);
            x->lanes[i].started = 0;
        }
}

static int abort_error(nsim_hwx *x, nsim_err *err)
{
    uint32_t spins = 0;
    while (atomic_load(&x->hdr->abort) == 1)
        nsim_hw_relax(&spins);
    return NSIM_ERR(err, NSIM_ESTATE, "%s", x->hdr->msg);
}

int nsim_hwx_run(nsim_hwx *x, nsim_hwx_job job, uint32_t iters, int in_place,
                 int record, nsim_hwx_alive_fn alive, void *alive_arg,
                 double *elapsed_s, nsim_err *err)
{
    ctl_hdr *h = x->hdr;
    double mx = 0, sum = 0;
    if (aborted(x))
        return abort_error(x, err);
    if (x->cfg.sync != NULL && job != NSIM_HWX_JOB_QUIT &&
        x->cfg.sync(x->cfg.sync_arg, &mx, &sum, err) != NSIM_OK) {
        nsim_hwx_fail(x, err->msg);
        return err->code;
    }
    h->job = job;
    h->iters = iters;
    h->in_place = (uint32_t)in_place;
    h->record = (uint32_t)record;
    atomic_store(&h->lanes_done, 0);
    h->t0_ns = now_ns();
    atomic_fetch_add_explicit(&h->gen, 1, memory_order_release);
    if (job == NSIM_HWX_JOB_QUIT)
        return NSIM_OK;
    double limit = x->cfg.timeout_s * (double)((job == NSIM_HWX_JOB_CHECK ? 1
                                                                       : iters) +
                                               1);
    int64_t deadline = h->t0_ns + (int64_t)(limit * 1e9);
    uint32_t spins = 0;
    while (atomic_load_explicit(&h->lanes_done, memory_order_acquire) <
           x->nlocal) {
        if (aborted(x))
            return abort_error(x, err);
        nsim_hw_relax(&spins);
        if ((spins & 255) != 0)
            continue;
        if (alive != NULL && alive(alive_arg, err) != NSIM_OK) {
            nsim_hwx_fail(x, err->msg);
            return err->code;
        }
        if (now_ns() > deadline) {
            nsim_hwx_fail(x, "the controller's deadline passed");
            return NSIM_ERR(err, NSIM_ESTATE,
                            "timed out after %.0f s: %u of %u lanes finished "
                            "the job", limit, atomic_load(&h->lanes_done),
                            x->nlocal);
        }
    }
    int64_t end = h->t0_ns;
    for (uint32_t i = 0; i < x->nlanes; i++) {
        int64_t e = atomic_load(&x->lane_ctl[i].end_ns);
        end = e > end ? e : end;
    }
    mx = (double)(end - h->t0_ns) / 1e9;
    if (x->cfg.sync != NULL) {
        int64_t w = 0;
        for (uint32_t r = 0; r < x->p->nranks; r++)
            w = x->ranks[r].wrong < 0 || w < 0 ? -1 : w + x->ranks[r].wrong;
        sum = job == NSIM_HWX_JOB_CHECK ? (w < 0 ? -1e18 : (double)w) : 0;
        if (x->cfg.sync(x->cfg.sync_arg, &mx, &sum, err) != NSIM_OK) {
            nsim_hwx_fail(x, err->msg);
            return err->code;
        }
        x->wrong_total = sum < 0 ? -1 : (int64_t)sum;
    }
    if (elapsed_s != NULL)
        *elapsed_s = mx;
    if (record) {
        x->recorded = 1;
        x->nspans = total_ops(x->p);
    }
    return NSIM_OK;
}

int64_t nsim_hwx_wrong(const nsim_hwx *x)
{
    int64_t w = 0;
    if (x->cfg.sync != NULL)
        return x->wrong_total;
    for (uint32_t r = 0; r < x->p->nranks; r++) {
        if (x->ranks[r].wrong < 0)
            return -1;
        w += x->ranks[r].wrong;
    }
    return w;
}

static int by_end(const void *a, const void *b)
{
    const nsim_op_span *x = a, *y = b;
    return x->end_ps < y->end_ps ? -1 : x->end_ps > y->end_ps;
}

int nsim_hwx_spans(const nsim_hwx *x, nsim_exec_result *res, nsim_err *err)
{
    memset(res, 0, sizeof *res);
    if (!x->recorded)
        return NSIM_OK;
    res->spans = malloc((x->nspans ? x->nspans : 1) * sizeof *res->spans);
    if (res->spans == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    memcpy(res->spans, x->spans, x->nspans * sizeof *res->spans);
    res->nspans = x->nspans;
    /* in completion order, as the simulated executor records them */
    qsort(res->spans, res->nspans, sizeof *res->spans, by_end);
    nsim_time end = 0;
    for (uint64_t i = 0; i < x->nspans; i++)
        end = res->spans[i].end_ps > end ? res->spans[i].end_ps : end;
    res->time_ps = res->gpu_ps = end;
    return NSIM_OK;
}

void nsim_hwx_destroy(nsim_hwx *x)
{
    if (x == NULL)
        return;
    if (x->bufs != NULL)
        for (uint32_t r = 0; r < x->p->nranks; r++) {
            free(x->bufs[r].in);
            free(x->bufs[r].out);
        }
    free(x->bufs);
    free(x->lanes);
    free(x->lanes_of_rank);
    free(x);
}

int nsim_hwx_measure_size(nsim_hwx *x, uint32_t warmup, uint32_t iters,
                          int check, int record, nsim_hwx_alive_fn alive,
                          void *alive_arg, nsim_hwx_measure *m, nsim_err *err)
{
    double t;
    m->wrong = m->wrong_ip = -1;
    if (warmup > 0)
        NSIM_TRY(nsim_hwx_run(x, NSIM_HWX_JOB_TIMED, warmup, 0, 0, alive,
                              alive_arg, &t, err));
    for (int ip = 0; ip < 2; ip++) {
        if (record && !ip) /* one recorded op, outside the timed loop */
            NSIM_TRY(nsim_hwx_run(x, NSIM_HWX_JOB_TIMED, 1, 0, 1, alive,
                                  alive_arg, &t, err));
        NSIM_TRY(nsim_hwx_run(x, NSIM_HWX_JOB_TIMED, iters, ip, 0, alive,
                              alive_arg, &t, err));
        *(ip ? &m->time_ip_us : &m->time_us) = t / iters * 1e6;
        if (check) {
            NSIM_TRY(nsim_hwx_run(x, NSIM_HWX_JOB_CHECK, 1, ip, 0, alive,
                                  alive_arg, &t, err));
            *(ip ? &m->wrong_ip : &m->wrong) = nsim_hwx_wrong(x);
        }
    }
    return NSIM_OK;
}

/* ---- the same views for backends with their own buffers (cuda) ------- */

static nsim_hwx view_of(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                        rank_buf *bufs)
{
    nsim_hwx v;
    memset(&v, 0, sizeof v);
    v.p = p;
    v.cfg.plan = p;
    v.cfg.dtype = dt;
    v.cfg.op = op;
    v.ts = nsim_hdt_size(dt);
    v.block = p->req.bytes / p->nranks;
    v.bufs = bufs;
    nsim_hwx_buffer_bytes(p, &v.in_bytes, &v.out_bytes);
    return v;
}

int nsim_hwx_op_io(const nsim_plan *p, uint32_t rank, const nsim_plan_op *op,
                   int64_t *in_off, int64_t *out_off)
{
    nsim_hwx v = view_of(p, NSIM_HDT_UINT8, NSIM_HOP_SUM, NULL);
    op_offsets(&v, rank, op, in_off, out_off);
    if (*in_off == UNUSED || op->bytes == 0)
        *in_off = -1;
    if (*out_off == UNUSED || op->bytes == 0)
        *out_off = -1;
    return *in_off < -1 || *out_off < -1 ? -1 : 0;
}

int nsim_hwx_check_plan(const nsim_plan *p, nsim_hdt dt, nsim_err *err)
{
    nsim_hwx v = view_of(p, dt, NSIM_HOP_SUM, NULL);
    return check_plan(&v, err);
}

void nsim_hwx_place(const nsim_plan *p, uint32_t rank, int in_place,
                    uint8_t *in, uint8_t *out, uint8_t **pin, uint8_t **pout)
{
    rank_buf one = {in, out};
    rank_buf *bufs = calloc(p->nranks, sizeof *bufs);
    if (bufs == NULL) {
        *pin = in;
        *pout = out;
        return;
    }
    bufs[rank] = one;
    nsim_hwx v = view_of(p, NSIM_HDT_UINT8, NSIM_HOP_SUM, bufs);
    job_bufs(&v, rank, in_place, pin, pout);
    free(bufs);
}

static int with_view(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                     uint32_t rank, uint8_t *in, uint8_t *out, int in_place,
                     int do_check, int64_t *wrong)
{
    rank_buf *bufs = calloc(p->nranks, sizeof *bufs);
    if (bufs == NULL)
        return NSIM_ENOMEM;
    bufs[rank] = (rank_buf){in, out};
    nsim_hwx v = view_of(p, dt, op, bufs);
    if (do_check)
        *wrong = check(&v, rank, in_place);
    else
        fill(&v, rank, in_place);
    free(bufs);
    return NSIM_OK;
}

int nsim_hwx_fill_host(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                       uint32_t rank, int in_place, uint8_t *in, uint8_t *out)
{
    return with_view(p, dt, op, rank, in, out, in_place, 0, NULL);
}

int64_t nsim_hwx_check_host(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                            uint32_t rank, int in_place, uint8_t *in,
                            uint8_t *out)
{
    int64_t w = -1;
    if (with_view(p, dt, op, rank, in, out, in_place, 1, &w) != NSIM_OK)
        return -1;
    return w;
}
