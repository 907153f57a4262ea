/* SPDX-License-Identifier: MIT
 *
 * net.c - NCCL's NET transport over the IB verbs model (nccl-internals
 * 5.2-5.9): per connection a send side and a receive side, each with its
 * own CQ, NCCL_IB_QPS_PER_CONNECTION data QPs, and the rank's proxy
 * thread doing the work.
 *
 * Send side: the GPU writes the slice into its staging slot (GPU memory
 * with GPUDirect RDMA, host memory without) and bumps tail; the proxy,
 * once the receiver's clear-to-send for that slice is in its FIFO, posts
 * one signaled RDMA_WRITE_WITH_IMM on QP (slice mod nqps) (messages rotate
 * over the QPs, NCCL_IB_SPLIT_DATA_ON_QPS=0); the send CQE frees the slot.
 * Receive side: the proxy keeps NCCL_STEPS/sliceSteps receives posted;
 * each posted receive is a receive WR on the data QP plus a 64-byte CTS
 * RDMA write to the sender; the receive CQE (in order of posting) makes
 * the slice visible to the GPU, after a GDR flush read on GPUs before
 * Hopper; when the GPU has consumed the slice the proxy posts the next
 * receive. The proxy is one thread per rank: every action (post, poll,
 * repost) takes proxy_action_ps of its time, one after another.
 */
#include <stdlib.h>
#include <string.h>

#include "models/ib/hca.h"
#include "models/transport.h"

#define MAX_QPS 128
#define SLOTS NSIM_NCCL_STEPS
#define CTS_FIFO_SLOTS 256 /* nccl 5.3: MAX_REQUESTS x MAX_RECVS */
#define SLOT_BYTES (1ull << 30) /* nccl 5.6: at most 1 GiB per isend */

typedef struct proxy {
    nsim_time free_at;
} proxy;

typedef struct net_shared {
    const nsim_xport_env *env;
    nsim_hca **hca;  /* per device, created on first use */
    proxy *proxies;  /* per rank */
} net_shared;

typedef enum act { ACT_ISEND, ACT_POLL_SEND, ACT_POLL_RECV, ACT_REPOST } act;

typedef struct net_conn {
    net_shared *sh;
    uint32_t conn, from, to;
    nsim_qp *qs[MAX_QPS], *qr[MAX_QPS];
    nsim_cq *cq_s, *cq_r;
    uint32_t nqps;
    uint32_t stage_path[64], nstage;    /* sm [+ GPU -> host memory] */
    uint32_t host_read[64], nhost_read; /* host -> GPU (no GDR) */
    uint64_t sizes[SLOTS];
    uint64_t issued, written, cts, posted, send_done; /* sender counters */
    uint64_t recv_posted, recv_done, visible;        /* receiver counters */
    uint8_t recv_landed[SLOTS];
    nsim_time flush_ps; /* GDR flush read before a Simple receive is
                         * visible (sm < 90), else 0 */
    int gdr;
    /* registered buffers (keys checked by the HCA model): the send
     * staging slots, the receive slots, the sender's CTS FIFO and the
     * receiver's shadow CTS entries */
    nsim_mr *mr_send, *mr_recv, *mr_fifo, *mr_shadow;
    uint8_t queued[4]; /* an action of each kind already waits */
} net_conn;

static int get_hca(net_shared *sh, uint32_t dev, nsim_hca **out, nsim_err *err)
{
    const nsim_xport_env *e = sh->env;
    if (sh->hca[dev] == NULL)
        NSIM_TRY(nsim_hca_create(e->sim, e->fab, e->topo, e->params, dev,
                                 &sh->hca[dev], err));
    *out = sh->hca[dev];
    return NSIM_OK;
}

static int net_init(const nsim_xport_env *env, void **shared, nsim_err *err)
{
    net_shared *sh = calloc(1, sizeof *sh);
    if (sh == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    sh->env = env;
    sh->hca = calloc(nsim_topo_ndevices(env->topo), sizeof *sh->hca);
    sh->proxies = calloc(env->plan->nranks, sizeof *sh->proxies);
    if (sh->hca == NULL || sh->proxies == NULL) {
        free(sh->hca);
        free(sh);
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    }
    *shared = sh;
    return NSIM_OK;
}

static void net_fini(void *shared)
{
    net_shared *sh = shared;
    if (sh == NULL)
        return;
    for (uint32_t d = 0; d < nsim_topo_ndevices(sh->env->topo); d++)
        nsim_hca_destroy(sh->hca[d]);
    free(sh->hca);
    free(sh->proxies);
    free(sh);
}

/* ---- the proxy thread ------------------------------------------------- */

static void on_action(nsim_sim *sim, nsim_event *ev);

/* Queues an action on a rank's proxy: it runs after the proxy's earlier
 * actions, proxy_action_ps each. */
static void proxy_do(net_conn *c, uint32_t rank, act a)
{
    const nsim_xport_env *e = c->sh->env;
    /* the proxy's loop serves every pending thing of a kind in one pass:
     * one queued pass of a kind is enough (reposts are counted, not
     * merged) */
    if (a != ACT_REPOST) {
        if (c->queued[a])
            return;
        c->queued[a] = 1;
    }
    proxy *px = &c->sh->proxies[rank];
    nsim_time now = nsim_sim_now(e->sim);
    px->free_at = (px->free_at > now ? px->free_at : now) +
                  e->params->proxy_action_ps;
    if (nsim_sim_schedule_at(e->sim, px->free_at, on_action, c, 0, a, NULL))
        nsim_sim_fail(e->sim, NSIM_ENOMEM, "net: out of memory");
}

static void try_isend(net_conn *c)
{
    while (c->posted < c->written && c->posted < c->cts) {
        uint64_t k = c->posted++;
        uint64_t off = (k % SLOTS) * SLOT_BYTES;
        nsim_send_wr wr = {k, NSIM_WR_RDMA_WRITE_WITH_IMM, c->sizes[k % SLOTS],
                           (uint32_t)c->sizes[k % SLOTS], 1,
                           nsim_mr_lkey(c->mr_send), off,
                           nsim_mr_rkey(c->mr_recv), off};
        if (nsim_qp_post_send(c->qs[k % c->nqps], &wr) != NSIM_OK) {
            nsim_sim_fail(c->sh->env->sim, NSIM_ESIM,
                          "net: send queue full on connection %u", c->conn);
            return;
        }
    }
}

static void on_visible(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    c->visible++;
    c->sh->env->arrived(c->sh->env->exec, c->conn);
}

static void on_host_read(nsim_sim *sim, nsim_piece *p)
{
    net_conn *c = p->ctx;
    (void)sim;
    c->visible++;
    c->sh->env->arrived(c->sh->env->exec, c->conn);
}

/* Receives complete in the order they were posted (NCCL tests the oldest
 * request first). */
static void release_in_order(net_conn *c)
{
    const nsim_xport_env *e = c->sh->env;
    while (c->recv_done < c->recv_posted && c->recv_landed[c->recv_done % SLOTS]) {
        uint64_t k = c->recv_done++;
        c->recv_landed[k % SLOTS] = 0;
        if (!c->gdr) {
            /* the data sits in host memory; the GPU reads it over PCIe */
            nsim_piece *p;
            if (nsim_fabric_piece(e->fab, &p) != NSIM_OK)
                goto oom;
            *p = (nsim_piece){c->host_read, c->nhost_read, 0,
                              c->sizes[k % SLOTS], 0, on_host_read, c, k, 0,
                              NULL};
            if (nsim_fabric_send(e->fab, p) != NSIM_OK)
                goto oom;
        } else if (nsim_sim_schedule(e->sim, c->flush_ps, on_visible, c, 0, k,
                                     NULL) != NSIM_OK) {
            goto oom;
        }
    }
    return;
oom:
    nsim_sim_fail(e->sim, NSIM_ENOMEM, "net: out of memory");
}

static void poll_cq(net_conn *c, nsim_cq *cq, int send_side)
{
    nsim_wc wc[4]; /* NCCL polls 4 CQEs at a time, while it finds some */
    int n;
    while ((n = nsim_cq_poll(cq, 4, wc)) > 0)
        for (int i = 0; i < n; i++) {
            if (wc[i].status != NSIM_WC_SUCCESS) {
                /* NCCL aborts: "NET/IB : Got completion with error" */
                nsim_sim_fail(c->sh->env->sim, NSIM_ESIM,
                              "net: completion with error %s on QP 0x%x "
                              "(connection %u)",
                              nsim_wc_status_str(wc[i].status),
                              wc[i].qp_num, c->conn);
                return;
            }
            if (!send_side && wc[i].opcode == NSIM_WC_RDMA_WRITE)
                continue; /* a signaled CTS write drained the send queue */
            if (send_side) {
                c->send_done++;
                c->sh->env->credit(c->sh->env->exec, c->conn);
            } else {
                c->recv_landed[wc[i].wr_id % SLOTS] = 1;
            }
        }
    if (n < 0) {
        nsim_sim_fail(c->sh->env->sim, NSIM_ESIM,
                      "net: CQ overrun on connection %u", c->conn);
        return;
    }
    if (!send_side)
        release_in_order(c);
}

static void post_receive(net_conn *c)
{
    uint64_t k = c->recv_posted++;
    /* the CTS write is unsignaled except once per 256 FIFO slots, which
     * is enough to drain the send queue (nccl 5.3) */
    uint64_t cts_bytes = c->sh->env->params->cts_entry_bytes;
    uint64_t off = (k % CTS_FIFO_SLOTS) * cts_bytes;
    nsim_send_wr cts = {k, NSIM_WR_RDMA_WRITE, cts_bytes, 0,
                        k % CTS_FIFO_SLOTS == 0, nsim_mr_lkey(c->mr_shadow),
                        off, nsim_mr_rkey(c->mr_fifo), off};
    if (nsim_qp_post_recv(c->qr[k % c->nqps], k) != NSIM_OK ||
        nsim_qp_post_send(c->qr[0], &cts) != NSIM_OK)
        nsim_sim_fail(c->sh->env->sim, NSIM_ESIM,
                      "net: receive queue full on connection %u", c->conn);
}

static void on_action(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    c->queued[ev->arg.u64] = 0;
    switch ((act)ev->arg.u64) {
    case ACT_ISEND:
        try_isend(c);
        break;
    case ACT_POLL_SEND:
        poll_cq(c, c->cq_s, 1);
        break;
    case ACT_POLL_RECV:
        poll_cq(c, c->cq_r, 0);
        break;
    case ACT_REPOST:
        post_receive(c);
        break;
    }
}

/* ---- notifications ------------------------------------------------------ */

static void on_cq_send(void *ctx, nsim_cq *cq)
{
    net_conn *c = ctx;
    (void)cq;
    proxy_do(c, c->from, ACT_POLL_SEND);
}

static void on_cq_recv(void *ctx, nsim_cq *cq)
{
    net_conn *c = ctx;
    (void)cq;
    proxy_do(c, c->to, ACT_POLL_RECV);
}

/* A CTS entry landed in the sender's FIFO (host memory). */
static void on_cts(void *ctx, nsim_qp *qp, uint64_t wr_id, uint64_t bytes)
{
    net_conn *c = ctx;
    (void)qp;
    (void)wr_id;
    (void)bytes;
    c->cts++;
    proxy_do(c, c->from, ACT_ISEND);
}

static void on_staged(nsim_sim *sim, nsim_piece *p)
{
    net_conn *c = p->ctx;
    (void)sim;
    c->written++;
    proxy_do(c, c->from, ACT_ISEND);
}

/* ---- transport ops --------------------------------------------------- */

static uint32_t host_cpu(nsim_topo *t, uint32_t gpu)
{
    /* the CPU nearest to the GPU: first CPU on its best route */
    uint32_t best = UINT32_MAX, best_hops = UINT32_MAX;
    for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++) {
        const nsim_route *r;
        if (nsim_topo_device(t, d)->type != NSIM_DEV_CPU ||
            nsim_topo_device(t, d)->host != nsim_topo_device(t, gpu)->host ||
            nsim_topo_route(t, gpu, d, &r, NULL) != NSIM_OK)
            continue;
        if (r->hops < best_hops) {
            best = d;
            best_hops = r->hops;
        }
    }
    return best;
}

static int copy_path(nsim_topo *t, uint32_t a, uint32_t b, uint32_t *out,
                     uint32_t max, uint32_t *n, nsim_err *err)
{
    const nsim_route *r;
    NSIM_TRY(nsim_topo_route(t, a, b, &r, err));
    if (r->hops > max)
        return NSIM_ERR(err, NSIM_ENOTSUP, "net: route too long");
    for (uint32_t i = 0; i < r->hops; i++)
        out[i] = nsim_fabric_link_server(r->links[i]);
    *n = r->hops;
    return NSIM_OK;
}

static int setup_paths(net_conn *c, const nsim_plan_conn *pc, uint32_t *mem_s,
                       uint32_t *mem_r, nsim_err *err)
{
    nsim_topo *t = c->sh->env->topo;
    uint32_t gs = nsim_topo_rank_device(t, pc->from);
    uint32_t gr = nsim_topo_rank_device(t, pc->to);
    const nsim_device *ns = nsim_topo_device(t, pc->send_nic);
    const nsim_device *nr = nsim_topo_device(t, pc->recv_nic);
    c->gdr = ns->gdr && nr->gdr;
    uint32_t cs = host_cpu(t, gs), cr = host_cpu(t, gr);
    if (!c->gdr && (cs == UINT32_MAX || cr == UINT32_MAX))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "net: no GPUDirect RDMA on %s/%s and no CPU to stage "
                        "through",
                        ns->name, nr->name);
    *mem_s = c->gdr ? gs : cs;
    *mem_r = c->gdr ? gr : cr;
    c->nstage = 1; /* [0] = the thread block, filled per send */
    if (!c->gdr) {
        NSIM_TRY(copy_path(t, gs, cs, c->stage_path + 1, 63, &c->nstage, err));
        c->nstage++;
        NSIM_TRY(copy_path(t, cr, gr, c->host_read, 64, &c->nhost_read, err));
    }
    if (c->gdr && nsim_topo_device(t, gr)->sm < 90) {
        const nsim_route *r;
        NSIM_TRY(nsim_topo_route(t, pc->recv_nic, gr, &r, err));
        c->flush_ps = 2 * r->lat_ps + c->sh->env->params->gpu_memory_latency_ps;
    }
    return NSIM_OK;
}

static int setup_qps(net_conn *c, const nsim_plan_conn *pc, uint32_t mem_s,
                     uint32_t mem_r, nsim_err *err)
{
    net_shared *sh = c->sh;
    nsim_hca *hs, *hr;
    NSIM_TRY(get_hca(sh, pc->send_nic, &hs, err));
    NSIM_TRY(get_hca(sh, pc->recv_nic, &hr, err));
    /* CQ sizes as NCCL's (nccl-internals 5.2) */
    if (nsim_cq_create(hs, 256 * c->nqps, on_cq_send, c, &c->cq_s) ||
        nsim_cq_create(hr, 512 * c->nqps, on_cq_recv, c, &c->cq_r))
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    /* the receiver's QPs carry the CTS writes back to host memory */
    uint32_t cs = host_cpu(sh->env->topo,
                           nsim_topo_rank_device(sh->env->topo, pc->from));
    uint32_t cr = host_cpu(sh->env->topo,
                           nsim_topo_rank_device(sh->env->topo, pc->to));
    cs = cs != UINT32_MAX ? cs : mem_s;
    cr = cr != UINT32_MAX ? cr : mem_r;
    uint64_t fifo = CTS_FIFO_SLOTS * sh->env->params->cts_entry_bytes;
    NSIM_TRY(nsim_mr_reg(hs, mem_s, SLOTS * SLOT_BYTES, 0, &c->mr_send, err));
    NSIM_TRY(nsim_mr_reg(hr, mem_r, SLOTS * SLOT_BYTES,
                         NSIM_ACCESS_LOCAL_WRITE | NSIM_ACCESS_REMOTE_WRITE,
                         &c->mr_recv, err));
    NSIM_TRY(nsim_mr_reg(hs, cs, fifo,
                         NSIM_ACCESS_LOCAL_WRITE | NSIM_ACCESS_REMOTE_WRITE,
                         &c->mr_fifo, err));
    NSIM_TRY(nsim_mr_reg(hr, cr, fifo, 0, &c->mr_shadow, err));
    for (uint32_t i = 0; i < c->nqps; i++) {
        if (nsim_qp_create(hs, c->cq_s, c->cq_s, 512, &c->qs[i]) ||
            nsim_qp_create(hr, c->cq_r, c->cq_r, 512, &c->qr[i]))
            return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
        NSIM_TRY(nsim_qp_connect(c->qs[i], c->qr[i], mem_s, mem_r, err));
        NSIM_TRY(nsim_qp_connect(c->qr[i], c->qs[i], cr, cs, err));
        nsim_qp_set_land_hook(c->qs[i], on_cts, c);
    }
    return NSIM_OK;
}

static void on_prepost(nsim_sim *sim, nsim_event *ev)
{
    net_conn *c = ev->target;
    (void)sim;
    for (uint32_t k = 0; k < SLOTS / c->sh->env->plan->slice_steps; k++)
        proxy_do(c, c->to, ACT_REPOST);
}

static int net_setup(void *shared, const nsim_xport_env *env, uint32_t conn,
                     void **state, nsim_err *err)
{
    const nsim_plan_conn *pc = &env->plan->conns[conn];
    net_conn *c = calloc(1, sizeof *c);
    uint32_t mem_s = 0, mem_r = 0;
    if (c == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "net: out of memory");
    *state = c;
    c->sh = shared;
    c->conn = conn;
    c->from = pc->from;
    c->to = pc->to;
    c->nqps = pc->nqps ? pc->nqps : 1;
    if (c->nqps > MAX_QPS)
        return NSIM_ERR(err, NSIM_EINVAL, "net: at most %d QPs", MAX_QPS);
    NSIM_TRY(setup_paths(c, pc, &mem_s, &mem_r, err));
    NSIM_TRY(setup_qps(c, pc, mem_s, mem_r, err));
    return nsim_sim_schedule(env->sim, 0, on_prepost, c, 0, 0, NULL);
}

static void net_teardown(void *state) { free(state); }

static int net_send(void *state, uint32_t sm_server, uint64_t bytes,
                    nsim_time *sm_done)
{
    net_conn *c = state;
    const nsim_xport_env *e = c->sh->env;
    uint64_t k = c->issued++; /* slices are staged in order */
    nsim_piece *p;
    NSIM_TRY(nsim_fabric_piece(e->fab, &p));
    c->stage_path[0] = sm_server;
    c->sizes[k % SLOTS] = bytes;
    *p = (nsim_piece){c->stage_path, c->nstage, 0, bytes, 0, on_staged, c, k,
                      0, NULL};
    NSIM_TRY(nsim_fabric_send(e->fab, p));
    *sm_done = nsim_fabric_free_at(e->fab, sm_server);
    return NSIM_OK;
}

static int net_consumed(void *state)
{
    net_conn *c = state;
    proxy_do(c, c->to, ACT_REPOST);
    return NSIM_OK;
}

const nsim_transport_ops nsim_net_transport = {
    .name = "NET",
    .init = net_init,
    .fini = net_fini,
    .setup = net_setup,
    .teardown = net_teardown,
    .send = net_send,
    .consumed = net_consumed,
};
