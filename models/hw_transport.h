/* SPDX-License-Identifier: MIT
 *
 * hw_transport.h - the transport interface of models/transport.h as real
 * hardware backends implement it: a connection of the plan is a FIFO of
 * NCCL_STEPS slots on the receiver's side; the sender waits for a free
 * slot (a credit: the receiver's head), fills the slice's slots and posts
 * it (Simple's tail store, or an RDMA write with immediate); the receiver
 * waits until the slice has arrived, reads it, and hands the slots back.
 *
 * Slices of one connection are numbered 0, 1, ... for the life of the
 * run (across iterations), as NCCL's step counters; slice k uses slot
 * k mod (NCCL_STEPS / sliceSteps), each of slice_bytes.
 *
 * Every wait is bounded: after the backend's timeout, or when *abort of
 * the environment becomes non-zero, it returns NSIM_ESTATE with a message
 * naming the connection, its peer rank and the slice.
 *
 * Implemented by models/host/host_xport.c (shared memory) and
 * models/ib/verbs_xport.c (RC QPs, RDMA write with immediate, CTS).
 */
#ifndef NSIM_MODELS_HW_TRANSPORT_H
#define NSIM_MODELS_HW_TRANSPORT_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sim/core/err.h"

typedef struct nsim_hw_xport_ops {
    const char *name;
    /* Where the sender writes slice seq of conn (at most slice_bytes);
     * valid once wait_credit(seq) has returned. */
    void *(*send_buf)(void *ctx, uint32_t conn, uint64_t seq);
    /* Waits for a free slot for slice seq (the receiver has consumed
     * slice seq - slots). */
    int (*wait_credit)(void *ctx, uint32_t conn, uint64_t seq,
                       nsim_err *err);
    /* The slice of bytes is written: make it visible to the receiver. */
    int (*post)(void *ctx, uint32_t conn, uint64_t seq, uint64_t bytes,
                nsim_err *err);
    /* Waits until slice seq of conn has arrived; *data gets its memory. */
    int (*wait_arrived)(void *ctx, uint32_t conn, uint64_t seq,
                        const void **data, nsim_err *err);
    /* The receiver is done with slice seq: return its slots. */
    int (*consumed)(void *ctx, uint32_t conn, uint64_t seq, nsim_err *err);
} nsim_hw_xport_ops;

/* Bounded spin: pause, then yield the core (ranks may outnumber cores). */
static inline void nsim_hw_relax(uint32_t *spins)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    (void)sched_yield();
}

#endif
