/* SPDX-License-Identifier: MIT
 *
 * search.h - NCCL's channel search (ncclTopoCompute, nccl-internals 2.2):
 * the ring (and tree) graph one host finds on the topology, with its
 * channel count, per-channel bandwidth, path types and, per channel, the
 * host's GPU order and the entry/exit NET devices; NCCL's channel
 * duplication (2.2) and the communicator's channel count (2.5).
 *
 * Owns: a search-time copy of the host's link bandwidths in NCCL's units
 * (1.3), its GPU<->GPU and GPU<->NET paths (PXN included, 1.4), the DFS
 * with NCCL's heuristics, relaxation and stop rules, and the graph dump.
 * Units: bandwidth in GB/s per channel and direction (NCCL's units).
 * Workload: once per topology; a few thousand DFS steps.
 */
#ifndef NSIM_PLAN_SEARCH_H
#define NSIM_PLAN_SEARCH_H

#include <stdint.h>
#include <stdio.h>

#include "sim/core/err.h"
#include "sim/topo/topo.h"

#define NSIM_SEARCH_MAXCHANNELS 64 /* NCCL's MAXCHANNELS (2.30) */

typedef struct nsim_search_opts {
    int32_t pattern;   /* NSIM_PATTERN_* (nccl_graph.h); 0: ring */
    int32_t cross_nic; /* NCCL_CROSS_NIC 0, 1, 2; -1: default (2) */
    uint32_t min_channels, max_channels; /* 0: 1 and MAXCHANNELS / 2 */
    int32_t host;      /* host searched; -1: the host of rank 0 */
} nsim_search_opts;

/* The graph one host found (plain data, from nsim_search_compute). */
typedef struct nsim_search_graph {
    int32_t pattern, crossnic, same_channels, host;
    uint32_t nchannels, ngpus, nhosts, sm; /* sm: lowest of the host */
    double bw_intra, bw_inter; /* GB/s per channel (after duplication) */
    nsim_path_type type_intra, type_inter;
    double max_bw, total_bw;   /* the system summary (1.3) */
    uint32_t *intra;           /* nchannels x ngpus GPU ranks */
    int32_t *net_in, *net_out; /* per channel NCCL NET dev; -1: none */
    int32_t *nic_in, *nic_out; /* per channel topology NIC device; -1 */
} nsim_search_graph;

/* NCCL's per-NVLink bandwidth (GB/s) for a GPU of this sm (1.3). */
double nsim_search_nvlink_bw(uint32_t sm);
/* A directed link's bandwidth in NCCL's units (GB/s): NVLink count x
 * per-link by the GPU end's sm, PCIe at NCCL's share of the raw rate,
 * other links as given. */
double nsim_search_link_bw(const nsim_topo *t, uint32_t link);
/* A GPU's NCCL total: max(sum of NVLink bw, PCIe bw), GB/s. */
double nsim_search_gpu_total_bw(const nsim_topo *t, uint32_t gpu_dev);

/* Runs the search; o may be NULL (defaults). The topology's route cache
 * is filled. NSIM_ECONFIG if the host has no GPU. */
NSIM_NODISCARD int nsim_search_compute(nsim_topo *t,
                                       const nsim_search_opts *o,
                                       nsim_search_graph **out,
                                       nsim_err *err);
void nsim_search_graph_destroy(nsim_search_graph *g); /* NULL-safe */

/* The job's graphs: NCCL searches on every host, then ncclTopoPostset
 * gives every rank the minimum channel count (2.2). Hosts of the same
 * shape (devices, internal links, GPU rank order) share one search, so a
 * cluster of identical hosts costs one. o->host is ignored. */
typedef struct nsim_search_job nsim_search_job;
NSIM_NODISCARD int nsim_search_job_compute(nsim_topo *t,
                                           const nsim_search_opts *o,
                                           nsim_search_job **out,
                                           nsim_err *err);
void nsim_search_job_destroy(nsim_search_job *j); /* NULL-safe */
/* The minimum channel count over the hosts' graphs. */
uint32_t nsim_search_job_nchannels(const nsim_search_job *j);
/* The graph host `host` found (its twin's); NULL if no rank is there. */
const nsim_search_graph *nsim_search_job_graph(const nsim_search_job *j,
                                               int32_t host);
/* The distinct graphs (one per host shape). */
uint32_t nsim_search_job_ngraphs(const nsim_search_job *j);
const nsim_search_graph *nsim_search_job_graph_at(const nsim_search_job *j,
                                                  uint32_t i);
/* The graph with the fewest channels (then the lowest bandwidth). */
const nsim_search_graph *nsim_search_job_limiting(const nsim_search_job *j);

/* The communicator's channel count from the ring graph (2.5): postset
 * doubling, the sm90 multi-host doubling, then NCCL_MAX_NCHANNELS and
 * NCCL_MIN_NCHANNELS (0: unset). */
uint32_t nsim_search_comm_channels(const nsim_search_graph *g,
                                   uint32_t min_env, uint32_t max_env);

/* Prints the graph as NCCL's NCCL_GRAPH log does (2.2): the "Pattern"
 * line, one " c : NET/d GPU/r ... NET/d" line per channel, then which
 * topology device each NET and GPU is. */
void nsim_search_dump(const nsim_search_graph *g, const nsim_topo *t,
                      FILE *f);

#endif
