/* SPDX-License-Identifier: MIT
 *
 * transport.h - the interface between the executor (which plays a plan's
 * primitives per rank and channel) and the transports that move a slice
 * from one GPU's channel to the next: P2P over NVLink/PCIe
 * (models/nvlink/p2p.c) and NET over InfiniBand (models/ib/net.c).
 *
 * A connection carries slices in order. The executor calls send() when
 * the sending thread block starts on a slice, and consumed() when the
 * receiving thread block has finished with the oldest slice; the transport
 * calls back arrived() when the next slice is visible to the receiver and
 * credit() when the sender may reuse one more slot. Real hardware backends
 * implement the same table.
 */
#ifndef NSIM_MODELS_TRANSPORT_H
#define NSIM_MODELS_TRANSPORT_H

#include <stdint.h>

#include "models/fabric.h"
#include "models/params.h"
#include "sim/core/sim.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

/* NCCL's NET knobs (nccl-internals 5.2-5.5, 9). */
typedef struct nsim_net_knobs {
    int split_data_on_qps;  /* NCCL_IB_SPLIT_DATA_ON_QPS (0) */
    int adaptive_routing;   /* NCCL_IB_ADAPTIVE_ROUTING: -1 auto (IB on,
                             * RoCE off), 0, 1 */
    uint64_t ar_threshold;  /* NCCL_IB_AR_THRESHOLD (8192) */
    int shared_comms;       /* NCCL_NET_SHARED_COMMS / channel mode shared */
} nsim_net_knobs;

#define NSIM_NET_KNOBS_DEFAULT {0, -1, 8192, 0}

/* A fault plan (scenario "faults") and the failover policy per channel. */
typedef enum nsim_fault_kind {
    NSIM_FAULT_QP_ERROR,      /* a connection's QP pair forced to ERR */
    NSIM_FAULT_PORT_DOWN,     /* a NIC port goes down: its QPs to ERR */
    NSIM_FAULT_LINK_DOWN,     /* a network link drops every packet */
    NSIM_FAULT_LINK_DEGRADED, /* a link's bandwidth drops to bw */
    NSIM_FAULT_LOSS,          /* random packet loss on a NIC's packets */
} nsim_fault_kind;

typedef enum nsim_failover {
    NSIM_FAILOVER_REBIND_QP,  /* move the work to the connection's other QPs */
    NSIM_FAILOVER_REBIND_NIC, /* a new connection on another NIC */
    NSIM_FAILOVER_FAIL,       /* stop the collective with a report */
} nsim_failover;

typedef struct nsim_fault {
    nsim_fault_kind kind;
    nsim_time at_ps;          /* from the start of the run */
    int32_t channel, from, to; /* -1: any */
    uint32_t qp;              /* QP index within the connection */
    uint32_t dev;             /* NIC device (port_down, loss) */
    uint32_t link;            /* directed link a -> b (link faults) */
    double bw;                /* link_degraded: new bandwidth, bytes/s */
    double prob;              /* loss probability per packet */
} nsim_fault;

typedef struct nsim_fault_plan {
    const nsim_fault *faults;
    uint32_t nfaults;
    nsim_failover policy[NSIM_MAX_CHANNELS];
} nsim_fault_plan;

const char *nsim_failover_name(nsim_failover f);

/* One failover that happened (observability). */
typedef struct nsim_failover_record {
    nsim_time at_ps;
    uint32_t channel, from, to;
    nsim_failover action;
    char what[160];
} nsim_failover_record;

typedef struct nsim_xport_env {
    nsim_sim *sim;
    nsim_fabric *fab;
    nsim_topo *topo;
    const nsim_params *params;
    const nsim_plan *plan;
    const nsim_net_knobs *net;
    const nsim_fault_plan *faults; /* never NULL */
    void *exec;
    void (*arrived)(void *exec, uint32_t conn);
    void (*credit)(void *exec, uint32_t conn);
    struct nsim_tlog *tlog; /* trace records, NULL unless tracing */
} nsim_xport_env;

/* What a transport reports after a run (observability). */
typedef struct nsim_qp_record {
    uint32_t conn, index;   /* connection, QP index within it */
    uint32_t side;          /* 0: sender's data QP, 1: receiver's QP */
    uint32_t nic, peer_nic; /* device ids */
    uint32_t qpn, peer_qpn;
    const char *state;      /* "RTS", "ERR", ... */
    uint64_t wrs, bytes, packets, acks, retransmits;
    uint64_t naks, timeouts; /* go-backs on a NAK, on the timer */
} nsim_qp_record;

typedef struct nsim_cq_record {
    uint32_t conn, side, depth;
    uint64_t cqes, polls, empty_polls;
} nsim_cq_record;

typedef struct nsim_port_record {
    uint32_t nic;
    uint64_t packets_tx, packets_rx, bytes_tx, bytes_rx, acks_tx;
    uint64_t packets_lost; /* of those it sent, lost on the way (loss) */
} nsim_port_record;

/* Where a NET connection's slices waited (explain): staged but not yet
 * granted by the receiver's CTS, a completion waiting for its proxy to
 * poll the CQ (per side), and the GPU reading a received slice from host
 * memory over PCIe (no GDR). */
typedef struct nsim_wait_record {
    uint32_t conn;
    nsim_time cts_ps, poll_ps[2], host_read_ps;
} nsim_wait_record;

typedef struct nsim_xport_stats {
    nsim_qp_record *qps;
    uint32_t nqps, qps_cap;
    nsim_cq_record *cqs;
    uint32_t ncqs, cqs_cap;
    nsim_port_record *ports;
    uint32_t nports, ports_cap;
    nsim_failover_record *failovers;
    uint32_t nfailovers, failovers_cap;
    nsim_wait_record *waits;
    uint32_t nwaits, waits_cap;
} nsim_xport_stats;

/* Appends one record (grows the array); NSIM_ENOMEM on failure. */
int nsim_xport_stats_add_qp(nsim_xport_stats *s, const nsim_qp_record *r);
int nsim_xport_stats_add_cq(nsim_xport_stats *s, const nsim_cq_record *r);
int nsim_xport_stats_add_port(nsim_xport_stats *s, const nsim_port_record *r);
int nsim_xport_stats_add_failover(nsim_xport_stats *s,
                                  const nsim_failover_record *r);
int nsim_xport_stats_add_wait(nsim_xport_stats *s, const nsim_wait_record *r);
void nsim_xport_stats_free(nsim_xport_stats *s);

/* A connection's own account of what it carried (exactly-once checks). */
typedef struct nsim_xport_conn_counters {
    uint64_t tx_slices, tx_bytes; /* handed to the network */
    uint64_t rx_slices, rx_bytes; /* accepted by the receiver, each piece
                                   * once, for the slice it belongs to */
    uint64_t dup_pieces; /* copies that came again (sent again after a
                          * failover) and were ignored */
} nsim_xport_conn_counters;

typedef struct nsim_transport_ops {
    const char *name;
    /* Per-run state shared by the transport's connections (NICs, proxy
     * threads); env must outlive it. May set *shared to NULL. */
    int (*init)(const nsim_xport_env *env, void **shared, nsim_err *err);
    void (*fini)(void *shared);
    /* Creates the state of connection conn of env->plan. */
    int (*setup)(void *shared, const nsim_xport_env *env, uint32_t conn,
                 void **state, nsim_err *err);
    void (*teardown)(void *state);
    /* The sender's thread block (server sm_server) starts writing a slice
     * of bytes; *sm_done gets the time it is free for its next op. */
    int (*send)(void *state, uint32_t sm_server, uint64_t bytes,
                nsim_time *sm_done);
    /* The receiver has finished with the oldest arrived slice. */
    int (*consumed)(void *state);
    /* Optional: appends the transport's QPs, CQs and ports to st. */
    int (*report)(void *shared, nsim_xport_stats *st);
    /* Optional: a fault of the plan strikes now. */
    int (*fault)(void *shared, const nsim_fault *f);
    /* Optional: the connection's own counters. */
    void (*conn_counters)(const void *state, nsim_xport_conn_counters *out);
} nsim_transport_ops;

extern const nsim_transport_ops nsim_p2p_transport;
extern const nsim_transport_ops nsim_net_transport;
extern const nsim_transport_ops nsim_nvls_transport;

#endif
