/* SPDX-License-Identifier: MIT
 *
 * explain.c - what bounds a run (see explain.h).
 */
#include "explain.h"

#include <stdio.h>
#include <string.h>

#include "sim/plan/tune.h"

static double share(nsim_time a, nsim_time b)
{
    return b ? (double)a / (double)b : 0;
}

static void name_link(const nsim_topo *t, const nsim_link_record *lr,
                      nsim_time run, nsim_explain_link *out)
{
    const nsim_link *l = nsim_topo_link(t, lr->link);
    snprintf(out->name, sizeof out->name, "%s -> %s",
             nsim_topo_device(t, l->src)->name, nsim_topo_device(t, l->dst)->name);
    snprintf(out->type, sizeof out->type, "%s", nsim_link_type_name(l->type));
    out->port = nsim_topo_device(t, l->src)->type == NSIM_DEV_NIC;
    out->util = share(lr->busy_ps, run);
    out->util = out->util > 1 ? 1 : out->util;
    out->occupied = share(lr->occupied_ps, run);
    out->occupied = out->occupied > 1 ? 1 : out->occupied;
    out->gbps = run ? (double)lr->bytes / ((double)run * 1e-12) / 1e9 : 0;
}

static void links(const nsim_topo *t, const nsim_exec_result *r,
                  nsim_explanation *x)
{
    double best = -1, best_port = -1;
    for (uint32_t i = 0; i < r->nlinks; i++) {
        nsim_explain_link l;
        name_link(t, &r->links[i], r->gpu_ps, &l);
        if (l.util > best) {
            best = l.util;
            x->busiest_link = l;
            x->have_link = 1;
        }
        if (l.port && l.util > best_port) {
            best_port = l.util;
            x->busiest_port = l;
            x->have_port = 1;
        }
    }
}

static const nsim_wait_record *wait_of(const nsim_exec_result *r,
                                       uint32_t conn)
{
    for (uint32_t i = 0; i < r->xport.nwaits; i++)
        if (r->xport.waits[i].conn == conn)
            return &r->xport.waits[i];
    return NULL;
}

/* What the thread block li waited on longest. */
static void longest_wait(const nsim_scenario *s, const nsim_plan *p,
                         const nsim_exec_result *r, uint32_t li,
                         nsim_explanation *x)
{
    const nsim_plan_lane *pl = &p->lanes[li];
    const nsim_lane_stats *ls = &r->lanes[li];
    x->wait_channel = pl->channel;
    x->wait_rank = pl->rank;
    x->wait_us = (double)(ls->wait_recv_ps + ls->wait_send_ps) / 1e6;
    x->wait_share = share(ls->wait_recv_ps + ls->wait_send_ps, r->gpu_ps);
    if (ls->wait_send_ps >= ls->wait_recv_ps && pl->send_conn != UINT32_MAX) {
        const nsim_plan_conn *pc = &p->conns[pl->send_conn];
        snprintf(x->wait_on, sizeof x->wait_on, "credits");
        snprintf(x->wait_detail, sizeof x->wait_detail,
                 "%.1f us for a free slot on its %s connection to rank %u "
                 "(all %u in flight: the receiver frees a slot only when it "
                 "has consumed the slice)",
                 (double)ls->wait_send_ps / 1e6,
                 nsim_transport_name(pc->transport), pc->to,
                 NSIM_NCCL_STEPS / p->slice_steps);
        return;
    }
    if (pl->recv_conn == UINT32_MAX) {
        snprintf(x->wait_on, sizeof x->wait_on, "launch");
        snprintf(x->wait_detail, sizeof x->wait_detail,
                 "waited for its kernel launch (%.1f us)",
                 (double)s->params.kernel_launch_ps / 1e6);
        return;
    }
    const nsim_plan_conn *pc = &p->conns[pl->recv_conn];
    double recv = (double)ls->wait_recv_ps / 1e6;
    const nsim_wait_record *w = wait_of(r, pl->recv_conn);
    if (pc->transport == NSIM_TRANSPORT_NET && w != NULL) {
        double cts = (double)w->cts_ps / 1e6;
        double poll = (double)(w->poll_ps[0] + w->poll_ps[1]) / 1e6;
        double hr = (double)w->host_read_ps / 1e6;
        const char *on = "data";
        double v = 0;
        if (cts > v) { on = "CTS"; v = cts; }
        if (poll > v) { on = "CQ polling"; v = poll; }
        if (hr > v) { on = "PCIe reads"; v = hr; }
        if (v < 0.1 * recv) {
            snprintf(x->wait_on, sizeof x->wait_on, "data");
            snprintf(x->wait_detail, sizeof x->wait_detail,
                     "%.1f us for slices from rank %u over NET (%s -> %s): "
                     "the wire and the NICs; CTS %.1f us, CQ polling %.1f "
                     "us, PCIe reads %.1f us on that connection",
                     recv, pc->from,
                     nsim_topo_device(s->topo, pc->send_nic)->name,
                     nsim_topo_device(s->topo, pc->recv_nic)->name, cts, poll,
                     hr);
            return;
        }
        snprintf(x->wait_on, sizeof x->wait_on, "%s", on);
        snprintf(x->wait_detail, sizeof x->wait_detail,
                 "%.1f us for slices from rank %u over NET; on that "
                 "connection the sender waited %.1f us for CTS, completions "
                 "%.1f us for the proxy's CQ poll, the GPU %.1f us on PCIe "
                 "reads from host memory",
                 recv, pc->from, cts, poll, hr);
        return;
    }
    snprintf(x->wait_on, sizeof x->wait_on, "data");
    snprintf(x->wait_detail, sizeof x->wait_detail,
             "%.1f us for slices from rank %u over %s (%s)", recv, pc->from,
             nsim_transport_name(pc->transport), nsim_path_type_name(pc->path));
}

static void lanes(const nsim_scenario *s, const nsim_plan *p,
                  const nsim_exec_result *r, nsim_explanation *x)
{
    nsim_time launch = s->params.kernel_launch_ps;
    nsim_time window = r->gpu_ps > launch ? r->gpu_ps - launch : 1;
    nsim_time busy = 0, recv = 0, send = 0, worst = 0;
    nsim_time min_first = NSIM_TIME_MAX, max_first = 0, min_last = NSIM_TIME_MAX;
    uint32_t nl = 0, wl = UINT32_MAX;
    for (uint32_t i = 0; i < r->nlanes && i < p->nlanes; i++) {
        const nsim_lane_stats *l = &r->lanes[i];
        if (p->lanes[i].nops == 0)
            continue;
        nl++;
        busy += l->busy_ps;
        recv += l->wait_recv_ps;
        send += l->wait_send_ps;
        double cs = share(l->busy_ps, window);
        x->copy_share_max = cs > x->copy_share_max ? cs : x->copy_share_max;
        if (l->wait_recv_ps + l->wait_send_ps >= worst) {
            worst = l->wait_recv_ps + l->wait_send_ps;
            wl = i;
        }
        min_first = l->first_start_ps < min_first ? l->first_start_ps : min_first;
        max_first = l->first_start_ps > max_first ? l->first_start_ps : max_first;
        min_last = l->last_end_ps < min_last ? l->last_end_ps : min_last;
    }
    nsim_time all = (nsim_time)nl * window;
    x->busy_share = share(busy, all);
    x->recv_share = share(recv, all);
    x->send_share = share(send, all);
    if (wl != UINT32_MAX)
        longest_wait(s, p, r, wl, x);
    if (nl == 0)
        return;
    double T = (double)r->gpu_ps;
    x->launch_share = (double)min_first / T;
    x->fill_share = (double)(max_first - min_first) / T;
    x->drain_share = min_last < r->gpu_ps ? (double)(r->gpu_ps - min_last) / T : 0;
    x->steady_share = 1 - x->launch_share - x->fill_share - x->drain_share;
    if (x->steady_share < 0) { /* fill and drain overlap: no steady state */
        x->steady_share = 0;
        x->drain_share = 1 - x->launch_share - x->fill_share;
    }
    x->launch_us = (double)launch / 1e6;
}

static void tuner(const nsim_scenario *s, uint64_t bytes, nsim_explanation *x)
{
    nsim_algo a;
    nsim_proto pr;
    double t = -1;
    uint32_t off = (s->pat_enable == 0 ? 1u << NSIM_ALGO_PAT : 0) |
                   (s->nvls_enable == 0 ? 1u << NSIM_ALGO_NVLS |
                                              1u << NSIM_ALGO_NVLSTREE
                                        : 0);
    if (nsim_coll_is_p2p(s->coll) ||
        nsim_tune_pick_without(s->topo, s->coll, bytes, 0, 0, off, &a, &pr,
                               &t, NULL) != NSIM_OK) {
        snprintf(x->tuner_algo, sizeof x->tuner_algo, "-");
        snprintf(x->tuner_proto, sizeof x->tuner_proto, "-");
        x->tuner_pred_us = -1;
        return;
    }
    snprintf(x->tuner_algo, sizeof x->tuner_algo, "%s", nsim_algo_name(a));
    snprintf(x->tuner_proto, sizeof x->tuner_proto, "%s", nsim_proto_name(pr));
    x->tuner_pred_us = t;
    x->tuner_differs = strcmp(x->tuner_algo, x->algo) != 0 ||
                       strcmp(x->tuner_proto, x->proto) != 0;
}

static void bound(nsim_explanation *x)
{
    /* (a timer that fires after the run's last op, its lost packet an
     * ACK the data did not wait for, is longer than the run) */
    if (x->timeouts > 0 && x->timeout_us <= x->time_us &&
        (double)x->timeouts * x->timeout_us >= 0.5 * x->time_us) {
        snprintf(x->bound, sizeof x->bound,
                 "RC timeouts after lost packets: %llu of %.3f s each "
                 "(NCCL_IB_TIMEOUT) in a run of %.3f s",
                 (unsigned long long)x->timeouts, x->timeout_us / 1e6,
                 x->time_us / 1e6);
    } else if (x->launch_share >= 0.4) {
        snprintf(x->bound, sizeof x->bound,
                 "the launch/latency floor: %.0f%% of the run is before the "
                 "first slice moves (kernel launch %.1f us)",
                 x->launch_share * 100, x->launch_us);
    } else if (x->have_link && x->busiest_link.util >= 0.85) {
        snprintf(x->bound, sizeof x->bound, "the %s link %s, %.0f%% busy",
                 x->busiest_link.type, x->busiest_link.name,
                 x->busiest_link.util * 100);
    } else if (x->copy_share_max >= 0.85) {
        snprintf(x->bound, sizeof x->bound,
                 "the thread blocks' copy rate: the busiest block streams "
                 "%.0f%% of the time at %.1f GB/s",
                 x->copy_share_max * 100, x->sm_gbps);
    } else if (x->busy_share < 0.2 &&
               (!x->have_link || x->busiest_link.util < 0.2)) {
        snprintf(x->bound, sizeof x->bound,
                 "latency: the links are at most %.0f%% busy and the thread "
                 "blocks stream %.0f%% of the time; each step waits for the "
                 "previous one's slice (longest: channel %u rank %u on %s)",
                 x->have_link ? x->busiest_link.util * 100 : 0,
                 x->busy_share * 100, x->wait_channel, x->wait_rank,
                 x->wait_on);
    } else if (x->fill_share + x->drain_share >= 0.5) {
        snprintf(x->bound, sizeof x->bound,
                 "latency: pipeline fill and drain take %.0f%% of the run "
                 "(too few slices per channel to reach a steady state)",
                 (x->fill_share + x->drain_share) * 100);
    } else {
        snprintf(x->bound, sizeof x->bound,
                 "waits: channel %u rank %u waits %.0f%% of the run on %s",
                 x->wait_channel, x->wait_rank, x->wait_share * 100,
                 x->wait_on);
    }
}

/* What random loss cost: packets lost per NIC, the QPs' go-backs and
 * what they resent (their records: nsim_xport_stats). */
static void loss(const nsim_scenario *s, const nsim_exec_result *r,
                 nsim_explanation *x)
{
    const nsim_xport_stats *st = &r->xport;
    for (uint32_t i = 0; i < st->nports; i++) {
        const nsim_port_record *p = &st->ports[i];
        x->lost += p->packets_lost;
        if (p->packets_lost > x->lost_most) {
            x->lost_most = p->packets_lost;
            snprintf(x->lost_nic, sizeof x->lost_nic, "%s",
                     nsim_topo_device(s->topo, p->nic)->name);
        }
    }
    for (uint32_t i = 0; i < st->nqps; i++) {
        x->naks += st->qps[i].naks;
        x->timeouts += st->qps[i].timeouts;
        x->resent += st->qps[i].retransmits;
        x->sent += st->qps[i].packets;
    }
    uint64_t e = s->params.ib_timeout_exp < 31 ? s->params.ib_timeout_exp : 31;
    x->timeout_us = (double)(s->params.ib_timeout_unit_ps << e) / 1e6;
}

int nsim_explain(nsim_scenario *s, uint64_t size, nsim_explanation *x,
                 nsim_err *err)
{
    nsim_run_opts o = {.keep = 1, .keep_compact = 1};
    nsim_run_row row;
    nsim_plan *p = NULL;
    nsim_exec_result r = {0};
    uint64_t bytes = nsim_run_test_bytes(s, size);
    memset(x, 0, sizeof *x);
    if (bytes == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: %llu bytes: below what %s can split over %u ranks",
                        s->source, (unsigned long long)size,
                        nsim_coll_name(s->coll), nsim_topo_nranks(s->topo));
    NSIM_TRY(nsim_run_size(s, &o, bytes, &row, &p, &r, err));
    x->size = bytes;
    x->time_us = row.time_us;
    x->busbw = row.busbw;
    snprintf(x->algo, sizeof x->algo, "%s", row.algo);
    snprintf(x->proto, sizeof x->proto, "%s", row.proto);
    x->nchannels = row.nchannels;
    x->qps = s->qps_per_conn;
    snprintf(x->fidelity, sizeof x->fidelity, "%s", row.fidelity);
    nsim_auto_why_text(s, &row, x->fidelity_why, sizeof x->fidelity_why);
    x->pred_us = row.pred_us;
    x->fold_hosts = row.fold.hosts;
    x->fold_played = row.fold.played;
    x->fold_struck = row.fold.struck;
    if (row.fold.played < row.fold.hosts && row.fold.chain_hosts > 0) {
        x->fold_chain = row.fold.chain_hosts;
        x->chain_played_us = (double)r.gpu_ps / 1e6;
        x->chain_host_us = (double)row.fold.chain_host_ps / 1e6;
    }
    if (row.fold.tree_chain > 0) {
        x->tree_chain = row.fold.tree_chain;
        x->tree_chain_of = row.fold.tree_chain_of;
        x->tree_chain_short = row.fold.tree_chain_short;
        x->tree_played_us = (double)r.gpu_ps / 1e6;
        x->tree_rank_us = (double)row.fold.tree_chain_rank_ps / 1e6;
    }
    const nsim_device *g =
        nsim_topo_device(s->topo, nsim_topo_rank_device(s->topo, 0));
    x->sm_gbps = nsim_params_sm_stream_bw(&s->params, g->gen) / 1e9;
    links(s->topo, &r, x);
    lanes(s, p, &r, x);
    for (uint32_t i = 0; i < r.xport.nwaits; i++) {
        const nsim_wait_record *w = &r.xport.waits[i];
        x->cts_us += (double)w->cts_ps / 1e6;
        x->poll_us += (double)(w->poll_ps[0] + w->poll_ps[1]) / 1e6;
        x->host_read_us += (double)w->host_read_ps / 1e6;
    }
    loss(s, &r, x);
    tuner(s, bytes, x);
    bound(x);
    nsim_exec_result_free(&r);
    nsim_plan_destroy(p);
    return NSIM_OK;
}

void nsim_explain_print(FILE *f, const nsim_explanation *x)
{
    fprintf(f, "size %llu bytes: %.2f us, busbw %.2f GB/s (%s/%s, %u channels, "
               "%u QP(s) per connection)\n",
            (unsigned long long)x->size, x->time_us, x->busbw, x->algo,
            x->proto, x->nchannels, x->qps);
    if (strcmp(x->fidelity, "packet") != 0)
        fprintf(f, "fidelity: %s%s%s%s\n", x->fidelity,
                x->fidelity_why[0] ? " (" : "", x->fidelity_why,
                x->fidelity_why[0] ? ")" : "");
    fprintf(f, "bound by: %s\n", x->bound);
    if (x->fold_chain > 0)
        fprintf(f, "folded: a chain (Broadcast, Reduce) played on %u of %u "
                   "hosts (%.2f us) and on %u; each of the other %u adds "
                   "%.2f us; the links, waits, thread blocks and phases "
                   "below are the %u hosts' run (--fold off plays every "
                   "host)\n",
                x->fold_played, x->fold_hosts, x->chain_played_us,
                x->fold_chain / 2, x->fold_hosts - x->fold_played,
                x->chain_host_us, x->fold_played);
    else if (x->fold_played < x->fold_hosts)
        fprintf(f, "folded: %u of %u hosts played, each doing its twins' "
                   "work; the links, waits and thread blocks below are "
                   "theirs, and links the hosts share in the fabric carry "
                   "only their flows (--fold off plays every host)\n",
                x->fold_played, x->fold_hosts);
    if (x->tree_chain > 0)
        fprintf(f, "folded: each node's Tree chain of %u ranks played with "
                   "%u (%.2f us) and with %u; each of the other %u adds "
                   "%.2f us; the links, waits, thread blocks and phases "
                   "below are the %u-rank chains' run (--fold off plays "
                   "every rank)\n",
                x->tree_chain_of, x->tree_chain, x->tree_played_us,
                x->tree_chain_short, x->tree_chain_of - x->tree_chain,
                x->tree_rank_us, x->tree_chain);
    if (x->fold_played < x->fold_hosts && x->fold_struck > 0)
        fprintf(f, "faults: %u of the played hosts struck, each standing "
                   "for its twins (a ring or tree runs at its slowest hop; "
                   "an AllToAll's struck host does what a host does)\n",
                x->fold_struck);
    if (x->have_link) {
        fprintf(f, "busiest link: %s (%s), %.1f%% busy, %.1f GB/s of "
                   "payload",
                x->busiest_link.name, x->busiest_link.type,
                x->busiest_link.util * 100, x->busiest_link.gbps);
        /* flow fidelity: work on it longer than it was busy, so its
         * flows were held below its rate elsewhere for the rest */
        if (x->busiest_link.occupied > x->busiest_link.util + 0.005)
            fprintf(f, "; flows on it %.1f%% of the run, held below its "
                       "rate elsewhere for %.1f%%",
                    x->busiest_link.occupied * 100,
                    (x->busiest_link.occupied - x->busiest_link.util) * 100);
        fputc('\n', f);
    }
    if (x->have_port)
        fprintf(f, "busiest NIC port: %s (%s), %.1f%% busy, %.1f GB/s\n",
                x->busiest_port.name, x->busiest_port.type,
                x->busiest_port.util * 100, x->busiest_port.gbps);
    fprintf(f, "longest wait: channel %u rank %u, %.1f us (%.0f%% of the "
               "run) on %s: %s\n",
            x->wait_channel, x->wait_rank, x->wait_us, x->wait_share * 100,
            x->wait_on, x->wait_detail);
    fprintf(f, "thread blocks: %.0f%% streaming (%.1f GB/s each), %.0f%% "
               "waiting for a slice, %.0f%% waiting for a free slot; the "
               "busiest streams %.0f%% of the time\n",
            x->busy_share * 100, x->sm_gbps, x->recv_share * 100,
            x->send_share * 100, x->copy_share_max * 100);
    fprintf(f, "NET waits, all %sconnections: CTS %.1f us, CQ polling %.1f "
               "us, PCIe host reads %.1f us\n",
            x->fold_played < x->fold_hosts ? "played " : "", x->cts_us,
            x->poll_us, x->host_read_us);
    if (x->lost > 0 || x->timeouts > 0)
        fprintf(f, "loss: %llu packets lost (%llu by %s); the QPs went back "
                   "%llu times on a NAK and %llu on the timer (%.3f s each) "
                   "and resent %llu packets, %.2f%% of the %llu they sent\n",
                (unsigned long long)x->lost,
                (unsigned long long)x->lost_most,
                x->lost_nic[0] ? x->lost_nic : "-",
                (unsigned long long)x->naks,
                (unsigned long long)x->timeouts, x->timeout_us / 1e6,
                (unsigned long long)x->resent,
                x->sent ? 100.0 * (double)x->resent / (double)x->sent : 0.0,
                (unsigned long long)x->sent);
    fprintf(f, "phases: launch %.0f%%, pipeline fill %.0f%%, steady %.0f%%, "
               "drain %.0f%%\n",
            x->launch_share * 100, x->fill_share * 100, x->steady_share * 100,
            x->drain_share * 100);
    if (x->tuner_pred_us < 0)
        fprintf(f, "tuner: NCCL has no model for this collective\n");
    else if (x->tuner_differs)
        fprintf(f, "tuner: NCCL would pick %s/%s (predicted %.1f us) instead "
                   "of %s/%s (predicted %.1f us)\n",
                x->tuner_algo, x->tuner_proto, x->tuner_pred_us, x->algo,
                x->proto, x->pred_us);
    else
        fprintf(f, "tuner: NCCL picks the same, %s/%s (predicted %.1f us)\n",
                x->tuner_algo, x->tuner_proto, x->tuner_pred_us);
}

static cJSON *link_json(const nsim_explain_link *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", l->name);
    cJSON_AddStringToObject(o, "type", l->type);
    cJSON_AddNumberToObject(o, "util", l->util);
    cJSON_AddNumberToObject(o, "occupied", l->occupied);
    cJSON_AddNumberToObject(o, "payload_GBps", l->gbps);
    return o;
}

cJSON *nsim_explain_json(const nsim_explanation *x)
{
    cJSON *o = cJSON_CreateObject(), *w, *t, *ph, *tb, *nw;
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "format", "ncclsim-explain");
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddNumberToObject(o, "size", (double)x->size);
    cJSON_AddNumberToObject(o, "time_us", x->time_us);
    cJSON_AddNumberToObject(o, "busbw_GBps", x->busbw);
    cJSON_AddStringToObject(o, "algo", x->algo);
    cJSON_AddStringToObject(o, "proto", x->proto);
    cJSON_AddNumberToObject(o, "nchannels", x->nchannels);
    cJSON_AddNumberToObject(o, "qps_per_connection", x->qps);
    cJSON_AddStringToObject(o, "fidelity", x->fidelity);
    if (x->fidelity_why[0])
        cJSON_AddStringToObject(o, "fidelity_why", x->fidelity_why);
    cJSON_AddStringToObject(o, "bound", x->bound);
    cJSON *fo = cJSON_AddObjectToObject(o, "fold");
    cJSON_AddNumberToObject(fo, "hosts", x->fold_hosts);
    cJSON_AddNumberToObject(fo, "played", x->fold_played);
    cJSON_AddNumberToObject(fo, "struck", x->fold_struck);
    if (x->fold_chain > 0) {
        cJSON_AddNumberToObject(fo, "chain_played_us", x->chain_played_us);
        cJSON_AddNumberToObject(fo, "chain_host_us", x->chain_host_us);
    }
    if (x->tree_chain > 0) {
        cJSON_AddNumberToObject(fo, "tree_chain_ranks", x->tree_chain);
        cJSON_AddNumberToObject(fo, "tree_chain_of", x->tree_chain_of);
        cJSON_AddNumberToObject(fo, "tree_chain_played_us",
                                x->tree_played_us);
        cJSON_AddNumberToObject(fo, "tree_chain_rank_us", x->tree_rank_us);
    }
    if (x->have_link)
        cJSON_AddItemToObject(o, "busiest_link", link_json(&x->busiest_link));
    if (x->have_port)
        cJSON_AddItemToObject(o, "busiest_port", link_json(&x->busiest_port));
    w = cJSON_AddObjectToObject(o, "longest_wait");
    cJSON_AddNumberToObject(w, "channel", x->wait_channel);
    cJSON_AddNumberToObject(w, "rank", x->wait_rank);
    cJSON_AddNumberToObject(w, "wait_us", x->wait_us);
    cJSON_AddNumberToObject(w, "share", x->wait_share);
    cJSON_AddStringToObject(w, "on", x->wait_on);
    cJSON_AddStringToObject(w, "detail", x->wait_detail);
    tb = cJSON_AddObjectToObject(o, "thread_blocks");
    cJSON_AddNumberToObject(tb, "streaming", x->busy_share);
    cJSON_AddNumberToObject(tb, "waiting_for_slice", x->recv_share);
    cJSON_AddNumberToObject(tb, "waiting_for_slot", x->send_share);
    cJSON_AddNumberToObject(tb, "busiest_streaming", x->copy_share_max);
    cJSON_AddNumberToObject(tb, "stream_GBps", x->sm_gbps);
    nw = cJSON_AddObjectToObject(o, "net_waits_us");
    cJSON_AddNumberToObject(nw, "cts", x->cts_us);
    cJSON_AddNumberToObject(nw, "cq_polling", x->poll_us);
    cJSON_AddNumberToObject(nw, "pcie_host_reads", x->host_read_us);
    cJSON *lo = cJSON_AddObjectToObject(o, "loss");
    cJSON_AddNumberToObject(lo, "packets_lost", (double)x->lost);
    cJSON_AddStringToObject(lo, "most_by", x->lost_nic);
    cJSON_AddNumberToObject(lo, "most_by_packets", (double)x->lost_most);
    cJSON_AddNumberToObject(lo, "naks", (double)x->naks);
    cJSON_AddNumberToObject(lo, "timeouts", (double)x->timeouts);
    cJSON_AddNumberToObject(lo, "timeout_us", x->timeout_us);
    cJSON_AddNumberToObject(lo, "packets_resent", (double)x->resent);
    cJSON_AddNumberToObject(lo, "packets_sent", (double)x->sent);
    ph = cJSON_AddObjectToObject(o, "phases");
    cJSON_AddNumberToObject(ph, "launch", x->launch_share);
    cJSON_AddNumberToObject(ph, "fill", x->fill_share);
    cJSON_AddNumberToObject(ph, "steady", x->steady_share);
    cJSON_AddNumberToObject(ph, "drain", x->drain_share);
    t = cJSON_AddObjectToObject(o, "tuner");
    cJSON_AddStringToObject(t, "algo", x->tuner_algo);
    cJSON_AddStringToObject(t, "proto", x->tuner_proto);
    cJSON_AddNumberToObject(t, "predicted_us", x->tuner_pred_us);
    cJSON_AddNumberToObject(t, "predicted_us_of_run", x->pred_us);
    cJSON_AddBoolToObject(t, "differs", x->tuner_differs);
    return o;
}
