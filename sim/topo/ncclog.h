/* SPDX-License-Identifier: MIT
 *
 * ncclog.h - reader of NCCL_DEBUG=INFO logs and nccl-tests output
 * (nccl-internals.md 7 and 8.1), for comparing a plan with what NCCL did
 * and a simulation with what the hardware measured.
 *
 * Owns: one pass over the lines of a file. Launcher prefixes are removed
 * anywhere in a line ("[1,0]<stdout>:", "[0]", a leading "0: "), so rows
 * that mpirun split in the middle still read whole. From NCCL INFO lines:
 * the version, the network, the comm line (rank, nRanks, nNodes,
 * localRanks, localRank) and the ncclCommInitRank line of each rank, the
 * rings ("Channel 00/16 : 0 7 6 ..."), the trees ("Trees [0] a/b/c->r->u"),
 * the connections ("Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/3/
 * GDRDMA", P2P, SHM, with the NET device and proxy rank), the NIC list
 * ("NET/IB : Using [0]mlx5_0:1/IB ..."), the channel counts line and the
 * "Connected all rings/trees" lines. From nccl-tests: the collective, the
 * ranks listed, every table row (both table layouts: with root and
 * #wrong, and the older one with an error column) and the average bus
 * bandwidth. Unknown lines are skipped: the reader never fails on content,
 * only on I/O or memory.
 * Units: sizes in bytes, time in us, bandwidth in GB/s (10^9 B/s), as the
 * tools print them. Workload: files of up to a few MB, read once.
 */
#ifndef NSIM_TOPO_NCCLOG_H
#define NSIM_TOPO_NCCLOG_H

#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"

typedef struct nsim_log_info {
    char version[32];  /* "2.22.3+cuda12.2", "" if absent */
    char network[48];  /* "IB", "Socket", "AWS Libfabric" */
    int32_t nranks, nnodes, local_ranks; /* -1 if not seen */
    int32_t coll_channels, nvls_channels, p2p_channels, p2p_per_peer;
    int connected_rings, connected_trees;
} nsim_log_info;

typedef struct nsim_log_rank {
    int32_t rank, nranks, nnodes, local_ranks, local_rank, cuda_dev;
    char host[64];   /* hostname of the line prefix */
    char busid[24];  /* from ncclCommInitRank, "" if absent */
} nsim_log_rank;

typedef struct nsim_log_ring {
    uint32_t channel, nchannels, nranks;
    const uint32_t *ranks; /* in ring order, starting at rank 0 */
    int truncated;         /* the line ended in "..." */
    int line;
} nsim_log_ring;

typedef struct nsim_log_tree {
    int32_t rank;
    uint32_t channel;
    int32_t down[3], up; /* -1: none */
} nsim_log_tree;

typedef enum nsim_log_dir { NSIM_LOG_P2P, NSIM_LOG_SEND, NSIM_LOG_RECV }
    nsim_log_dir;

typedef struct nsim_log_conn {
    uint32_t channel, conn; /* conn: 0 collectives, 1 p2p */
    int32_t from, to, from_dev, to_dev;
    nsim_log_dir dir;
    char transport[16];   /* "P2P", "NET", "SHM", "COLLNET", ... */
    char detail[64];      /* rest: "CUMEM/read", "IB/3/GDRDMA" */
    int32_t net_dev;      /* NET: NIC index, else -1 */
    int32_t proxy;        /* NET: PXN proxy rank, else -1 */
    int gdr;              /* NET: GDRDMA */
    int line;
} nsim_log_conn;

typedef struct nsim_log_nic {
    int32_t index, port;
    char name[48];
    char link_layer[8]; /* "IB", "RoCE" */
} nsim_log_nic;

/* One nccl-tests row. Wrong counts are -1 where the tool printed N/A or
 * an error value (older layout). */
typedef struct nsim_nt_row {
    uint64_t size_bytes, count;
    char type[16], redop[16];
    int32_t root;       /* -1 when n/a or not printed */
    double oop_time_us, oop_algbw, oop_busbw;
    int64_t oop_wrong;
    int has_inplace;
    double ip_time_us, ip_algbw, ip_busbw;
    int64_t ip_wrong;
    int line;
} nsim_nt_row;

typedef struct nsim_nt_info {
    char collective[48]; /* "all_reduce_perf", "" if not printed */
    uint32_t ranks_listed; /* "#  Rank  N Group ..." lines */
    double avg_busbw;    /* "# Avg bus bandwidth", -1 if absent */
} nsim_nt_info;

typedef struct nsim_ncclog nsim_ncclog;

NSIM_NODISCARD int nsim_ncclog_load(const char *path, nsim_ncclog **out,
                                    nsim_err *err);
NSIM_NODISCARD int nsim_ncclog_parse(const char *text, size_t len,
                                     nsim_ncclog **out, nsim_err *err);
void nsim_ncclog_destroy(nsim_ncclog *l); /* NULL-safe */

const nsim_log_info *nsim_ncclog_info(const nsim_ncclog *l);
size_t nsim_ncclog_nranks(const nsim_ncclog *l); /* ranks with a line */
const nsim_log_rank *nsim_ncclog_rank(const nsim_ncclog *l, size_t i);
size_t nsim_ncclog_nrings(const nsim_ncclog *l); /* one per channel */
const nsim_log_ring *nsim_ncclog_ring(const nsim_ncclog *l, size_t i);
size_t nsim_ncclog_ntrees(const nsim_ncclog *l);
const nsim_log_tree *nsim_ncclog_tree(const nsim_ncclog *l, size_t i);
size_t nsim_ncclog_nconns(const nsim_ncclog *l);
const nsim_log_conn *nsim_ncclog_conn(const nsim_ncclog *l, size_t i);
size_t nsim_ncclog_nnics(const nsim_ncclog *l);
const nsim_log_nic *nsim_ncclog_nic(const nsim_ncclog *l, size_t i);

/* Removes launcher tags anywhere in a line ("[1,0]<stdout>:", "[0]")
 * and a leading "0: " (srun -l), in place. */
void nsim_ncclog_strip_launcher(char *s);

const nsim_nt_info *nsim_ncclog_tests(const nsim_ncclog *l);
size_t nsim_ncclog_nrows(const nsim_ncclog *l);
const nsim_nt_row *nsim_ncclog_row(const nsim_ncclog *l, size_t i);

#endif
