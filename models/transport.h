/* SPDX-License-Identifier: MIT
 *
 * transport.h - the interface between the executor (which plays a plan's
 * primitives per rank and channel) and the transports that move a slice
 * from one GPU's channel to the next: P2P over NVLink/PCIe
 * (models/nvlink/p2p.c) and NET over InfiniBand (models/ib/net.c).
 *
 * A connection carries slices in order. The executor calls send() when
 * the sending thread block starts on a slice, and consumed() when the
 * receiving thread block has finished with the oldest slice; the transport
 * calls back arrived() when the next slice is visible to the receiver and
 * credit() when the sender may reuse one more slot. Real hardware backends
 * implement the same table.
 */
#ifndef NSIM_MODELS_TRANSPORT_H
#define NSIM_MODELS_TRANSPORT_H

#include <stdint.h>

#include "models/fabric.h"
#include "models/params.h"
#include "sim/core/sim.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

typedef struct nsim_xport_env {
    nsim_sim *sim;
    nsim_fabric *fab;
    nsim_topo *topo;
    const nsim_params *params;
    const nsim_plan *plan;
    void *exec;
    void (*arrived)(void *exec, uint32_t conn);
    void (*credit)(void *exec, uint32_t conn);
} nsim_xport_env;

typedef struct nsim_transport_ops {
    const char *name;
    /* Per-run state shared by the transport's connections (NICs, proxy
     * threads); env must outlive it. May set *shared to NULL. */
    int (*init)(const nsim_xport_env *env, void **shared, nsim_err *err);
    void (*fini)(void *shared);
    /* Creates the state of connection conn of env->plan. */
    int (*setup)(void *shared, const nsim_xport_env *env, uint32_t conn,
                 void **state, nsim_err *err);
    void (*teardown)(void *state);
    /* The sender's thread block (server sm_server) starts writing a slice
     * of bytes; *sm_done gets the time it is free for its next op. */
    int (*send)(void *state, uint32_t sm_server, uint64_t bytes,
                nsim_time *sm_done);
    /* The receiver has finished with the oldest arrived slice. */
    int (*consumed)(void *state);
} nsim_transport_ops;

extern const nsim_transport_ops nsim_p2p_transport;
extern const nsim_transport_ops nsim_net_transport;

#endif
