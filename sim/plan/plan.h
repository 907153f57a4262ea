/* SPDX-License-Identifier: MIT
 *
 * plan.h - the plan: who sends which bytes to whom, on which channel and
 * connection, after what. The spine of ncclsim: the planner builds it from
 * a topology and a request; the executor plays it on the models (or on
 * hardware); `ncclsim plan` writes it as JSON.
 *
 * Owns: nsim_plan (plain data: rings, connections, and per rank and
 * channel the ordered list of primitive operations, one per slice),
 * building it (NCCL's ring construction and the Simple-protocol ring
 * AllReduce cut: chunks of chunkSteps slots, slices of sliceSteps slots,
 * 8 slots per connection, nccl-internals.md 0, 2, 3), and its JSON form.
 *
 * Units: bytes; ranks and channels are indices.
 */
#ifndef NSIM_PLAN_PLAN_H
#define NSIM_PLAN_PLAN_H

#include <stdint.h>

#include "sim/core/err.h"
#include "sim/topo/topo.h"

#define NSIM_NCCL_STEPS 8 /* slots per connection (nccl 0) */
#define NSIM_MAX_CHANNELS 64

typedef enum nsim_coll {
    NSIM_COLL_ALLREDUCE,
    NSIM_COLL_ALLGATHER,
    NSIM_COLL_REDUCESCATTER,
    NSIM_COLL_BROADCAST,
    NSIM_COLL_REDUCE,
    NSIM_COLL_SENDRECV,
    NSIM_COLL_ALLTOALL,
    NSIM_COLL__COUNT
} nsim_coll;

typedef enum nsim_proto {
    NSIM_PROTO_SIMPLE,
    NSIM_PROTO_LL,
    NSIM_PROTO_LL128,
    NSIM_PROTO__COUNT
} nsim_proto;

typedef enum nsim_algo {
    NSIM_ALGO_RING,
    NSIM_ALGO_TREE,
    NSIM_ALGO_NVLS,
    NSIM_ALGO_NVLSTREE, /* NVLS inside hosts, double binary tree between */
    NSIM_ALGO_PAT,      /* AllGather / ReduceScatter, 1 GPU per host */
    NSIM_ALGO__COUNT
} nsim_algo;

typedef enum nsim_transport {
    NSIM_TRANSPORT_P2P, /* GPU stores over NVLink or PCIe */
    NSIM_TRANSPORT_NET, /* proxy + NIC (IB verbs) */
    NSIM_TRANSPORT_NVLS, /* NVLink SHARP: to / from the NVSwitch */
    NSIM_TRANSPORT_SHM, /* through host memory (P2P not allowed) */
} nsim_transport;

typedef enum nsim_channel_mode {
    NSIM_CHANNEL_DEDICATED, /* each channel owns its connections and QPs */
    NSIM_CHANNEL_SHARED,    /* channels to one peer on one NIC share QPs */
} nsim_channel_mode;

/* Primitive flags of one op (NCCL's prims: send, recvReduceSend, ...). */
#define NSIM_PRIM_RECV 1u
#define NSIM_PRIM_SEND 2u
#define NSIM_PRIM_REDUCE 4u
#define NSIM_PRIM_COPY_OUT 8u

typedef struct nsim_plan_op {
    uint8_t prim;    /* NSIM_PRIM_* */
    uint8_t slice;   /* slice index within its chunk step */
    uint16_t step;   /* ring step within the loop, 0..2(n-1) */
    uint32_t chunk;  /* chunk index (which rank's block) */
    uint64_t offset; /* byte offset in the rank's buffer */
    uint64_t bytes;  /* payload of this slice (may be 0) */
} nsim_plan_op;

/* An op of a lane that differs from its shared array (compact plans):
 * op at index at. */
typedef struct nsim_plan_patch {
    uint32_t at;
    nsim_plan_op op;
} nsim_plan_patch;

/* One directed connection: channel c, rank from -> rank to. */
typedef struct nsim_plan_conn {
    uint32_t channel, from, to;
    nsim_transport transport;
    nsim_path_type path;  /* route type between the GPUs */
    uint32_t send_nic, recv_nic; /* NIC device ids (NET) or UINT32_MAX */
    uint32_t nqps;
    uint32_t send_lane, recv_lane; /* indices into lanes */
    /* NVLS connections of NVLSTree: 0 scatter (up, has a send lane) or
     * gather (down), as NVLS; NSIM_NVLS_REDUCED: the switch's reduced
     * part to its head; NSIM_NVLS_STORE: the head's final part back to
     * the switch, which multicasts it. */
    uint32_t nvls_role;
} nsim_plan_conn;

#define NSIM_NVLS_REDUCED 1u
#define NSIM_NVLS_STORE 2u

/* Tree arity 3 (nccl 2.4) needs 1 + 2 connections; PAT one per
 * doubling phase, log2(nranks) <= 8; a folded tree (fold.h) a host's
 * phantom peers besides. */
#define NSIM_LANE_MORE_CONNS 15
#define NSIM_PAT_MAX_RANKS 256

/* The work of one rank on one channel (or, for trees, one of the two
 * halves of the channel's thread block: reduce up, broadcast down). */
typedef struct nsim_plan_lane {
    uint32_t channel, rank;
    uint32_t send_conn, recv_conn; /* indices into conns, or UINT32_MAX */
    uint32_t nops;
    nsim_plan_op *ops;
    /* Trees: further connections that every receive op also waits on
     * (a node reduces its children's slices) and every send op also
     * writes (a node broadcasts to each child), as NCCL's primitives
     * with several recv/send peers. */
    uint32_t nrecv_more, nsend_more;
    uint32_t recv_more[NSIM_LANE_MORE_CONNS], send_more[NSIM_LANE_MORE_CONNS];
    /* 1: runs on the previous lane's thread block (NCCL's tree split:
     * one block, its threads divided between up and down). */
    uint32_t shares_sm;
    /* PAT: connection k of the lists above (recv_conn / send_conn, then
     * the _more ones) serves phase k only: an op uses the pair its step
     * names, not all of them. */
    uint32_t per_step_conns;
    /* 1: ops belong to another lane (compact_ops), not freed with this */
    uint32_t ops_shared;
    /* compact_ops: the ops that differ from the shared array, by
     * ascending index (an uneven ring AllReduce: the positions' short and
     * empty chunks; NULL: none); patch_shared as ops_shared */
    uint32_t npatch, patch_shared;
    nsim_plan_patch *patch;
} nsim_plan_lane;

/* Op k of lane l: the patch at k, or ops[k]. */
const nsim_plan_op *nsim_plan_lane_op(const nsim_plan_lane *l, uint32_t k);
/* The index of lane l's first patch at or after op k (npatch: none). */
uint32_t nsim_plan_lane_patch_from(const nsim_plan_lane *l, uint32_t k);

typedef struct nsim_plan_req {
    nsim_coll coll;
    nsim_algo algo;
    nsim_proto proto;
    uint64_t bytes;         /* per-rank buffer size (nccl-tests "size") */
    uint32_t type_size;
    uint32_t nchannels;     /* 0: as NCCL would */
    uint32_t qps_per_conn;
    uint64_t buffsize;      /* Simple buffer per connection */
    nsim_channel_mode channel_mode;
    uint32_t root;          /* Broadcast / Reduce root rank */
    uint32_t net_peer_channels; /* NCCL_NCHANNELS_PER_NET_PEER, 0: auto */
    /* rings and NICs replayed from an NCCL graph dump (NCCL_GRAPH_DUMP_FILE)
     * instead of the planner's own: borrowed, may be NULL */
    const struct nsim_ncclgraph *graph;
    /* NCCL_CROSS_NIC (0, 1, 2) for the search behind multi-host rings;
     * unset: NCCL's default 2 */
    uint32_t cross_nic_given, cross_nic;
    /* NCCL_NVLS_NCHANNELS, NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE
     * (0: NCCL's defaults) */
    uint32_t nvls_nchannels;
    uint64_t nvls_chunk, nvlstree_max_chunk;
    /* 1: the protocol is NCCL's choice, not forced; SendRecv/AllToAll
     * then run LL where NCCL would (parts <= 16 KiB on one node) */
    uint32_t proto_auto;
    /* 1: ring and tree ops carry no placement (chunk and offset 0) and
     * lanes whose ops are then the same share one array: what the
     * simulator needs (it reads neither), in O(channels x roles x ops)
     * memory rather than O(ranks x channels x ops). Plans written out, traced or executed
     * on hardware keep the placement (0). */
    uint32_t compact_ops;
    /* AllToAll or SendRecv to be folded (fold.h): 0 plans every rank's
     * sends; 1 only
     * those of the ranks of NCCL nodes fold_host[0] and fold_host[1]
     * (hosts, or whole NVLink domains where one spans hosts; with their
     * receives, wherever the receiver is), on nodes that
     * nsim_plan_fold_prepare found alike */
    uint32_t fold_senders;
    uint32_t fold_host[2];
    /* Tree or NVLSTree AllReduce to be folded (fold.h): 1 plans only the
     * hosts that stand for every role in the two trees
     * (nsim__plan_tree_fold); their peers that are not played are
     * phantoms, driven by the lanes of a played host in the same role */
    uint32_t fold_tree;
    /* A ring to be folded: NCCL's predicted time for the size (0: none),
     * against which the fold weighs what its played routes add
     * (fold.h, NSIM_FOLD_LAT_TOL) */
    nsim_time fold_row_ps;
    /* A ring to be folded: 1 folds it past NSIM_FOLD_LAT_TOL too, on the
     * period whose played routes add least (`--fold on`: the row then
     * errs long, by about lat_added_ps) */
    uint32_t fold_lat_any;
    /* A ring to be folded: hosts it must play (where the run's faults
     * strike, fold.h), nfold_play of them, sorted, or none: the played
     * hosts, consecutive, then cover them all or the ring does not fold.
     * The array is the caller's and must outlive the fold. */
    const uint32_t *fold_play;
    uint32_t nfold_play;
    /* A ring to be folded: network links between switches that faults
     * strike (nfold_links, the caller's array): the hosts of every NET
     * connection whose path (or its ACKs' path) crosses one are played
     * too, and no played route that stands for another may cross one
     * (fold.c; InfiniBand's one path per NIC pair only) */
    const uint32_t *fold_links;
    uint32_t nfold_links;
    /* A Broadcast or Reduce chain to be folded (fold.h): the hosts to
     * play (0: NSIM_FOLD_CHAIN_HOSTS); a run plays it twice, the second
     * time on half as many (nsim_run_size) */
    uint32_t fold_chain_hosts;
    /* A Tree AllReduce whose nodes chain many ranks (fold.h,
     * NSIM_FOLD_TREE_CHAIN): each node's chain played to this many ranks
     * past the ranks a channel's chain may start at and its head, the
     * first of the channel's chain order (0: every rank); a run plays it
     * twice, the second time shorter (nsim_run_size) */
    uint32_t fold_tree_chain;
    /* 0: no limit; else the bytes the plan's op lists, lanes and
     * connections may hold: a build that would pass it stops, before it
     * allocates more, with NSIM_EBUDGET (the run's --max-memory) */
    uint64_t max_plan_bytes;
} nsim_plan_req;

typedef struct nsim_plan {
    nsim_plan_req req;
    uint32_t nranks, nhosts, nchannels;
    uint64_t step_bytes, slice_bytes, chunk_bytes; /* payload bytes */
    uint32_t chunk_steps, slice_steps;
    uint32_t nthreads;   /* threads per channel's block (nccl 3.4) */
    uint32_t line_bytes, line_payload_bytes; /* LL 16/8, LL128 128/120,
                                              * Simple 0/0: no lines */
    uint32_t *ring;     /* nchannels x nranks: ring order per channel */
    /* per channel and host: the NIC the ring enters (in) and leaves (out)
     * the host on, from NCCL's search or a graph dump; -1: the GPU's
     * nearest NIC. NULL for collectives that are not rings. */
    int32_t *ring_nic_in, *ring_nic_out;
    uint64_t *chan_offset, *chan_bytes; /* per channel byte range */
    nsim_plan_conn *conns;
    uint32_t nconns;
    /* Ring collectives: nchannels x nranks lanes, [c * nranks + rank].
     * Point-to-point collectives: a send lane and a receive lane per
     * (rank, peer, part), in any order (channel and rank name them). */
    nsim_plan_lane *lanes;
    uint32_t nlanes;
    uint32_t parts_per_peer; /* SendRecv / AllToAll: channels per peer */
    /* NVLS: heads (each owns one chunk of every loop, which one:
     * nsim_plan_nvls_head); a channel's connections are, per rank, [up
     * to the switch, down from it]. */
    uint32_t nvls_heads;
    /* fold_tree: hosts planned (nhosts when the tree did not fold),
     * connections whose far side is a phantom, and roles (of both
     * trees) played by the host of the slowest route to its parent, its
     * hosts' routes differing */
    uint32_t played_hosts, phantom_conns, slow_roles;
    /* fold_tree_chain: the ranks of each node's chain played (0: every
     * rank; also where the short chain would be the whole) */
    uint32_t tree_chain_played;
    /* NVLSTree: NET connections between heads follow the NVLS ones
     * (nchannels x nranks x 4: scatter, gather, reduced, store; lanes
     * alike: scatter, gather, tree up, tree down). */
    /* the build's count: build.held, the bytes it allocated for op
     * lists (not counting the arrays lanes share), lanes and
     * connections; building points at build while nsim_plan_build runs
     * (the planner's op lists count into it), NULL after */
    struct nsim_plan_build {
        uint64_t held;      /* bytes held */
        uint64_t fixed;     /* held when the first op list started */
        uint64_t projected; /* the whole plan, projected early past the
                             * budget (see nsim__plan_ops), or 0 */
        uint32_t lists;     /* op lists started */
    } build, *building;
} nsim_plan;

/* Bytes on the wire for a payload: LL carries 8 data bytes per 16-byte
 * line, LL128 120 per 128-byte line (nccl-internals 3.1). */
uint64_t nsim_plan_wire_bytes(const nsim_plan *p, uint64_t payload);

/* Builds the plan; errors (a ring that cannot be formed, an unsupported
 * collective) name the constraint. */
NSIM_NODISCARD int nsim_plan_build(nsim_topo *topo, const nsim_plan_req *req,
                                   nsim_plan **out, nsim_err *err);
void nsim_plan_destroy(nsim_plan *p);

/* Why LL128 is not allowed on this topology (nccl-internals 3.5), or
 * NULL when it is. */
const char *nsim_plan_ll128_refusal(nsim_topo *topo);

/* The tuner's summary of NCCL's ring graph (search.h, nccl-internals
 * 2.2): graph channels and per-channel bandwidth (GB/s, NCCL units), the
 * path types, the communicator's channels (2.5), hosts, ranks and the
 * lowest sm. */
typedef struct nsim_plan_graph {
    uint32_t nchannels, comm_channels;
    double bw_intra, bw_inter;
    nsim_path_type type_intra, type_inter;
    uint32_t nhosts, nranks, sm;
    int nvswitch_nvls; /* every host has an NVLS-capable NVSwitch */
    double nvlink_bw;  /* a GPU's NVLink total, NCCL units (GB/s) */
} nsim_plan_graph;
void nsim_plan_graph_get(nsim_topo *topo, nsim_plan_graph *g);

/* NCCL's NVLS channel (CTA) count: 16 on sm90, 24 on sm100 (nccl 6.3). */
uint32_t nsim_plan_nvls_channels(nsim_topo *topo);
/* The NVLS channel count of a request: NCCL_NVLS_NCHANNELS or the
 * topology's (nsim_plan_nvls_channels). */
uint32_t nsim_plan_req_nvls_channels(nsim_topo *topo,
                                     const nsim_plan_req *req);

/* NVLS and NVLSTree: the head (a GPU's index in its host) that reduces
 * chunk k of channel c's loops (k counts the chunks of every loop in
 * order), and the chunk of each loop that head h takes: (k + c) mod
 * heads. NCCL's heads reduce their parts of a loop at once (every head
 * its part of each scatter step, nccl-internals 6.3); the scatter lanes
 * here send a loop's parts one after another, so channels in step
 * would all have one head reduce at a time, its links carrying every
 * channel's reduced chunk while the other heads' idle. Starting each
 * channel's turn at its own head spreads them as NCCL's loops do. */
uint32_t nsim_plan_nvls_head(const nsim_plan *p, uint32_t c, uint64_t k);
uint32_t nsim_plan_nvls_part(const nsim_plan *p, uint32_t c, uint32_t h);

/* Channel count NCCL would use on this topology (nccl 2.2, 2.5). */
uint32_t nsim_plan_default_channels(nsim_topo *topo);

/* JSON text (malloc'd). */
NSIM_NODISCARD int nsim_plan_to_json(const nsim_plan *p, const nsim_topo *t,
                                     char **out, nsim_err *err);

const char *nsim_coll_name(nsim_coll c);
const char *nsim_proto_name(nsim_proto p);
const char *nsim_algo_name(nsim_algo a);
/* SendRecv and AllToAll: NCCL's point-to-point operations (p2p
 * channels, no algorithm; reported as "P2P"). */
int nsim_coll_is_p2p(nsim_coll c);
const char *nsim_transport_name(nsim_transport t);
int nsim_coll_parse(const char *s, nsim_coll *out);
int nsim_proto_parse(const char *s, nsim_proto *out);
int nsim_algo_parse(const char *s, nsim_algo *out);

/* nccl-tests' busbw factor (nccl 8.2). */
double nsim_coll_busbw_factor(nsim_coll c, uint32_t nranks);

/* nccl-tests' buffer size for a requested size (nccl 8.2): AllGather,
 * ReduceScatter and AllToAll round each rank's (or peer's) block down to
 * a multiple of 16 bytes; *count gets nccl-tests' count column. */
uint64_t nsim_coll_test_bytes(nsim_coll c, uint32_t nranks, uint32_t type_size,
                              uint64_t bytes, uint64_t *count);
/* nccl-tests' test binary name, e.g. "all_reduce_perf". */
const char *nsim_coll_test_name(nsim_coll c);
/* 1 if the collective reduces (has a redop column), 1 for rooted ones. */
int nsim_coll_has_op(nsim_coll c);
int nsim_coll_has_root(nsim_coll c);

#endif
