/* SPDX-License-Identifier: MIT
 *
 * explain.h - why a run takes the time it does: one size of a scenario
 * simulated with its counters, then read for what bounds it: the busiest
 * link and NIC port and their utilisation, the thread block (channel and
 * rank) that waited longest and on what (a free slot: credits; the
 * receiver's CTS; the proxy's CQ poll; PCIe reads from host memory; data
 * from upstream), the thread blocks' copy rate, the launch/latency floor,
 * the share of time per phase (launch, pipeline fill, steady state,
 * drain), and what NCCL's tuner would pick instead. The run is the one
 * `ncclsim run` makes, folded where it folds: at thousands of GPUs the
 * hosts played stand for their twins.
 *
 * Owns: the explanation (plain data) and its text and JSON forms.
 */
#ifndef NSIM_EXEC_EXPLAIN_H
#define NSIM_EXEC_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "sim/core/err.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

typedef struct nsim_explain_link {
    char name[160]; /* "h0.nic0 -> leaf0" */
    char type[16];  /* ib, roce, nvlink, pcie, ... */
    int port;       /* the link leaves a NIC: its port */
    double util;    /* busy / run time, 0..1 */
    double occupied; /* time with work on it / run time (flow fidelity:
                      * with a flow on it, whatever its rate; packet:
                      * util) */
    double gbps;    /* payload carried over the run, GB/s */
} nsim_explain_link;

typedef struct nsim_explanation {
    uint64_t size;          /* nccl-tests size */
    double time_us, busbw;  /* simulated */
    char algo[16], proto[16];
    uint32_t nchannels, qps;
    /* the fidelity the size ran at, and where auto picked flow, why */
    char fidelity[8];
    char fidelity_why[200];
    /* the bound, in one phrase, and its share of the time */
    char bound[320];
    /* links */
    nsim_explain_link busiest_link, busiest_port;
    int have_link, have_port;
    /* the thread block that waited longest */
    uint32_t wait_channel, wait_rank;
    double wait_us, wait_share;     /* of the run */
    char wait_on[32];               /* credits, CTS, CQ polling, ... */
    char wait_detail[480];
    /* all thread blocks together, shares of their time */
    double busy_share, recv_share, send_share;
    double copy_share_max;          /* the busiest block's busy share */
    double sm_gbps;                 /* a block's streaming rate */
    /* NET waits summed over connections (us) */
    double cts_us, poll_us, host_read_us;
    /* random loss (faults "loss"): packets lost, the NIC that lost most
     * and how many, the QPs' go-backs on a NAK and on the timer (each
     * timeout_us), packets they resent of those they sent */
    uint64_t lost, lost_most, naks, timeouts, resent, sent;
    char lost_nic[64];
    double timeout_us;
    /* phases, shares of the run */
    double launch_share, fill_share, steady_share, drain_share;
    double launch_us;
    /* NCCL's tuner */
    char tuner_algo[16], tuner_proto[16];
    double tuner_pred_us, pred_us; /* for its pick, for what ran */
    int tuner_differs;
    /* folding (docs/fold.md): hosts played of the plan's hosts (equal:
     * every host played); the waits, thread blocks and links above are
     * the played hosts' */
    uint32_t fold_hosts, fold_played;
    uint32_t fold_struck; /* played hosts the faults strike (fold.h) */
    /* a Broadcast or Reduce chain folded (fold.h): the hosts played (0:
     * not a chain), that run's own time (the links, waits and phases
     * are its), and what each host not played adds */
    uint32_t fold_chain;
    double chain_played_us, chain_host_us;
    /* a Tree's node chains folded (fold.h): the ranks played of each
     * node's tree_chain_of (0: whole), that run's own time, and what
     * each rank not played adds */
    uint32_t tree_chain, tree_chain_short, tree_chain_of;
    double tree_played_us, tree_rank_us;
} nsim_explanation;

/* Explains size (nccl-tests bytes, as -b takes them) of s. */
NSIM_NODISCARD int nsim_explain(nsim_scenario *s, uint64_t size,
                                nsim_explanation *out, nsim_err *err);
void nsim_explain_print(FILE *f, const nsim_explanation *x);
/* The same as a JSON object (NULL: out of memory). */
cJSON *nsim_explain_json(const nsim_explanation *x);

#endif
