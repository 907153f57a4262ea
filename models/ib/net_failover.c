/* SPDX-License-Identifier: MIT
 *
 * net_failover.c - faults and failover for the NET transport.
 *
 * A QP pair leaves service when a completion reports an error on it (a
 * fault forced it to ERR, its NIC port went down, or retries ran out on a
 * dead link). The channel's policy then decides:
 * - rebind_qp: the pair is marked dead; every outstanding piece that was
 *   on it is mapped onto the connection's live QPs, pieces the receiver
 *   has not got are sent again there (runs with faults match receives by
 *   id, so a piece sent again finds a pre-posted receive WR wherever it
 *   lands), and CTS entries that were lost with the pair are sent again;
 * - rebind_nic: the comm is abandoned; after the connection setup cost
 *   the connection gets a new comm on another NIC pair, and everything
 *   outstanding moves to it, on the piece map the receiver side sets;
 * - fail: the run stops (NSIM_EFAULT) with a report naming the QP, NIC,
 *   status and time.
 * Every piece is accepted once at the receiver (duplicates are ignored),
 * so no byte is lost or counted twice.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "models/ib/net_int.h"

static void record(net_conn *c, nsim_failover action, const char *fmt, ...)
    NSIM_PRINTF(3, 4);

static void record(net_conn *c, nsim_failover action, const char *fmt, ...)
{
    const nsim_plan_conn *pc = &c->sh->env->plan->conns[c->conn];
    nsim_failover_record r = {nsim_sim_now(c->sh->env->sim), pc->channel,
                              pc->from, pc->to, action, ""};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.what, sizeof r.what, fmt, ap);
    va_end(ap);
    if (nsim_xport_stats_add_failover(&c->sh->log, &r) != NSIM_OK)
        nsim__net_fail(c, "out of memory");
}

static nsim_failover policy_of(const net_conn *c)
{
    const nsim_xport_env *e = c->sh->env;
    return e->faults->policy[e->plan->conns[c->conn].channel];
}

static int qp_index(const net_comm *m, uint32_t qpn, uint32_t *out)
{
    for (uint32_t i = 0; i < m->nqps; i++)
        if (nsim_qp_num(m->qs[i]) == qpn || nsim_qp_num(m->qr[i]) == qpn) {
            *out = i;
            return NSIM_OK;
        }
    return NSIM_ENOENT;
}

/* Both ends to ERR: their outstanding WRs flush with WR_FLUSH_ERR and
 * packets still in flight are dropped at the responder. */
static void kill_pair(net_comm *m, uint32_t i)
{
    nsim_qp *ends[2] = {m->qs[i], m->qr[i]};
    for (int e = 0; e < 2; e++)
        if (nsim_qp_get_state(ends[e]) != NSIM_QPS_ERR &&
            nsim_qp_modify(ends[e], NSIM_QPS_ERR, NULL, NULL) != NSIM_OK)
            NSIM_PANIC("QP 0x%x: RTS -> ERR refused", nsim_qp_num(ends[e]));
}

/* Sender side: pieces on lost QPs that the receiver already has are done;
 * the others are marked for sending again. */
static void sender_pass(net_conn *c, const uint8_t *lost,
                        uint8_t again[SLOTS][MAX_QPS])
{
    for (uint64_t k = c->send_done; k < c->posted; k++)
        for (uint32_t j = 0; j < c->snpieces[k % SLOTS]; j++) {
            uint8_t *gs = &c->pq[j].got_send[k % SLOTS];
            if (*gs || !lost[c->pq[j].sqmap[k % SLOTS]])
                continue;
            if (k < c->recv_done || c->pq[j].got_recv[k % SLOTS]) {
                *gs = 1; /* landed before the QP died: its ACK was lost */
                c->send_left[k % SLOTS]--;
            } else {
                again[k % SLOTS][j] = 1;
            }
        }
}

/* Receiver side: pieces on lost QPs are mapped onto the live QPs (fresh
 * request ids on a new comm) and their receive WRs posted again (none
 * when matching by id, as runs with faults do). */
static void receiver_pass(net_conn *c, const uint8_t *lost, int new_comm)
{
    net_comm *m = c->m;
    for (uint64_t k = c->recv_done; k < c->recv_posted; k++) {
        uint64_t r = new_comm ? m->next_req++ : c->req[k % SLOTS];
        uint32_t np = c->npieces[k % SLOTS];
        if (new_comm)
            nsim__net_bind_req(m, c, k, r);
        for (uint32_t j = 0; j < np; j++) {
            uint8_t *q = &c->pq[j].qmap[k % SLOTS];
            if (!new_comm && !lost[*q])
                continue;
            *q = (uint8_t)m->live[(r * np + j) % m->nlive];
            if (!c->pq[j].got_recv[k % SLOTS])
                nsim__net_post_recv_piece(c, k, j);
        }
    }
}

/* Moves everything of c that was on the lost QPs (all of the old comm's
 * when new_comm) onto c->m's live QPs. */
static void move_outstanding(net_conn *c, const uint8_t *lost, int new_comm,
                             int resend_cts)
{
    static uint8_t again[SLOTS][MAX_QPS];
    memset(again, 0, sizeof again);
    sender_pass(c, lost, again);
    receiver_pass(c, lost, new_comm);
    if (resend_cts)
        for (uint64_t k = c->cts; k < c->recv_posted; k++)
            nsim__net_post_cts(c, k);
    /* the pieces go again on live QPs: matched by id, any will do */
    net_comm *m = c->m;
    for (uint64_t k = c->send_done; k < c->posted; k++) {
        uint32_t np = c->snpieces[k % SLOTS];
        for (uint32_t j = 0; j < np; j++)
            if (again[k % SLOTS][j]) {
                c->pq[j].sqmap[k % SLOTS] =
                    (uint8_t)m->live[(k * np + j) % m->nlive];
                nsim__net_post_piece(c, k, j);
            }
    }
    nsim__net_release(c);
}

/* The NIC pair for a connection moving off its comm: another live NIC of
 * the sender's host and one of the receiver's host it reaches over the
 * network, the same rail first. */
static int pick_nics(net_conn *c, uint32_t *sn, uint32_t *rn)
{
    net_shared *sh = c->sh;
    nsim_topo *t = sh->env->topo;
    int32_t hs = nsim_topo_device(t, nsim_topo_rank_device(t, c->from))->host;
    int32_t hr = nsim_topo_device(t, nsim_topo_rank_device(t, c->to))->host;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t a = 0; a < nsim_topo_ndevices(t); a++) {
            const nsim_device *da = nsim_topo_device(t, a);
            if (da->type != NSIM_DEV_NIC || da->host != hs || sh->nic_down[a] ||
                a == c->m->send_nic)
                continue;
            for (uint32_t b = 0; b < nsim_topo_ndevices(t); b++) {
                const nsim_device *db = nsim_topo_device(t, b);
                const nsim_route *r;
                if (db->type != NSIM_DEV_NIC || db->host != hr ||
                    sh->nic_down[b] || (pass == 0 && db->rail != da->rail) ||
                    nsim_topo_route(t, a, b, &r, NULL) != NSIM_OK ||
                    r->type != NSIM_PATH_NET)
                    continue;
                *sn = a;
                *rn = b;
                return NSIM_OK;
            }
        }
    return NSIM_ENOENT;
}

static void on_migrate(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    net_shared *sh = c->sh;
    const nsim_plan_conn *pc = &sh->env->plan->conns[c->conn];
    nsim_topo *t = sh->env->topo;
    uint32_t sn, rn, old_s = c->m->send_nic, old_r = c->m->recv_nic;
    net_comm *nm;
    nsim_err err = {0};
    if (pick_nics(c, &sn, &rn) != NSIM_OK) {
        nsim_sim_fail(sim, NSIM_EFAULT,
                      "channel %u: rank %u -> %u: failover policy rebind_nic "
                      "found no other live NIC pair",
                      pc->channel, pc->from, pc->to);
        return;
    }
    if (nsim__net_new_comm(sh, pc, sn, rn, c->mem_s, c->mem_r, &nm, &err) ||
        (c->m = nm, nsim__net_add_user(nm, c) != NSIM_OK &&
                        NSIM_ERR(&err, NSIM_ENOMEM,
                                 "out of memory, or the new NIC pair splits "
                                 "a slice over more QPs than before")) ||
        nsim__net_register(c, c->mem_s, c->mem_r, &err)) {
        nsim_sim_fail(sim, NSIM_ESIM, "channel %u: rebind_nic: %s",
                      pc->channel, err.msg);
        return;
    }
    static uint8_t all[MAX_QPS];
    memset(all, 1, sizeof all);
    c->paused = 0;
    move_outstanding(c, all, 1, 1);
    for (; c->deferred > 0; c->deferred--)
        nsim__net_post_receive(c);
    nsim__net_try_isend(c);
    record(c, NSIM_FAILOVER_REBIND_NIC, "moved from %s -> %s to %s -> %s",
           nsim_topo_device(t, old_s)->name, nsim_topo_device(t, old_r)->name,
           nsim_topo_device(t, sn)->name, nsim_topo_device(t, rn)->name);
}

static void fail_report(net_comm *m, net_conn *c, const nsim_wc *wc,
                        const char *why)
{
    const nsim_plan_conn *pc = &m->sh->env->plan->conns[c->conn];
    nsim_sim_fail(m->sh->env->sim, NSIM_EFAULT,
                  "channel %u: rank %u -> %u: QP 0x%x (%s -> %s) completed "
                  "with %s at %.3f us; %s",
                  pc->channel, pc->from, pc->to, wc->qp_num,
                  nsim_topo_device(m->sh->env->topo, m->send_nic)->name,
                  nsim_topo_device(m->sh->env->topo, m->recv_nic)->name,
                  nsim_wc_status_str(wc->status),
                  (double)nsim_sim_now(m->sh->env->sim) / 1e6, why);
}

static void rebind_qp(net_comm *m, uint32_t i, uint32_t cts_was)
{
    net_shared *sh = m->sh;
    static uint8_t lost[MAX_QPS];
    memset(lost, 0, sizeof lost);
    lost[i] = 1;
    for (uint32_t n = 0; n < sh->env->plan->nconns; n++) {
        net_conn *c = sh->conn_of[n];
        if (c == NULL || c->m != m)
            continue;
        move_outstanding(c, lost, 0, cts_was == i);
        nsim__net_try_isend(c);
        record(c, NSIM_FAILOVER_REBIND_QP,
               "QP 0x%x dead; its work moved to QP 0x%x (%u live)",
               nsim_qp_num(m->qs[i]), nsim_qp_num(m->qs[m->live[0]]),
               m->nlive);
    }
}

static void rebind_nic(net_comm *m)
{
    net_shared *sh = m->sh;
    m->retired = 1;
    for (uint32_t i = 0; i < m->nqps; i++)
        kill_pair(m, i);
    for (uint32_t n = 0; n < sh->env->plan->nconns; n++) {
        net_conn *c = sh->conn_of[n];
        if (c == NULL || c->m != m || c->paused)
            continue;
        c->paused = 1;
        if (nsim_sim_schedule(sh->env->sim, sh->env->params->net_reconnect_ps,
                              on_migrate, c, 0, 0, NULL) != NSIM_OK)
            nsim__net_fail(c, "out of memory");
    }
}

void nsim__net_on_error(net_comm *m, const nsim_wc *wc)
{
    uint32_t i;
    if (m->retired)
        return; /* flushes of an abandoned comm */
    if (qp_index(m, wc->qp_num, &i) != NSIM_OK || m->dead[i])
        return;
    net_conn *c = NULL;
    for (uint32_t n = 0; n < m->sh->env->plan->nconns && c == NULL; n++)
        if (m->sh->conn_of[n] != NULL && m->sh->conn_of[n]->m == m)
            c = m->sh->conn_of[n];
    if (c == NULL)
        return;
    switch (policy_of(c)) {
    case NSIM_FAILOVER_FAIL:
        return fail_report(m, c, wc, "failover policy: fail");
    case NSIM_FAILOVER_REBIND_NIC:
        return rebind_nic(m);
    case NSIM_FAILOVER_REBIND_QP: {
        uint32_t cts_was = m->live[0];
        m->dead[i] = 1;
        kill_pair(m, i);
        nsim__net_live(m);
        if (m->nlive == 0)
            return fail_report(m, c, wc,
                               "no live QP left on the connection for "
                               "failover policy rebind_qp");
        return rebind_qp(m, i, cts_was);
    }
    }
}

static int conn_matches(const net_conn *c, const nsim_fault *f)
{
    const nsim_plan_conn *pc = &c->sh->env->plan->conns[c->conn];
    return (f->channel < 0 || (uint32_t)f->channel == pc->channel) &&
           (f->from < 0 || (uint32_t)f->from == pc->from) &&
           (f->to < 0 || (uint32_t)f->to == pc->to);
}

static void port_down(net_shared *sh, uint32_t dev)
{
    nsim_topo *t = sh->env->topo;
    sh->nic_down[dev] = 1;
    const uint32_t *out = nsim_topo_out(t, dev);
    for (uint32_t k = 0; k < nsim_topo_nout(t, dev); k++) {
        const nsim_link *l = nsim_topo_link(t, out[k]);
        if (l->type == NSIM_LINK_IB || l->type == NSIM_LINK_ROCE ||
            l->type == NSIM_LINK_ETH) {
            nsim_fabric_set_down(sh->env->fab, out[k], 1);
            nsim_fabric_set_down(sh->env->fab, l->reverse, 1);
        }
    }
    for (uint32_t i = 0; i < sh->ncomms; i++) {
        net_comm *m = sh->comms[i];
        if (!m->retired && (m->send_nic == dev || m->recv_nic == dev))
            for (uint32_t q = 0; q < m->nqps; q++)
                kill_pair(m, q);
    }
}

int nsim__net_fault(void *shared, const nsim_fault *f)
{
    net_shared *sh = shared;
    switch (f->kind) {
    case NSIM_FAULT_QP_ERROR:
        for (uint32_t n = 0; n < sh->env->plan->nconns; n++) {
            net_conn *c = sh->conn_of[n];
            if (c != NULL && conn_matches(c, f) && f->qp < c->m->nqps &&
                !c->m->retired)
                kill_pair(c->m, f->qp);
        }
        return NSIM_OK;
    case NSIM_FAULT_PORT_DOWN:
        port_down(sh, f->dev);
        return NSIM_OK;
    case NSIM_FAULT_LOSS:
        if (sh->hca[f->dev] == NULL)
            return NSIM_OK; /* the NIC carries nothing in this plan */
        return nsim_hca_set_loss(sh->hca[f->dev], f->prob,
                                 0xfa017ull * 1000003ull + f->dev);
    default:
        return NSIM_OK;
    }
}
