/* SPDX-License-Identifier: MIT
 *
 * host_xport.h - the host hardware backend: the plan's ranks as threads
 * of this process, or as one process per rank (fork) sharing one
 * MAP_SHARED mapping; every connection's NCCL_STEPS slots live in it, the
 * sender memcpy()s (or reduces) the slice into the receiver's slot and
 * publishes it with a release store of the tail, the receiver acquires
 * the tail, reads the slot and hands it back with a release store of the
 * head (NCCL's Simple protocol over SHM, nccl-internals 6.2), C11
 * atomics only. The CPU reduces (models/host/hdtype.h).
 *
 * Owns: the shared mapping (control block of sim/exec/hwexec.h + slots),
 * the rank processes, and one size's measurement (nsim_hwx_measure_size).
 */
#ifndef NSIM_MODELS_HOST_HOST_XPORT_H
#define NSIM_MODELS_HOST_HOST_XPORT_H

#include <stdint.h>

#include "sim/exec/hwexec.h"

extern const nsim_hw_xport_ops nsim_host_xport_ops;

typedef struct nsim_host_cfg {
    const nsim_plan *plan;
    nsim_hdt dtype;
    nsim_hop op;
    int processes;      /* 1: a process per rank; 0: threads */
    double timeout_s;   /* bound of every wait */
    uint32_t warmup, iters;
    int check, record;
    int32_t die_rank;   /* tests: this rank's process dies (-1: none) */
} nsim_host_cfg;

/* Runs one size (one plan) on this machine. With record, *spans gets
 * every op's span of one recorded op (free with nsim_exec_result_free). */
NSIM_NODISCARD int nsim_host_measure(const nsim_host_cfg *cfg,
                                     nsim_hwx_measure *m,
                                     nsim_exec_result *spans, nsim_err *err);

/* One thread's memcpy rate (bytes/s) over bytes-sized buffers, the best
 * of reps: what one core streams (the host topology's link figure). */
double nsim_host_memcpy_bw(uint64_t bytes, uint32_t reps);
/* The sum of threads such copies running at once: the memory's rate. */
double nsim_host_memcpy_bw_all(uint32_t threads, uint64_t bytes,
                               uint32_t reps);

#endif
