/* SPDX-License-Identifier: MIT
 *
 * stats.c - run statistics and the NCCL_DEBUG-style account (stats.h).
 */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#define DEV(t, i) (nsim_topo_device((t), (i))->name)

static int conn_nic_index(const nsim_topo *t, uint32_t nic)
{
    /* NCCL numbers a host's NET devices 0..n-1 in PCI order; ours in
     * device order */
    int idx = 0;
    const nsim_device *d = nsim_topo_device(t, nic);
    for (uint32_t i = 0; i < nic; i++) {
        const nsim_device *o = nsim_topo_device(t, i);
        idx += o->type == NSIM_DEV_NIC && o->host == d->host;
    }
    return idx;
}

static void print_conns(FILE *f, const nsim_plan *p, const nsim_exec_result *r)
{
    fprintf(f, "# connections: channel from -> to, transport, slices, "
               "bytes, time the sender waited for a free slot\n");
    for (uint32_t i = 0; i < r->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        fprintf(f, "#   ch %2u %3u -> %-3u %-3s %8llu slices %14llu B  "
                   "blocked %10.2f us\n",
                c->channel, c->from, c->to, nsim_transport_name(c->transport),
                (unsigned long long)r->conns[i].slices,
                (unsigned long long)r->conns[i].bytes,
                (double)r->conns[i].blocked_credit_ps / 1e6);
    }
}

static int cmp_busy(const void *a, const void *b)
{
    const nsim_link_record *x = a, *y = b;
    if (x->busy_ps != y->busy_ps)
        return x->busy_ps > y->busy_ps ? -1 : 1;
    return x->link < y->link ? -1 : x->link > y->link;
}

static void print_links(FILE *f, const nsim_topo *t, const nsim_exec_result *r)
{
    nsim_link_record *l = malloc((r->nlinks ? r->nlinks : 1) * sizeof *l);
    if (l == NULL)
        return;
    memcpy(l, r->links, r->nlinks * sizeof *l);
    qsort(l, r->nlinks, sizeof *l, cmp_busy);
    /* flow fidelity: also the time a link had a flow on it; where that
     * is more than its busy time, its flows were held below its rate by
     * their other servers (in packet fidelity the two are the same) */
    int flow = r->flow.flows > 0;
    fprintf(f, "# links (%u carried traffic; busiest first): payload, bytes "
               "on the wire incl. headers and responses, busy %% of the "
               "run%s\n",
            r->nlinks, flow ? ", % of the run with a flow on it" : "");
    for (uint32_t i = 0; i < r->nlinks && i < 24; i++) {
        const nsim_link *k = nsim_topo_link(t, l[i].link);
        fprintf(f, "#   %-14s -> %-14s %-6s %14llu B %14llu B wire %6.1f%%",
                DEV(t, k->src), DEV(t, k->dst), nsim_link_type_name(k->type),
                (unsigned long long)l[i].bytes,
                (unsigned long long)l[i].wire_bytes,
                100.0 * (double)l[i].busy_ps / (double)r->time_ps);
        if (flow)
            fprintf(f, "  flows %5.1f%%",
                    100.0 * (double)l[i].occupied_ps / (double)r->time_ps);
        fputc('\n', f);
    }
    free(l);
}

static void print_xport(FILE *f, const nsim_topo *t, const nsim_exec_result *r)
{
    const nsim_xport_stats *x = &r->xport;
    if (x->nports == 0)
        return;
    fprintf(f, "# NIC ports: packets and bytes sent and received, ACKs sent, "
               "average send rate, packets lost\n");
    for (uint32_t i = 0; i < x->nports; i++) {
        const nsim_port_record *p = &x->ports[i];
        fprintf(f, "#   %-12s tx %9llu pkts %14llu B  rx %9llu pkts %14llu B  "
                   "acks %8llu  %6.2f GB/s  lost %llu\n",
                DEV(t, p->nic), (unsigned long long)p->packets_tx,
                (unsigned long long)p->bytes_tx,
                (unsigned long long)p->packets_rx,
                (unsigned long long)p->bytes_rx,
                (unsigned long long)p->acks_tx,
                (double)p->bytes_tx / ((double)r->time_ps / 1e12) / 1e9,
                (unsigned long long)p->packets_lost);
    }
    fprintf(f, "# QPs: connection, index, side (send data / recv+CTS), QPN -> "
               "peer QPN, state, WRs, bytes, packets, ACKs, retransmitted "
               "packets, NAKs and timeouts it went back on\n");
    for (uint32_t i = 0; i < x->nqps; i++) {
        const nsim_qp_record *q = &x->qps[i];
        fprintf(f, "#   conn %4u qp %u %-4s 0x%05x -> 0x%05x %-4s wrs %7llu "
                   "%14llu B pkts %9llu acks %8llu retx %llu naks %llu "
                   "timeouts %llu\n",
                q->conn, q->index, q->side ? "recv" : "send", q->qpn,
                q->peer_qpn, q->state, (unsigned long long)q->wrs,
                (unsigned long long)q->bytes, (unsigned long long)q->packets,
                (unsigned long long)q->acks,
                (unsigned long long)q->retransmits,
                (unsigned long long)q->naks,
                (unsigned long long)q->timeouts);
    }
    for (uint32_t i = 0; i < x->nfailovers; i++) {
        const nsim_failover_record *fr = &x->failovers[i];
        fprintf(f, "# failover at %.3f us: channel %u, rank %u -> %u: %s: %s\n",
                (double)fr->at_ps / 1e6, fr->channel, fr->from, fr->to,
                nsim_failover_name(fr->action), fr->what);
    }
    fprintf(f, "# CQs: connection, side, depth, CQEs, polls, empty polls\n");
    for (uint32_t i = 0; i < x->ncqs; i++) {
        const nsim_cq_record *c = &x->cqs[i];
        fprintf(f, "#   conn %4u %-4s depth %5u cqes %8llu polls %8llu "
                   "empty %8llu\n",
                c->conn, c->side ? "recv" : "send", c->depth,
                (unsigned long long)c->cqes, (unsigned long long)c->polls,
                (unsigned long long)c->empty_polls);
    }
}

void nsim_stats_print(FILE *f, const nsim_topo *t, const nsim_plan *p,
                      const nsim_exec_result *r)
{
    fprintf(f, "# stats for %llu bytes: %.2f us simulated, %llu events\n",
            (unsigned long long)p->req.bytes, (double)r->time_ps / 1e6,
            (unsigned long long)r->events);
    print_conns(f, p, r);
    print_links(f, t, r);
    print_xport(f, t, r);
}

static cJSON *links_json(const nsim_topo *t, const nsim_exec_result *r)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; a && i < r->nlinks; i++) {
        const nsim_link *k = nsim_topo_link(t, r->links[i].link);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(a, o);
        cJSON_AddStringToObject(o, "from", DEV(t, k->src));
        cJSON_AddStringToObject(o, "to", DEV(t, k->dst));
        cJSON_AddStringToObject(o, "type", nsim_link_type_name(k->type));
        cJSON_AddNumberToObject(o, "bytes", (double)r->links[i].bytes);
        cJSON_AddNumberToObject(o, "wire_bytes", (double)r->links[i].wire_bytes);
        cJSON_AddNumberToObject(o, "busy_us", (double)r->links[i].busy_ps / 1e6);
        cJSON_AddNumberToObject(o, "occupied_us",
                                (double)r->links[i].occupied_ps / 1e6);
    }
    return a;
}

static cJSON *xport_json(const nsim_topo *t, const nsim_xport_stats *x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *qps = cJSON_AddArrayToObject(o, "qps");
    for (uint32_t i = 0; qps && i < x->nqps; i++) {
        const nsim_qp_record *q = &x->qps[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(qps, e);
        cJSON_AddNumberToObject(e, "conn", q->conn);
        cJSON_AddNumberToObject(e, "index", q->index);
        cJSON_AddStringToObject(e, "side", q->side ? "recv" : "send");
        cJSON_AddStringToObject(e, "nic", DEV(t, q->nic));
        cJSON_AddNumberToObject(e, "qpn", q->qpn);
        cJSON_AddNumberToObject(e, "peer_qpn", q->peer_qpn);
        cJSON_AddStringToObject(e, "state", q->state);
        cJSON_AddNumberToObject(e, "wrs", (double)q->wrs);
        cJSON_AddNumberToObject(e, "bytes", (double)q->bytes);
        cJSON_AddNumberToObject(e, "packets", (double)q->packets);
        cJSON_AddNumberToObject(e, "acks", (double)q->acks);
        cJSON_AddNumberToObject(e, "retransmits", (double)q->retransmits);
        cJSON_AddNumberToObject(e, "naks", (double)q->naks);
        cJSON_AddNumberToObject(e, "timeouts", (double)q->timeouts);
    }
    cJSON *cqs = cJSON_AddArrayToObject(o, "cqs");
    for (uint32_t i = 0; cqs && i < x->ncqs; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(cqs, e);
        cJSON_AddNumberToObject(e, "conn", x->cqs[i].conn);
        cJSON_AddStringToObject(e, "side", x->cqs[i].side ? "recv" : "send");
        cJSON_AddNumberToObject(e, "depth", x->cqs[i].depth);
        cJSON_AddNumberToObject(e, "cqes", (double)x->cqs[i].cqes);
        cJSON_AddNumberToObject(e, "polls", (double)x->cqs[i].polls);
        cJSON_AddNumberToObject(e, "empty_polls", (double)x->cqs[i].empty_polls);
    }
    cJSON *fo = cJSON_AddArrayToObject(o, "failovers");
    for (uint32_t i = 0; fo && i < x->nfailovers; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(fo, e);
        cJSON_AddNumberToObject(e, "at_us", (double)x->failovers[i].at_ps / 1e6);
        cJSON_AddNumberToObject(e, "channel", x->failovers[i].channel);
        cJSON_AddNumberToObject(e, "from", x->failovers[i].from);
        cJSON_AddNumberToObject(e, "to", x->failovers[i].to);
        cJSON_AddStringToObject(e, "action",
                                nsim_failover_name(x->failovers[i].action));
        cJSON_AddStringToObject(e, "what", x->failovers[i].what);
    }
    cJSON *ports = cJSON_AddArrayToObject(o, "ports");
    for (uint32_t i = 0; ports && i < x->nports; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ports, e);
        cJSON_AddStringToObject(e, "nic", DEV(t, x->ports[i].nic));
        cJSON_AddNumberToObject(e, "packets_tx", (double)x->ports[i].packets_tx);
        cJSON_AddNumberToObject(e, "packets_rx", (double)x->ports[i].packets_rx);
        cJSON_AddNumberToObject(e, "bytes_tx", (double)x->ports[i].bytes_tx);
        cJSON_AddNumberToObject(e, "bytes_rx", (double)x->ports[i].bytes_rx);
        cJSON_AddNumberToObject(e, "acks_tx", (double)x->ports[i].acks_tx);
        cJSON_AddNumberToObject(e, "packets_lost",
                                (double)x->ports[i].packets_lost);
    }
    return o;
}

cJSON *nsim_stats_json(const nsim_topo *t, const nsim_plan *p,
                       const nsim_exec_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "size", (double)p->req.bytes);
    cJSON_AddNumberToObject(o, "time_us", (double)r->time_ps / 1e6);
    cJSON_AddNumberToObject(o, "events", (double)r->events);
    cJSON *conns = cJSON_AddArrayToObject(o, "connections");
    for (uint32_t i = 0; conns && i < r->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(conns, e);
        cJSON_AddNumberToObject(e, "channel", c->channel);
        cJSON_AddNumberToObject(e, "from", c->from);
        cJSON_AddNumberToObject(e, "to", c->to);
        cJSON_AddStringToObject(e, "transport",
                                nsim_transport_name(c->transport));
        cJSON_AddNumberToObject(e, "slices", (double)r->conns[i].slices);
        cJSON_AddNumberToObject(e, "bytes", (double)r->conns[i].bytes);
        cJSON_AddNumberToObject(e, "blocked_on_credit_us",
                                (double)r->conns[i].blocked_credit_ps / 1e6);
    }
    cJSON_AddItemToObject(o, "links", links_json(t, r));
    cJSON_AddItemToObject(o, "transport", xport_json(t, &r->xport));
    return o;
}

void nsim_debug_plan(FILE *f, nsim_topo *t, const nsim_plan *p)
{
    const char *pre = "ncclsim:0:0 [0] NCCL INFO";
    fprintf(f, "%s comm 0x1 rank 0 nRanks %u nNodes %u localRanks %u "
               "localRank 0 MNNVL %d\n",
            pre, p->nranks, p->nhosts, p->nranks / (p->nhosts ? p->nhosts : 1),
            nsim_topo_nhosts(t) > nsim_topo_nnodes(t)); /* hosts share a node */
    fprintf(f, "%s %u coll channels, 0 collnet channels, 0 nvls channels, "
               "%u p2p channels, 2 p2p channels per peer\n",
            pre, p->nchannels, p->nchannels);
    for (uint32_t c = 0; c < p->nchannels; c++) {
        fprintf(f, "%s Channel %02u/%02u :", pre, c, p->nchannels);
        for (uint32_t i = 0; i < p->nranks; i++)
            fprintf(f, " %u", p->ring[c * p->nranks + i]);
        fprintf(f, "\n");
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        const nsim_device *df = nsim_topo_device(t, nsim_topo_rank_device(t, c->from));
        const nsim_device *dt = nsim_topo_device(t, nsim_topo_rank_device(t, c->to));
        int lf = c->from % (p->nranks / (p->nhosts ? p->nhosts : 1));
        int lt = c->to % (p->nranks / (p->nhosts ? p->nhosts : 1));
        if (c->transport == NSIM_TRANSPORT_NVLS) { /* to / from the switch */
            static const char *const role[3] = {"", " reduced", " store"};
            fprintf(f, "%s Channel %02u/0 : %u[%d] %s NVLS%s (%s)\n", pre,
                    c->channel, c->from, lf,
                    c->send_lane != UINT32_MAX ? "->" : "<-",
                    role[c->nvls_role < 3 ? c->nvls_role : 0], df->name);
            continue;
        }
        if (c->transport != NSIM_TRANSPORT_NET) {
            /* across hosts only inside an NVLink domain (nccl 6.1) */
            const char *via = c->transport == NSIM_TRANSPORT_SHM ? "SHM/direct"
                              : df->host != dt->host         ? "P2P/MNNVL"
                                                             : "P2P/CUMEM";
            fprintf(f, "%s Channel %02u/0 : %u[%d] -> %u[%d] via %s "
                       "(%s, %s)\n",
                    pre, c->channel, c->from, lf, c->to, lt, via,
                    nsim_path_type_name(c->path), df->name);
            continue;
        }
        const nsim_device *ns = nsim_topo_device(t, c->send_nic);
        const nsim_device *nr = nsim_topo_device(t, c->recv_nic);
        const char *gdr = ns->gdr && nr->gdr ? "/GDRDMA" : "";
        /* a PXN send names the proxy's rank: NET/IB/d(proxyRank) */
        char proxy[24] = "";
        uint32_t via = ns->gdr && nr->gdr
                           ? nsim_topo_pxn_gpu(t, nsim_topo_rank_device(
                                                      t, c->from),
                                               c->send_nic)
                           : UINT32_MAX;
        if (via != UINT32_MAX)
            snprintf(proxy, sizeof proxy, "(%d)",
                     nsim_topo_device(t, via)->rank);
        fprintf(f, "%s Channel %02u/0 : %u[%d] -> %u[%d] [send] via "
                   "NET/IB/%d%s%s (%s, %u QP%s)\n",
                pre, c->channel, c->from, lf, c->to, lt,
                conn_nic_index(t, c->send_nic), proxy, gdr, ns->name,
                c->nqps, c->nqps > 1 ? "s" : "");
        fprintf(f, "%s Channel %02u/0 : %u[%d] -> %u[%d] [receive] via "
                   "NET/IB/%d%s (%s on %s)\n",
                pre, c->channel, c->from, lf, c->to, lt,
                conn_nic_index(t, c->recv_nic), gdr, nr->name, dt->name);
    }
}

void nsim_debug_hcas(FILE *f, const nsim_topo *t, const nsim_plan *p,
                     const nsim_exec_result *r)
{
    const nsim_xport_stats *x = &r->xport;
    (void)p;
    for (uint32_t i = 0; i < x->nports; i++) {
        const nsim_device *d = nsim_topo_device(t, x->ports[i].nic);
        fprintf(f, "CA '%s'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical "
                   "state: LinkUp\n\t\tRate: %.0f\n\t\tLink layer: %s\n"
                   "\t\tactive_mtu: %u\n\t\tport_xmit_packets: %llu\n"
                   "\t\tport_rcv_packets: %llu\n",
                d->name, d->port_bw * 8 / 1e9,
                d->link_layer == NSIM_LL_ROCE ? "Ethernet" : "InfiniBand",
                d->mtu_bytes, (unsigned long long)x->ports[i].packets_tx,
                (unsigned long long)x->ports[i].packets_rx);
        fprintf(f, "\tQPs:\n");
        for (uint32_t q = 0; q < x->nqps; q++) {
            const nsim_qp_record *k = &x->qps[q];
            if (k->nic != x->ports[i].nic)
                continue;
            fprintf(f, "\t\tQPN 0x%05x state %s dest_qpn 0x%05x (%s) "
                       "channel %u %s wrs %llu packets %llu\n",
                    k->qpn, k->state, k->peer_qpn, DEV(t, k->peer_nic),
                    p->conns[k->conn].channel, k->side ? "recv" : "send",
                    (unsigned long long)k->wrs,
                    (unsigned long long)k->packets);
        }
    }
}
