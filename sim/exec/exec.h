/* SPDX-License-Identifier: MIT
 *
 * exec.h - the executor: plays a plan on the simulated models.
 *
 * Owns: one run of one collective instance: the engine, the fabric, the
 * transports of every connection, and per rank and channel a thread block
 * that walks its ops in order. An op starts when its input slice is
 * visible (receive), its connection has a free slot (send: at most
 * NCCL_STEPS / sliceSteps slices in flight) and the thread block is idle;
 * it ends when the thread block has streamed the slice; a received slot
 * is handed back (credit) when the op that read it ends.
 *
 * Workload: one run per message size; events ~ pieces x hops.
 */
#ifndef NSIM_EXEC_EXEC_H
#define NSIM_EXEC_EXEC_H

#include <stdint.h>

#include "models/flow.h"
#include "models/params.h"
#include "models/transport.h"
#include "sim/core/sim.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

typedef struct nsim_conn_stats {
    uint64_t slices, bytes;       /* handed to the transport */
    uint64_t recv_slices, recv_bytes; /* consumed by the receiver */
    nsim_time blocked_credit_ps; /* sender waited for a free slot */
    int has_xport;                  /* the transport counts too (NET) */
    nsim_xport_conn_counters xport; /* its own count of what it carried */
} nsim_conn_stats;

typedef struct nsim_link_record {
    uint32_t link; /* directed topology link */
    uint64_t bytes, wire_bytes, pieces;
    nsim_time busy_ps;
    nsim_time occupied_ps; /* with work on it (nsim_server_stats) */
} nsim_link_record;

/* Where one thread block (lane) spent the run: streaming slices, waiting
 * for a slice to arrive on its receive connection, waiting for a free
 * slot on its send connection (with want_stats). */
typedef struct nsim_lane_stats {
    nsim_time busy_ps, wait_recv_ps, wait_send_ps;
    nsim_time first_start_ps, last_end_ps;
} nsim_lane_stats;

/* One op of one thread block, for the timeline trace. */
typedef struct nsim_op_span {
    uint32_t lane; /* channel * nranks + rank (the plan's lanes) */
    uint32_t op;   /* index in the lane's ops */
    nsim_time start_ps, end_ps;
} nsim_op_span;

typedef struct nsim_exec_result {
    nsim_time time_ps;    /* the op's time as nccl-tests reports it:
                           * max(gpu_ps, host_ps) */
    nsim_time gpu_ps;     /* launch to the last rank's completion */
    nsim_time host_ps;    /* the host thread's launches per op */
    uint64_t events;      /* engine events run */
    nsim_flownet_counters flow; /* the flow solver's (flow fidelity) */
    uint64_t bytes_moved; /* payload over all connections */
    /* with want_stats (malloc'd; nsim_exec_result_free): */
    uint32_t nconns;
    nsim_conn_stats *conns;  /* per plan connection */
    uint32_t nlinks;
    nsim_link_record *links; /* topology links that carried traffic */
    nsim_xport_stats xport;  /* QPs, CQs, NIC ports */
    nsim_lane_stats *lanes;  /* per plan lane (with want_stats) */
    uint32_t nlanes;
    /* with want_trace: every op's span, in completion order, and the
     * models' records (QPs, credits, links; tracelog.h) */
    nsim_op_span *spans;
    uint64_t nspans;
    struct nsim_tlog *tlog;
    nsim_time link_sample_ps; /* interval of the link samples */
    uint64_t est_events; /* the plan's events as estimated before the run
                          * (packet fidelity; set where a run stops on
                          * opts.auto_events too) */
} nsim_exec_result;

/* How the models move data (README "Fidelity"): packet, MTU packets and
 * stream pieces hop by hop; flow, every WR or slice is one flow shared
 * max-min fairly (models/flow.h); auto (a scenario's default), packet
 * where that run is short, flow past nsim_params.flow_auto_packets
 * packets and pieces or flow_auto_events estimated events
 * (nsim_run_fidelity, nsim_run_size decide). */
typedef enum nsim_fidelity {
    NSIM_FIDELITY_PACKET,
    NSIM_FIDELITY_FLOW,
    NSIM_FIDELITY_AUTO,
} nsim_fidelity;
const char *nsim_fidelity_name(nsim_fidelity f);
int nsim_fidelity_parse(const char *s, nsim_fidelity *out);

typedef struct nsim_exec_opts {
    uint64_t seed;
    int want_stats;
    const nsim_net_knobs *net;      /* NULL: NCCL's defaults */
    const nsim_fault_plan *faults;  /* NULL: no faults */
    /* GPUs one host thread drives (nccl-tests -g; 0 means 1): the thread
     * spends one kernel launch per GPU on every op, and nccl-tests runs
     * ops back to back, so an op takes at least that long */
    uint32_t gpus_per_thread;
    int want_trace; /* record every op's start and end */
    size_t trace_cap; /* with want_trace: records kept (0: default) */
    nsim_fidelity fidelity; /* packet or flow (auto is resolved before) */
    /* Budgets: 0 takes the machine's default (nsim_exec_default_budget),
     * UINT64_MAX none. A run estimated to need more stops before it
     * starts, one that gets there while running stops then; both fail
     * with NSIM_EBUDGET and a message naming the budget. */
    uint64_t max_events;
    uint64_t max_memory; /* bytes of simulation state */
    /* --fidelity auto's test of a packet run (0: none): one whose events,
     * estimated from its plan, pass this fails with NSIM_EBUDGET before
     * it starts, the estimate in nsim_exec_result.est_events */
    uint64_t auto_events;
} nsim_exec_opts;

/* What a run of the plan will take, estimated before it starts: events
 * (~ packets and pieces x hops, plus per-slice work) and bytes of state
 * (connections, QPs, CQs, thread blocks, pieces in flight). */
typedef struct nsim_exec_estimate {
    uint64_t events;
    uint64_t memory;
    uint32_t net_conns, local_conns; /* NET, and P2P/SHM/NVLS */
} nsim_exec_estimate;

NSIM_NODISCARD int nsim_exec_estimate_plan(nsim_topo *topo,
                                           const nsim_plan *plan,
                                           const nsim_params *params,
                                           nsim_exec_estimate *out,
                                           nsim_err *err);

/* The simulation state that net_conns NET connections, local_conns
 * others and lanes thread blocks take at least (the estimate's own
 * figures): what a run can weigh before its plan is built. */
uint64_t nsim_exec_state_bytes(uint64_t net_conns, uint64_t local_conns,
                               uint64_t lanes);

/* The defaults: memory 75% of what the machine has available now
 * (MemAvailable, else the physical memory), so a run never swaps nor
 * meets the OOM killer; events 2e10 (hours of wall time). */
void nsim_exec_default_budget(uint64_t *max_events, uint64_t *max_memory);

NSIM_NODISCARD int nsim_exec_run(nsim_topo *topo, const nsim_plan *plan,
                                 const nsim_params *params,
                                 const nsim_exec_opts *opts,
                                 nsim_exec_result *res, nsim_err *err);
void nsim_exec_result_free(nsim_exec_result *res);

#endif
