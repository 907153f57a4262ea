/* SPDX-License-Identifier: MIT
 *
 * hca.h - a ConnectX-like host channel adapter with RC queue pairs, memory
 * regions and completion queues, in the shape of the verbs API
 * (ibv_modify_qp, ibv_post_send, ibv_post_recv, ibv_poll_cq, ibv_reg_mr).
 *
 * Models: a posted work request becomes eligible after the doorbell and
 * the WQE fetch (one PCIe read round trip); the port's scheduler serves
 * the QPs with work round robin, one MTU packet at a time (a QP with a
 * rate limit waits its turn); each packet's payload is DMA-read over the
 * PCIe path from the memory it lives in (the MR of the WR's lkey, else the
 * QP's default local memory), with a bounded number of reads in flight;
 * packets cross the NIC port and the network links and switches of the
 * QP's route with IB or RoCE headers and carry PSNs; the responder accepts
 * only the expected PSN, NAKs the first out-of-sequence packet (PSN
 * sequence error) and drops the rest, re-ACKs duplicates, checks rkeys,
 * ranges and access flags (NAK remote access error), writes the payload
 * over PCIe into the target memory, consumes receive WRs for SEND and
 * WRITE_WITH_IMM and completes them into its CQ once the data landed; the
 * responder ACKs cumulatively every few packets and every message's last;
 * RDMA READ sends one request, the responder DMA-reads the data and sends
 * it back as response packets that the requester writes to local memory
 * (at most max_rd_atomic READs outstanding per QP). The requester
 * completes WRs in order when the ACK covering their last PSN arrives
 * (signaled ones make a CQE; send queue slots are released up to the last
 * signaled completion), and retransmits go-back-N from the first
 * unacknowledged PSN on a NAK or when the transport timer (4.096 us x
 * 2^timeout) expires; after retry_cnt retries without progress the QP
 * goes to ERR. A message that needs a receive WR (SEND, or the last packet
 * of a WRITE_WITH_IMM) when none is posted is answered with an RNR NAK
 * carrying the responder's min_rnr_timer; the requester stops, waits that
 * long (IBTA's RNR timer table) and resends from the NAKed PSN, at most
 * rnr_retry times without progress (7: for ever, as in verbs), then the
 * WR completes with RNR_RETRY_EXC_ERR. The RC state machine RESET -> INIT -> RTR -> RTS -> ERR:
 * a QP in ERR completes its failing WR with the error and every other
 * outstanding or later posted WR with WR_FLUSH_ERR. A CQ that would
 * overflow goes into error (CQEs dropped, nsim_cq_poll reports it) and
 * moves the QP that wrote to it to ERR. Loss injection: per HCA with a
 * probability from a seeded engine stream, or per QP and PSN.
 *
 * Keys: a WR whose lkey (or rkey, or a receive WR whose lkey) is 0 is
 * "unchecked": it uses the QP's default memory (nsim_qp_connect's
 * local_mem / remote_mem) and no range or access check, which is how
 * net.c's WRs run. A non-zero key must name a registered MR on the right
 * HCA (one protection domain per HCA); offsets are byte offsets into the
 * MR.
 *
 * Does not model: UD/UC/XRC, SRQ, atomics, memory windows, SQD/SQE
 * states, responder-side max_dest_rd_atomic, scatter lists (one
 * SGE per WR), PSN wrap at 2^24, inline data, CQ moderation; responder
 * READ responses bypass the responder's port scheduler (they share the
 * links FIFO); packets still in flight when their requester enters ERR
 * are dropped at the responder.
 * Units: ps, bytes. Workload: one engine event per packet per hop; one
 * timer cancel/reschedule per ACK that makes progress.
 * See: ibv_modify_qp(3), ibv_post_send(3), ibv_poll_cq(3), ibv_reg_mr(3);
 * IBTA vol. 1 ch. 9 (RC transport).
 */
#ifndef NSIM_MODELS_IB_HCA_H
#define NSIM_MODELS_IB_HCA_H

#include <stdint.h>

#include "models/fabric.h"
#include "models/params.h"
#include "sim/core/sim.h"
#include "sim/topo/topo.h"

typedef struct nsim_hca nsim_hca;
typedef struct nsim_qp nsim_qp;
typedef struct nsim_cq nsim_cq;
typedef struct nsim_mr nsim_mr;

typedef enum nsim_qp_state {
    NSIM_QPS_RESET,
    NSIM_QPS_INIT,
    NSIM_QPS_RTR,
    NSIM_QPS_RTS,
    NSIM_QPS_ERR,
} nsim_qp_state;

typedef enum nsim_wr_opcode {
    NSIM_WR_RDMA_WRITE,
    NSIM_WR_RDMA_WRITE_WITH_IMM,
    NSIM_WR_SEND,
    NSIM_WR_SEND_WITH_IMM,
    NSIM_WR_RDMA_READ,
} nsim_wr_opcode;

typedef enum nsim_wc_opcode {
    NSIM_WC_RDMA_WRITE,
    NSIM_WC_RECV_RDMA_WITH_IMM,
    NSIM_WC_SEND,
    NSIM_WC_RDMA_READ,
    NSIM_WC_RECV,
} nsim_wc_opcode;

typedef enum nsim_wc_status {
    NSIM_WC_SUCCESS,
    NSIM_WC_WR_FLUSH_ERR,
    NSIM_WC_LOC_LEN_ERR,     /* message longer than the receive buffer */
    NSIM_WC_LOC_PROT_ERR,    /* bad lkey, range or local access */
    NSIM_WC_REM_ACCESS_ERR,  /* responder NAK: bad rkey, range, access */
    NSIM_WC_REM_INV_REQ_ERR, /* responder NAK: its receive too short */
    NSIM_WC_REM_OP_ERR,      /* responder NAK: its receive WR is bad */
    NSIM_WC_RETRY_EXC_ERR,   /* retry_cnt retries without progress */
    NSIM_WC_RNR_RETRY_EXC_ERR, /* rnr_retry RNR NAKs without progress */
} nsim_wc_status;
const char *nsim_wc_status_str(nsim_wc_status s);

/* MR and QP access flags (ibv_access_flags). */
#define NSIM_ACCESS_LOCAL_WRITE 1u
#define NSIM_ACCESS_REMOTE_WRITE 2u
#define NSIM_ACCESS_REMOTE_READ 4u

/* One SGE per WR. Keys 0 = unchecked (see the top of this file). */
typedef struct nsim_send_wr {
    uint64_t wr_id;
    nsim_wr_opcode opcode;
    uint64_t bytes;
    uint32_t imm;
    int signaled;
    uint32_t lkey;        /* local buffer: MR key, or 0 */
    uint64_t local_off;   /* byte offset in that MR */
    uint32_t rkey;        /* RDMA WRITE/READ: remote MR key, or 0 */
    uint64_t remote_off;  /* byte offset in the remote MR */
} nsim_send_wr;

typedef struct nsim_recv_wr {
    uint64_t wr_id;
    uint32_t lkey;       /* 0: unchecked, any length */
    uint64_t local_off;
    uint64_t length;     /* buffer length (checked when lkey != 0) */
} nsim_recv_wr;

typedef struct nsim_wc {
    uint64_t wr_id;
    nsim_wc_status status;
    nsim_wc_opcode opcode;
    uint64_t byte_len;
    uint32_t imm;
    uint32_t qp_num;
    /* Not in verbs: the simulator's own check. For a receive completion,
     * the wr_id of the requester's WR whose message consumed it (0 for
     * other completions). */
    uint64_t src_wr_id;
} nsim_wc;

/* Per QP: requester side (wrs .. blocked_ps) and responder side (rx_*). */
typedef struct nsim_qp_counters {
    uint64_t wrs, bytes, packets, acks; /* bytes, packets: incl. resent */
    uint64_t retransmits;  /* packets sent again (go-back-N) */
    uint64_t naks;         /* NAKs received */
    uint64_t timeouts;     /* transport timer expiries */
    uint64_t dropped;      /* this QP's packets lost by injection */
    nsim_time blocked_ps;  /* time posts were refused on a full SQ */
    uint64_t rx_packets;   /* in-sequence packets accepted */
    uint64_t rx_bytes;     /* payload written into memory */
    uint64_t rx_dup;       /* duplicate packets (re-ACKed) */
    uint64_t rx_out_of_seq;/* out-of-sequence packets dropped */
    uint64_t naks_tx;      /* NAKs sent */
    uint64_t read_bytes;   /* RDMA READ payload landed locally */
    uint64_t rnr_naks;     /* RNR NAKs received (requester) */
    uint64_t rnr_naks_tx;  /* RNR NAKs sent: no receive WR (responder) */
} nsim_qp_counters;

typedef struct nsim_cq_counters {
    uint64_t cqes, polls, empty_polls, overflows;
} nsim_cq_counters;

typedef struct nsim_hca_counters {
    uint64_t packets_tx, packets_rx, bytes_tx, bytes_rx, acks_tx;
    uint64_t packets_lost;  /* lost by injection (sent by this HCA) */
} nsim_hca_counters;

/* Called when cq goes from empty to non-empty. */
typedef void nsim_cq_notify_fn(void *ctx, nsim_cq *cq);

NSIM_NODISCARD int nsim_hca_create(nsim_sim *sim, nsim_fabric *fab,
                                   nsim_topo *topo, const nsim_params *p,
                                   uint32_t nic_dev, nsim_hca **out,
                                   nsim_err *err);
/* Frees the HCA and every QP, CQ and MR created on it (cancels their
 * timers: call it before nsim_sim_destroy). */
void nsim_hca_destroy(nsim_hca *h);
uint32_t nsim_hca_device(const nsim_hca *h);
nsim_hca_counters nsim_hca_get_counters(const nsim_hca *h);
/* Every packet this HCA puts on the network (requests, READ responses,
 * ACKs/NAKs) is lost with probability prob, drawn from the engine's random
 * stream stream_id (deterministic for a seed). prob 0 turns loss off. */
NSIM_NODISCARD int nsim_hca_set_loss(nsim_hca *h, double prob,
                                     uint64_t stream_id);

/* Registers length bytes of memory on device mem_dev (a GPU or CPU
 * reachable from the HCA's NIC) with NSIM_ACCESS_* flags. Keys are
 * non-zero; lkey == rkey (as mlx5's mkey). */
NSIM_NODISCARD int nsim_mr_reg(nsim_hca *h, uint32_t mem_dev,
                               uint64_t length, uint32_t access,
                               nsim_mr **out, nsim_err *err);
/* Invalidates the keys (later use is a protection error); the storage
 * stays with the HCA until nsim_hca_destroy. NULL-safe. */
void nsim_mr_dereg(nsim_mr *mr);
uint32_t nsim_mr_lkey(const nsim_mr *mr);
uint32_t nsim_mr_rkey(const nsim_mr *mr);

NSIM_NODISCARD int nsim_cq_create(nsim_hca *h, uint32_t depth,
                                  nsim_cq_notify_fn *fn, void *ctx,
                                  nsim_cq **out);
/* Up to max completions into wc; returns the count (>= 0), or NSIM_EIO
 * when the CQ is empty and in error (it overflowed). */
int nsim_cq_poll(nsim_cq *cq, int max, nsim_wc *wc);
/* 1 once the CQ overflowed (IBV_EVENT_CQ_ERR), else 0. */
int nsim_cq_in_error(const nsim_cq *cq);
nsim_cq_counters nsim_cq_get_counters(const nsim_cq *cq);

/* ibv_qp_init_attr */
typedef struct nsim_qp_init_attr {
    nsim_cq *send_cq, *recv_cq;
    uint32_t max_send_wr, max_recv_wr; /* >= 1, <= 32768 (hw 4.2) */
} nsim_qp_init_attr;

NSIM_NODISCARD int nsim_qp_create_ex(nsim_hca *h,
                                     const nsim_qp_init_attr *attr,
                                     nsim_qp **out);
/* Same with max_send_wr = max_recv_wr = sq_depth. */
NSIM_NODISCARD int nsim_qp_create(nsim_hca *h, nsim_cq *send_cq,
                                  nsim_cq *recv_cq, uint32_t sq_depth,
                                  nsim_qp **out);
uint32_t nsim_qp_num(const nsim_qp *qp);
nsim_qp_state nsim_qp_get_state(const nsim_qp *qp);
nsim_qp_counters nsim_qp_get_counters(const nsim_qp *qp);

/* ibv_qp_attr: which optional fields apply is given by mask. */
#define NSIM_QP_ATTR_ACCESS 1u        /* INIT: access_flags */
#define NSIM_QP_ATTR_PATH_MTU 2u      /* RTR: path_mtu */
#define NSIM_QP_ATTR_RQ_PSN 4u        /* RTR: rq_psn */
#define NSIM_QP_ATTR_SQ_PSN 8u        /* RTS: sq_psn */
#define NSIM_QP_ATTR_TIMEOUT 16u      /* RTS: timeout (exponent) */
#define NSIM_QP_ATTR_RETRY_CNT 32u    /* RTS: retry_cnt */
#define NSIM_QP_ATTR_MAX_RD_ATOMIC 64u /* RTS: max_rd_atomic */
#define NSIM_QP_ATTR_RATE_LIMIT 128u  /* RTS: rate_limit_mbps (0 = none) */
#define NSIM_QP_ATTR_MIN_RNR_TIMER 256u /* RTR, RTS: min_rnr_timer */
#define NSIM_QP_ATTR_RNR_RETRY 512u   /* RTS: rnr_retry */

typedef struct nsim_qp_attr {
    uint32_t mask;
    uint32_t access_flags;  /* remote access allowed as responder */
    /* RTR (required): the peer and the default memories for key-0 WRs:
     * local_mem holds the buffers this QP reads and READs land in;
     * remote_mem the peer's buffers its writes land in and READs read */
    nsim_qp *dest_qp;       /* borrowed: must outlive this QP's traffic */
    uint32_t local_mem, remote_mem;
    uint32_t path_mtu;      /* bytes; default min of the two ports */
    uint32_t rq_psn, sq_psn;/* default 0 (as NCCL) */
    uint32_t timeout;       /* 4.096 us x 2^timeout (0..31; 0 is not
                             * "infinite" here); default ib_timeout_exp */
    uint32_t retry_cnt;     /* default ib_retry_cnt */
    uint32_t max_rd_atomic; /* default ib_max_rd_atomic */
    uint64_t rate_limit_mbps; /* default qp_rate_limit_mbps */
    uint32_t min_rnr_timer; /* IBTA code 0..31 (12 = 0.64 ms), sent in
                             * this QP's RNR NAKs; default ib_min_rnr_timer */
    uint32_t rnr_retry;     /* 0..7, 7 = for ever; default ib_rnr_retry */
} nsim_qp_attr;

/* ibv_modify_qp for RC: RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS,
 * RTS->RTS, any->RESET, any->ERR; anything else is NSIM_ESTATE. attr may
 * be NULL except for ->RTR. Moving to ERR flushes every outstanding WR
 * (WR_FLUSH_ERR); moving to RESET empties the queues without CQEs. */
NSIM_NODISCARD int nsim_qp_modify(nsim_qp *qp, nsim_qp_state state,
                                  const nsim_qp_attr *attr, nsim_err *err);
/* Convenience bring-up RESET->INIT->RTR->RTS of qp towards remote (all
 * access flags allowed, parameters from nsim_params). local_mem: device
 * holding the buffers qp reads (GPU or CPU); remote_mem: device holding
 * the buffers remote's side writes into on the far end. Chooses the
 * network path among equal-cost ones by the QP numbers (RoCE ECMP hash)
 * or the NIC pair (IB). The peer must be brought to RTR too (connect it
 * the other way) before it can receive. */
NSIM_NODISCARD int nsim_qp_connect(nsim_qp *qp, nsim_qp *remote,
                                   uint32_t local_mem, uint32_t remote_mem,
                                   nsim_err *err);
/* ibv_post_send: NSIM_ESTATE unless RTS (in ERR the WR is accepted and
 * completes with WR_FLUSH_ERR); NSIM_EAGAIN when max_send_wr WRs occupy
 * the send queue (slots of unsignaled WRs are freed only by a later
 * signaled completion); NSIM_EINVAL for a bad opcode. */
NSIM_NODISCARD int nsim_qp_post_send(nsim_qp *qp, const nsim_send_wr *wr);
/* ibv_post_recv: NSIM_ESTATE in RESET; NSIM_EAGAIN when max_recv_wr are
 * posted and not completed; flushed at once in ERR. */
NSIM_NODISCARD int nsim_qp_post_recv_wr(nsim_qp *qp, const nsim_recv_wr *wr);
/* Same with an unchecked buffer (lkey 0). */
NSIM_NODISCARD int nsim_qp_post_recv(nsim_qp *qp, uint64_t wr_id);
/* Test hook: the next `times` transmissions of the request packet with
 * PSN psn sent by qp are lost (UINT32_MAX: all of them). */
void nsim_qp_drop_psn(nsim_qp *qp, uint32_t psn, uint32_t times);

/* Observation hook on the responder QP: called when the last byte of an
 * incoming WR (wr_id of the requester's WR) has been written to memory.
 * Stands for software polling that memory (NCCL's CTS FIFO). */
typedef void nsim_qp_land_fn(void *ctx, nsim_qp *qp, uint64_t wr_id,
                             uint64_t bytes);
void nsim_qp_set_land_hook(nsim_qp *qp, nsim_qp_land_fn *fn, void *ctx);

#endif
