/* SPDX-License-Identifier: MIT
 *
 * p2p.c - NCCL's P2P transport over NVLink (or PCIe): the sending
 * channel's thread block stores the slice into the receiver's buffer.
 *
 * Models: the thread block as a server at the per-SM streaming rate (one
 * thread block per channel), the slice cut into stream pieces that pass
 * the thread block and then every link of the GPU-to-GPU route (NVLink
 * ports and the NVSwitch, or the PCIe tree), shared FIFO with every other
 * channel crossing them; the slice is visible to the receiver when its
 * last piece has landed; the receiver's head update (credit) reaches the
 * sender one route latency after it consumes the slice. SHM: the slice
 * is stored into host memory and the receiving GPU reads it from there;
 * with Simple it reads the slice once the whole of it is in (the
 * sender's tail store follows the data), with LL and LL128 each piece as
 * it lands (their flags travel with the data).
 * Does not model: read mode (sm80 NVLink), CE copies, NVB relays' second
 * thread block.
 */
#include <stdlib.h>

#include "models/transport.h"
#include "sim/core/hugemem.h"

#define MAX_INFLIGHT NSIM_NCCL_STEPS

/* Line 0 is what every slice and piece reads and writes; line 1 holds
 * the path's first ids (the path is stored in the same block, at the
 * end of the struct): at scale (thousands of connections) the
 * connections do not stay in cache between two slices of one. */
typedef struct p2p_conn {
    const nsim_xport_env *env;
    uint64_t sent;
    uint32_t conn;
    uint32_t nhops;
    int shm;               /* staged through host memory */
    uint32_t pieces_left[MAX_INFLIGHT];
    nsim_time credit_lat;  /* head store back to the sender */
    uint32_t shm_cpu;      /* SHM: the CPU whose memory holds the slots */
    uint32_t *read_path, nread; /* SHM: host memory -> receiving GPU */
    uint64_t *shm_bytes;   /* SHM, Simple: each slot's slice, read once
                            * all of it is in host memory; else NULL */
    uint32_t path[]; /* [sm server] + route links [+ host memory] */
} __attribute__((aligned(64))) p2p_conn;

static int p2p_init(const nsim_xport_env *env, void **shared, nsim_err *err)
{
    (void)env;
    (void)err;
    *shared = NULL;
    return NSIM_OK;
}

static void p2p_fini(void *shared) { (void)shared; }

/* SHM: the sender writes into host memory next to its CPU, the receiver
 * reads it from there (nccl 6.2); the write is the send path (*wr, from
 * GPU a to its nearest CPU), the read a second path. */
static int shm_route(nsim_topo *t, uint32_t a, uint32_t *cpu,
                     const nsim_route **wr, nsim_err *err)
{
    if (nsim_topo_nearest(t, a, NSIM_DEV_CPU, cpu) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "SHM: gpu \"%s\" has no CPU to stage through",
                        nsim_topo_device(t, a)->name);
    return nsim_topo_route(t, a, *cpu, wr, err);
}

static int shm_read_path(p2p_conn *c, nsim_fabric *fab, nsim_topo *t,
                         uint32_t cpu, uint32_t b, int whole, nsim_err *err)
{
    const nsim_route *rr;
    NSIM_TRY(nsim_topo_route(t, cpu, b, &rr, err));
    c->read_path = malloc((rr->hops + 1) * sizeof *c->read_path);
    if (whole)
        c->shm_bytes = calloc(MAX_INFLIGHT, sizeof *c->shm_bytes);
    if (c->read_path == NULL || (whole && c->shm_bytes == NULL))
        return NSIM_ERR(err, NSIM_ENOMEM, "p2p: out of memory");
    /* the CPU's memory, then the links */
    NSIM_TRY(nsim_fabric_route_path(fab, cpu, b, 0, c->read_path,
                                    rr->hops + 1, &c->nread, err));
    c->shm_cpu = cpu;
    c->credit_lat = rr->lat_ps;
    return NSIM_OK;
}

static void p2p_teardown(void *state);

static int p2p_setup(void *shared, const nsim_xport_env *env, uint32_t conn,
                     void **state, nsim_err *err)
{
    (void)shared;
    const nsim_plan_conn *pc = &env->plan->conns[conn];
    uint32_t a = nsim_topo_rank_device(env->topo, pc->from);
    uint32_t b = nsim_topo_rank_device(env->topo, pc->to);
    const nsim_route *r;
    int shm = pc->transport == NSIM_TRANSPORT_SHM;
    uint32_t cpu = 0;
    if (shm)
        NSIM_TRY(shm_route(env->topo, a, &cpu, &r, err));
    else
        NSIM_TRY(nsim_topo_route(env->topo, a, b, &r, err));
    /* the path after the struct: [sm server] + route + [host memory] */
    p2p_conn *c = nsim_line_calloc(
        1, sizeof(p2p_conn) + (r->hops + 2) * sizeof(uint32_t));
    if (c == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "p2p: out of memory");
    if (shm) {
        c->shm = 1;
        if (shm_read_path(c, env->fab, env->topo, cpu, b,
                          env->plan->req.proto == NSIM_PROTO_SIMPLE,
                          err) != NSIM_OK) {
            p2p_teardown(c);
            return err ? err->code : NSIM_ECONFIG;
        }
    }
    c->env = env;
    c->conn = conn;
    /* one route per pair: several equal paths (PCIe trees rarely have
     * them) would be spread by the connection number */
    const uint32_t *links = &r->links[(conn % r->npaths) * r->hops];
    for (uint32_t h = 0; h < r->hops; h++)
        c->path[h + 1] = nsim_fabric_link_server(links[h]);
    c->nhops = r->hops + 1;
    if (c->shm) {
        /* the write ends in the CPU's memory */
        uint32_t mem;
        if (nsim_fabric_memory_server(env->fab, c->shm_cpu, &mem) != NSIM_OK) {
            p2p_teardown(c);
            return NSIM_ERR(err, NSIM_ENOMEM, "p2p: out of memory");
        }
        c->path[c->nhops++] = mem;
    }
    c->credit_lat += r->lat_ps;
    *state = c;
    return NSIM_OK;
}

static void p2p_teardown(void *state)
{
    p2p_conn *c = state;
    if (c == NULL)
        return;
    free(c->read_path);
    free(c->shm_bytes);
    free(c);
}

static void on_piece(nsim_sim *sim, nsim_piece *p)
{
    p2p_conn *c = p->ctx;
    uint32_t slot = (uint32_t)(p->tag % MAX_INFLIGHT);
    if (c->shm && !(p->hdr_flags & NSIM_PIECE_READ)) {
        /* in host memory: the receiver reads it over PCIe, the whole
         * slice once its last piece is in (Simple), or this piece */
        uint64_t bytes = p->bytes, chunk = c->env->params->stream_chunk_bytes;
        if (c->shm_bytes != NULL) {
            if (--c->pieces_left[slot] != 0)
                return;
            bytes = c->shm_bytes[slot];
            c->pieces_left[slot] =
                nsim_fabric_stream_npieces(c->env->fab, bytes, chunk);
        }
        /* a whole slice is a stream (cut as pieces_left counts it); a
         * piece that landed is read back as it is */
        int rc = c->shm_bytes != NULL
                     ? nsim_fabric_send_stream(c->env->fab, c->read_path,
                                               c->nread, bytes, chunk,
                                               on_piece, c, p->tag,
                                               NSIM_PIECE_READ)
                     : nsim_fabric_send_pieces(c->env->fab, c->read_path,
                                               c->nread, bytes, chunk,
                                               on_piece, c, p->tag,
                                               NSIM_PIECE_READ);
        if (rc != NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "p2p: out of memory");
        return;
    }
    if (--c->pieces_left[slot] != 0)
        return;
    /* slices land in order: the path is FIFO end to end */
    c->env->arrived(c->env->exec, c->conn);
}

static int p2p_send(void *state, uint32_t sm_server, uint64_t bytes,
                    nsim_time *sm_done)
{
    p2p_conn *c = state;
    const nsim_params *pr = c->env->params;
    uint64_t chunk = pr->stream_chunk_bytes;
    uint64_t slice = c->sent++;
    c->path[0] = sm_server;
    c->pieces_left[slice % MAX_INFLIGHT] =
        nsim_fabric_stream_npieces(c->env->fab, bytes, chunk);
    if (c->shm_bytes != NULL)
        c->shm_bytes[slice % MAX_INFLIGHT] = bytes;
    NSIM_TRY(nsim_fabric_send_stream(c->env->fab, c->path, c->nhops, bytes,
                                     chunk, on_piece, c, slice, 0));
    *sm_done = nsim_fabric_free_at(c->env->fab, sm_server);
    return NSIM_OK;
}

static void on_credit(nsim_sim *sim, nsim_event *ev)
{
    p2p_conn *c = ev->target;
    (void)sim;
    c->env->credit(c->env->exec, c->conn);
}

static int p2p_consumed(void *state)
{
    p2p_conn *c = state;
    return nsim_sim_schedule(c->env->sim, c->credit_lat, on_credit, c, 0, 0,
                             NULL);
}

const nsim_transport_ops nsim_p2p_transport = {
    .name = "P2P",
    .init = p2p_init,
    .fini = p2p_fini,
    .setup = p2p_setup,
    .teardown = p2p_teardown,
    .send = p2p_send,
    .consumed = p2p_consumed,
};
