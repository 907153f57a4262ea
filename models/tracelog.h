/* SPDX-License-Identifier: MIT
 *
 * tracelog.h - what the models record for a timeline trace (ncclsim run
 * --trace), kept only when a trace is asked for: work requests posted and
 * completed on each QP, retransmissions, CTS arrivals, a connection's
 * slots in flight, and link busy fractions sampled at intervals.
 *
 * Recording is a pointer test when off (env->tlog == NULL). When on, the
 * log keeps at most cap records: once full it keeps one slice in two
 * (records of slices whose index is a multiple of the stride, so a WR's
 * post and completion stay paired), doubles the stride, and says so.
 *
 * Owns: the records.
 */
#ifndef NSIM_MODELS_TRACELOG_H
#define NSIM_MODELS_TRACELOG_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/sim.h"

typedef enum nsim_tr_kind {
    NSIM_TR_WR_POST, /* conn, qp, slice, piece; val: bytes */
    NSIM_TR_WR_DONE, /* conn, qp, slice, piece, side (0 send, 1 recv) */
    NSIM_TR_RETX,    /* conn, qp; val: retransmissions so far */
    NSIM_TR_CTS,     /* conn, slice: the receiver's CTS reached the sender */
    NSIM_TR_CREDIT,  /* conn, slice (the send count); val: slots in flight */
    NSIM_TR_LINK,    /* conn: the link; slice: sample index; val: busy
                      * per mille over the interval ending at t */
} nsim_tr_kind;

typedef struct nsim_trec {
    nsim_time t;
    uint64_t slice;
    uint64_t val;
    uint32_t conn;
    uint16_t qp;
    uint8_t kind, side;
    uint32_t piece;
} nsim_trec;

typedef struct nsim_tlog {
    nsim_trec *r;
    size_t n, cap, max;
    uint64_t stride;  /* kept: slice % stride == 0 */
    uint64_t dropped; /* records not kept (sampling) */
    int oom;          /* out of memory: recording stopped */
} nsim_tlog;

/* A log of at most max records (0: the default, 1M). */
NSIM_NODISCARD int nsim_tlog_create(size_t max, nsim_tlog **out);
void nsim_tlog_destroy(nsim_tlog *l);
void nsim_tlog_add(nsim_tlog *l, const nsim_trec *r);

#endif
