/* SPDX-License-Identifier: MIT
 *
 * hca.h - a ConnectX-like host channel adapter with RC queue pairs and
 * completion queues, in the shape of the verbs API (ibv_post_send,
 * ibv_post_recv, ibv_poll_cq).
 *
 * Models: a posted work request becomes eligible after the doorbell and
 * the WQE fetch (one PCIe read round trip); the port's scheduler serves
 * the QPs with work round robin, one MTU packet at a time; each packet's
 * payload is DMA-read over the PCIe path from the memory it lives in (GPU
 * with GPUDirect RDMA, else host), with a bounded number of reads in
 * flight; packets cross the NIC port and the network links and switches of
 * the QP's route with IB or RoCE headers; the responder writes the payload
 * over PCIe into the target memory, consumes a receive WR for
 * WRITE_WITH_IMM and completes it into its CQ with the immediate; the
 * responder ACKs every few packets and every message's last packet, and
 * the requester completes signaled WRs into its CQ when the ACK covering
 * their last PSN arrives. A CQ notifies its owner when it becomes
 * non-empty; the owner polls.
 * Does not model yet: state machine errors, retransmission, MR keys,
 * RDMA READ (issue 4).
 * Units: ps, bytes. Workload: one engine event per packet per hop.
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

typedef enum nsim_wr_opcode {
    NSIM_WR_RDMA_WRITE,
    NSIM_WR_RDMA_WRITE_WITH_IMM,
} nsim_wr_opcode;

typedef enum nsim_wc_opcode {
    NSIM_WC_RDMA_WRITE,
    NSIM_WC_RECV_RDMA_WITH_IMM,
} nsim_wc_opcode;

typedef enum nsim_wc_status {
    NSIM_WC_SUCCESS,
    NSIM_WC_WR_FLUSH_ERR,
} nsim_wc_status;

typedef struct nsim_send_wr {
    uint64_t wr_id;
    nsim_wr_opcode opcode;
    uint64_t bytes;
    uint32_t imm;
    int signaled;
} nsim_send_wr;

typedef struct nsim_wc {
    uint64_t wr_id;
    nsim_wc_status status;
    nsim_wc_opcode opcode;
    uint64_t byte_len;
    uint32_t imm;
    uint32_t qp_num;
} nsim_wc;

typedef struct nsim_qp_counters {
    uint64_t wrs, bytes, packets, acks;
} nsim_qp_counters;

typedef struct nsim_hca_counters {
    uint64_t packets_tx, packets_rx, bytes_tx, bytes_rx, acks_tx;
} nsim_hca_counters;

/* Called when cq goes from empty to non-empty. */
typedef void nsim_cq_notify_fn(void *ctx, nsim_cq *cq);

NSIM_NODISCARD int nsim_hca_create(nsim_sim *sim, nsim_fabric *fab,
                                   nsim_topo *topo, const nsim_params *p,
                                   uint32_t nic_dev, nsim_hca **out,
                                   nsim_err *err);
void nsim_hca_destroy(nsim_hca *h);
uint32_t nsim_hca_device(const nsim_hca *h);
nsim_hca_counters nsim_hca_get_counters(const nsim_hca *h);

NSIM_NODISCARD int nsim_cq_create(nsim_hca *h, uint32_t depth,
                                  nsim_cq_notify_fn *fn, void *ctx,
                                  nsim_cq **out);
/* Up to max completions into wc; returns the count (>= 0). */
int nsim_cq_poll(nsim_cq *cq, int max, nsim_wc *wc);

NSIM_NODISCARD int nsim_qp_create(nsim_hca *h, nsim_cq *send_cq,
                                  nsim_cq *recv_cq, uint32_t sq_depth,
                                  nsim_qp **out);
uint32_t nsim_qp_num(const nsim_qp *qp);
nsim_qp_counters nsim_qp_get_counters(const nsim_qp *qp);
/* Connects qp (requester side and responder side both ways) to remote.
 * local_mem: device holding the buffers qp reads (GPU or CPU);
 * remote_mem: device holding the buffers remote's side writes into on the
 * far end. Chooses the network path among equal-cost ones by the QP
 * numbers (RoCE ECMP hash) or the NIC pair (IB). */
NSIM_NODISCARD int nsim_qp_connect(nsim_qp *qp, nsim_qp *remote,
                                   uint32_t local_mem, uint32_t remote_mem,
                                   nsim_err *err);
NSIM_NODISCARD int nsim_qp_post_send(nsim_qp *qp, const nsim_send_wr *wr);
NSIM_NODISCARD int nsim_qp_post_recv(nsim_qp *qp, uint64_t wr_id);

/* Observation hook on the responder QP: called when the last byte of an
 * incoming WR (wr_id of the requester's WR) has been written to memory.
 * Stands for software polling that memory (NCCL's CTS FIFO). */
typedef void nsim_qp_land_fn(void *ctx, nsim_qp *qp, uint64_t wr_id,
                             uint64_t bytes);
void nsim_qp_set_land_hook(nsim_qp *qp, nsim_qp_land_fn *fn, void *ctx);

#endif
