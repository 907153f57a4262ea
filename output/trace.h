/* SPDX-License-Identifier: MIT
 *
 * trace.h - the timeline of one run as a Chrome trace (JSON Object
 * Format: Perfetto and chrome://tracing load it): per rank (a process) a
 * track per channel's thread block with its ops as slices; per NET
 * connection a track with the CTS arrivals and per QP a track with the
 * work requests as slices (post to send completion), completions as
 * instants and retransmissions marked; slots in flight per connection
 * and the busy fraction of every network link and NIC port as counters;
 * flow arrows from the op that sends a slice to the op that receives it.
 *
 * Size cap: at most about cap events (0: 1,000,000): beyond it one op in
 * 2^k of every thread block is kept (and its flows), the models' records
 * are sampled by slice (tracelog.h), and the trace says so ("otherData"
 * and an instant at time 0). Reads results only; written atomically.
 */
#ifndef NSIM_OUTPUT_TRACE_H
#define NSIM_OUTPUT_TRACE_H

#include <stddef.h>

#include "sim/exec/exec.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

NSIM_NODISCARD int nsim_trace_write(const char *path, const nsim_topo *t,
                                    const nsim_plan *p,
                                    const nsim_exec_result *r, size_t cap,
                                    nsim_err *err);

#endif
