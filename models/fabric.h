/* SPDX-License-Identifier: MIT
 *
 * fabric.h - the links of a topology as serializing servers, and pieces of
 * data (NVLink/PCIe stream pieces, IB packets) that hop along paths.
 *
 * Owns: one server per directed topology link (at the link's rate times
 * its type's efficiency, params) plus any number of extra servers (a
 * channel's thread block, a NIC's DMA engine, a CPU's host memory that
 * staged copies pass), each a FIFO with
 * a bandwidth and a latency: a piece that reaches a server leaves it at
 * max(arrival, free) + wire_bytes / bw and arrives at the next hop one
 * latency later (store and forward). Wire bytes follow the link's
 * protocol: NVLink headers per 128-byte packet plus responses charged on
 * the reverse direction, PCIe TLP framing per MPS, IB/RoCE headers per
 * packet (all from nsim_params). Counters per server: bytes, pieces,
 * busy time.
 *
 * Pieces come from a pool owned by the fabric; moving them allocates
 * nothing once the pool has grown to the peak number in flight.
 * Units: ps, bytes, bytes/s. Workload: one event per piece per hop.
 */
#ifndef NSIM_MODELS_FABRIC_H
#define NSIM_MODELS_FABRIC_H

#include <stdint.h>

#include "models/params.h"
#include "sim/core/sim.h"
#include "sim/topo/topo.h"

typedef struct nsim_fabric nsim_fabric;
typedef struct nsim_piece nsim_piece;

/* How a server turns payload bytes into time on the wire. */
typedef enum nsim_wire {
    NSIM_WIRE_RAW,    /* payload only (thread blocks, DMA engines) */
    NSIM_WIRE_NVLINK, /* 128-B packets + header, response on reverse */
    NSIM_WIRE_PCIE,   /* TLPs of MPS bytes + framing/header */
    NSIM_WIRE_IB,     /* one packet: IB headers */
    NSIM_WIRE_ROCE,   /* one packet: RoCEv2 headers */
    NSIM_WIRE_SYS,    /* CPU interconnect: treated as raw */
} nsim_wire;

/* Called when a piece reaches the end of its path; the piece is returned
 * to the pool after the call. */
typedef void nsim_piece_fn(nsim_sim *sim, nsim_piece *p);

struct nsim_piece {
    const uint32_t *path; /* server ids; borrowed, must outlive the piece */
    uint32_t nhops, hop;
    uint64_t bytes;       /* payload */
    uint32_t hdr_flags;   /* NSIM_PIECE_FIRST / LAST for IB headers */
    nsim_piece_fn *done;
    void *ctx;            /* owner's object; the pool's link while free */
    uint64_t tag;         /* owner's data (psn, slice, ...) */
    nsim_time start_delay;/* extra delay before the first hop */
};
/* 64 bytes: one cache line of the fabric's 64-byte aligned pool (a hop
 * loads its piece; at 72 bytes most pieces straddled two lines). */
#define NSIM_PIECE_FIRST 1u
#define NSIM_PIECE_LAST 2u
#define NSIM_PIECE_ACK 4u
#define NSIM_PIECE_READ 8u /* PCIe: read completions, not posted writes */
#define NSIM_PIECE_MULTIMEM 16u /* NVLink: NVLS multimem traffic */

typedef struct nsim_server_stats {
    uint64_t bytes;      /* payload carried */
    uint64_t wire_bytes; /* incl. headers, responses charged here */
    uint64_t pieces;
    nsim_time busy_ps;
    /* time it had work: in packet fidelity its busy time (it serves
     * whatever it holds); in flow, time with a flow on it, at any rate
     * (nsim_flownet_occupied) */
    nsim_time occupied_ps;
} nsim_server_stats;

NSIM_NODISCARD int nsim_fabric_create(nsim_sim *sim, nsim_topo *topo,
                                      const nsim_params *params,
                                      nsim_fabric **out, nsim_err *err);
void nsim_fabric_destroy(nsim_fabric *f);

/* Extra server (not a topology link): returns its id in *out. */
NSIM_NODISCARD int nsim_fabric_add_server(nsim_fabric *f, double bw,
                                          nsim_time lat_ps, nsim_wire wire,
                                          uint32_t *out);
/* Makes server id share its rate among its inputs (the pieces waiting,
 * grouped by the server each came from, or by owner where it starts
 * there: generalized processor sharing, FIFO within an input) instead of
 * passing whole pieces in arrival order; packet fidelity only. Topology
 * links get it from params nvlink_fair_share and pcie_fair_share. */
NSIM_NODISCARD int nsim_fabric_set_fair(nsim_fabric *f, uint32_t id);
/* The host-memory server of a CPU device: the DRAM behind it (bandwidth
 * host_mem_bw), which every copy staged there passes on its way in and
 * again on its way out; created on first use. *out is UINT32_MAX for a
 * device that is not a CPU. */
NSIM_NODISCARD int nsim_fabric_memory_server(nsim_fabric *f, uint32_t dev,
                                             uint32_t *out);
/* The servers a copy from device a to device b passes: a's memory if a is
 * a CPU, the links of route a->b (equal paths chosen by pick), b's memory
 * if b is a CPU. Writes at most max ids to out and their count to *n. */
NSIM_NODISCARD int nsim_fabric_route_path(nsim_fabric *f, uint32_t a,
                                          uint32_t b, uint32_t pick,
                                          uint32_t *out, uint32_t max,
                                          uint32_t *n, nsim_err *err);
/* A path kept by the fabric: an equal path interned before gives the same
 * pointer, and all of them lie together in a few huge-page slabs (owned
 * by the fabric, valid until it is destroyed). Pieces load their path at
 * every hop; paths copied into each QP's own allocations were a cache
 * miss at most of them. */
NSIM_NODISCARD int nsim_fabric_intern_path(nsim_fabric *f,
                                           const uint32_t *ids, uint32_t n,
                                           const uint32_t **out);
/* Server id of directed topology link i (same number). */
static inline uint32_t nsim_fabric_link_server(uint32_t link) { return link; }

/* Takes a piece from the pool (fields zeroed). */
NSIM_NODISCARD int nsim_fabric_piece(nsim_fabric *f, nsim_piece **out);
/* Starts the piece along its path now (+ start_delay). */
NSIM_NODISCARD int nsim_fabric_send(nsim_fabric *f, nsim_piece *p);

/* The number of pieces of at most chunk bytes that carry bytes (one,
 * empty, for 0 bytes), and sending them: pieces along path, each with
 * done/ctx/tag and hdr_flags, started now. A stream of stores or DMA
 * writes: nsim_fabric_send_stream cuts it in pieces of
 * nsim_fabric_stream_piece (as nsim_fabric_stream_npieces counts them),
 * nsim_fabric_send_pieces in pieces of chunk exactly (a piece that
 * arrived, passed on: the stream it came from was cut already). */
uint32_t nsim_fabric_npieces(uint64_t bytes, uint64_t chunk);
/* The piece size of a stream of bytes whose pieces are at most chunk
 * (stream_chunk_bytes): chunk, or smaller so that the stream has at least
 * params stream_min_pieces pieces, none below NSIM_STREAM_MIN_PIECE. */
#define NSIM_STREAM_MIN_PIECE 4096u
uint64_t nsim_fabric_stream_piece(const nsim_params *pr, uint64_t bytes,
                                  uint64_t chunk);
NSIM_NODISCARD int nsim_fabric_send_stream(nsim_fabric *f,
                                           const uint32_t *path,
                                           uint32_t nhops, uint64_t bytes,
                                           uint64_t chunk,
                                           nsim_piece_fn *done, void *ctx,
                                           uint64_t tag, uint32_t hdr_flags);
NSIM_NODISCARD int nsim_fabric_send_pieces(nsim_fabric *f,
                                           const uint32_t *path,
                                           uint32_t nhops, uint64_t bytes,
                                           uint64_t chunk,
                                           nsim_piece_fn *done, void *ctx,
                                           uint64_t tag, uint32_t hdr_flags);

/* Time at which a server will be free (for schedulers that must not
 * queue ahead of the wire). */
nsim_time nsim_fabric_free_at(const nsim_fabric *f, uint32_t server);
uint32_t nsim_fabric_nservers(const nsim_fabric *f);
nsim_server_stats nsim_fabric_stats(nsim_fabric *f, uint32_t server);
/* Sets a server's bandwidth (faults, degraded links): the link's rate,
 * which its type's efficiency (params) scales as at creation. */
void nsim_fabric_set_bw(nsim_fabric *f, uint32_t server, double bw);
/* A down server drops every piece that reaches it (the owner is not
 * told: its transport must notice, as RC QPs do by timeout). */
void nsim_fabric_set_down(nsim_fabric *f, uint32_t server, int down);
uint64_t nsim_fabric_dropped(const nsim_fabric *f, uint32_t server);

/* ---- fidelity ----------------------------------------------------------
 * Packet (the default): pieces hop server to server as above. Flow
 * (models/flow.h): every piece sent from here on is one flow over its whole
 * path, max-min shared with the others; a stream is one piece of packets of
 * chunk bytes. The interface stays the same; nsim_fabric_stream_npieces
 * says how many pieces a stream is, and nsim_fabric_send_unit sends a piece
 * that stands for a train of unit-sized packets (an IB message of MTU
 * packets: in packet mode, the same as nsim_fabric_send; in flow mode
 * drained, if not NULL, is told when its bytes have passed). */
NSIM_NODISCARD int nsim_fabric_set_flow(nsim_fabric *f, nsim_err *err);
int nsim_fabric_is_flow(const nsim_fabric *f);
uint32_t nsim_fabric_stream_npieces(const nsim_fabric *f, uint64_t bytes,
                                    uint64_t chunk);
NSIM_NODISCARD int nsim_fabric_send_unit(nsim_fabric *f, nsim_piece *p,
                                         uint64_t unit, uint32_t read_hops,
                                         nsim_piece_fn *drained);
/* Flow fidelity: a piece sent with nsim_fabric_send_unit stops sending
 * now (nsim_flownet_cut: a go-back-N abandons the message on the wire);
 * nothing in packet fidelity, where the sender stops cutting packets. */
void nsim_fabric_cut(nsim_fabric *f, nsim_piece *p);

/* For the flow model: a server's parameters, the wire bytes of one piece
 * of bytes with flags on it (and *reverse, bytes charged to the reverse
 * server), counters, and giving a piece back to the pool. */
typedef struct nsim_server_info {
    double bw;
    nsim_time lat_ps;
    nsim_wire wire;
    uint32_t reverse;
    int down;
} nsim_server_info;
nsim_server_info nsim_fabric_server_info(const nsim_fabric *f, uint32_t id);
uint64_t nsim_fabric_wire_bytes(const nsim_fabric *f, uint32_t id,
                                uint64_t bytes, uint32_t flags,
                                uint64_t *reverse);
void nsim_fabric_account(nsim_fabric *f, uint32_t id, uint64_t bytes,
                         uint64_t wire_bytes, uint64_t pieces,
                         nsim_time busy_ps);
void nsim_fabric_count_drop(nsim_fabric *f, uint32_t id);
/* How many servers are down now (0: no path needs checking). */
uint32_t nsim_fabric_ndown(const nsim_fabric *f);
void nsim_fabric_piece_release(nsim_fabric *f, nsim_piece *p);

#endif
