/* SPDX-License-Identifier: MIT
 *
 * report.c - nccl-tests table and JSON results (see report.h).
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/core/jread.h"

/* A folded run's faults: how the fold played them. */
static void fault_fold_header(FILE *f, const nsim_report_meta *m)
{
    if (m->fabric_faults_idle)
        fprintf(f, "# faults: no connection's path crosses the faulted "
                   "link(s) between switches (InfiniBand: one path per NIC "
                   "pair), so they change nothing here\n");
    if (m->hosts_struck == 0)
        return;
    if (m->struck_fold == 2)
        fprintf(f, "# faults: the fold plays the host(s) they strike (%u) "
                   "with a partner, each sending and receiving what a host "
                   "does (README \"Fault plan and failover\")\n",
                m->hosts_struck);
    else if (m->struck_fold == 1)
        fprintf(f, "# faults: the trees fold around the host(s) they "
                   "strike, %u of the %u played, each standing for the "
                   "hosts of its roles in the trees (a tree runs at its "
                   "slowest hop; README \"Fault plan and failover\")\n",
                m->hosts_struck, m->hosts_played);
    else
        fprintf(f, "# faults: the ring folds around the host(s) they "
                   "strike, %u of the %u played, each standing for its "
                   "twins: %u of %u hosts struck where the scenario strikes "
                   "%u (a ring runs at its slowest hop; README \"Fault plan "
                   "and failover\")\n",
                m->hosts_struck, m->hosts_played,
                m->hosts_struck * (m->nhosts / m->hosts_played), m->nhosts,
                m->hosts_struck);
}

void nsim_report_header(FILE *f, const nsim_report_meta *m)
{
    fprintf(f, "# ncclsim: %s on \"%s\" (%u ranks, %u host(s)), %s\n",
            m->test_name, m->topology, m->nranks, m->nhosts,
            m->analytic ? "predicted (NCCL's tuner model)" : "simulated");
    fprintf(f, "# algorithm %s, protocol %s, %u channels, %u QP(s) per "
               "connection, buffer %llu B, channel mode %s, seed %llu\n",
            m->algo, m->proto, m->nchannels, m->qps_per_conn,
            (unsigned long long)m->buffsize, m->channel_mode,
            (unsigned long long)m->seed);
    if (m->time_note != NULL)
        fprintf(f, "# %s\n", m->time_note);
    /* auto (the default): the rows say where flow starts */
    if (m->fidelity != NULL && strcmp(m->fidelity, "flow") == 0)
        fprintf(f, "# fidelity flow (each WR and slice one flow, max-min "
                   "shared)\n");
    if (m->hosts_played > 0 && m->hosts_played < m->nhosts) {
        fprintf(f, "# folded: %u of %u hosts played (identical hosts "
                   "doing the same work: README \"Folding\"; rows that "
                   "fold say so in --json and --timing; --fold off plays "
                   "all)\n",
                m->hosts_played, m->nhosts);
        if (m->chain_played > 0)
            fprintf(f, "# folded chain: Broadcast and Reduce run a chain "
                       "along the ring, played on %u hosts and again on "
                       "%u; each host not played adds what one of the "
                       "last %u added (README \"Folding\")\n",
                    m->chain_played, m->chain_played / 2,
                    m->chain_played - m->chain_played / 2);
        fault_fold_header(f, m);
    }
    if (m->tree_chain > 0)
        fprintf(f, "# folded chains: a Tree chains each node's %u ranks "
                   "(an NVLink domain), played with %u and again with %u; "
                   "each rank not played adds what one of the %u between "
                   "added "
                   "(README \"Folding\"; --fold off plays every rank)\n",
                m->tree_chain_of, m->tree_chain, m->tree_chain_short,
                m->tree_chain - m->tree_chain_short);
    fprintf(f, "#\n");
    fprintf(f, "#                                                              "
               "out-of-place                       in-place          \n");
    fprintf(f, "#       size         count      type   redop    root     time  "
               " algbw   busbw  #wrong     time   algbw   busbw  #wrong \n");
    fprintf(f, "#        (B)    (elements)                               (us)  "
               "(GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
}

static void print_time(FILE *f, double us)
{
    if (us >= 10000.0)
        fprintf(f, "  %7.1f", us);
    else
        fprintf(f, "  %7.2f", us);
}

void nsim_run_row_print(FILE *f, const nsim_report_meta *m,
                           const nsim_run_row *r)
{
    fprintf(f, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)r->size,
            (unsigned long long)r->count, m->dtype, m->redop, m->root);
    print_time(f, r->time_us);
    fprintf(f, "  %6.2f  %6.2f  %6s", r->algbw, r->busbw, "N/A");
    print_time(f, r->time_ip_us);
    fprintf(f, "  %6.2f  %6.2f  %6s", r->algbw_ip, r->busbw_ip, "N/A");
    if (m->show_choice && r->algo != NULL)
        fprintf(f, "  %4s/%-6s %3u", r->algo, r->proto, r->nchannels);
    if (m->show_pred && r->pred_us >= 0)
        fprintf(f, "  nccl %8.2f", r->pred_us);
    else if (m->show_pred)
        fprintf(f, "  nccl %8s", "-");
    fprintf(f, "\n");
}

void nsim_report_footer(FILE *f, const nsim_run_row *rows, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += rows[i].busbw + rows[i].busbw_ip;
    fprintf(f, "# Out of bounds values : 0 OK\n");
    fprintf(f, "# Avg bus bandwidth    : %g \n", n ? sum / (2.0 * n) : 0.0);
    fprintf(f, "#\n");
}

static cJSON *meta_json(const nsim_report_meta *m)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "scenario", m->scenario);
    cJSON_AddStringToObject(o, "topology", m->topology);
    cJSON_AddStringToObject(o, "collective", m->coll_name);
    cJSON_AddStringToObject(o, "datatype", m->dtype);
    cJSON_AddStringToObject(o, "op", m->redop);
    cJSON_AddStringToObject(o, "algorithm", m->algo);
    cJSON_AddStringToObject(o, "protocol", m->proto);
    cJSON_AddStringToObject(o, "channel_mode", m->channel_mode);
    cJSON_AddNumberToObject(o, "nranks", m->nranks);
    cJSON_AddNumberToObject(o, "nhosts", m->nhosts);
    cJSON_AddNumberToObject(o, "nchannels", m->nchannels);
    cJSON_AddNumberToObject(o, "qps_per_connection", m->qps_per_conn);
    cJSON_AddNumberToObject(o, "buffsize", (double)m->buffsize);
    cJSON_AddNumberToObject(o, "seed", (double)m->seed);
    if (m->fidelity != NULL && strcmp(m->fidelity, "packet") != 0)
        cJSON_AddStringToObject(o, "fidelity", m->fidelity);
    return o;
}

static int add_row(cJSON *arr, const nsim_run_row *r)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(arr, o))
        return 0;
    return cJSON_AddNumberToObject(o, "size", (double)r->size) &&
           cJSON_AddNumberToObject(o, "count", (double)r->count) &&
           cJSON_AddNumberToObject(o, "nchannels", r->nchannels) &&
           cJSON_AddNumberToObject(o, "time_us", r->time_us) &&
           cJSON_AddNumberToObject(o, "algbw", r->algbw) &&
           cJSON_AddNumberToObject(o, "busbw", r->busbw) &&
           cJSON_AddNumberToObject(o, "time_us_inplace", r->time_ip_us) &&
           cJSON_AddNumberToObject(o, "algbw_inplace", r->algbw_ip) &&
           cJSON_AddNumberToObject(o, "busbw_inplace", r->busbw_ip) &&
           cJSON_AddNumberToObject(o, "events", (double)r->events) &&
           (r->algo == NULL ||
            (cJSON_AddStringToObject(o, "algorithm", r->algo) &&
             cJSON_AddStringToObject(o, "protocol", r->proto))) &&
           (r->pred_us < 0 ||
            cJSON_AddNumberToObject(o, "nccl_predicted_us", r->pred_us)) &&
           (r->fidelity == NULL || strcmp(r->fidelity, "packet") == 0 ||
            cJSON_AddStringToObject(o, "fidelity", r->fidelity)) &&
           (r->fidelity_why == NSIM_AUTO_NONE ||
            cJSON_AddStringToObject(o, "fidelity_why",
                                    nsim_auto_why_name(r->fidelity_why))) &&
           ((r->fidelity_why != NSIM_AUTO_EVENTS &&
             r->fidelity_why != NSIM_AUTO_PACKETS) ||
            cJSON_AddNumberToObject(o, r->fidelity_why == NSIM_AUTO_EVENTS
                                           ? "packet_events_estimate"
                                           : "packets_estimate",
                                    r->auto_measure)) &&
           (r->fold.played >= r->fold.hosts ||
            cJSON_AddNumberToObject(o, "hosts_played", r->fold.played)) &&
           (r->fold.played >= r->fold.hosts || r->fold.bytes_diff <= 0 ||
            cJSON_AddNumberToObject(o, "fold_bytes_added",
                                    r->fold.bytes_added)) &&
           (r->fold.played >= r->fold.hosts || r->fold.lat_added_ps == 0 ||
            cJSON_AddNumberToObject(o, "fold_latency_added_us",
                                    (double)r->fold.lat_added_ps / 1e6)) &&
           (r->fold.played >= r->fold.hosts || r->fold.phantom_conns == 0 ||
            cJSON_AddNumberToObject(o, "fold_slow_roles",
                                    r->fold.slow_roles)) &&
           (r->fold.played >= r->fold.hosts || r->fold.struck == 0 ||
            cJSON_AddNumberToObject(o, "hosts_struck_played",
                                    r->fold.struck)) &&
           (r->fold.played >= r->fold.hosts || r->fold.fabric_links == 0 ||
            cJSON_AddNumberToObject(o, "fold_fabric_conns_struck",
                                    r->fold.fabric_conns)) &&
           (r->fold.tree_chain == 0 ||
            (cJSON_AddNumberToObject(o, "fold_tree_chain_ranks",
                                     r->fold.tree_chain) &&
             cJSON_AddNumberToObject(o, "fold_tree_chain_rank_us",
                                     (double)r->fold.tree_chain_rank_ps /
                                         1e6))) &&
           (r->fold.played >= r->fold.hosts || r->fold.chain_hosts == 0 ||
            (cJSON_AddNumberToObject(o, "fold_chain_host_us",
                                     (double)r->fold.chain_host_ps / 1e6) &&
             cJSON_AddNumberToObject(o, "fold_chain_latency_us",
                                     (double)r->fold.chain_lat_ps / 1e6)));
}

int nsim_report_write_json(const char *path, const nsim_report_meta *m,
                           const nsim_run_row *rows, size_t n,
                           cJSON *extra, nsim_err *err)
{
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    if (root != NULL && extra != NULL)
        cJSON_AddItemToObject(root, "stats", extra);
    else
        cJSON_Delete(extra);
    int ok = root != NULL &&
             cJSON_AddStringToObject(root, "format", "ncclsim-result") &&
             cJSON_AddNumberToObject(root, "version", 1);
    cJSON *meta = ok ? meta_json(m) : NULL;
    ok = ok && meta != NULL && cJSON_AddItemToObject(root, "run", meta);
    ok = ok && (arr = cJSON_AddArrayToObject(root, "rows")) != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = add_row(arr, &rows[i]);
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(text);
    char *withnl = realloc(text, len + 2);
    if (withnl == NULL) {
        free(text);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    int rc = nsim_write_file_atomic(path, withnl, len + 1, err);
    free(withnl);
    return rc;
}
