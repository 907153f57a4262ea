/* SPDX-License-Identifier: MIT
 *
 * run.c - one scenario at one size: request, plan, simulate, row.
 */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "sim/core/units.h"
#include "sim/plan/tune.h"

/* The scenario's memory budget, or the machine's default (exec.h);
 * UINT64_MAX: none. */
static uint64_t memory_budget(const nsim_scenario *s)
{
    uint64_t max_mem = s->max_memory;
    if (max_mem == 0)
        nsim_exec_default_budget(NULL, &max_mem);
    return max_mem;
}

int nsim_run_request(const nsim_scenario *s, uint64_t bytes,
                     nsim_plan_req *req, double *pred_us, nsim_err *err)
{
    *req = nsim_scenario_request(s, bytes);
    uint32_t off = (s->pat_enable == 0 ? 1u << NSIM_ALGO_PAT : 0) |
                   (s->nvls_enable == 0 ? 1u << NSIM_ALGO_NVLS |
                                              1u << NSIM_ALGO_NVLSTREE
                                        : 0) |
                   s->algo_off | s->proto_off << 16;
    int rc = nsim_tune_pick_without(s->topo, s->coll, bytes, s->algo_set,
                                    s->proto_set, off, &req->algo,
                                    &req->proto, pred_us, err);
    nsim_scenario_fit_request(s, req);
    /* the plan is built before a run's own budget check: it gets the
     * same memory budget (and so do plan, explain and validate) */
    uint64_t max_mem = memory_budget(s);
    req->max_plan_bytes = max_mem == UINT64_MAX ? 0 : max_mem;
    if (rc != NSIM_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        NSIM_ERR(err, rc, "%s: %s", s->source, msg);
    }
    return rc;
}

static void fill_row(const nsim_scenario *s, uint64_t bytes, double t_us,
                     uint32_t nch, nsim_run_row *row)
{
    uint64_t count;
    uint32_t n = nsim_topo_nranks(s->topo);
    double alg = (double)bytes / (t_us * 1e-6) / 1e9;
    double bus = alg * nsim_coll_busbw_factor(s->coll, n);
    (void)nsim_coll_test_bytes(s->coll, n, s->type_size, bytes, &count);
    *row = (nsim_run_row){bytes, count, nch, t_us, alg, bus, t_us, alg,
                          bus, 0, 0, NULL, NULL, -1, "packet"};
    row->fold.hosts = row->fold.played = nsim_topo_nhosts(s->topo);
    row->fold.partner = UINT32_MAX;
}

/* Packets and stream pieces the packet model would move at this size
 * (what its events and time follow, docs/fidelity.md "auto"): the
 * collective's bus bytes on every rank, those that cross NCCL's nodes in
 * MTU packets, the rest (NVLink, PCIe, shared memory) in stream pieces.
 * An AllToAll sends (n - per node) / (n - 1) of its bytes off the node;
 * rings, trees and NVLS cross once a node's ranks (a ring's n hops have
 * one per node between nodes, a tree's chain one up and one down). */
double nsim_run_packets_estimate(const nsim_scenario *s, uint64_t bytes)
{
    uint32_t n = nsim_topo_nranks(s->topo), nodes = nsim_topo_nnodes(s->topo);
    double per_node = nodes ? (double)n / nodes : n;
    double bus = (double)bytes * nsim_coll_busbw_factor(s->coll, n) * n;
    double net = nodes <= 1 || n <= 1 ? 0
                 : s->coll == NSIM_COLL_ALLTOALL
                     ? bus * ((double)n - per_node) / (n - 1)
                     : bus / per_node;
    uint32_t mtu = 0;
    for (uint32_t d = 0; d < nsim_topo_ndevices(s->topo) && mtu == 0; d++) {
        const nsim_device *dev = nsim_topo_device(s->topo, d);
        if (dev->type == NSIM_DEV_NIC)
            mtu = dev->mtu_bytes;
    }
    double piece = s->params.stream_chunk_bytes ? s->params.stream_chunk_bytes
                                                : 65536;
    return net / (mtu ? mtu : 4096) + (bus - net) / piece;
}

/* An AllToAll's NET connections, one from each sending rank to each rank
 * off its NCCL node (its host, or its NVLink domain where one spans
 * hosts: those peers are reached over NVLink): every rank sends, or
 * the two played nodes' (folded); *senders (may be NULL) gets how many
 * send. */
static uint64_t alltoall_conns(const nsim_scenario *s, int folded,
                               uint64_t *senders)
{
    uint64_t n = nsim_topo_nranks(s->topo), nodes = nsim_topo_nnodes(s->topo);
    uint64_t per_node = nodes ? (n + nodes - 1) / nodes : n;
    uint64_t k = folded ? 2 * per_node : n;
    if (senders != NULL)
        *senders = k;
    return k * (n > per_node ? n - per_node : 0);
}

/* An AllToAll whose every rank's NET connections alone would pass the
 * memory budget: it cannot run whole, at either fidelity. */
static int alltoall_too_big(const nsim_scenario *s)
{
    return s->coll == NSIM_COLL_ALLTOALL && nsim_topo_nnodes(s->topo) > 1 &&
           nsim_exec_state_bytes(alltoall_conns(s, 0, NULL), 0, 0) >
               memory_budget(s);
}

/* An AllToAll where NVLink domains span hosts (GB200 racks): NCCL's
 * nodes are not the hosts. */
static int alltoall_on_domains(const nsim_scenario *s)
{
    return s->coll == NSIM_COLL_ALLTOALL &&
           nsim_topo_nnodes(s->topo) != nsim_topo_nhosts(s->topo);
}

nsim_fidelity nsim_run_fidelity(const nsim_scenario *s, uint64_t bytes,
                                nsim_auto_why *why)
{
    nsim_auto_why w = NSIM_AUTO_NONE;
    nsim_fidelity f = s->fidelity;
    if (f == NSIM_FIDELITY_AUTO) {
        f = NSIM_FIDELITY_PACKET;
        /* an AllToAll where NVLink domains span hosts stays packet:
         * there each GPU reaches tens of peers over NVLink and flow's
         * max-min re-solves the domain's shares as each flow ends (8
         * racks, 16 MiB, folded: 283 s in flow, 4.2 s in packet); one
         * too big to run whole folds in packet (--fold auto). Elsewhere
         * an AllToAll that cannot run whole folds in flow (README
         * "Folding"). */
        if (!alltoall_on_domains(s))
            w = alltoall_too_big(s) ? NSIM_AUTO_ALLTOALL
                : nsim_run_packets_estimate(s, bytes) >
                        (double)s->params.flow_auto_packets
                    ? NSIM_AUTO_PACKETS
                    : NSIM_AUTO_NONE;
        if (w != NSIM_AUTO_NONE)
            f = NSIM_FIDELITY_FLOW;
    }
    if (why != NULL)
        *why = w;
    return f;
}

const char *nsim_auto_why_name(nsim_auto_why why)
{
    switch (why) {
    case NSIM_AUTO_PACKETS:
        return "packets past flow_auto_packets";
    case NSIM_AUTO_ALLTOALL:
        return "AllToAll connections past the memory budget";
    case NSIM_AUTO_EVENTS:
        return "packet events past flow_auto_events";
    case NSIM_AUTO_BUDGET:
        return "packet past a budget";
    case NSIM_AUTO_NONE:
        break;
    }
    return NULL;
}

void nsim_auto_why_text(const nsim_scenario *s, const nsim_run_row *r,
                        char *buf, size_t n)
{
    const nsim_params *p = &s->params;
    int ev = r->fidelity_why == NSIM_AUTO_EVENTS;
    switch (r->fidelity_why) {
    case NSIM_AUTO_PACKETS:
    case NSIM_AUTO_EVENTS:
        snprintf(buf, n,
                 "auto: the packet model would %s about %.0f M %s, past %s "
                 "(%.0f M)",
                 ev ? "run" : "move", r->auto_measure / 1e6,
                 ev ? "events" : "packets and stream pieces",
                 ev ? "flow_auto_events" : "flow_auto_packets",
                 (double)(ev ? p->flow_auto_events : p->flow_auto_packets) /
                     1e6);
        return;
    case NSIM_AUTO_ALLTOALL:
        snprintf(buf, n, "auto: every rank's NET connections alone would "
                         "pass the memory budget, --max-memory");
        return;
    case NSIM_AUTO_BUDGET:
        snprintf(buf, n, "auto: packet would pass the run's budget, "
                         "--max-memory or --max-events");
        return;
    case NSIM_AUTO_NONE:
        break;
    }
    if (n > 0)
        buf[0] = '\0';
}

/* Where fault f strikes: 0 every host alike (a QP error on every
 * connection of a channel, or of every channel: twins fail together,
 * the played ones among them, and so do their channels' failover
 * policies, which are per channel); 1 one place, on the hosts put in
 * h[] (*n of them, 1 or 2: the ranks' hosts, the NIC's, the link's
 * ends'; random loss on a NIC too: the played host draws its own losses,
 * at their rate, timed as its messages are); 2 the fabric between hosts
 * (a link between two switches), which a ring's fold places from the
 * connections whose paths cross it (fold.c). */
static int fault_place(const nsim_scenario *s, const nsim_fault *f,
                       uint32_t h[2], uint32_t *n)
{
    const nsim_topo *t = s->topo;
    int32_t a = -1, b = -1;
    *n = 0;
    if (f->kind == NSIM_FAULT_QP_ERROR) {
        if (f->from < 0 && f->to < 0)
            return 0;
        if (f->from >= 0)
            a = nsim_topo_device(t, nsim_topo_rank_device(t, (uint32_t)f->from))
                    ->host;
        if (f->to >= 0)
            b = nsim_topo_device(t, nsim_topo_rank_device(t, (uint32_t)f->to))
                    ->host;
    } else if (f->kind == NSIM_FAULT_PORT_DOWN ||
               f->kind == NSIM_FAULT_LOSS) {
        a = nsim_topo_device(t, f->dev)->host;
    } else {
        const nsim_link *l = nsim_topo_link(t, f->link);
        a = nsim_topo_device(t, l->src)->host;
        b = nsim_topo_device(t, l->dst)->host;
    }
    if (a >= 0)
        h[(*n)++] = (uint32_t)a;
    if (b >= 0 && b != a)
        h[(*n)++] = (uint32_t)b;
    return *n > 0 ? 1 : 2;
}

/* Whether req's plan is a ring or a tree, which folds around the hosts
 * a fault strikes (fold.h): each runs at its slowest hop, so the struck
 * hosts, played, stand for their twins (a tree's: the hosts of their
 * roles) too. */
static int folds_around(const nsim_plan_req *req)
{
    if (req->algo == NSIM_ALGO_TREE || req->algo == NSIM_ALGO_NVLSTREE)
        return req->coll == NSIM_COLL_ALLREDUCE;
    return req->algo == NSIM_ALGO_RING &&
           (req->coll == NSIM_COLL_ALLREDUCE ||
            req->coll == NSIM_COLL_ALLGATHER ||
            req->coll == NSIM_COLL_REDUCESCATTER);
}

/* The first fault that keeps req's plan from folding, or -1 (*why, if
 * not NULL, gets the reason): one in the fabric between hosts. A ring or
 * a tree folds around one place (random loss on a NIC is one); an
 * AllToAll around one host's NIC or links (the struck host and a
 * partner each send and receive what a host does), not around a QP
 * error on ranks' connections (the struck connection would stand for
 * its twins to every host) nor around more hosts than one; SendRecv around the pair the
 * faults strike, where the fold's planning finds one (fold.c). Plans
 * that never fold (Broadcast, Reduce, NVLS on one host) say why
 * themselves. */
static int fault_unfoldable(const nsim_scenario *s, const nsim_plan_req *req,
                            const char **why)
{
    uint32_t h[2], n, host = UINT32_MAX;
    const char *w = NULL;
    int k = -1;
    if (nsim_plan_req_is_chain(req) && s->nfaults > 0) {
        if (why != NULL)
            *why = "strikes a chain (Broadcast, Reduce), whose fold adds the "
                   "hosts it does not play at a healthy host's delay";
        return 0;
    }
    if (!folds_around(req) && req->coll != NSIM_COLL_ALLTOALL &&
        req->coll != NSIM_COLL_SENDRECV)
        return -1;
    for (uint32_t i = 0; i < s->nfaults && k < 0; i++) {
        int place = fault_place(s, &s->faults[i], h, &n);
        if (place == 2 && req->algo == NSIM_ALGO_RING &&
                 folds_around(req))
            continue; /* the ring's fold places it (fold.c) */
        else if (place == 2)
            w = "strikes the fabric between hosts, where only a ring's "
                "fold finds the connections it strikes";
        else if (place == 0 || folds_around(req) ||
                 req->coll == NSIM_COLL_SENDRECV)
            continue;
        else if (s->faults[i].kind == NSIM_FAULT_QP_ERROR)
            w = "strikes ranks' connections, which a folded AllToAll plays "
                "once for every host";
        else if (n > 1 || (host != UINT32_MAX && h[0] != host))
            w = "strikes a second host, and an AllToAll folds around one";
        else {
            host = h[0];
            continue;
        }
        k = (int)i;
    }
    if (why != NULL)
        *why = w;
    return k;
}

/* The hosts the run's faults strike, sorted, without repeats, in h
 * (room for 2 per fault); their number. */
static uint32_t struck_hosts(const nsim_scenario *s, uint32_t *h)
{
    uint32_t n = 0, k;
    for (uint32_t i = 0; i < s->nfaults; i++)
        if (fault_place(s, &s->faults[i], h + n, &k) == 1)
            n += k;
    uint32_t u = 0; /* insert each in order, once (a few faults) */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = h[i], j = u;
        while (j > 0 && h[j - 1] > v)
            j--;
        if (j > 0 && h[j - 1] == v)
            continue;
        memmove(h + j + 1, h + j, (u - j) * sizeof *h);
        h[j] = v;
        u++;
    }
    return u;
}

/* The links between switches the run's faults strike, in l (room for
 * one per fault); their number. */
static uint32_t fabric_links(const nsim_scenario *s, uint32_t *l)
{
    uint32_t n = 0, h[2], k;
    for (uint32_t i = 0; i < s->nfaults; i++)
        if (fault_place(s, &s->faults[i], h, &k) == 2)
            l[n++] = s->faults[i].link;
    return n;
}

/* auto folds flow runs, and packet runs that could not run whole (an
 * AllToAll past the memory budget: folded, or stopped) */
static int fold_mode_allows(const nsim_scenario *s, nsim_fidelity f)
{
    return s->fold == NSIM_FOLD_ON ||
           (s->fold == NSIM_FOLD_AUTO &&
            (f == NSIM_FIDELITY_FLOW || alltoall_too_big(s)));
}

int nsim_run_may_fold(const nsim_scenario *s, nsim_fidelity f,
                      const nsim_plan_req *req)
{
    return fault_unfoldable(s, req, NULL) < 0 && fold_mode_allows(s, f);
}

/* The fault that keeps a run at fidelity f from folding where its fold
 * mode would fold it (hosts enough to fold), or -1; *why: the reason. */
static int fault_blocks(const nsim_scenario *s, nsim_fidelity f,
                        const nsim_plan_req *req, const char **why)
{
    int k = fault_unfoldable(s, req, why);
    return k >= 0 && fold_mode_allows(s, f) && nsim_topo_nhosts(s->topo) >= 4
               ? k
               : -1;
}

/* Why a run whose fold mode allows a fold plays every host: fault k, for
 * why (fault_blocks). */
static void fault_why_not(const nsim_scenario *s, int k, const char *why,
                          nsim_fold_info *fi)
{
    const nsim_fault *f = &s->faults[k];
    const nsim_topo *t = s->topo;
    char what[2 * NSIM_NAME_MAX + 32];
    if (f->kind == NSIM_FAULT_QP_ERROR && f->from >= 0 && f->to >= 0)
        snprintf(what, sizeof what, "a QP error on rank %d -> %d", f->from,
                 f->to);
    else if (f->kind == NSIM_FAULT_QP_ERROR && f->from >= 0)
        snprintf(what, sizeof what, "a QP error on rank %d's sends",
                 f->from);
    else if (f->kind == NSIM_FAULT_QP_ERROR)
        snprintf(what, sizeof what, "a QP error on rank %d's receives",
                 f->to);
    else if (f->kind == NSIM_FAULT_PORT_DOWN || f->kind == NSIM_FAULT_LOSS)
        snprintf(what, sizeof what, "%s on %s",
                 f->kind == NSIM_FAULT_LOSS ? "loss" : "a port down",
                 nsim_topo_device(t, f->dev)->name);
    else {
        const nsim_link *l = nsim_topo_link(t, f->link);
        snprintf(what, sizeof what, "%s %s -> %s",
                 f->kind == NSIM_FAULT_LINK_DOWN ? "link down"
                                                 : "link degraded",
                 nsim_topo_device(t, l->src)->name,
                 nsim_topo_device(t, l->dst)->name);
    }
    fi->hosts = fi->played = nsim_topo_nhosts(t);
    /* (two long device names may cut the end: the fault comes first) */
    if (snprintf(fi->why_not, sizeof fi->why_not, "faults[%d] (%s) %s", k,
                 what, why) < 0)
        fi->why_not[0] = '\0';
}

/* Hands the fold (req fold_play, fold_links) the hosts and the links
 * between switches the run's faults strike, in an array returned for
 * fold_play_drop; NULL when out of memory. */
static uint32_t *fold_play_set(const nsim_scenario *s, nsim_plan_req *req)
{
    uint32_t *a = malloc((3 * (size_t)s->nfaults + 1) * sizeof *a);
    if (a == NULL)
        return NULL;
    req->nfold_play = struck_hosts(s, a); /* at most 2 per fault */
    req->fold_play = a;
    req->nfold_links = fabric_links(s, a + req->nfold_play);
    req->fold_links = a + req->nfold_play;
    return a;
}

/* Takes them back from req (and from the plan built with it, if any):
 * they are the fold's alone. */
static void fold_play_drop(nsim_plan_req *req, nsim_plan *plan, uint32_t *a)
{
    free(a);
    req->fold_play = req->fold_links = NULL;
    req->nfold_play = req->nfold_links = 0;
    if (plan != NULL) {
        plan->req.fold_play = plan->req.fold_links = NULL;
        plan->req.nfold_play = plan->req.nfold_links = 0;
    }
}

/* SendRecv folds onto the pair its faults strike only where that pair
 * is the slowest (fold.c): whether its fold is refused, which the run
 * would find only once planning (0, fi->why_not the reason), or not
 * (-1). */
static int sendrecv_refused(const nsim_scenario *s, nsim_plan_req *req,
                            nsim_fold_info *fi)
{
    nsim_err err;
    uint32_t *struck = fold_play_set(s, req);
    if (struck == NULL)
        return -1; /* the run itself says so */
    req->compact_ops = 1;
    int refused = nsim_plan_fold_prepare(s->topo, req, fi, &err) == NSIM_OK &&
                  !req->fold_senders && fi->why_not[0] != '\0';
    fold_play_drop(req, NULL, struck);
    return refused ? 0 : -1;
}

int nsim_run_fault_blocks_fold(const nsim_scenario *s, uint64_t bytes,
                               char *why, size_t n)
{
    nsim_plan_req req;
    nsim_err err;
    double pred;
    why[0] = '\0';
    if (nsim_run_request(s, bytes, &req, &pred, &err) != NSIM_OK)
        return 0; /* the run itself says why */
    nsim_fidelity f = nsim_run_fidelity(s, bytes, NULL);
    const char *reason = NULL;
    int k = fault_blocks(s, f, &req, &reason);
    nsim_fold_info fi = {0};
    if (k >= 0)
        fault_why_not(s, k, reason, &fi);
    else if (s->nfaults > 0 && req.coll == NSIM_COLL_SENDRECV &&
             nsim_run_may_fold(s, f, &req) && nsim_topo_nhosts(s->topo) >= 4)
        k = sendrecv_refused(s, &req, &fi);
    snprintf(why, n, "%s", fi.why_not);
    return k >= 0;
}

/* What a run over a budget could drop: what made its plan whole. */
static const char *budget_hint(const nsim_scenario *s, const nsim_run_opts *o,
                               int compact, int may_fold)
{
    if (o->keep && !compact)
        return "; --debug (and --trace where the run does not fold) keeps "
               "the whole plan, every host played and every op placed: drop "
               "it at this scale";
    if (!may_fold && s->fold == NSIM_FOLD_OFF)
        return "; --fold off plays every host: folding plays a few";
    return "";
}

/* An AllToAll's NET connections are at least one from each sending
 * rank (every rank, or the played hosts' when it folds) to each rank
 * off its host: on 131,072 GPUs 2.1 M of them even folded, and routing
 * them takes minutes before the run's own estimate could refuse. Their
 * state, weighed first, stops such a run at once. */
static int alltoall_budget(const nsim_scenario *s, const nsim_plan_req *req,
                           uint64_t *state, nsim_err *err)
{
    uint64_t max_mem = memory_budget(s), senders;
    *state = 0;
    if (req->coll != NSIM_COLL_ALLTOALL || nsim_topo_nhosts(s->topo) < 2 ||
        max_mem == UINT64_MAX)
        return NSIM_OK;
    uint64_t net = alltoall_conns(s, req->fold_senders != 0, &senders);
    uint64_t need = nsim_exec_state_bytes(net, 0, 0);
    *state = need;
    if (need <= max_mem)
        return NSIM_OK;
    char needs[32], have[32];
    nsim_units_format_size(need, needs, sizeof needs);
    nsim_units_format_size(max_mem, have, sizeof have);
    return NSIM_ERR(err, NSIM_EBUDGET,
                    "over the memory budget: this AllToAll needs at least "
                    "%llu NET connections (%llu%s sending ranks, each to "
                    "every rank off its %s), about %s of simulation "
                    "state, before any plan; --max-memory is %s%s; raise "
                    "it, or simulate an AllToAll group of fewer ranks",
                    (unsigned long long)net, (unsigned long long)senders,
                    req->fold_senders ? " played" : "",
                    nsim_topo_nnodes(s->topo) == nsim_topo_nhosts(s->topo)
                        ? "host"
                        : "NVLink domain",
                    needs, have,
                    s->max_memory ? "" : " (the default: 75% of the "
                                         "memory available)");
}

/* req's plan, built within what the memory budget leaves it: for an
 * AllToAll, past its connections' state (state, known before any plan:
 * a plan that would not fit beside it stops while it is built, not
 * once whole: 1,024 L40S, 3.46 GiB of plan built in 10 s before the
 * estimate refused it). */
static int build_within(const nsim_scenario *s, nsim_plan_req *req,
                        uint64_t state, nsim_plan **plan, nsim_err *err)
{
    uint64_t whole = req->max_plan_bytes;
    if (state > 0 && whole > state)
        req->max_plan_bytes = whole - state;
    int rc = nsim_plan_build(s->topo, req, plan, err);
    uint64_t room = req->max_plan_bytes;
    req->max_plan_bytes = whole;
    if (rc != NSIM_EBUDGET || room == whole)
        return rc;
    char st[32], left[32], all[32];
    nsim_units_format_size(state, st, sizeof st);
    nsim_units_format_size(room, left, sizeof left);
    nsim_units_format_size(whole, all, sizeof all);
    return NSIM_ERR(err, NSIM_EBUDGET,
                    "over the memory budget: this AllToAll's NET "
                    "connections need about %s of simulation state, and "
                    "its plan more than the %s that leaves of --max-memory "
                    "%s; raise it, or simulate an AllToAll group of fewer "
                    "ranks",
                    st, left, all);
}

/* Whether a plan built for req (may it fold) goes through
 * nsim_plan_fold: a Tree only where nsim_plan_fold_prepare planned its
 * roles (fold_tree), point-to-point plans only for two hosts' sends. */
static int fold_applies(const nsim_plan_req *req)
{
    return (!nsim_coll_is_p2p(req->coll) || req->fold_senders) &&
           ((req->algo != NSIM_ALGO_NVLSTREE &&
             req->algo != NSIM_ALGO_TREE) ||
            req->coll != NSIM_COLL_ALLREDUCE || req->fold_tree);
}

/* req planned, folded and run again (a chain's second run): its GPU
 * time in *gpu, its events and flows added to into's; the fold's info
 * in *fi. */
static int play_again(nsim_scenario *s, nsim_plan_req *req,
                      const nsim_exec_opts *eo, nsim_fold_info *fi,
                      nsim_exec_result *into, nsim_time *gpu, nsim_err *err)
{
    nsim_plan *plan = NULL;
    nsim_exec_result res = {0};
    nsim_exec_opts o = *eo;
    o.want_stats = o.want_trace = 0;
    *fi = (nsim_fold_info){0};
    int rc = nsim_plan_build(s->topo, req, &plan, err);
    if (rc == NSIM_OK && fold_applies(req))
        rc = nsim_plan_fold(s->topo, plan, fi, err);
    if (rc == NSIM_OK)
        rc = nsim_exec_run(s->topo, plan, &s->params, &o, &res, err);
    nsim_plan_destroy(plan);
    if (rc != NSIM_OK) {
        nsim_exec_result_free(&res);
        return rc;
    }
    *gpu = res.gpu_ps;
    into->events += res.events;
    into->flow.flows += res.flow.flows;
    into->flow.delays += res.flow.delays;
    into->flow.recomputes += res.flow.recomputes;
    into->flow.visited += res.flow.visited;
    into->flow.twins += res.flow.twins;
    into->flow.idle += res.flow.idle;
    nsim_exec_result_free(&res);
    return NSIM_OK;
}

/* The chain of req folded onto m hosts (fold.h), run: its GPU time in
 * *gpu, its events and flows added to into's. */
static int chain_play(nsim_scenario *s, nsim_plan_req *req,
                      const nsim_exec_opts *eo, uint32_t m,
                      nsim_exec_result *into, nsim_time *gpu, nsim_err *err)
{
    nsim_fold_info fi;
    req->fold_chain_hosts = m;
    int rc = play_again(s, req, eo, &fi, into, gpu, err);
    req->fold_chain_hosts = 0;
    if (rc == NSIM_OK && (fi.chain_hosts != m || fi.played == fi.hosts))
        rc = NSIM_ERR(err, NSIM_ESIM, "the chain did not fold on %u hosts: %s",
                      m, fi.why_not);
    return rc;
}

/* A Tree whose nodes' chains were played with fold->tree_chain ranks
 * (res) is played again with NSIM_FOLD_TREE_CHAIN -
 * NSIM_FOLD_TREE_CHAIN_SHORT fewer: each rank neither plays adds the
 * delay per rank between the two (fold.h): the whole chains' GPU time
 * in *gpu. res keeps the first run's times, with the second run's
 * events and flows added. */
static int tree_chain_extend(nsim_scenario *s, nsim_plan_req *req,
                             const nsim_exec_opts *eo, nsim_fold_info *fold,
                             nsim_exec_result *res, nsim_time *gpu,
                             nsim_err *err)
{
    uint32_t k = fold->tree_chain, m = fold->tree_chain_of;
    uint32_t j = k - (NSIM_FOLD_TREE_CHAIN - NSIM_FOLD_TREE_CHAIN_SHORT);
    uint32_t long_extra = req->fold_tree_chain;
    nsim_time shorter = 0;
    nsim_fold_info fi;
    req->fold_tree_chain = NSIM_FOLD_TREE_CHAIN_SHORT;
    int rc = play_again(s, req, eo, &fi, res, &shorter, err);
    req->fold_tree_chain = long_extra;
    if (rc != NSIM_OK)
        return rc;
    if (req->fold_tree && fi.played != fold->played)
        return NSIM_ERR(err, NSIM_ESIM,
                        "the Tree's shorter chains played %u hosts, the "
                        "longer %u",
                        fi.played, fold->played);
    nsim_time more = res->gpu_ps > shorter ? res->gpu_ps - shorter : 0;
    *gpu = res->gpu_ps + more * (m - k) / (k - j);
    fold->tree_chain_short = j;
    fold->tree_chain_rank_ps = more / (k - j);
    return NSIM_OK;
}

/* A folded Broadcast or Reduce chain (fold.h), played on fold's m hosts
 * (res), is played again on m / 2: each host neither plays adds what
 * the first run's last m / 2 hosts added per host, the chain's delay per
 * host, and the whole chain's routes what fold->chain_lat_ps says: the
 * whole chain's GPU time in *gpu. res keeps the first run's times (what
 * its links and lanes are measured against), with the second run's
 * events and flows added. */
static int chain_extend(nsim_scenario *s, nsim_plan_req *req,
                        const nsim_exec_opts *eo, nsim_fold_info *fold,
                        nsim_exec_result *res, nsim_time *gpu, nsim_err *err)
{
    uint32_t m = fold->chain_hosts;
    nsim_time half = 0;
    NSIM_TRY(chain_play(s, req, eo, m / 2, res, &half, err));
    nsim_time more = res->gpu_ps > half ? res->gpu_ps - half : 0;
    nsim_time per = more / (m - m / 2);
    int64_t add = (int64_t)(more * (fold->hosts - m) / (m - m / 2)) +
                  fold->chain_lat_ps;
    *gpu = add < 0 && (nsim_time)-add > res->gpu_ps
               ? 0
               : (nsim_time)((int64_t)res->gpu_ps + add);
    fold->chain_host_ps = per;
    return NSIM_OK;
}

/* One size at fidelity `fidelity`; *auto_events (may be NULL): in, auto's
 * limit on a packet run's estimated events (0: none); out, where the
 * run stopped on it (NSIM_EBUDGET), the estimate, else 0. */
static int simulate(nsim_scenario *s, const nsim_run_opts *o, uint64_t bytes,
                    nsim_fidelity fidelity, uint64_t *auto_events,
                    nsim_plan_req *req, nsim_run_row *row,
                    nsim_plan **kept_plan, nsim_exec_result *kept_res,
                    nsim_err *err)
{
    nsim_plan *plan = NULL;
    nsim_exec_result res = {0};
    nsim_fault_plan fp;
    NSIM_TRY(nsim_scenario_fault_plan(s, s->nchannels, &fp, err));
    nsim_exec_opts eo = {s->seed, o->keep, &s->net, &fp, s->gpus_per_thread,
                         o->keep && o->want_trace, o->trace_cap,
                         NSIM_FIDELITY_PACKET, s->max_events,
                         s->max_memory};
    /* a plan kept whole (--debug, --trace where the run does not fold)
     * keeps its placement; one kept compact (--stats, explain, a folded
     * --trace) is built, and folded, as a run's */
    nsim_fold_info fold = {0};
    int rc;
    eo.fidelity = fidelity;
    eo.auto_events = auto_events != NULL ? *auto_events : 0;
    if (auto_events != NULL)
        *auto_events = 0;
    req->compact_ops = !o->keep || o->keep_compact ||
                       (o->want_trace && o->trace_fold &&
                        nsim_run_may_fold(s, eo.fidelity, req));
    int may_fold =
        req->compact_ops && nsim_run_may_fold(s, eo.fidelity, req);
    if (may_fold && eo.fidelity == NSIM_FIDELITY_PACKET &&
        nsim_plan_req_is_chain(req)) {
        /* a chain's delay per host settles past its played hosts there */
        may_fold = 0;
        fold.hosts = fold.played = nsim_topo_nhosts(s->topo);
        snprintf(fold.why_not, sizeof fold.why_not,
                 "a Broadcast or Reduce chain folds in flow fidelity only: "
                 "in packet fidelity the delay a host adds settles past "
                 "100 hosts (docs/fold.md)");
    }
    const char *reason = NULL;
    int blocking = fault_blocks(s, eo.fidelity, req, &reason);
    if (req->compact_ops && blocking >= 0)
        fault_why_not(s, blocking, reason, &fold); /* --timing says why */
    uint32_t *struck = NULL;
    /* a fold plays the hosts and links the faults strike */
    if (may_fold && s->nfaults > 0 && (struck = fold_play_set(s, req)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    if (may_fold &&
        (rc = nsim_plan_fold_prepare(s->topo, req, &fold, err)) != NSIM_OK) {
        fold_play_drop(req, NULL, struck);
        return rc;
    }
    uint64_t a2a_state = 0; /* an AllToAll's connections, at least */
    rc = alltoall_budget(s, req, &a2a_state, err);
    /* a Tree's long chains (NVLink domains) played short, twice: flow
     * only (fold.h), without faults (a dropped rank could be struck)
     * and without a trace (it names every rank's ops) */
    if (rc == NSIM_OK && may_fold && eo.fidelity == NSIM_FIDELITY_FLOW &&
        s->nfaults == 0 && !o->want_trace)
        rc = nsim_plan_tree_chain(s->topo, req, &req->fold_tree_chain) ==
                     NSIM_OK
                 ? NSIM_OK
                 : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    if (rc == NSIM_OK)
        rc = build_within(s, req, a2a_state, &plan, err);
    if (rc == NSIM_OK && may_fold && fold_applies(req))
        rc = nsim_plan_fold(s->topo, plan, &fold, err);
    fold_play_drop(req, plan, struck);
    if (rc == NSIM_OK && req->fold_senders && fold.played == fold.hosts) {
        /* refused after all: plan every host's sends */
        nsim_plan_destroy(plan);
        plan = NULL;
        req->fold_senders = 0;
        rc = nsim_plan_build(s->topo, req, &plan, err);
    }
    if (rc == NSIM_OK && o->want_trace && !o->keep_compact &&
        req->compact_ops && fold.played == fold.hosts) {
        /* the traced run did not fold after all: its plan whole, every op
         * placed (the trace names each op's chunk) */
        nsim_plan_destroy(plan);
        plan = NULL;
        req->compact_ops = 0;
        req->fold_senders = 0;
        req->fold_tree = 0;
        rc = nsim_plan_build(s->topo, req, &plan, err);
    }
    if (rc == NSIM_OK)
        rc = nsim_exec_run(s->topo, plan, &s->params, &eo, &res, err);
    nsim_time gpu = 0; /* a folded chain: the whole chain's */
    int extended = 0;
    if (rc == NSIM_OK && fold.chain_hosts > 0 && fold.played < fold.hosts) {
        rc = chain_extend(s, req, &eo, &fold, &res, &gpu, err);
        extended = 1;
    }
    if (rc == NSIM_OK && plan->tree_chain_played > 0) {
        fold.tree_chain = plan->tree_chain_played;
        fold.tree_chain_of = plan->nranks / plan->nhosts;
        rc = tree_chain_extend(s, req, &eo, &fold, &res, &gpu, err);
        extended = 1;
    }
    if (rc != NSIM_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        if (rc == NSIM_EBUDGET && eo.auto_events > 0 &&
            res.est_events > eo.auto_events)
            *auto_events = res.est_events; /* auto's limit, not a budget */
        nsim_exec_result_free(&res); /* a chain's first run's */
        nsim_plan_destroy(plan);
        char folded[160] = "";
        if (rc == NSIM_EFAULT && fold.played < fold.hosts)
            snprintf(folded, sizeof folded,
                     " (folded: %u of %u hosts played, each standing for "
                     "its twins, so the ranks named may be a twin's; "
                     "--fold off names the whole cluster's)",
                     fold.played, fold.hosts);
        return NSIM_ERR(err, rc, "%s: %llu bytes: %s%s%s", s->source,
                        (unsigned long long)bytes, msg,
                        rc == NSIM_EBUDGET ? budget_hint(s, o, req->compact_ops,
                                                       may_fold)
                                           : "",
                        folded);
    }
    /* nccl-tests times an op as the longer of the GPUs' and the host
     * thread's launches (exec.h); -G takes the launches off the path,
     * -C 1 reports the host's side alone */
    if (!extended)
        gpu = res.gpu_ps;
    nsim_time t = o->cputime     ? res.host_ps
                  : o->cudagraph ? gpu
                                 : (gpu > res.host_ps ? gpu : res.host_ps);
    fill_row(s, bytes, (double)t / 1e6, plan->nchannels, row);
    row->events = res.events;
    row->flow = res.flow;
    row->fidelity = nsim_fidelity_name(eo.fidelity);
    if (fold.hosts > 0) /* tried */
        row->fold = fold;
    req->proto = plan->req.proto; /* the planner's for p2p */
    if (o->keep && kept_plan != NULL && kept_res != NULL) {
        *kept_plan = plan;
        *kept_res = res;
    } else {
        nsim_exec_result_free(&res);
        nsim_plan_destroy(plan);
    }
    return NSIM_OK;
}

int nsim_run_size(nsim_scenario *s, const nsim_run_opts *o, uint64_t bytes,
                  nsim_run_row *row, nsim_plan **kept_plan,
                  nsim_exec_result *kept_res, nsim_err *err)
{
    nsim_plan_req req;
    double pred = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    NSIM_TRY(nsim_run_request(s, bytes, &req, &pred, err));
    if (o->analytic) {
        if (pred < 0)
            return NSIM_ERR(err, NSIM_ENOTSUP,
                            "%s: --mode analytic: NCCL's tuner has no "
                            "model for %s (point-to-point: NCCL predicts "
                            "no time for it); use --mode simulate",
                            s->source, nsim_coll_name(s->coll));
        uint32_t nch = req.nchannels;
        if (nch == 0 && (req.algo == NSIM_ALGO_NVLS ||
                         req.algo == NSIM_ALGO_NVLSTREE))
            nch = nsim_plan_req_nvls_channels(s->topo, &req);
        fill_row(s, bytes, pred, nch, row);
        row->fidelity = "tuner"; /* NCCL's model, not a simulation */
    } else {
        req.fold_row_ps = pred > 0 ? (nsim_time)(pred * 1e6) : 0;
        req.fold_lat_any = s->fold == NSIM_FOLD_ON;
        nsim_auto_why why;
        nsim_fidelity f = nsim_run_fidelity(s, bytes, &why);
        double measure = why == NSIM_AUTO_PACKETS
                             ? nsim_run_packets_estimate(s, bytes)
                             : 0;
        /* auto starts packet where its packets are few; the plan then
         * tells its events (exec.c's estimate), and past
         * flow_auto_events, or past a budget, it runs flow */
        uint64_t auto_events = s->fidelity == NSIM_FIDELITY_AUTO &&
                                       f == NSIM_FIDELITY_PACKET &&
                                       !alltoall_on_domains(s)
                                   ? s->params.flow_auto_events
                                   : 0;
        nsim_plan_req whole = req; /* simulate marks req up */
        int rc = simulate(s, o, bytes, f, &auto_events, &req, row, kept_plan,
                          kept_res, err);
        if (rc == NSIM_EBUDGET && s->fidelity == NSIM_FIDELITY_AUTO &&
            f == NSIM_FIDELITY_PACKET) {
            /* the packet run would be slow (its events), or its plan or
             * state (an AllToAll's pairs) would pass a budget: flow,
             * which folds where the hosts are alike, says why or stops */
            why = auto_events > 0 ? NSIM_AUTO_EVENTS : NSIM_AUTO_BUDGET;
            measure = (double)auto_events;
#ifdef __GLIBC__
            /* the packet plan's gigabytes, freed, back to the system:
             * the flow run moves its resident heap onto huge pages
             * (exec.c), which copied them too (4 of 9 s, 1,024 L40S) */
            (void)malloc_trim(0);
#endif
            req = whole;
            rc = simulate(s, o, bytes, NSIM_FIDELITY_FLOW, NULL, &req, row,
                          kept_plan, kept_res, err);
        }
        if (rc == NSIM_OK) {
            row->fidelity_why = why;
            row->auto_measure = measure;
        }
        if (rc != NSIM_OK)
            return rc;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    row->wall_s = (double)(t1.tv_sec - t0.tv_sec) +
                  (t1.tv_nsec - t0.tv_nsec) / 1e9;
    row->algo = nsim_coll_is_p2p(req.coll) ? "P2P" : nsim_algo_name(req.algo);
    row->proto = nsim_proto_name(req.proto);
    row->pred_us = pred;
    return NSIM_OK;
}

uint64_t nsim_run_test_bytes(const nsim_scenario *s, uint64_t size)
{
    uint64_t cnt;
    return nsim_coll_test_bytes(s->coll, nsim_topo_nranks(s->topo),
                                s->type_size, size, &cnt);
}

static int next_size(const nsim_scenario *s, uint64_t cur, uint64_t *next)
{
    uint64_t n = s->step_factor > 1 ? (uint64_t)((double)cur * s->step_factor)
                                    : cur + s->step_bytes;
    n -= n % s->type_size;
    if (n <= cur)
        return 0;
    *next = n;
    return n <= s->max_bytes;
}

int nsim_run_sizes(const nsim_scenario *s, uint64_t **out, size_t *n,
                   nsim_err *err)
{
    uint64_t *v = NULL, size = s->min_bytes, next = 0;
    size_t cnt = 0, cap = 0;
    int more = 1;
    while (more) {
        more = next_size(s, size, &next);
        uint64_t bytes = nsim_run_test_bytes(s, size);
        size = next;
        if (bytes == 0 || (cnt > 0 && bytes == v[cnt - 1]))
            continue; /* below 16 B per rank, or the same size again */
        if (cnt == NSIM_SCENARIO_MAX_SIZES) {
            free(v);
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: sizes: the sweep visits over %u sizes; use "
                            "a larger step (-f, -i) or a smaller range",
                            s->source, NSIM_SCENARIO_MAX_SIZES);
        }
        if (cnt == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *g = realloc(v, cap * sizeof *g);
            if (g == NULL) {
                free(v);
                return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
            }
            v = g;
        }
        v[cnt++] = bytes;
    }
    *out = v;
    *n = cnt;
    return NSIM_OK;
}
