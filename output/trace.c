/* SPDX-License-Identifier: MIT
 *
 * trace.c - the timeline trace of one run (see trace.h).
 */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/strbuf.h"
#include "models/tracelog.h"
#include "sim/core/jread.h"

#define TID_CONN 100000u  /* + conn: a NET connection's track */
#define TID_QP 1000000u   /* + (conn * 256 + qp) * SUBS + sub: a QP's
                           * tracks (WRs in flight together go on
                           * separate rows so that slices nest) */
#define SUBS 16u
#define DEFAULT_CAP 1000000u

typedef struct tbuf {
    nsim_strbuf text;
    uint64_t events;
} tbuf;

static void tb(tbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);

static void tb(tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nsim_strbuf_vprintf(&b->text, fmt, ap);
    va_end(ap);
}

/* One event; the list is comma-separated. */
static void ev(tbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);

static void ev(tbuf *b, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    tb(b, "%s\n{%s}", b->events++ ? "," : "", line);
}

static double us(nsim_time ps) { return (double)ps / 1e6; }

static const char *prim_name(uint8_t prim)
{
    switch (prim & (NSIM_PRIM_RECV | NSIM_PRIM_SEND)) {
    case NSIM_PRIM_SEND:
        return "send";
    case NSIM_PRIM_RECV:
        return prim & NSIM_PRIM_COPY_OUT ? "recv+copy" : "recv";
    default:
        return prim & NSIM_PRIM_REDUCE ? "recvReduceSend" : "recvCopySend";
    }
}

static uint32_t lane_pid(const nsim_plan *p, uint32_t li)
{
    uint32_t r = p->lanes[li].rank;
    return r < p->nranks ? r : p->nranks;
}

/* The lane's k-th send (or receive) connection, as the executor orders
 * them: the first, then the tree's further ones. */
static uint32_t lane_conn(const nsim_plan_lane *l, int send, uint32_t k)
{
    uint32_t first = send ? l->send_conn : l->recv_conn;
    const uint32_t *more = send ? l->send_more : l->recv_more;
    uint32_t nmore = send ? l->nsend_more : l->nrecv_more;
    if (first == UINT32_MAX)
        return k < nmore ? more[k] : UINT32_MAX;
    if (k == 0)
        return first;
    return k - 1 < nmore ? more[k - 1] : UINT32_MAX;
}

static uint32_t lane_nconns(const nsim_plan_lane *l, int send)
{
    uint32_t first = send ? l->send_conn : l->recv_conn;
    return (first != UINT32_MAX) + (send ? l->nsend_more : l->nrecv_more);
}

/* Flow arrows: the i-th slice sent on a connection is the i-th one its
 * receiver takes. Per connection, the spans of its sends and receives in
 * start order. */
typedef struct flow_end {
    uint32_t span;
    nsim_time at;
} flow_end;

typedef struct flows {
    flow_end **send, **recv;
    uint64_t *nsend, *nrecv, *cap_s, *cap_r;
} flows;

static int push_end(flow_end **v, uint64_t *n, uint64_t *cap, uint32_t span,
                    nsim_time at)
{
    if (*n == *cap) {
        uint64_t c = *cap ? *cap * 2 : 64;
        flow_end *g = realloc(*v, c * sizeof *g);
        if (g == NULL)
            return NSIM_ENOMEM;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = (flow_end){span, at};
    return NSIM_OK;
}

static int end_cmp(const void *a, const void *b)
{
    const flow_end *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->span < y->span ? -1 : x->span > y->span;
}

static void flows_free(flows *f, uint32_t n)
{
    for (uint32_t i = 0; f->send && i < n; i++) {
        free(f->send[i]);
        free(f->recv[i]);
    }
    free(f->send);
    free(f->recv);
    free(f->nsend);
    free(f->nrecv);
    free(f->cap_s);
    free(f->cap_r);
}

static int collect_flows(const nsim_plan *p, const nsim_exec_result *r,
                         flows *f)
{
    uint32_t n = p->nconns;
    f->send = calloc(n + 1, sizeof *f->send);
    f->recv = calloc(n + 1, sizeof *f->recv);
    f->nsend = calloc(n + 1, sizeof *f->nsend);
    f->nrecv = calloc(n + 1, sizeof *f->nrecv);
    f->cap_s = calloc(n + 1, sizeof *f->cap_s);
    f->cap_r = calloc(n + 1, sizeof *f->cap_r);
    if (!f->send || !f->recv || !f->nsend || !f->nrecv || !f->cap_s || !f->cap_r)
        return NSIM_ENOMEM;
    for (uint64_t i = 0; i < r->nspans; i++) {
        const nsim_op_span *s = &r->spans[i];
        const nsim_plan_lane *l = &p->lanes[s->lane];
        const nsim_plan_op *op = nsim_plan_lane_op(l, s->op);
        for (int send = 0; send < 2; send++) {
            if (!(op->prim & (send ? NSIM_PRIM_SEND : NSIM_PRIM_RECV)))
                continue;
            uint32_t nc = lane_nconns(l, send), k0 = 0, k1 = nc;
            if (l->per_step_conns) {
                k0 = op->step < nc ? op->step : nc;
                k1 = op->step < nc ? op->step + 1u : nc;
            }
            for (uint32_t k = k0; k < k1; k++) {
                uint32_t c = lane_conn(l, send, k);
                if (c >= n)
                    continue;
                int rc = send ? push_end(&f->send[c], &f->nsend[c],
                                         &f->cap_s[c], (uint32_t)i, s->start_ps)
                              : push_end(&f->recv[c], &f->nrecv[c],
                                         &f->cap_r[c], (uint32_t)i, s->start_ps);
                if (rc != NSIM_OK)
                    return rc;
            }
        }
    }
    for (uint32_t c = 0; c < n; c++) {
        if (f->nsend[c] > 1)
            qsort(f->send[c], f->nsend[c], sizeof *f->send[c], end_cmp);
        if (f->nrecv[c] > 1)
            qsort(f->recv[c], f->nrecv[c], sizeof *f->recv[c], end_cmp);
    }
    return NSIM_OK;
}

static const char *dev_name(const nsim_topo *t, uint32_t d)
{
    return d < nsim_topo_ndevices(t) ? nsim_topo_device(t, d)->name : "?";
}

static void metadata(tbuf *b, const nsim_topo *t, const nsim_plan *p,
                     const nsim_exec_result *r, const uint8_t *conn_used,
                     const uint8_t *rank_used)
{
    uint32_t fabric = p->nranks + 1;
    for (uint32_t rank = 0; rank <= p->nranks; rank++) {
        if (!rank_used[rank])
            continue; /* a folded run's ranks not played: no tracks */
        ev(b, "\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, "
              "\"args\": {\"name\": \"%s %u\"}",
           rank, rank < p->nranks ? "rank" : "NVLS switch", rank);
        ev(b, "\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, "
              "\"args\": {\"sort_index\": %u}", rank, rank);
    }
    ev(b, "\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"args\": "
          "{\"name\": \"fabric: links and NIC ports\"}", fabric);
    ev(b, "\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, "
          "\"args\": {\"sort_index\": %u}", fabric, fabric);
    for (uint32_t li = 0; li < p->nlanes; li++) {
        ev(b, "\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": "
              "%u, \"args\": {\"name\": \"channel %u thread block%s\"}",
           lane_pid(p, li), li, p->lanes[li].channel,
           p->lanes[li].shares_sm ? " (shared)" : "");
        ev(b, "\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": %u, "
              "\"tid\": %u, \"args\": {\"sort_index\": %u}",
           lane_pid(p, li), li, li);
    }
    for (uint32_t c = 0; c < p->nconns; c++) {
        const nsim_plan_conn *pc = &p->conns[c];
        if (pc->transport != NSIM_TRANSPORT_NET || !conn_used[c])
            continue;
        for (int side = 0; side < 2; side++) {
            uint32_t pid = side ? pc->to : pc->from;
            ev(b, "\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, "
                  "\"tid\": %u, \"args\": {\"name\": \"NET conn %u ch %u "
                  "%u->%u %s\"}",
               pid, TID_CONN + c, c, pc->channel, pc->from, pc->to,
               dev_name(t, side ? pc->recv_nic : pc->send_nic));
            ev(b, "\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": "
                  "%u, \"tid\": %u, \"args\": {\"sort_index\": %u}",
               pid, TID_CONN + c, TID_CONN + c * 256);
        }
    }
    (void)r;
}

/* The work requests: a slice on the sender's QP track from the post to
 * the send completion; the receive completion an instant on the
 * receiver's; retransmissions and CTS arrivals instants; slots in flight
 * and link busy fractions counters. */
/* Pairs each post with its send completion: the records of one WR sorted
 * by (conn, slice, piece, time); a post's end is the first completion
 * after it before the next post (posted again after a failover). */
static const nsim_trec *sort_base;

static int wr_cmp(const void *a, const void *b)
{
    const nsim_trec *x = &sort_base[*(const size_t *)a];
    const nsim_trec *y = &sort_base[*(const size_t *)b];
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    if (x->slice != y->slice)
        return x->slice < y->slice ? -1 : 1;
    if (x->piece != y->piece)
        return x->piece < y->piece ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static nsim_time *wr_ends(const nsim_tlog *lg)
{
    size_t *idx = malloc((lg->n ? lg->n : 1) * sizeof *idx), m = 0;
    nsim_time *end = malloc((lg->n ? lg->n : 1) * sizeof *end);
    if (idx == NULL || end == NULL) {
        free(idx);
        free(end);
        return NULL;
    }
    for (size_t i = 0; i < lg->n; i++) {
        end[i] = NSIM_TIME_MAX;
        const nsim_trec *x = &lg->r[i];
        if (x->kind == NSIM_TR_WR_POST ||
            (x->kind == NSIM_TR_WR_DONE && x->side == 0))
            idx[m++] = i;
    }
    sort_base = lg->r;
    if (m > 1)
        qsort(idx, m, sizeof *idx, wr_cmp);
    for (size_t k = 0; k + 1 < m; k++) {
        const nsim_trec *x = &lg->r[idx[k]], *y = &lg->r[idx[k + 1]];
        if (x->kind == NSIM_TR_WR_POST && y->kind == NSIM_TR_WR_DONE &&
            x->conn == y->conn && x->slice == y->slice && x->piece == y->piece)
            end[idx[k]] = y->t;
    }
    free(idx);
    return end;
}

/* The rows of a QP's track: a WR goes on the first row free at its post;
 * a row's name is written the first time it is used. */
typedef struct qp_rows {
    nsim_time **end; /* per conn: nqps x SUBS, lazily */
    uint32_t n;
} qp_rows;

static uint32_t qp_tid(tbuf *b, qp_rows *q, const nsim_plan *p, uint32_t conn,
                       uint32_t qp, int side, nsim_time start, nsim_time end)
{
    const nsim_plan_conn *pc = &p->conns[conn];
    uint32_t nq = pc->nqps ? pc->nqps : 1;
    if (q->end[conn] == NULL) {
        q->end[conn] = malloc((size_t)nq * SUBS * 2 * sizeof **q->end);
        if (q->end[conn] == NULL) {
            b->text.oom = 1;
            return TID_QP;
        }
        for (size_t i = 0; i < (size_t)nq * SUBS * 2; i++)
            q->end[conn][i] = NSIM_TIME_MAX;
    }
    qp = qp < nq ? qp : nq - 1;
    nsim_time *row = &q->end[conn][((size_t)qp * 2 + (size_t)side) * SUBS];
    uint32_t s = 0;
    while (s + 1 < SUBS && row[s] != NSIM_TIME_MAX && row[s] > start)
        s++;
    uint32_t tid = TID_QP + ((conn * 256 + qp) * 2 + (uint32_t)side) * SUBS + s;
    if (row[s] == NSIM_TIME_MAX) /* first use: its name */
        ev(b, "\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, "
              "\"tid\": %u, \"args\": {\"name\": \"conn %u QP %u %s%s%u\"}",
           side ? pc->to : pc->from, tid, conn, qp,
           side ? "receiver" : "sender", s ? " #" : "", s ? s : 0);
    if (s + 1 == SUBS && row[s] != NSIM_TIME_MAX && row[s] > start)
        end = start; /* more in flight than rows: an instant-long slice */
    row[s] = end > row[s] || row[s] == NSIM_TIME_MAX ? end : row[s];
    return tid;
}

static int records(tbuf *b, const nsim_topo *t, const nsim_plan *p,
                   const nsim_tlog *lg, nsim_time sample_ps)
{
    uint32_t fabric = p->nranks + 1;
    nsim_time *ends = wr_ends(lg);
    qp_rows q = {calloc(p->nconns + 1, sizeof *q.end), p->nconns};
    if (ends == NULL || q.end == NULL) {
        free(ends);
        free(q.end);
        return NSIM_ENOMEM;
    }
    for (size_t i = 0; i < lg->n; i++) {
        const nsim_trec *x = &lg->r[i];
        const nsim_plan_conn *pc = x->kind == NSIM_TR_LINK || x->conn >= p->nconns
                                       ? NULL : &p->conns[x->conn];
        if (x->kind != NSIM_TR_LINK && pc == NULL)
            continue;
        switch (x->kind) {
        case NSIM_TR_WR_POST: {
            int found = ends[i] != NSIM_TIME_MAX;
            nsim_time end = found ? ends[i] : x->t;
            uint32_t tid = qp_tid(b, &q, p, x->conn, x->qp, 0, x->t, end);
            ev(b, "\"name\": \"WRITE_WITH_IMM slice %llu.%u\", \"cat\": "
                  "\"wr\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": "
                  "%.6f, \"dur\": %.6f, \"args\": {\"bytes\": %llu, "
                  "\"completed\": %s}",
               (unsigned long long)x->slice, x->piece, pc->from, tid,
               us(x->t), us(end - x->t), (unsigned long long)x->val,
               found ? "true" : "false");
            break;
        }
        case NSIM_TR_WR_DONE:
            ev(b, "\"name\": \"%s CQE slice %llu.%u\", \"cat\": \"cqe\", "
                  "\"ph\": \"i\", \"s\": \"t\", \"pid\": %u, \"tid\": %u, "
                  "\"ts\": %.6f",
               x->side ? "recv" : "send", (unsigned long long)x->slice,
               x->piece, x->side ? pc->to : pc->from,
               qp_tid(b, &q, p, x->conn, x->qp, x->side, x->t, x->t), us(x->t));
            break;
        case NSIM_TR_RETX:
            ev(b, "\"name\": \"retransmission\", \"cat\": \"retx\", \"ph\": "
                  "\"i\", \"s\": \"t\", \"pid\": %u, \"tid\": %u, \"ts\": "
                  "%.6f, \"args\": {\"retransmits_so_far\": %llu}",
               pc->from, qp_tid(b, &q, p, x->conn, x->qp, 0, x->t, x->t),
               us(x->t), (unsigned long long)x->val);
            break;
        case NSIM_TR_CTS:
            ev(b, "\"name\": \"CTS %llu\", \"cat\": \"cts\", \"ph\": \"i\", "
                  "\"s\": \"t\", \"pid\": %u, \"tid\": %u, \"ts\": %.6f",
               (unsigned long long)x->slice, pc->from, TID_CONN + x->conn,
               us(x->t));
            break;
        case NSIM_TR_CREDIT:
            ev(b, "\"name\": \"conn %u slots in flight\", \"cat\": "
                  "\"credits\", \"ph\": \"C\", \"pid\": %u, \"ts\": %.6f, "
                  "\"args\": {\"slots\": %llu}",
               x->conn, pc->from, us(x->t), (unsigned long long)x->val);
            break;
        case NSIM_TR_LINK: {
            const nsim_link *l = nsim_topo_link(t, x->conn);
            int port = nsim_topo_device(t, l->src)->type == NSIM_DEV_NIC;
            ev(b, "\"name\": \"%s %s->%s busy %%\", \"cat\": \"link\", "
                  "\"ph\": \"C\", \"pid\": %u, \"ts\": %.6f, \"args\": "
                  "{\"busy\": %.1f}",
               port ? "port" : "link", dev_name(t, l->src), dev_name(t, l->dst),
               fabric, us(x->t - sample_ps), (double)x->val / 10);
            break;
        }
        }
    }
    free(ends);
    for (uint32_t c = 0; c < q.n; c++)
        free(q.end[c]);
    free(q.end);
    return NSIM_OK;
}

int nsim_trace_write(const char *path, const nsim_topo *t, const nsim_plan *p,
                     const nsim_exec_result *r, size_t cap, nsim_err *err)
{
    tbuf b = {0};
    flows f = {0};
    uint8_t *used = calloc(p->nconns + 1, 1);
    uint8_t *rank_used = calloc(p->nranks + 1, 1);
    uint32_t nhosts = nsim_topo_nhosts(t), played = 0;
    uint8_t *host_played = calloc(nhosts + 1, 1);
    cap = cap ? cap : DEFAULT_CAP;
    if (used == NULL || rank_used == NULL || host_played == NULL ||
        collect_flows(p, r, &f) != NSIM_OK) {
        free(used);
        free(rank_used);
        free(host_played);
        flows_free(&f, p->nconns);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    /* the ranks with tracks: every rank, or in a compact plan (a run that
     * folded) the played hosts' and their connections' peers */
    memset(rank_used, !p->req.compact_ops, p->nranks);
    rank_used[p->nranks] = 1;
    for (uint32_t li = 0; li < p->nlanes; li++) {
        uint32_t rank = p->lanes[li].rank;
        if (rank >= p->nranks)
            continue;
        rank_used[rank] = 1;
        int32_t h = nsim_topo_device(t, nsim_topo_rank_device(t, rank))->host;
        if (h >= 0 && (uint32_t)h < nhosts && !host_played[h]) {
            host_played[h] = 1;
            played++;
        }
    }
    for (uint32_t c = 0; c < p->nconns; c++) {
        if (p->conns[c].from < p->nranks)
            rank_used[p->conns[c].from] = 1;
        if (p->conns[c].to < p->nranks)
            rank_used[p->conns[c].to] = 1;
    }
    free(host_played);
    const nsim_tlog *lg = r->tlog;
    size_t nrec = lg ? lg->n : 0;
    for (size_t i = 0; i < nrec; i++)
        if (lg->r[i].kind != NSIM_TR_LINK && lg->r[i].conn < p->nconns)
            used[lg->r[i].conn] = 1;
    /* the op spans over the cap are sampled: every stride-th op of a
     * thread block is kept, with its flows */
    uint64_t want = r->nspans * 3 + nrec, stride = 1;
    while (want / stride > cap)
        stride *= 2;
    int folded = p->req.compact_ops && played < nhosts;
    char fold_data[96] = "";
    if (folded)
        snprintf(fold_data, sizeof fold_data,
                 "\"hosts_played\": %u, \"hosts\": %u, ", played, nhosts);
    tb(&b, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"generator\": "
           "\"ncclsim\", %s\"ops\": %llu, \"op_stride\": %llu, "
           "\"model_records\": %zu, \"model_records_dropped\": %llu, "
           "\"model_slice_stride\": %llu, \"link_sample_us\": %.3f, "
           "\"note\": \"%s\"},\n\"traceEvents\": [",
       fold_data, (unsigned long long)r->nspans, (unsigned long long)stride, nrec,
       (unsigned long long)(lg ? lg->dropped : 0),
       (unsigned long long)(lg ? lg->stride : 1), us(r->link_sample_ps),
       stride > 1 || (lg && (lg->dropped || lg->oom))
           ? "sampled to fit the size cap: one op in op_stride per thread "
             "block, and the model's records of one slice in "
             "model_slice_stride (see --trace-cap)"
           : "complete");
    metadata(&b, t, p, r, used, rank_used);
    free(rank_used);
    if (folded)
        ev(&b, "\"name\": \"folded: %u of %u hosts played, each doing its "
               "twins' work (--fold off: every host)\", \"cat\": \"note\", "
               "\"ph\": \"i\", \"s\": \"g\", \"pid\": 0, \"tid\": 0, "
               "\"ts\": 0",
           played, nhosts);
    if (stride > 1 || (lg && (lg->dropped || lg->oom)))
        ev(&b, "\"name\": \"trace sampled (size cap): 1 op in %llu, model "
               "records of 1 slice in %llu\", \"cat\": \"note\", \"ph\": "
               "\"i\", \"s\": \"g\", \"pid\": 0, \"tid\": 0, \"ts\": 0",
           (unsigned long long)stride,
           (unsigned long long)(lg ? lg->stride : 1));
    for (uint64_t i = 0; i < r->nspans; i++) {
        const nsim_op_span *s = &r->spans[i];
        const nsim_plan_lane *l = &p->lanes[s->lane];
        const nsim_plan_op *op = nsim_plan_lane_op(l, s->op);
        if (s->op % stride != 0)
            continue;
        if (p->req.compact_ops) /* no placement: no chunk to name */
            ev(&b, "\"name\": \"%s\", \"cat\": \"op\", \"ph\": \"X\", "
                   "\"pid\": %u, \"tid\": %u, \"ts\": %.6f, \"dur\": %.6f, "
                   "\"args\": {\"bytes\": %llu, \"step\": %u, \"op\": %u}",
               prim_name(op->prim), lane_pid(p, s->lane), s->lane,
               us(s->start_ps), us(s->end_ps - s->start_ps),
               (unsigned long long)op->bytes, op->step, s->op);
        else
            ev(&b, "\"name\": \"%s\", \"cat\": \"op\", \"ph\": \"X\", "
                   "\"pid\": %u, \"tid\": %u, \"ts\": %.6f, \"dur\": %.6f, "
                   "\"args\": {\"bytes\": %llu, \"step\": %u, \"chunk\": "
                   "%u, \"op\": %u}",
               prim_name(op->prim), lane_pid(p, s->lane), s->lane,
               us(s->start_ps), us(s->end_ps - s->start_ps),
               (unsigned long long)op->bytes, op->step, op->chunk, s->op);
    }
    uint64_t id = 0;
    for (uint32_t c = 0; c < p->nconns; c++) {
        uint64_t n = f.nsend[c] < f.nrecv[c] ? f.nsend[c] : f.nrecv[c];
        for (uint64_t k = 0; k < n; k++) {
            const nsim_op_span *a = &r->spans[f.send[c][k].span];
            const nsim_op_span *z = &r->spans[f.recv[c][k].span];
            if (a->op % stride != 0 || z->op % stride != 0)
                continue;
            ev(&b, "\"name\": \"slice\", \"cat\": \"flow\", \"ph\": \"s\", "
                   "\"id\": %llu, \"pid\": %u, \"tid\": %u, \"ts\": %.6f",
               (unsigned long long)id, lane_pid(p, a->lane), a->lane,
               us(a->start_ps));
            ev(&b, "\"name\": \"slice\", \"cat\": \"flow\", \"ph\": \"f\", "
                   "\"bp\": \"e\", \"id\": %llu, \"pid\": %u, \"tid\": %u, "
                   "\"ts\": %.6f",
               (unsigned long long)id, lane_pid(p, z->lane), z->lane,
               us(z->start_ps));
            id++;
        }
    }
    if (lg != NULL && records(&b, t, p, lg, r->link_sample_ps) != NSIM_OK)
        b.text.oom = 1;
    tb(&b, "\n]}\n");
    flows_free(&f, p->nconns);
    free(used);
    if (b.text.oom) {
        free(b.text.s);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    int rc = nsim_write_file_atomic(path, b.text.s, b.text.len, err);
    free(b.text.s);
    return rc;
}
