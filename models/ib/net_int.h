/* SPDX-License-Identifier: MIT
 *
 * net_int.h - private to the NET transport (net.c, net_failover.c): the
 * comm, connection and shared state, and the functions the two share.
 */
#ifndef NSIM_MODELS_IB_NET_INT_H
#define NSIM_MODELS_IB_NET_INT_H

#include "models/ib/hca.h"
#include "models/transport.h"

#define MAX_QPS 128
#define SLOTS NSIM_NCCL_STEPS
#define CTS_FIFO_SLOTS 256 /* nccl 5.3: MAX_REQUESTS x MAX_RECVS */
#define SLOT_BYTES (1ull << 30) /* nccl 5.6: at most 1 GiB per isend */
/* wr_id: connection (24 bits), piece (8), slice (32) */
#define WR_ID(conn, j, k)                                                    \
    (((uint64_t)(conn) << 40) | ((uint64_t)(j) << 32) | ((k)&0xffffffffu))
#define WR_CONN(id) ((uint32_t)((id) >> 40))
#define WR_PIECE(id) ((uint32_t)(((id) >> 32) & 0xff))
#define WR_SLICE(id) ((uint32_t)(id))
/* a pre-posted receive WR (matching by id): no request, its QP index */
#define PREPOST_ID(i) ((0xffffffull << 40) | (i))
/* matching by id: the immediate names the request (its slot in the
 * comm's request table), the slice's low bits and the piece */
#define IMM_ID(slot, k, j)                                                   \
    ((uint32_t)(((slot)&0xffffu) << 16 | ((k)&0xffu) << 8 | ((j)&0xffu)))

typedef struct proxy {
    nsim_time free_at;
} proxy;

typedef struct net_conn net_conn;
typedef struct net_comm net_comm;

/* A request of a comm, by id (matching by id). */
typedef struct net_req {
    net_conn *c;
    uint64_t k; /* the connection's slice */
} net_req;

typedef struct net_shared {
    const nsim_xport_env *env;
    nsim_hca **hca;   /* per device, created on first use */
    proxy *proxies;   /* per rank */
    net_conn **conn_of; /* per plan connection id */
    net_comm **comms;
    uint32_t ncomms, comms_cap;
    uint8_t *nic_down;  /* per device: port down by a fault */
    uint32_t max_ports; /* the most ports of any NIC */
    nsim_xport_stats log; /* failovers that happened */
} net_shared;

typedef enum act { ACT_ISEND, ACT_REPOST, ACT_POLL_SEND, ACT_POLL_RECV } act;

struct net_comm {
    net_shared *sh;
    uint32_t from, to, send_nic, recv_nic;
    /* a folded tree's phantom end (0 sender, 1 receiver): the rank
     * standing in for it, whose proxy's backlog its actions wait out
     * (proxy_do); UINT32_MAX: played */
    uint32_t shadow[2];
    /* per QP pair, nqps of each, in the comm's own block (nsim__net_new_comm) */
    nsim_qp **qs, **qr;
    nsim_cq *cq_s, *cq_r;
    uint32_t nqps, nq; /* QPs, QPs per request */
    int ar;            /* adaptive routing on this comm */
    uint64_t next_req; /* request ids, assigned by the receiver */
    nsim_qp *flush;    /* loopback QP for the GDR flush read, or NULL */
    uint8_t *dead;     /* QP pair in ERR, no longer used */
    uint32_t *live, nlive;
    int retired;       /* abandoned for another NIC pair */
    /* Receiver-side matching (nccl 5.3). By index (NCCL's default): a
     * receive WR is posted per request and piece and a WRITE_WITH_IMM
     * takes the next one, so each QP must see the writes in the order of
     * its receive WRs. By id (NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME=1
     * with pre-posted receive WRs, which NCCL's port failover requires):
     * generic receive WRs, reposted as they complete, and the immediate
     * names the request; used when the run has faults to fail over and
     * on shared comms (their channels send out of request order). */
    int by_id;
    net_req *reqs;     /* by id: the request slots, SLOTS per user (a
                        * connection has at most SLOTS receives posted) */
    uint32_t prepost;  /* by id: receive WRs kept posted per QP */
    net_conn **users;  /* the connections on this comm (shared mode: many) */
    uint32_t nusers, users_cap;
    uint8_t queued[2]; /* a poll of each side already waits */
    uint64_t polls[2], empty_polls[2], cqes[2];
    nsim_time queued_at[2], poll_wait_ps[2]; /* completions waiting for
                                              * their proxy's poll */
    uint64_t *tr_retx; /* tracing: retransmissions seen so far */
};

/* A piece index's maps, per slot (net_conn.pq). */
typedef struct net_pq {
    uint8_t qmap[SLOTS], sqmap[SLOTS];
    uint8_t got_send[SLOTS], got_recv[SLOTS];
} net_pq;

/* Laid out by what a slice touches: the scalars and counters in the
 * first two lines, then the per-slot arrays a line each, the paths (of
 * which a slice reads the first line) and the per-piece maps last; the
 * host-read state (no GDR only) out of the way. At scale (a thousand NET
 * connections on 64 nodes) a connection does not stay in cache between
 * two of its slices, so each line touched is a miss. */
struct net_conn {
    net_shared *sh;
    net_comm *m;
    uint32_t conn, from, to;
    uint32_t nstage, nhost_read;
    uint32_t mem_s, mem_r; /* where the buffers live (GPU, or host) */
    int paused;          /* moving to another NIC pair */
    uint32_t deferred;   /* receives to post once unpaused */
    uint32_t user;        /* its index among the comm's users */
    int need_flush;     /* GDR flush read (sm < 90) before visibility */
    int gdr;
    uint64_t issued, written, cts, posted, send_done;
    uint64_t recv_posted, recv_done;
    uint8_t queued[2];  /* ISEND, REPOST waiting (REPOST is counted) */
    uint64_t sizes[SLOTS];  /* staged by the sender (reused once sent) */
    uint64_t rsizes[SLOTS]; /* what the receive slot got (kept until the
                             * receiver releases it) */
    /* per slice: its pieces (one per QP of the request), the QP of each
     * piece, which pieces completed on each side, and how many are left
     * (0xff: slot not in use) */
    uint8_t npieces[SLOTS];
    /* the sender's own copy for the slices it posted: the receiver may
     * reuse a slot for slice k + SLOTS before the send completions of
     * slice k are in (a lost ACK) */
    uint8_t snpieces[SLOTS];
    uint8_t send_left[SLOTS], recv_left[SLOTS];
    /* registered buffers (keys checked by the HCA model): the send
     * staging slots, the receive slots, the sender's CTS FIFO and the
     * receiver's shadow CTS entries */
    nsim_mr *mr_send, *mr_recv, *mr_fifo, *mr_shadow;
    uint64_t req[SLOTS];  /* the comm's request id of each slice */
    nsim_xport_conn_counters n; /* what it carried, for exactly-once */
    nsim_time cts_since, cts_wait_ps; /* staged, waiting for a CTS */
    nsim_time host_read_ps;
    uint32_t stage_path[64];    /* sm [+ GPU -> host memory] */
    nsim_time host_read_at[SLOTS]; /* no GDR: PCIe reads */
    uint32_t host_read[64]; /* host -> GPU (no GDR) */
    /* per piece j of a slice (npq: as many as a comm of its NIC pairs
     * may split a slice into), per slot: the receiver's QP (qmap), the
     * sender's copy (sqmap), whether each side completed it. Piece-major,
     * so that a connection with one QP per request keeps every slot's
     * maps in 32 bytes; slot-major, the slots cycled through 32 lines. */
    uint32_t npq;
    net_pq pq[];
};


/* net.c */
void nsim__net_post_piece(net_conn *c, uint64_t k, uint32_t j);
void nsim__net_post_recv_piece(net_conn *c, uint64_t k, uint32_t j);
void nsim__net_post_cts(net_conn *c, uint64_t k);
void nsim__net_post_receive(net_conn *c);
void nsim__net_try_isend(net_conn *c);
void nsim__net_release(net_conn *c);
void nsim__net_fail(net_conn *c, const char *what);
int nsim__net_new_comm(net_shared *sh, const nsim_plan_conn *pc,
                       uint32_t send_nic, uint32_t recv_nic, uint32_t mem_s,
                       uint32_t mem_r, net_comm **out, nsim_err *err);
int nsim__net_register(net_conn *c, uint32_t mem_s, uint32_t mem_r,
                       nsim_err *err);
void nsim__net_live(net_comm *m);
int nsim__net_add_user(net_comm *m, net_conn *c);
void nsim__net_bind_req(net_comm *m, net_conn *c, uint64_t k, uint64_t r);

/* net_failover.c */
void nsim__net_on_error(net_comm *m, const nsim_wc *wc);
int nsim__net_fault(void *shared, const nsim_fault *f);

#endif
