/* SPDX-License-Identifier: MIT
 *
 * report.h - results as nccl-tests prints them, and as JSON.
 *
 * Owns: the table of all_reduce_perf and friends (size, count, type,
 * redop, root, then time, algbw, busbw and #wrong for out-of-place and
 * in-place; nccl-internals 8.1-8.2), its header lines, and the JSON
 * result file (the same rows plus knobs, topology and seed), written
 * atomically. Reads results only.
 */
#ifndef NSIM_OUTPUT_REPORT_H
#define NSIM_OUTPUT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sim/core/err.h"
#include "sim/exec/run.h"

struct cJSON;

typedef struct nsim_report_meta {
    const char *scenario, *topology, *coll_name, *test_name, *dtype, *redop;
    const char *proto, *algo, *channel_mode;
    uint32_t nranks, nhosts, nchannels, qps_per_conn;
    uint64_t buffsize, seed;
    int root; /* -1 where it does not apply */
    int show_choice; /* append algorithm/protocol (and predicted time) */
    int show_pred;
    int analytic;          /* --mode analytic: NCCL's predictions */
    const char *time_note; /* a header line on what "time" is, or NULL */
    const char *fidelity; /* "flow" printed; packet and auto (the default,
                           * whose rows say where flow starts) not */
    uint32_t hosts_played; /* the first row's hosts played (fold.h); 0 or
                            * nhosts: not folded */
    uint32_t hosts_struck; /* of those, the hosts its faults strike (a
                            * ring or a tree folded around them), or 0 */
    int fabric_faults_idle; /* 1: faults strike links between switches
                             * that no connection's path crosses */
    int struck_fold;       /* how: 0 a ring's (each stands for its
                            * twins), 1 a tree's (for its roles), 2 an
                            * AllToAll's or SendRecv's (with a partner,
                            * each doing what a host does) */
    uint32_t chain_played; /* a Broadcast or Reduce chain folded: the
                            * hosts its first run played (fold.h), or 0 */
    uint32_t tree_chain, tree_chain_of; /* a Tree's node chains folded:
                                         * the ranks its first run played
                                         * of each node's (fold.h), or 0 */
    uint32_t tree_chain_short;         /* its second run's */
} nsim_report_meta;

void nsim_report_header(FILE *f, const nsim_report_meta *m);
void nsim_run_row_print(FILE *f, const nsim_report_meta *m,
                           const nsim_run_row *r);
void nsim_report_footer(FILE *f, const nsim_run_row *rows, size_t n);
/* extra (may be NULL) is added as "stats" and owned by the call. */
NSIM_NODISCARD int nsim_report_write_json(const char *path,
                                          const nsim_report_meta *m,
                                          const nsim_run_row *rows,
                                          size_t n, struct cJSON *extra,
                                          nsim_err *err);

#endif
