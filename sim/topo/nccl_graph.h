/* SPDX-License-Identifier: MIT
 *
 * nccl_graph.h - NCCL graph XML files (NCCL_GRAPH_DUMP_FILE output and
 * NCCL_GRAPH_FILE input, nccl-internals.md 2.3): the rings and trees NCCL
 * built, read and checked against a topology, so that a simulation can
 * replay exactly those channels or compare its own search with them.
 *
 * Owns: reading <graphs version="1"> with libxml2; per <graph>: id,
 * pattern, crossnic, nchannels, speedintra/speedinter (GB/s per channel,
 * held here in bytes/s), latencyinter, typeintra/typeinter, samechannels;
 * per <channel>: the GPU ranks in chain order and the entry/exit NET
 * devices, mapped onto the topology's NIC devices (see below).
 * Checks, each failing with "FILE:LINE: <element>: what": the version,
 * attribute types, path type names, nchannels against the <channel>
 * count, a rank (or a GPU dev without rank) that does not fit the
 * topology, a rank twice in one channel, a NET device with no NIC.
 *
 * NET dev -> NIC: dev is systemId << 56 | NCCL NET index. The host is the
 * systemId when non-zero, else the host of the channel's first GPU. In
 * that host the NIC is, in order of preference: the device "hH.netD"
 * (imported files), a NIC whose rail is D, the NIC "hH.netD0" with
 * D0 <= D < D0 + ports, the D-th NIC of the host in device order.
 * Workload: once per run; a few graphs of up to 64 channels.
 */
#ifndef NSIM_TOPO_NCCL_GRAPH_H
#define NSIM_TOPO_NCCL_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"
#include "topo.h"

/* NCCL_TOPO_PATTERN_* (src/include/graph.h) */
#define NSIM_PATTERN_BALANCED_TREE 1
#define NSIM_PATTERN_SPLIT_TREE 2
#define NSIM_PATTERN_TREE 3
#define NSIM_PATTERN_RING 4
#define NSIM_PATTERN_NVLS 5
#define NSIM_PATTERN_COLLNET_DIRECT 6

/* Graph ids as NCCL dumps them. */
#define NSIM_GRAPH_RING 0
#define NSIM_GRAPH_TREE 1
#define NSIM_GRAPH_COLLNET_CHAIN 2
#define NSIM_GRAPH_NVLS 3
#define NSIM_GRAPH_COLLNET_DIRECT 4

typedef struct nsim_graph_chan {
    uint32_t ngpus;
    const uint32_t *ranks;  /* ngpus GPU ranks in chain order */
    int64_t net_in, net_out; /* NCCL NET dev (low 56 bits); -1: none */
    int32_t nic_in, nic_out; /* topology device index of the NIC; -1 */
    int line;
} nsim_graph_chan;

typedef struct nsim_graph_info {
    int32_t id, pattern, crossnic, samechannels;
    uint32_t nchannels;
    double bw_intra, bw_inter; /* bytes/s per channel */
    double lat_inter_us;
    nsim_path_type type_intra, type_inter;
    int line;
} nsim_graph_info;

typedef struct nsim_ncclgraph nsim_ncclgraph;

/* topo is borrowed for the call only (names and ranks are copied). */
NSIM_NODISCARD int nsim_ncclgraph_load(const char *path,
                                       const nsim_topo *topo,
                                       nsim_ncclgraph **out, nsim_err *err);
NSIM_NODISCARD int nsim_ncclgraph_parse(const char *text, size_t len,
                                        const char *source,
                                        const nsim_topo *topo,
                                        nsim_ncclgraph **out, nsim_err *err);
void nsim_ncclgraph_destroy(nsim_ncclgraph *g); /* NULL-safe */

uint32_t nsim_ncclgraph_ngraphs(const nsim_ncclgraph *g);
const nsim_graph_info *nsim_ncclgraph_graph(const nsim_ncclgraph *g,
                                            uint32_t i);
/* The graph with this id (NSIM_GRAPH_*), or NULL. */
const nsim_graph_info *nsim_ncclgraph_find(const nsim_ncclgraph *g,
                                           int32_t id);
/* Channel c (< info->nchannels) of graph i (index, not id). */
const nsim_graph_chan *nsim_ncclgraph_channel(const nsim_ncclgraph *g,
                                              uint32_t i, uint32_t c);
const char *nsim_ncclgraph_pattern_name(int32_t pattern);
/* Parses "NVL", "PIX", ... (NCCL's path names); NSIM_EINVAL if unknown. */
int nsim_ncclgraph_path_parse(const char *s, nsim_path_type *out);

#endif
