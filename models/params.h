/* SPDX-License-Identifier: MIT
 *
 * params.h - every model constant, in one table, each with its source.
 *
 * Owns: nsim_params (the values the models read), the table that names
 * each field with its unit, default and source, reading overrides from a
 * scenario's "params" object or a params file, and writing the table back
 * as JSON (`ncclsim params`), so calibration can replace any value.
 *
 * Sources cite ../shared/reference/hardware-facts.md (hw) and
 * nccl-internals.md (nccl) by section, or name the calibration that
 * produced the value and the script that reruns it.
 */
#ifndef NSIM_MODELS_PARAMS_H
#define NSIM_MODELS_PARAMS_H

#include <stdint.h>

#include "sim/core/err.h"
#include "sim/core/sim.h"

struct cJSON;

typedef struct nsim_params {
    /* NVLink (per packet of an SM store stream) */
    uint64_t nvlink_payload_bytes;
    uint64_t nvlink_header_bytes;
    uint64_t nvlink_response_bytes;
    /* link efficiency per link type (percent of the link's rate): the
     * losses no modelled mechanism carries, left to calibration */
    uint64_t nvlink_efficiency_pct, pcie_efficiency_pct, net_efficiency_pct;
    /* NVLS multimem traffic (percent of the P2P store rate) */
    uint64_t nvls_multimem_pct_sm90, nvls_multimem_pct_sm100;
    /* PCIe */
    uint64_t pcie_mps_bytes;
    uint64_t pcie_tlp_overhead_bytes;
    uint64_t pcie_cpl_overhead_bytes;
    uint64_t pcie_read_completion_bytes;
    /* granularity at which NVLink and PCIe streams are simulated */
    uint64_t stream_chunk_bytes;
    uint64_t stream_min_pieces; /* a stream's pieces, at least */
    /* 1: the port shares its rate among its inputs; 0: pieces pass FIFO */
    uint64_t nvlink_fair_share, pcie_fair_share;
    /* GPU: a channel's thread block streams at the per-SM share of HBM */
    double h100_hbm_bw, a100_hbm_bw, b200_hbm_bw, other_hbm_bw;
    uint64_t h100_sm_count, a100_sm_count, b200_sm_count, other_sm_count;
    nsim_time kernel_launch_ps;
    nsim_time p2p_step_sync_ps;
    nsim_time ll_step_sync_ps, ll128_step_sync_ps;
    /* InfiniBand / RoCE wire */
    uint64_t ib_header_bytes;
    uint64_t ib_reth_bytes;
    uint64_t ib_immdt_bytes;
    uint64_t ib_ack_bytes;
    uint64_t roce_header_bytes;
    uint64_t ib_ack_every_packets;
    uint64_t cts_entry_bytes;
    /* HCA */
    nsim_time hca_doorbell_ps;
    nsim_time hca_wqe_fetch_ps;
    nsim_time hca_cqe_write_ps;
    uint64_t hca_dma_read_outstanding;
    /* RC transport: timer, retries, READs, rate limit */
    nsim_time ib_timeout_unit_ps;
    uint64_t ib_timeout_exp;
    uint64_t ib_retry_cnt;
    uint64_t ib_max_rd_atomic;
    uint64_t qp_rate_limit_mbps;
    /* proxy thread */
    nsim_time proxy_action_ps;
    nsim_time net_reconnect_ps;
    nsim_time gpu_memory_latency_ps;
    /* RC receiver-not-ready (harden-faults) */
    uint64_t ib_min_rnr_timer;
    uint64_t ib_rnr_retry;
    /* flow fidelity (models/flow.h) */
    uint64_t flow_control_bytes; /* pieces this small are delays only */
    uint64_t flow_passes;        /* recompute passes per change */
    uint64_t flow_check;         /* 1: count flows left below max-min */
    uint64_t flow_auto_packets;  /* --fidelity auto: flow above this */
    uint64_t flow_auto_events;   /* ... or where the packet plan's events
                                  * pass this */
    /* host backend (validate): a CPU core as a rank */
    double host_core_copy_bw;
    /* host memory (DRAM behind a CPU) that staged copies pass through */
    double host_mem_bw;
} nsim_params;

typedef enum nsim_param_kind {
    NSIM_PK_BYTES, /* uint64 bytes */
    NSIM_PK_COUNT, /* uint64 */
    NSIM_PK_BW,    /* double bytes/s */
    NSIM_PK_TIME,  /* nsim_time ps */
} nsim_param_kind;

typedef struct nsim_param_info {
    const char *name;
    nsim_param_kind kind;
    size_t offset;
    const char *value; /* default, with its unit */
    const char *source;
} nsim_param_info;

/* The table, NULL-name terminated. */
extern const nsim_param_info nsim_param_table[];

/* The range a param's value must lie in, as text ("4 KiB .. 64 MiB"). */
const char *nsim_param_range_text(const nsim_param_info *pi);

/* Fills p with the defaults of the table. */
void nsim_params_defaults(nsim_params *p);
/* Applies an object {"name": value, ...}: value a string with its unit (or
 * a number for counts and bytes), or {"value": ..., "source": ...}.
 * Unknown names are errors. what names the input in messages. */
NSIM_NODISCARD int nsim_params_apply(nsim_params *p, const struct cJSON *obj,
                                     const char *what, nsim_err *err);
/* Loads a params file (same object, optionally under "params"). */
NSIM_NODISCARD int nsim_params_load(nsim_params *p, const char *path,
                                    nsim_err *err);
/* JSON text of the table with current values (malloc'd). */
NSIM_NODISCARD int nsim_params_to_json(const nsim_params *p, char **out,
                                       nsim_err *err);

/* Per-step synchronisation of a protocol (nsim_proto) on a connection:
 * Simple's tail store and poll (over NET: one poll of the proxy's tail),
 * LL/LL128's flag polling. */
nsim_time nsim_params_step_sync_ps(const nsim_params *p, int proto,
                                   int over_net);

/* Wire-time factor (>= 1) of NVLS multimem traffic on an NVLink port of
 * a GPU with this sm: 100 / the generation's multimem percent. */
double nsim_params_multimem_factor(const nsim_params *p, uint32_t sm);
/* The share (0..1] of a link's rate that its type's *_efficiency_pct
 * leaves: NVLink, PCIe, and the network (IB, RoCE, Ethernet); 1 for the
 * others (C2C, CPU interconnect). */
double nsim_params_link_efficiency(const nsim_params *p, int link_type);

/* Per-SM streaming rate of a GPU generation (bytes/s): HBM bw / SMs. */
double nsim_params_sm_stream_bw(const nsim_params *p, const char *gen);

#endif
