/* SPDX-License-Identifier: MIT
 *
 * exec.c - plays a plan on the simulated models (see exec.h).
 */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/fabric.h"
#include "models/tracelog.h"
#include "models/transport.h"
#include "sim/core/hugemem.h"
#include "sim/core/memavail.h"
#include "sim/core/units.h"

#define LANE_CONNS (1 + NSIM_LANE_MORE_CONNS)

/* A thread block's state. At scale (tens of thousands of lanes) the
 * lanes no longer stay in cache between two ops of one lane, so what an
 * op reads and writes is packed into the first two lines, with the plan
 * lane's fields an op needs copied in (its 176-byte lane is not read
 * while running): line 0 the op's state, line 1 the statistics and the
 * first two connections of each side (a ring's only ones), side by side. */
typedef struct lane_rt {
    const nsim_plan_op *ops; /* the plan lane's */
    uint32_t nops, op;
    uint32_t patch_at;       /* the plan lane's next patched op, or none */
    uint32_t rank;           /* the plan lane's */
    uint8_t busy;
    uint8_t per_step_conns;  /* the plan lane's (PAT) */
    uint8_t nrecv, nsend;
    uint32_t sm_server;
    double sm_bw;
    nsim_time waiting_since; /* blocked on a send slot since */
    nsim_time op_start;      /* when the current op started */
    nsim_time idle_since;    /* idle (between ops) since */
    nsim_time pending_send_wait; /* of that idle time, waiting for a slot */
    nsim_lane_stats st;
    /* connections: conn[k][0] the k-th receive, conn[k][1] the k-th send */
    uint32_t conn[LANE_CONNS][2];
    const nsim_plan_lane *pl;
} __attribute__((aligned(64))) lane_rt;
_Static_assert(LANE_CONNS < 256, "lane_rt counts connections in a byte");

/* The lane's current op: its array's, or a patch (plan.h). */
static inline const nsim_plan_op *lane_op(const lane_rt *l)
{
    return l->op == l->patch_at ? nsim_plan_lane_op(l->pl, l->op)
                                : &l->ops[l->op];
}

/* The plan lane's first patched op at or after the current one. */
static void lane_find_patch(lane_rt *l)
{
    const nsim_plan_lane *pl = l->pl;
    uint32_t i = nsim_plan_lane_patch_from(pl, l->op);
    l->patch_at = i < pl->npatch ? pl->patch[i].at : UINT32_MAX;
}

/* Past the current op (and past its patch, where it had one). */
static inline void lane_next_op(lane_rt *l)
{
    if (l->op++ == l->patch_at)
        lane_find_patch(l);
}

#define LANE_RECV(l, k) ((l)->conn[k][0])
#define LANE_SEND(l, k) ((l)->conn[k][1])

/* A connection's executor state, a line for each side: the sender's
 * events (a send, a credit) touch line 0, the receiver's (a slice
 * visible, consumed) line 1, each with the transport's ops and state.
 * The slice counts of the statistics are sent and consumed. */
typedef struct conn_rt {
    /* sender */
    const nsim_transport_ops *ops;
    void *state;
    uint64_t sent, credits;
    uint64_t bytes;              /* handed to the transport */
    nsim_time blocked_credit_ps; /* waited for a free slot */
    uint32_t send_lane;
    /* a folded tree's phantom sender (its rank is not its send lane's):
     * its own GPU's thread block, which the lane does not wait for;
     * UINT32_MAX: the lane's */
    uint32_t sm_server;
    /* the send lane waits for a credit here: the next credit retries it
     * (when it does not wait here, it is busy or waits elsewhere, and a
     * retry would only read its line) */
    uint8_t send_wait;
    /* receiver */
    _Alignas(64) const nsim_transport_ops *rops;
    void *rstate;
    uint64_t visible, consumed;
    uint64_t recv_bytes; /* consumed by the receiver */
    uint32_t recv_lane;
    uint8_t net; /* over the NET transport (the plan's, for the step sync) */
    uint8_t recv_wait; /* the receive lane waits for a slice here */
} __attribute__((aligned(64))) conn_rt;
_Static_assert(sizeof(conn_rt) == 128, "a connection is two lines");

typedef struct exec {
    nsim_sim *sim;
    nsim_fabric *fab;
    const nsim_plan *plan;
    nsim_xport_env env;
    lane_rt *lanes;
    conn_rt *conns;
    uint32_t nlanes, lanes_left;
    uint32_t max_inflight;
    nsim_time finish;
    uint8_t *started; /* per rank: its kernel has been launched */
    nsim_op_span *spans; /* want_trace: preallocated, one per op */
    uint64_t nspans;
    uint32_t gpus_per_thread;
    nsim_time launch_ps;
    void *shared[3]; /* per transport: P2P, NET, NVLS */
    int inited[3];
    nsim_tlog *tlog;        /* want_trace: the models' records */
    uint32_t *net_links;    /* want_trace: network links sampled */
    nsim_time *link_busy;   /* their busy time at the last sample */
    uint32_t nnet_links;
    uint64_t nsamples;
    nsim_time sample_ps;
} exec;

static const nsim_transport_ops *const transports[3] = {
    &nsim_p2p_transport, &nsim_net_transport, &nsim_nvls_transport};

static void lane_try(exec *ex, uint32_t li);

/* The connections op uses among the lane's n: all of them, or (PAT)
 * only the one of its phase. */
static void op_conns(const lane_rt *l, const nsim_plan_op *op, uint32_t n,
                     uint32_t *k0, uint32_t *k1)
{
    *k0 = 0;
    *k1 = n;
    if (l->per_step_conns) {
        *k0 = op->step < n ? op->step : n;
        *k1 = op->step < n ? op->step + 1u : n;
    }
}

static void on_lane_done(nsim_sim *sim, nsim_event *ev)
{
    exec *ex = ev->target;
    uint32_t li = (uint32_t)ev->arg.u64;
    lane_rt *l = &ex->lanes[li];
    const nsim_plan_op *op = lane_op(l);
    uint32_t k0, k1;
    op_conns(l, op, l->nrecv, &k0, &k1);
    l->busy = 0;
    l->st.busy_ps += nsim_sim_now(sim) - l->op_start;
    l->st.last_end_ps = nsim_sim_now(sim);
    l->idle_since = nsim_sim_now(sim);
    if (ex->spans != NULL)
        ex->spans[ex->nspans++] = (nsim_op_span){li, l->op, l->op_start,
                                                 nsim_sim_now(sim)};
    for (uint32_t k = k0; (op->prim & NSIM_PRIM_RECV) && k < k1; k++) {
        conn_rt *c = &ex->conns[LANE_RECV(l, k)];
        c->consumed++;
        c->recv_bytes += op->bytes;
        if (c->rops->consumed(c->rstate) != NSIM_OK) {
            nsim_sim_fail(sim, NSIM_ENOMEM, "executor: out of memory");
            return;
        }
    }
    lane_next_op(l);
    if (l->op == l->nops) {
        ex->lanes_left--;
        if (nsim_sim_now(sim) > ex->finish)
            ex->finish = nsim_sim_now(sim);
        return;
    }
    lane_try(ex, li);
}

/* Can op start now (its slice visible on every receive connection, a
 * free slot on every send connection)? Records when a sender starts
 * waiting for a slot; the wait is charged to the first connection. */
static int op_ready(exec *ex, lane_rt *l, const nsim_plan_op *op)
{
    uint32_t k0, k1;
    op_conns(l, op, l->nrecv, &k0, &k1);
    for (uint32_t k = k0; (op->prim & NSIM_PRIM_RECV) && k < k1; k++) {
        conn_rt *c = &ex->conns[LANE_RECV(l, k)];
        if (c->visible <= c->consumed) {
            c->recv_wait = 1;
            return 0;
        }
    }
    if (op->prim & NSIM_PRIM_SEND) {
        op_conns(l, op, l->nsend, &k0, &k1);
        for (uint32_t k = k0; k < k1; k++) {
            conn_rt *s = &ex->conns[LANE_SEND(l, k)];
            if (s->sent - s->credits < ex->max_inflight)
                continue;
            s->send_wait = 1;
            if (l->waiting_since == NSIM_TIME_MAX)
                l->waiting_since = nsim_sim_now(ex->sim);
            return 0;
        }
        conn_rt *c = &ex->conns[LANE_SEND(l, k0)];
        if (l->waiting_since != NSIM_TIME_MAX) {
            nsim_time w = nsim_sim_now(ex->sim) - l->waiting_since;
            c->blocked_credit_ps += w;
            l->st.wait_send_ps += w;
            l->pending_send_wait += w;
            l->waiting_since = NSIM_TIME_MAX;
        }
    }
    return 1;
}

static void lane_try(exec *ex, uint32_t li)
{
    lane_rt *l = &ex->lanes[li];
    if (l->busy || l->op >= l->nops)
        return;
    if (l->rank < ex->plan->nranks && !ex->started[l->rank])
        return; /* its kernel is not launched yet */
    const nsim_plan_op *op = lane_op(l);
    if (!op_ready(ex, l, op))
        return;
    nsim_time done = nsim_sim_now(ex->sim);
    if (op->prim & NSIM_PRIM_SEND) {
        /* one store stream per destination, through the same block */
        uint32_t k0, k1;
        op_conns(l, op, l->nsend, &k0, &k1);
        for (uint32_t k = k0; k < k1; k++) {
            conn_rt *c = &ex->conns[LANE_SEND(l, k)];
            c->sent++;
            if (ex->tlog != NULL)
                nsim_tlog_add(ex->tlog, &(nsim_trec){
                    .t = nsim_sim_now(ex->sim), .slice = c->sent,
                    .val = c->sent - c->credits, .conn = LANE_SEND(l, k),
                    .kind = NSIM_TR_CREDIT});
            c->bytes += op->bytes;
            nsim_time phantom_done = done;
            if (c->ops->send(c->state,
                             c->sm_server == UINT32_MAX ? l->sm_server
                                                        : c->sm_server,
                             nsim_plan_wire_bytes(ex->plan, op->bytes),
                             c->sm_server == UINT32_MAX ? &done
                                                        : &phantom_done) !=
                NSIM_OK) {
                nsim_sim_fail(ex->sim, NSIM_ENOMEM, "executor: out of memory");
                return;
            }
        }
    } else {
        /* final receive: the thread block copies the slice out locally */
        done += nsim_xfer_ps(op->bytes, l->sm_bw);
    }
    l->busy = 1;
    l->op_start = nsim_sim_now(ex->sim);
    /* the idle time before this op that was not a wait for a slot was
     * a wait for the slice to arrive (or, before the first op, the
     * launch) */
    if (l->op == 0)
        l->st.first_start_ps = l->op_start;
    if (l->idle_since != NSIM_TIME_MAX) {
        nsim_time idle = l->op_start - l->idle_since;
        l->st.wait_recv_ps += idle > l->pending_send_wait
                                  ? idle - l->pending_send_wait : 0;
    }
    l->pending_send_wait = 0;
    if (nsim_sim_schedule_at(ex->sim, done, on_lane_done, ex, 0, li, NULL))
        nsim_sim_fail(ex->sim, NSIM_ENOMEM, "executor: out of memory");
}

static void on_visible(nsim_sim *sim, nsim_event *ev)
{
    exec *ex = ev->target;
    conn_rt *c = &ex->conns[ev->arg.u64];
    (void)sim;
    c->visible++;
    if (c->recv_wait) {
        c->recv_wait = 0;
        lane_try(ex, c->recv_lane);
    }
}

/* The receiver sees the slice once the sender's tail store and its own
 * poll have happened (the protocol's step sync on this connection). */
static void cb_arrived(void *vex, uint32_t conn)
{
    exec *ex = vex;
    nsim_time sync = nsim_params_step_sync_ps(
        ex->env.params, ex->plan->req.proto, ex->conns[conn].net);
    if (nsim_sim_schedule(ex->sim, sync, on_visible, ex, 0, conn, NULL) !=
        NSIM_OK)
        nsim_sim_fail(ex->sim, NSIM_ENOMEM, "executor: out of memory");
}

static void cb_credit(void *vex, uint32_t conn)
{
    exec *ex = vex;
    conn_rt *c = &ex->conns[conn];
    c->credits++;
    if (ex->tlog != NULL)
        nsim_tlog_add(ex->tlog, &(nsim_trec){
            .t = nsim_sim_now(ex->sim), .slice = c->credits,
            .val = c->sent - c->credits, .conn = conn,
            .kind = NSIM_TR_CREDIT});
    if (c->send_wait) {
        c->send_wait = 0;
        lane_try(ex, c->send_lane);
    }
}

/* The trace has one span per op: allocated once, before the run. */
static int alloc_spans(exec *ex, nsim_err *err)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < ex->nlanes; i++)
        n += ex->lanes[i].nops;
    ex->spans = malloc((n ? n : 1) * sizeof *ex->spans);
    if (ex->spans == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory for the "
                                          "trace (%llu ops)",
                        (unsigned long long)n);
    return NSIM_OK;
}

/* The kernels have been launched: every rank starts. */
static void on_start(nsim_sim *sim, nsim_event *ev)
{
    exec *ex = ev->target;
    (void)sim;
    memset(ex->started, 1, ex->plan->nranks);
    for (uint32_t i = 0; i < ex->nlanes; i++)
        ex->lanes[i].idle_since = nsim_sim_now(sim);
    for (uint32_t i = 0; i < ex->nlanes; i++)
        lane_try(ex, i);
}

/* Every GPU's kernel starts one launch (kernel_launch_ps, hardware-facts
 * 5: host submit + GPU start) after the op is issued. */
static int schedule_launches(exec *ex, const nsim_params *params,
                             nsim_err *err)
{
    ex->started = calloc(ex->plan->nranks, 1);
    if (ex->started == NULL ||
        nsim_sim_schedule(ex->sim, params->kernel_launch_ps, on_start, ex, 0,
                          0, NULL) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    return NSIM_OK;
}

/* want_trace: every sample_ps, each network link's busy fraction since
 * the last sample (the trace's link and NIC port counters). */
static void on_sample(nsim_sim *sim, nsim_event *ev)
{
    exec *ex = ev->target;
    ex->nsamples++;
    for (uint32_t i = 0; i < ex->nnet_links; i++) {
        nsim_time b = nsim_fabric_stats(ex->fab, ex->net_links[i]).busy_ps;
        nsim_time d = b - ex->link_busy[i];
        uint64_t pm = d >= ex->sample_ps ? 1000 : d * 1000 / ex->sample_ps;
        ex->link_busy[i] = b;
        nsim_tlog_add(ex->tlog, &(nsim_trec){.t = nsim_sim_now(sim),
                                             .slice = ex->nsamples, .val = pm,
                                             .conn = ex->net_links[i],
                                             .kind = NSIM_TR_LINK});
    }
    if (ex->lanes_left > 0 &&
        nsim_sim_schedule(sim, ex->sample_ps, on_sample, ex, 0, 0, NULL))
        nsim_sim_fail(sim, NSIM_ENOMEM, "executor: out of memory");
}

static int start_trace(exec *ex, nsim_topo *topo, const nsim_exec_opts *o,
                       nsim_err *err)
{
    uint32_t n = nsim_topo_nlinks(topo);
    if (nsim_tlog_create(o->trace_cap, &ex->tlog) != NSIM_OK ||
        (ex->net_links = malloc((n ? n : 1) * sizeof *ex->net_links)) == NULL ||
        (ex->link_busy = calloc(n ? n : 1, sizeof *ex->link_busy)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory for the "
                                          "trace");
    for (uint32_t i = 0; i < n; i++) {
        nsim_link_type ty = nsim_topo_link(topo, i)->type;
        if (ty == NSIM_LINK_IB || ty == NSIM_LINK_ROCE || ty == NSIM_LINK_ETH)
            ex->net_links[ex->nnet_links++] = i;
    }
    ex->env.tlog = ex->tlog;
    ex->sample_ps = 1000000; /* 1 us */
    if (ex->nnet_links > 0 &&
        nsim_sim_schedule(ex->sim, ex->sample_ps, on_sample, ex, 0, 0, NULL))
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    return NSIM_OK;
}

static const nsim_net_knobs default_knobs = NSIM_NET_KNOBS_DEFAULT;
static const nsim_fault_plan no_faults = {NULL, 0, {NSIM_FAILOVER_REBIND_QP}};

/* A fault of the plan strikes: links change here, the rest is the
 * transports' (QPs, ports, loss). */
static void on_fault(nsim_sim *sim, nsim_event *ev)
{
    exec *ex = ev->target;
    const nsim_fault *f = &ex->env.faults->faults[ev->arg.u64];
    const nsim_link *l;
    switch (f->kind) {
    case NSIM_FAULT_LINK_DOWN:
    case NSIM_FAULT_LINK_DEGRADED:
        l = nsim_topo_link(ex->env.topo, f->link);
        for (int d = 0; d < 2; d++) {
            uint32_t id = nsim_fabric_link_server(d ? l->reverse : f->link);
            if (f->kind == NSIM_FAULT_LINK_DOWN)
                nsim_fabric_set_down(ex->fab, id, 1);
            else
                nsim_fabric_set_bw(ex->fab, id, f->bw);
        }
        break;
    default:
        for (int k = 0; k < 2; k++)
            if (ex->inited[k] && transports[k]->fault != NULL &&
                transports[k]->fault(ex->shared[k], f) != NSIM_OK)
                nsim_sim_fail(sim, NSIM_ENOMEM, "executor: out of memory");
        break;
    }
}

static int schedule_faults(exec *ex, nsim_err *err)
{
    const nsim_fault_plan *fp = ex->env.faults;
    for (uint32_t i = 0; i < fp->nfaults; i++) {
        const nsim_fault *f = &fp->faults[i];
        /* small sizes use fewer channels: a fault on an unused channel
         * has nothing to hit */
        if (f->channel >= 0 && (uint32_t)f->channel >= ex->plan->nchannels)
            continue;
        if (nsim_sim_schedule_at(ex->sim, f->at_ps, on_fault, ex, 0, i, NULL))
            return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    }
    return NSIM_OK;
}

/* The lane's receive and send connections: the first (ring: the only)
 * one, then a tree node's further children. */
static void lane_conns(lane_rt *l)
{
    const nsim_plan_lane *pl = l->pl;
    l->ops = pl->ops;
    l->nops = pl->nops;
    lane_find_patch(l);
    l->rank = pl->rank;
    l->per_step_conns = pl->per_step_conns != 0;
    if (pl->recv_conn != UINT32_MAX)
        LANE_RECV(l, l->nrecv++) = pl->recv_conn;
    for (uint32_t k = 0; k < pl->nrecv_more; k++)
        LANE_RECV(l, l->nrecv++) = pl->recv_more[k];
    if (pl->send_conn != UINT32_MAX)
        LANE_SEND(l, l->nsend++) = pl->send_conn;
    for (uint32_t k = 0; k < pl->nsend_more; k++)
        LANE_SEND(l, l->nsend++) = pl->send_more[k];
}

static int setup(exec *ex, nsim_topo *topo, const nsim_params *params,
                 const nsim_exec_opts *opts, nsim_err *err)
{
    const nsim_net_knobs *net = opts->net;
    const nsim_plan *p = ex->plan;
    ex->nlanes = p->nlanes;
    ex->lanes = nsim_line_calloc(ex->nlanes, sizeof *ex->lanes);
    ex->conns = nsim_line_calloc(p->nconns, sizeof *ex->conns);
    if (ex->lanes == NULL || ex->conns == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    ex->max_inflight = NSIM_NCCL_STEPS / p->slice_steps;
    ex->env = (nsim_xport_env){ex->sim, ex->fab, topo, params, p,
                               net ? net : &default_knobs,
                               opts->faults ? opts->faults : &no_faults, ex,
                               cb_arrived, cb_credit};
    for (uint32_t i = 0; i < ex->nlanes; i++) {
        lane_rt *l = &ex->lanes[i];
        const nsim_device *g =
            nsim_topo_device(topo, nsim_topo_rank_device(topo, p->lanes[i].rank));
        l->pl = &p->lanes[i];
        l->sm_bw = nsim_params_sm_stream_bw(params, g->gen);
        l->waiting_since = NSIM_TIME_MAX;
        l->idle_since = NSIM_TIME_MAX;
        lane_conns(l);
        if (l->pl->shares_sm && i > 0)
            l->sm_server = ex->lanes[i - 1].sm_server;
        else if (nsim_fabric_add_server(ex->fab, l->sm_bw, 0, NSIM_WIRE_RAW,
                                        &l->sm_server) != NSIM_OK)
            return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
        if (l->pl->nops > 0)
            ex->lanes_left++;
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        conn_rt *c = &ex->conns[i];
        const nsim_plan_conn *pc = &p->conns[i];
        /* P2P 0, NET 1, NVLS 2; SHM is the P2P model through host memory */
        int k = pc->transport == NSIM_TRANSPORT_SHM ? 0 : (int)pc->transport;
        if (!ex->inited[k]) {
            NSIM_TRY(transports[k]->init(&ex->env, &ex->shared[k], err));
            ex->inited[k] = 1;
        }
        c->send_lane = pc->send_lane;
        c->recv_lane = pc->recv_lane;
        c->net = pc->transport == NSIM_TRANSPORT_NET;
        c->sm_server = UINT32_MAX;
        if (pc->send_lane < p->nlanes && pc->from < p->nranks &&
            p->lanes[pc->send_lane].rank != pc->from) {
            const nsim_device *g =
                nsim_topo_device(topo, nsim_topo_rank_device(topo, pc->from));
            if (nsim_fabric_add_server(ex->fab,
                                       nsim_params_sm_stream_bw(params, g->gen),
                                       0, NSIM_WIRE_RAW,
                                       &c->sm_server) != NSIM_OK)
                return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
        }
        NSIM_TRY(transports[k]->setup(ex->shared[k], &ex->env, i, &c->state,
                                      err));
        c->ops = c->rops = transports[k];
        c->rstate = c->state;
    }
    return NSIM_OK;
}

static void teardown(exec *ex)
{
    if (ex->conns != NULL)
        for (uint32_t i = 0; i < ex->plan->nconns; i++)
            if (ex->conns[i].ops != NULL)
                ex->conns[i].ops->teardown(ex->conns[i].state);
    for (int k = 0; k < 3; k++)
        if (ex->inited[k])
            transports[k]->fini(ex->shared[k]);
    free(ex->conns);
    free(ex->lanes);
    free(ex->started);
    free(ex->spans);
    nsim_tlog_destroy(ex->tlog);
    free(ex->net_links);
    free(ex->link_busy);
    nsim_fabric_destroy(ex->fab);
    nsim_sim_destroy(ex->sim);
}

static int collect_links(exec *ex, nsim_topo *topo, nsim_exec_result *res)
{
    uint32_t n = nsim_topo_nlinks(topo), k = 0;
    res->links = malloc((n ? n : 1) * sizeof *res->links);
    if (res->links == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        nsim_server_stats s = nsim_fabric_stats(ex->fab, i);
        if (s.pieces == 0 && s.wire_bytes == 0)
            continue;
        res->links[k++] = (nsim_link_record){
            i, s.bytes, s.wire_bytes, s.pieces, s.busy_ps, s.occupied_ps};
    }
    res->nlinks = k;
    return NSIM_OK;
}

static int collect(exec *ex, nsim_topo *topo, const nsim_exec_opts *opts,
                   nsim_exec_result *res, nsim_err *err)
{
    const nsim_plan *p = ex->plan;
    uint64_t est = res->est_events;
    memset(res, 0, sizeof *res);
    res->est_events = est;
    /* nccl-tests issues its iterations back to back (nccl-internals
     * 8.1: a CPU timer around the launch loop and one final sync): a
     * host thread's launches for the next op overlap this op on the
     * GPUs, so an op takes the longer of the kernels' time and the
     * thread's launches, one per GPU it drives (-g) */
    res->gpu_ps = ex->finish;
    res->host_ps = (nsim_time)ex->gpus_per_thread * ex->launch_ps;
    res->time_ps = res->gpu_ps > res->host_ps ? res->gpu_ps : res->host_ps;
    res->events = nsim_sim_get_counters(ex->sim).events_run;
    res->flow = nsim_fabric_flow_counters(ex->fab);
    res->spans = ex->spans; /* handed over (NULL without want_trace) */
    res->nspans = ex->nspans;
    ex->spans = NULL;
    res->tlog = ex->tlog;
    res->link_sample_ps = ex->sample_ps;
    ex->tlog = NULL;
    for (uint32_t i = 0; i < p->nconns; i++)
        res->bytes_moved += ex->conns[i].bytes;
    if (!opts->want_stats)
        return NSIM_OK;
    res->nconns = p->nconns;
    res->conns = malloc(p->nconns * sizeof *res->conns);
    if (res->conns == NULL || collect_links(ex, topo, res) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    for (uint32_t i = 0; i < p->nconns; i++) {
        const conn_rt *c = &ex->conns[i];
        res->conns[i] = (nsim_conn_stats){
            .slices = c->sent, .bytes = c->bytes,
            .recv_slices = c->consumed, .recv_bytes = c->recv_bytes,
            .blocked_credit_ps = c->blocked_credit_ps};
        if (c->ops->conn_counters != NULL) {
            res->conns[i].has_xport = 1;
            c->ops->conn_counters(c->state, &res->conns[i].xport);
        }
    }
    res->nlanes = ex->nlanes;
    res->lanes = malloc((ex->nlanes ? ex->nlanes : 1) * sizeof *res->lanes);
    if (res->lanes == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    for (uint32_t i = 0; i < ex->nlanes; i++)
        res->lanes[i] = ex->lanes[i].st;
    for (int k = 0; k < 3; k++)
        if (ex->inited[k] && transports[k]->report != NULL &&
            transports[k]->report(ex->shared[k], &res->xport) != NSIM_OK)
            return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    return NSIM_OK;
}

/* ---- budgets ------------------------------------------------------------
 *
 * The estimate follows the workload of the models: one event per piece per
 * hop (fabric.h), a NET packet crossing its DMA read, the network and the
 * DMA write, an ACK every ib_ack_every_packets, and per slice the proxy's
 * posts, polls, CTS and completions. The per-slice and per-connection
 * figures below are this implementation's own costs, measured (events and
 * heap bytes of `run --timing` on the rail fat tree presets at 2 to 16
 * nodes: within 25% of the estimate), not hardware constants. */
#define EST_NET_SLICE_EVENTS 24u /* proxy actions, CTS, WQE fetch, CQEs */
#define EST_LOCAL_SLICE_EVENTS 3u
#define EST_OP_EVENTS 2u          /* op done, slice visible */
#define EST_NET_CONN_BYTES 14000u /* comm, QPs and CQs at their first size,
                                   * MRs, paths, buffers' state: peak RSS of
                                   * AllToAll 64 MiB on 4, 8 and 16 DGX H100
                                   * (3,072 to 15,360 NET connections),
                                   * 13.3 KB a connection */
#define EST_LOCAL_CONN_BYTES 1200u
#define EST_LANE_BYTES 256u
#define EST_FIXED_BYTES (4u << 20) /* engine, fabric, first pools */

static uint32_t route_hops(nsim_topo *t, uint32_t a, uint32_t b)
{
    const nsim_route *r;
    if (a == UINT32_MAX || b == UINT32_MAX || a == b ||
        nsim_topo_route(t, a, b, &r, NULL) != NSIM_OK)
        return 1;
    return r->hops;
}

/* Per connection: bytes per piece and events per piece. */
static void conn_cost(nsim_topo *t, const nsim_plan *p, const nsim_params *pr,
                      uint32_t c, uint64_t *unit, double *per_piece)
{
    const nsim_plan_conn *pc = &p->conns[c];
    uint32_t nr = nsim_topo_nranks(t);
    uint32_t ga = pc->from < nr ? nsim_topo_rank_device(t, pc->from)
                                : UINT32_MAX;
    uint32_t gb = pc->to < nr ? nsim_topo_rank_device(t, pc->to) : UINT32_MAX;
    if (pc->transport == NSIM_TRANSPORT_NET) {
        uint32_t mtu = 4096;
        if (pc->send_nic < nsim_topo_ndevices(t)) {
            uint32_t m = nsim_topo_device(t, pc->send_nic)->mtu_bytes;
            mtu = m ? m : mtu;
        }
        double ack = pr->ib_ack_every_packets ? pr->ib_ack_every_packets : 1;
        *unit = mtu;
        *per_piece = route_hops(t, ga, pc->send_nic) +
                     route_hops(t, pc->send_nic, pc->recv_nic) +
                     route_hops(t, pc->recv_nic, gb) +
                     route_hops(t, pc->recv_nic, pc->send_nic) / ack;
        return;
    }
    *unit = pr->stream_chunk_bytes ? pr->stream_chunk_bytes : 65536;
    *per_piece = 1.0 + route_hops(t, ga, gb);
}

/* Bytes of state for the plan's connections and thread blocks (counts
 * them into e). */
static uint64_t estimate_memory(const nsim_plan *plan, nsim_exec_estimate *e)
{
    e->net_conns = e->local_conns = 0;
    for (uint32_t c = 0; c < plan->nconns; c++) {
        if (plan->conns[c].transport == NSIM_TRANSPORT_NET)
            e->net_conns++;
        else
            e->local_conns++;
    }
    return nsim_exec_state_bytes(e->net_conns, e->local_conns,
                                 plan->nlanes);
}

uint64_t nsim_exec_state_bytes(uint64_t net_conns, uint64_t local_conns,
                               uint64_t lanes)
{
    return EST_FIXED_BYTES + net_conns * EST_NET_CONN_BYTES +
           local_conns * EST_LOCAL_CONN_BYTES + lanes * EST_LANE_BYTES;
}

int nsim_exec_estimate_plan(nsim_topo *topo, const nsim_plan *plan,
                            const nsim_params *params,
                            nsim_exec_estimate *out, nsim_err *err)
{
    uint64_t *unit = calloc(plan->nconns ? plan->nconns : 1, sizeof *unit);
    double *cost = calloc(plan->nconns ? plan->nconns : 1, sizeof *cost);
    double ev = 0;
    memset(out, 0, sizeof *out);
    if (unit == NULL || cost == NULL) {
        free(unit);
        free(cost);
        return NSIM_ERR(err, NSIM_ENOMEM, "executor: out of memory");
    }
    for (uint32_t c = 0; c < plan->nconns; c++)
        conn_cost(topo, plan, params, c, &unit[c], &cost[c]);
    for (uint32_t i = 0; i < plan->nlanes; i++) {
        lane_rt l = {.pl = &plan->lanes[i]};
        lane_conns(&l);
        for (uint32_t o = 0; o < l.pl->nops; o++) {
            const nsim_plan_op *op = nsim_plan_lane_op(l.pl, o);
            uint32_t k0, k1;
            ev += EST_OP_EVENTS;
            if (!(op->prim & NSIM_PRIM_SEND))
                continue;
            op_conns(&l, op, l.nsend, &k0, &k1);
            uint64_t b = nsim_plan_wire_bytes(plan, op->bytes);
            for (uint32_t k = k0; k < k1; k++) {
                uint32_t c = LANE_SEND(&l, k);
                int net = plan->conns[c].transport == NSIM_TRANSPORT_NET;
                uint64_t piece =
                    net ? unit[c]
                        : nsim_fabric_stream_piece(params, b, unit[c]);
                uint64_t n = b == 0 ? 1 : (b + piece - 1) / piece;
                ev += (double)n * cost[c] +
                      (net ? EST_NET_SLICE_EVENTS : EST_LOCAL_SLICE_EVENTS);
            }
        }
    }
    out->events = (uint64_t)ev;
    out->memory = estimate_memory(plan, out);
    free(unit);
    free(cost);
    return NSIM_OK;
}

void nsim_exec_default_budget(uint64_t *max_events, uint64_t *max_memory)
{
    if (max_events != NULL)
        *max_events = 20000000000ull;
    if (max_memory != NULL)
        *max_memory = nsim_mem_available() / 4 * 3;
}

static void fmt_count(char *b, size_t n, uint64_t v)
{
    if (v >= 1000000000ull)
        snprintf(b, n, "%.2f G", (double)v / 1e9);
    else if (v >= 1000000ull)
        snprintf(b, n, "%.2f M", (double)v / 1e6);
    else
        snprintf(b, n, "%llu", (unsigned long long)v);
}

/* What a message over a budget suggests: flow fidelity, unless the run
 * already uses it. */
static const char *suggest_flow(const nsim_exec_opts *opts)
{
    return opts->fidelity == NSIM_FIDELITY_FLOW
               ? " (this run is already at flow fidelity: fewer sizes or "
                 "ranks)"
               : ", or use --fidelity flow";
}

/* Refuses a run whose estimate is over a budget, before anything is
 * built; arms the budgets on the engine for the run itself. */
static int check_budget(exec *ex, nsim_topo *topo, const nsim_params *params,
                        const nsim_exec_opts *opts, uint64_t *max_ev,
                        uint64_t *max_mem, uint64_t *est_events,
                        nsim_err *err)
{
    nsim_exec_estimate e;
    char need[32], have[32];
    uint64_t dev, dmem;
    nsim_exec_default_budget(&dev, &dmem);
    *max_ev = opts->max_events ? opts->max_events : dev;
    *max_mem = opts->max_memory ? opts->max_memory : dmem;
    /* the event estimate is the packet level's; flow runs far fewer, and
     * the engine's count still bounds them */
    memset(&e, 0, sizeof e);
    if (opts->fidelity == NSIM_FIDELITY_FLOW)
        e.memory = estimate_memory(ex->plan, &e);
    else
        NSIM_TRY(nsim_exec_estimate_plan(topo, ex->plan, params, &e, err));
    *est_events = e.events;
    if (opts->auto_events > 0 && opts->fidelity != NSIM_FIDELITY_FLOW &&
        e.events > opts->auto_events) {
        fmt_count(need, sizeof need, e.events);
        fmt_count(have, sizeof have, opts->auto_events);
        return NSIM_ERR(err, NSIM_EBUDGET,
                        "--fidelity auto: the packet model would run about "
                        "%s events, past flow_auto_events (%s)",
                        need, have);
    }
    if (*max_ev != UINT64_MAX && e.events > *max_ev) {
        fmt_count(need, sizeof need, e.events);
        fmt_count(have, sizeof have, *max_ev);
        return NSIM_ERR(err, NSIM_EBUDGET,
                        "over the event budget: this run needs about %s "
                        "events (%u NET and %u local connections), "
                        "--max-events is %s%s; raise it, or use "
                        "--fidelity flow (work requests as flows, far "
                        "fewer events)",
                        need, e.net_conns, e.local_conns, have,
                        opts->max_events ? "" : " (the default)");
    }
    /* the plan is held through the run */
    uint64_t mem = e.memory + ex->plan->build.held;
    if (*max_mem != UINT64_MAX && mem > *max_mem) {
        char plan[32];
        nsim_units_format_size(mem, need, sizeof need);
        nsim_units_format_size(*max_mem, have, sizeof have);
        nsim_units_format_size(ex->plan->build.held, plan, sizeof plan);
        return NSIM_ERR(err, NSIM_EBUDGET,
                        "over the memory budget: this run needs about %s "
                        "of simulation state (%u NET connections with "
                        "their QPs and CQs, %u local ones, the plan's "
                        "%s), --max-memory is %s%s; raise it%s",
                        need, e.net_conns, e.local_conns, plan, have,
                        opts->max_memory ? ""
                                         : " (the default: 75% of the "
                                           "memory available)",
                        suggest_flow(opts));
    }
    nsim_sim_set_budget(ex->sim, *max_ev == UINT64_MAX ? 0 : *max_ev,
                        *max_mem == UINT64_MAX ? 0 : *max_mem);
    /* the state built before the run counts against the budget */
    return nsim_sim_charge(ex->sim, mem) == NSIM_OK ? NSIM_OK
                                                    : NSIM_EBUDGET;
}

/* A budget the engine hit while running: the message names the option. */
static int budget_hit(exec *ex, uint64_t max_ev, uint64_t max_mem,
                      const nsim_exec_opts *opts, nsim_err *err)
{
    const char *msg = nsim_sim_error(ex->sim)->msg;
    char have[32];
    const char *ev = "event budget: ", *mem = "memory budget: ";
    if (strncmp(msg, ev, strlen(ev)) == 0) {
        fmt_count(have, sizeof have, max_ev);
        return NSIM_ERR(err, NSIM_EBUDGET,
                        "over the event budget (--max-events %s%s): %s; "
                        "raise it%s",
                        have, opts->max_events ? "" : ", the default",
                        msg + strlen(ev), suggest_flow(opts));
    }
    if (strncmp(msg, mem, strlen(mem)) == 0)
        msg += strlen(mem);
    nsim_units_format_size(max_mem, have, sizeof have);
    return NSIM_ERR(err, NSIM_EBUDGET,
                    "over the memory budget (--max-memory %s%s): %s; raise "
                    "it%s",
                    have, opts->max_memory ? "" : ", the default", msg,
                    suggest_flow(opts));
}

int nsim_exec_run(nsim_topo *topo, const nsim_plan *plan,
                  const nsim_params *params, const nsim_exec_opts *opts,
                  nsim_exec_result *res, nsim_err *err)
{
    exec ex = {0};
    uint64_t max_ev = 0, max_mem = 0;
    ex.plan = plan;
    int rc = nsim_sim_create(opts->seed, &ex.sim, err);
    if (rc == NSIM_OK)
        rc = check_budget(&ex, topo, params, opts, &max_ev, &max_mem,
                          &res->est_events, err);
    if (rc == NSIM_OK)
        rc = nsim_fabric_create(ex.sim, topo, params, &ex.fab, err);
    if (rc == NSIM_OK && opts->fidelity == NSIM_FIDELITY_FLOW)
        rc = nsim_fabric_set_flow(ex.fab, err);
    if (rc == NSIM_OK)
        rc = setup(&ex, topo, params, opts, err);
    if (rc == NSIM_OK)
        (void)nsim_huge_collapse(); /* the state is built: on huge pages */
    if (rc == NSIM_OK)
        rc = schedule_faults(&ex, err);
    ex.gpus_per_thread = opts->gpus_per_thread ? opts->gpus_per_thread : 1;
    if (ex.gpus_per_thread > plan->nranks)
        ex.gpus_per_thread = plan->nranks;
    ex.launch_ps = params->kernel_launch_ps;
    if (rc == NSIM_OK && opts->want_trace)
        rc = alloc_spans(&ex, err);
    if (rc == NSIM_OK && opts->want_trace)
        rc = start_trace(&ex, topo, opts, err);
    if (rc == NSIM_OK)
        rc = schedule_launches(&ex, params, err);
    if (rc == NSIM_OK && (rc = nsim_sim_run(ex.sim, NSIM_TIME_MAX)) != NSIM_OK)
        NSIM_ERR(err, rc, "%s", nsim_sim_error(ex.sim)->msg);
    if (rc != NSIM_OK && ex.sim != NULL &&
        nsim_sim_error(ex.sim)->code == NSIM_EBUDGET)
        rc = budget_hit(&ex, max_ev, max_mem, opts, err);
    if (rc == NSIM_OK && ex.lanes_left != 0)
        rc = NSIM_ERR(err, NSIM_ESIM,
                      "simulation stalled: %u of %u thread blocks never "
                      "finished (a deadlock in the plan or a lost credit)",
                      ex.lanes_left, ex.nlanes);
    if (rc == NSIM_OK && (rc = collect(&ex, topo, opts, res, err)) != NSIM_OK)
        nsim_exec_result_free(res);
    teardown(&ex);
    return rc;
}

void nsim_exec_result_free(nsim_exec_result *res)
{
    free(res->conns);
    free(res->links);
    free(res->spans);
    res->spans = NULL;
    free(res->lanes);
    res->lanes = NULL;
    nsim_tlog_destroy(res->tlog);
    res->tlog = NULL;
    nsim_xport_stats_free(&res->xport);
    res->conns = NULL;
    res->links = NULL;
}

const char *nsim_fidelity_name(nsim_fidelity f)
{
    return f == NSIM_FIDELITY_FLOW   ? "flow"
           : f == NSIM_FIDELITY_AUTO ? "auto"
                                     : "packet";
}

int nsim_fidelity_parse(const char *s, nsim_fidelity *out)
{
    static const nsim_fidelity all[] = {NSIM_FIDELITY_PACKET, NSIM_FIDELITY_FLOW,
                                        NSIM_FIDELITY_AUTO};
    for (unsigned i = 0; i < 3; i++)
        if (strcmp(s, nsim_fidelity_name(all[i])) == 0) {
            *out = all[i];
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}
