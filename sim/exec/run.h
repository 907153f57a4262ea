/* SPDX-License-Identifier: MIT
 *
 * run.h - the run API: one scenario at one message size, planned (the
 * tuner's pick unless the scenario forces one) and simulated, or predicted
 * by NCCL's own model, as one result row; and the list of message sizes a
 * scenario's sweep visits. Every command that plays a scenario (run,
 * compare, calibrate, sweep, explain, validate) goes through here, so they
 * all answer the same question the same way.
 *
 * Owns: nothing beyond the call; a kept plan and result (for --stats,
 * --trace, explain) go to the caller, who frees them.
 */
#ifndef NSIM_EXEC_RUN_H
#define NSIM_EXEC_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"
#include "sim/exec/exec.h"
#include "sim/exec/scenario.h"
#include "sim/plan/plan.h"

/* Why --fidelity auto (the default) ran a size in flow. */
typedef enum nsim_auto_why {
    NSIM_AUTO_NONE,     /* packet, or the scenario's own fidelity */
    NSIM_AUTO_PACKETS,  /* packets and stream pieces past flow_auto_packets */
    NSIM_AUTO_ALLTOALL, /* an AllToAll whose every rank's NET connections
                         * alone pass the memory budget */
    NSIM_AUTO_EVENTS,   /* the packet plan's events past flow_auto_events */
    NSIM_AUTO_BUDGET,   /* the packet plan or state past --max-memory or
                         * --max-events */
} nsim_auto_why;

/* One size's result, as nccl-tests prints a row. */
typedef struct nsim_run_row {
    uint64_t size, count;
    uint32_t nchannels;  /* channels the plan used at this size */
    double time_us, algbw, busbw;          /* out-of-place */
    double time_ip_us, algbw_ip, busbw_ip; /* in-place */
    uint64_t events;
    double wall_s;
    const char *algo, *proto; /* what was run (tuner's pick or forced) */
    double pred_us;           /* NCCL's predicted time, < 0: none */
    const char *fidelity;     /* "packet" or "flow": what ran ("tuner":
                               * --mode analytic, NCCL's model) */
    /* --fidelity auto (the default): why this row ran flow (NONE where
     * it ran packet, or the scenario chose); auto_measure the packets
     * and pieces (PACKETS) or the packet plan's events (EVENTS) that
     * passed the param named in nsim_auto_why_text */
    nsim_auto_why fidelity_why;
    double auto_measure;
    /* symmetry folding (plan/fold.h): fold.played < fold.hosts when the
     * run was folded; fold.why_not says why not when it was tried */
    nsim_fold_info fold;
    nsim_flownet_counters flow; /* the flow solver's work (--timing) */
} nsim_run_row;

typedef struct nsim_run_opts {
    int analytic;   /* NCCL's tuner model instead of the simulation */
    int keep;       /* hand the plan and the result (with stats) back */
    int want_trace; /* with keep: every op's span */
    int cudagraph;  /* nccl-tests -G: ops launched from a CUDA graph, so
                     * the host thread's launches are off the path */
    int cputime;    /* nccl-tests -C 1: the host thread's CPU time per op */
    size_t trace_cap; /* with want_trace: model records kept (0: default) */
    int keep_compact; /* with keep: the plan as a run builds it, compact
                       * (no op placement) and folded where it may be:
                       * what explain reads, at any scale */
    int trace_fold;   /* with want_trace: that plan too where the run may
                       * fold (its ops then name no chunk) */
} nsim_run_opts;

/* The plan request for one size (bytes per rank as the planner takes
 * them): the tuner's algorithm and protocol unless the scenario forces
 * them; *pred_us gets NCCL's predicted time (< 0: none). */
NSIM_NODISCARD int nsim_run_request(const nsim_scenario *s, uint64_t bytes,
                                    nsim_plan_req *req, double *pred_us,
                                    nsim_err *err);

/* Plans and simulates (or predicts) one size. With o->keep the plan and
 * the result are handed to *kept_plan / *kept_res (free them with
 * nsim_plan_destroy / nsim_exec_result_free). */
NSIM_NODISCARD int nsim_run_size(nsim_scenario *s, const nsim_run_opts *o,
                                 uint64_t bytes, nsim_run_row *row,
                                 nsim_plan **kept_plan,
                                 nsim_exec_result *kept_res, nsim_err *err);

/* The sizes (as the planner takes them: nccl-tests' byte counts) a sweep
 * of the scenario from min_bytes to max_bytes visits, without repeats and
 * without the ones below 16 B per rank. *out is malloc'd. */
NSIM_NODISCARD int nsim_run_sizes(const nsim_scenario *s, uint64_t **out,
                                  size_t *n, nsim_err *err);

/* The fidelity a size starts at: the scenario's, or with auto flow when
 * the packet model would move more than params.flow_auto_packets packets
 * and stream pieces (nsim_run_packets_estimate), or for an AllToAll too
 * big to run whole; *why (may be NULL) says which. A size auto starts in
 * packet may still run flow (nsim_run_size): its plan's events past
 * params.flow_auto_events, or its plan or state past a budget. */
nsim_fidelity nsim_run_fidelity(const nsim_scenario *s, uint64_t bytes,
                                nsim_auto_why *why);
double nsim_run_packets_estimate(const nsim_scenario *s, uint64_t bytes);

/* Why row r ran flow, in words (empty where auto did not pick it): the
 * table's note, --timing's. */
void nsim_auto_why_text(const nsim_scenario *s, const nsim_run_row *r,
                        char *buf, size_t n);
/* The same, short and fixed, for JSON's "fidelity_why" (NULL: none). */
const char *nsim_auto_why_name(nsim_auto_why why);

/* Whether a run at fidelity f of req's plan may fold (plan/fold.h): the
 * scenario's fold mode allows it and no fault keeps it whole. A QP error
 * on every connection of a channel strikes every host alike; a fault
 * that names ranks, a NIC or a link on a host strikes one place, which a
 * ring folds around (the struck hosts played: fold.h); a fault on a link
 * between switches, or on one place under any other plan, keeps every
 * host played (--timing then says which). */
int nsim_run_may_fold(const nsim_scenario *s, nsim_fidelity f,
                      const nsim_plan_req *req);

/* Whether a fault keeps a run of bytes from folding where its fold mode
 * would fold it; why: the fault, as --timing names it (empty if not). */
int nsim_run_fault_blocks_fold(const nsim_scenario *s, uint64_t bytes,
                               char *why, size_t n);

/* nccl-tests' byte count for a requested size (0: below what the
 * collective can split). */
uint64_t nsim_run_test_bytes(const nsim_scenario *s, uint64_t size);

#endif
