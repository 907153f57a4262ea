/* SPDX-License-Identifier: MIT
 *
 * flow.h - flow fidelity for the fabric: every piece is one flow over its
 * whole path instead of a store-and-forward hop per server.
 *
 * Owns: the flows in progress and, per server, the list of flows that use
 * it. A flow's rate (payload bytes/s) is its max-min fair share of every
 * server it crosses (progressive filling, weighted: a flow uses
 * wire_bytes/payload of a server per payload byte, the same header, TLP,
 * response and ACK bytes the packet model charges per packet, computed
 * from nsim_params for the piece's packets of `unit` bytes; an IB
 * responder's ACKs load the link back without bounding the flow there,
 * NVLink responses bound it). Rates are recomputed when flows start or
 * end, or a server's bandwidth changes, once per instant, and only for
 * the flows that use a changed server
 * (with the servers they use; flows outside keep their rates as a fixed
 * load); when such a flow's rate falls, the servers it leaves room on are
 * recomputed in turn, for at most nsim_params.flow_passes passes.
 *
 * A flow delivers (its piece's done()) when its bytes have passed and
 * then the tail of a train of unit-sized packets has: the latency of
 * every hop plus the store-and-forward of one unit on every hop but the
 * slowest, so that an unloaded flow takes what the packet model takes. A
 * piece whose wire bytes are at most flow_control_bytes on every hop (an
 * ACK, a CTS, a zero-byte WRITE_WITH_IMM) is a delay only: it takes its
 * unloaded time and shares no bandwidth.
 *
 * Units: ps, bytes, bytes/s. Workload: two events per flow; a rate
 * recompute per instant over the flows of the changed servers, O(k log k).
 * Flows, their server lists and the solver's scratch come from pools that
 * grow to the peak in flight.
 */
#ifndef NSIM_MODELS_FLOW_H
#define NSIM_MODELS_FLOW_H

#include <stdint.h>

#include "models/fabric.h"

typedef struct nsim_flownet nsim_flownet;

NSIM_NODISCARD int nsim_flownet_create(nsim_fabric *fab, nsim_sim *sim,
                                       const nsim_params *params,
                                       nsim_flownet **out, nsim_err *err);
void nsim_flownet_destroy(nsim_flownet *fn);

/* Starts piece p along its path now (+ p->start_delay) as one flow of
 * unit-sized packets (0: one packet of all its bytes); the first
 * read_hops hops carry it as PCIe read completions when p has
 * NSIM_PIECE_READ (0: all of them). drained (may be NULL) is called when
 * the flow's bytes have passed, before its tail (a delay-only piece holds
 * nothing and never calls it). */
NSIM_NODISCARD int nsim_flownet_send(nsim_flownet *fn, nsim_piece *p,
                                     uint64_t unit, uint32_t read_hops,
                                     nsim_piece_fn *drained);
/* When the server would have drained the flows now on it, at its full
 * bandwidth (what a FIFO server's free time says). */
nsim_time nsim_flownet_free_at(nsim_flownet *fn, uint32_t server);
/* Adds to the fabric's server counters the sends not yet in them (a
 * send's wire bytes and time are counted in sums per kept route;
 * nsim_fabric_stats calls this). */
void nsim_flownet_sync(nsim_flownet *fn);
/* How long the server has carried at least one flow so far, whatever
 * its rate (flows waiting at a FIFO are not on it): against its busy
 * time, how long it had work but was held below its bandwidth by the
 * flows' other servers. */
nsim_time nsim_flownet_occupied(const nsim_flownet *fn, uint32_t server);
/* Piece p's flow stops now: the bytes it has not passed are never sent
 * (a go-back-N abandons the message on the wire); it ends, drains and
 * delivers as one that has passed them all. One not started yet (its
 * start delayed, or waiting at a FIFO) passes nothing when it starts.
 * Not for a piece whose flow has ended. */
void nsim_flownet_cut(nsim_flownet *fn, nsim_piece *p);
/* The server's bandwidth changed, or it went down (flows crossing it are
 * dropped, and so is every later flow that would). */
void nsim_flownet_changed(nsim_flownet *fn, uint32_t server);
/* Counters: flows started, rate recomputes, flows whose rate a recompute
 * visited. */
typedef struct nsim_flownet_counters {
    uint64_t flows, delays, recomputes, visited;
    uint64_t twins; /* flows that took an ended one's place and rate */
    /* recompute events that found nothing changed (a twin took every
     * ended flow's place) */
    uint64_t idle;
    /* with nsim_params.flow_check: flows looked at after each recompute,
     * and those of them with no saturated server (below max-min) */
    uint64_t checked, below;
    /* sends whose per-hop costs were computed (no kept route for them);
     * the kept routes' table size (0: off, every send computed) */
    uint64_t route_builds;
    uint32_t route_slots;
} nsim_flownet_counters;
nsim_flownet_counters nsim_flownet_get_counters(const nsim_flownet *fn);
/* The counters of the fabric's flow solver (all 0 in packet fidelity). */
nsim_flownet_counters nsim_fabric_flow_counters(const nsim_fabric *f);

#endif
