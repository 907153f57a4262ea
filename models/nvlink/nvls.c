/* SPDX-License-Identifier: MIT
 *
 * nvls.c - NVLink SHARP in the NVSwitch (hardware-facts 1.4: gen3
 * NVSwitch multicast + in-network reduction; nccl-internals 6.3): the
 * transport of NVLS connections.
 *
 * Models, per channel (a reduction group of every GPU of the host):
 * each GPU's scatter lane streams its part of chunk k through its thread
 * block and up its NVLink ports to the switch; when the parts of all
 * GPUs have arrived the switch reduces them and the result of chunk k
 * goes to its head GPU ((k + channel) mod nHeads, nsim_plan_nvls_head:
 * multimem.ld_reduce returns it on the head's down link), the head
 * stores it back to the multicast address (its up link), and the switch
 * multicasts it: one copy down every GPU's link. So each GPU's links
 * carry S + S/nHeads per direction for an S-byte AllReduce, against
 * 2(n-1)/n S for a ring. The chunk is visible to a GPU when its
 * multicast copy has landed; a slot returns to every scatter lane when
 * every GPU has gathered the chunk.
 * NVLSTree (several hosts): one group per channel and host; the reduced
 * chunk goes down to its head only (connection NSIM_NVLS_REDUCED), the
 * head's thread block takes it through the tree between hosts (NET),
 * and stores the final chunk back (NSIM_NVLS_STORE: the head's up
 * link), which the switch multicasts as above. Two slot rings, as
 * NCCL's NVLS buffers: the scatterers' slot returns once the head has
 * taken the reduced chunk; the down side has 8 slots per head, each
 * returning to the head's store once every GPU has gathered it.
 * Every NVLS byte on an NVLink is multimem traffic (the switch's reads
 * for ld_reduce, its results, multimem stores and their multicast
 * copies): it holds the port 100/nvls_multimem_pct_smXX times as long
 * as a P2P store (params; NCCL's own nvlsEfficiency).
 * Does not model: a reduction rate inside the switch (not published,
 * hardware-facts 1.4/1.5: assumed to keep up with the ports).
 * Units: ps, bytes. Workload: (2 + nGPUs) pieces per chunk and 64 KiB.
 */
#include <stdlib.h>

#include "models/transport.h"

#define SLOTS NSIM_NCCL_STEPS

typedef struct nvls_group nvls_group;

typedef struct nvls_conn {
    nvls_group *g;
    uint32_t conn, rank, up; /* up: GPU -> switch; else switch -> GPU */
    uint32_t role;           /* 0, NSIM_NVLS_REDUCED or NSIM_NVLS_STORE */
    uint32_t path[2];        /* up: [thread block, GPU -> switch link] */
    uint64_t sent, consumed;
    uint32_t pieces_left[SLOTS];
    /* down: chunks reported visible, and chunks landed out of order (a
     * later chunk's multicast can overtake: NVLSTree's heads finish
     * their trees at different times); win entries */
    uint64_t delivered;
    uint8_t *landed;
} nvls_conn;

struct nvls_group {
    const nsim_xport_env *env;
    uint32_t n, heads;
    nvls_conn **up, **down;  /* per rank (its index in the host) */
    nvls_conn **red, **store; /* NVLSTree, per head; else NULL entries */
    uint32_t *to_gpu;        /* per rank: switch -> GPU link server */
    uint32_t *head_path;     /* per rank: [switch -> GPU, GPU -> switch] */
    uint32_t contrib[SLOTS];
    uint64_t bytes[SLOTS], seq[SLOTS];
    /* the down side: win slots (NVLS: the up side's SLOTS; NVLSTree:
     * SLOTS per head, slot head x SLOTS + j mod SLOTS for the head's
     * j-th chunk, as NCCL's per-head NVLS buffers) */
    uint32_t win;
    uint32_t *gathered;      /* win */
    uint32_t *mc_left;       /* win x n: multicast pieces to land */
    /* NVLSTree: the up side's slots return when the head has taken the
     * reduced chunk, in scatter order */
    int tree;
    uint8_t up_freed[SLOTS];
    uint64_t up_next;
    nsim_time credit_lat;
    uint32_t channel;        /* which head reduces a chunk depends on it */
};

typedef struct nvls_shared {
    /* per channel and host: [c * nhosts + host], set up when the plan
     * first uses it (a folded plan plays a few hosts of many) */
    nvls_group *groups;
    uint32_t ngroups, nhosts;
    uint32_t *host, *local; /* per rank: host slot, index in the host */
    uint32_t *host_start, *host_ranks; /* the ranks of each host slot */
} nvls_shared;

/* The NVLink of a GPU to an NVLS-capable NVSwitch (one hop). */
static int switch_link(nsim_topo *t, uint32_t gpu, uint32_t *up,
                       nsim_err *err)
{
    const uint32_t *out = nsim_topo_out(t, gpu);
    for (uint32_t k = 0; k < nsim_topo_nout(t, gpu); k++) {
        const nsim_link *l = nsim_topo_link(t, out[k]);
        const nsim_device *d = nsim_topo_device(t, l->dst);
        if (d->type == NSIM_DEV_NVSWITCH && d->nvls) {
            *up = out[k];
            return NSIM_OK;
        }
    }
    return NSIM_ERR(err, NSIM_ECONFIG,
                    "algorithm NVLS: gpu \"%s\" has no NVLink to an "
                    "NVSwitch with \"nvls\": true",
                    nsim_topo_device(t, gpu)->name);
}

/* A group of the n GPUs ranks[0..n-1] of one host. */
static int group_init(nvls_group *g, const nsim_xport_env *env,
                      uint32_t channel, const uint32_t *ranks, uint32_t n,
                      nsim_err *err)
{
    g->env = env;
    g->channel = channel;
    g->n = n;
    g->heads = env->plan->nvls_heads;
    g->tree = env->plan->req.algo == NSIM_ALGO_NVLSTREE;
    g->win = g->tree ? SLOTS * g->heads : SLOTS;
    g->gathered = calloc(g->win, sizeof *g->gathered);
    g->up = calloc(n, sizeof *g->up);
    g->down = calloc(n, sizeof *g->down);
    g->red = calloc(n, sizeof *g->red);
    g->store = calloc(n, sizeof *g->store);
    g->to_gpu = calloc(n, sizeof *g->to_gpu);
    g->head_path = calloc(2 * (size_t)n, sizeof *g->head_path);
    g->mc_left = calloc((size_t)g->win * n, sizeof *g->mc_left);
    if (!g->up || !g->down || !g->to_gpu || !g->head_path || !g->mc_left ||
        !g->red || !g->store || !g->gathered)
        return NSIM_ERR(err, NSIM_ENOMEM, "nvls: out of memory");
    for (uint32_t r = 0; r < n; r++) {
        uint32_t gpu = nsim_topo_rank_device(env->topo, ranks[r]), up = 0;
        NSIM_TRY(switch_link(env->topo, gpu, &up, err));
        const nsim_link *l = nsim_topo_link(env->topo, up);
        g->to_gpu[r] = nsim_fabric_link_server(l->reverse);
        g->head_path[2 * r] = g->to_gpu[r];
        g->head_path[2 * r + 1] = nsim_fabric_link_server(up);
        /* the gather's completion reaches the scatterers over the
         * switch: up, switch, down */
        nsim_time lat = 2 * l->lat_ps;
        g->credit_lat = lat > g->credit_lat ? lat : g->credit_lat;
    }
    return NSIM_OK;
}

static void group_fini(nvls_group *g)
{
    free(g->up);
    free(g->down);
    free(g->red);
    free(g->store);
    free(g->to_gpu);
    free(g->head_path);
    free(g->mc_left);
    free(g->gathered);
}

/* Hosts (NCCL's nodes: a host or an NVLink domain) in order of their
 * first rank, as the planner groups them; each rank's host and index in
 * it; the ranks of each host. */
static int group_hosts(nvls_shared *sh, nsim_topo *t)
{
    NSIM_TRY(nsim_topo_group_ranks(t, &sh->host_ranks, &sh->host_start,
                                   &sh->nhosts));
    for (uint32_t x = 0; x < sh->nhosts; x++)
        for (uint32_t k = sh->host_start[x]; k < sh->host_start[x + 1];
             k++) {
            sh->host[sh->host_ranks[k]] = x;
            sh->local[sh->host_ranks[k]] = k - sh->host_start[x];
        }
    return NSIM_OK;
}

static int nvls_init(const nsim_xport_env *env, void **shared, nsim_err *err)
{
    /* host and local are indexed by rank (the plan's ranks are the
     * topology's) */
    uint32_t n = nsim_topo_nranks(env->topo);
    nvls_shared *sh = calloc(1, sizeof *sh);
    if (sh != NULL) {
        sh->host = calloc(n, sizeof *sh->host);
        sh->local = calloc(n, sizeof *sh->local);
    }
    *shared = sh;
    if (sh == NULL || sh->host == NULL || sh->local == NULL ||
        group_hosts(sh, env->topo) != NSIM_OK ||
        (sh->groups = calloc((size_t)env->plan->nchannels * sh->nhosts,
                             sizeof *sh->groups)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "nvls: out of memory");
    sh->ngroups = env->plan->nchannels * sh->nhosts;
    return NSIM_OK;
}

static void nvls_fini(void *shared)
{
    nvls_shared *sh = shared;
    if (sh == NULL)
        return;
    if (sh->groups != NULL)
        for (uint32_t c = 0; c < sh->ngroups; c++)
            group_fini(&sh->groups[c]);
    free(sh->groups);
    free(sh->host);
    free(sh->local);
    free(sh->host_start);
    free(sh->host_ranks);
    free(sh);
}

static int nvls_setup(void *shared, const nsim_xport_env *env, uint32_t conn,
                      void **state, nsim_err *err)
{
    nvls_shared *sh = shared;
    const nsim_plan_conn *pc = &env->plan->conns[conn];
    nvls_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "nvls: out of memory");
    uint32_t x = sh->host[pc->from];
    c->g = &sh->groups[pc->channel * sh->nhosts + x];
    if (c->g->env == NULL) {
        int rc = group_init(c->g, env, pc->channel,
                            &sh->host_ranks[sh->host_start[x]],
                            sh->host_start[x + 1] - sh->host_start[x], err);
        if (rc != NSIM_OK) {
            free(c);
            return rc;
        }
    }
    c->conn = conn;
    c->rank = sh->local[pc->from];
    c->up = pc->send_lane != UINT32_MAX;
    c->role = pc->nvls_role;
    if (c->role == NSIM_NVLS_REDUCED) {
        c->g->red[c->rank] = c;
    } else if (c->role == NSIM_NVLS_STORE) {
        c->path[1] = c->g->head_path[2 * c->rank + 1];
        c->g->store[c->rank] = c;
    } else if (c->up) {
        c->path[1] = c->g->head_path[2 * c->rank + 1];
        c->g->up[c->rank] = c;
    } else {
        c->g->down[c->rank] = c;
        if ((c->landed = calloc(c->g->win, 1)) == NULL) {
            free(c);
            return NSIM_ERR(err, NSIM_ENOMEM, "nvls: out of memory");
        }
    }
    *state = c;
    return NSIM_OK;
}

static void nvls_teardown(void *state)
{
    nvls_conn *c = state;
    if (c != NULL)
        free(c->landed);
    free(c);
}

static int send_pieces(nvls_group *g, const uint32_t *path, uint32_t nhops,
                       uint64_t bytes, nsim_piece_fn *done, void *ctx,
                       uint64_t tag, uint32_t *npieces)
{
    uint64_t chunk = g->env->params->stream_chunk_bytes;
    if (npieces != NULL)
        *npieces = nsim_fabric_stream_npieces(g->env->fab, bytes, chunk);
    return nsim_fabric_send_stream(g->env->fab, path, nhops, bytes, chunk,
                                   done, ctx, tag, NSIM_PIECE_MULTIMEM);
}

/* A multicast copy of one piece landed on rank tag >> 8's GPU. */
static void on_multicast(nsim_sim *sim, nsim_piece *p)
{
    nvls_group *g = p->ctx;
    uint32_t slot = (uint32_t)(p->tag & 0xff), r = (uint32_t)(p->tag >> 8);
    (void)sim;
    if (--g->mc_left[slot * g->n + r] != 0)
        return;
    nvls_conn *d = g->down[r];
    /* NVLSTree: slot h x SLOTS + (j mod SLOTS) holds head h's j-th chunk,
     * chunk j x H + its part */
    d->landed[g->tree ? slot % SLOTS * g->heads +
                            nsim_plan_nvls_part(g->env->plan, g->channel,
                                                slot / SLOTS)
                      : slot] = 1;
    while (d->landed[d->delivered % g->win]) {
        d->landed[d->delivered++ % g->win] = 0;
        g->env->arrived(g->env->exec, d->conn);
    }
}

/* One piece of the reduced chunk is back in the switch from its head:
 * the switch copies it down to every GPU. */
static void on_head_store(nsim_sim *sim, nsim_piece *p)
{
    nvls_group *g = p->ctx;
    uint32_t slot = (uint32_t)p->tag;
    /* one copy of this piece down each GPU's link (mc_left counts the
     * head's pieces) */
    for (uint32_t r = 0; r < g->n; r++)
        if (nsim_fabric_send_pieces(g->env->fab, &g->to_gpu[r], 1, p->bytes,
                                    g->env->params->stream_chunk_bytes,
                                    on_multicast, g, slot | (uint64_t)r << 8,
                                    NSIM_PIECE_MULTIMEM) != NSIM_OK) {
            nsim_sim_fail(sim, NSIM_ENOMEM, "nvls: out of memory");
            return;
        }
}

/* NVLSTree: a piece of the reduced chunk landed on its head. */
static void on_reduced(nsim_sim *sim, nsim_piece *p)
{
    nvls_conn *c = p->ctx;
    (void)sim;
    if (--c->pieces_left[p->tag] == 0)
        c->g->env->arrived(c->g->env->exec, c->conn);
}

/* Every GPU's part of the slot's chunk is in the switch: reduce it and
 * send the result through its head (down, then back up); NVLSTree: down
 * to the head, whose thread block takes it on. */
static int reduce(nvls_group *g, uint32_t slot)
{
    uint32_t head = nsim_plan_nvls_head(g->env->plan, g->channel,
                                        g->seq[slot]), np;
    uint64_t chunk = g->env->params->stream_chunk_bytes, b = g->bytes[slot];
    if (g->tree) {
        nvls_conn *red = g->red[head];
        return send_pieces(g, &g->to_gpu[head], 1, b, on_reduced, red, slot,
                           &red->pieces_left[slot]);
    }
    np = nsim_fabric_stream_npieces(g->env->fab, b, chunk);
    for (uint32_t r = 0; r < g->n; r++)
        g->mc_left[slot * g->n + r] = np;
    return send_pieces(g, &g->head_path[2 * head], 2, b, on_head_store, g,
                       slot, NULL);
}

static void on_part(nsim_sim *sim, nsim_piece *p)
{
    nvls_conn *c = p->ctx;
    nvls_group *g = c->g;
    uint32_t slot = (uint32_t)(p->tag % SLOTS);
    if (--c->pieces_left[slot] != 0)
        return;
    g->seq[slot] = p->tag;
    if (++g->contrib[slot] == g->n && reduce(g, slot) != NSIM_OK)
        nsim_sim_fail(sim, NSIM_ENOMEM, "nvls: out of memory");
}

static int nvls_send(void *state, uint32_t sm_server, uint64_t bytes,
                     nsim_time *sm_done)
{
    nvls_conn *c = state;
    uint64_t seq = c->sent++;
    uint32_t slot = (uint32_t)(seq % SLOTS);
    c->path[0] = sm_server;
    if (c->role == NSIM_NVLS_STORE) {
        /* NVLSTree: the head's j-th chunk goes to its down slot */
        nvls_group *g = c->g;
        uint64_t chunk = g->env->params->stream_chunk_bytes;
        uint32_t np = nsim_fabric_stream_npieces(g->env->fab, bytes, chunk);
        slot = c->rank * SLOTS + (uint32_t)(seq % SLOTS);
        for (uint32_t r = 0; r < g->n; r++)
            g->mc_left[slot * g->n + r] = np;
        NSIM_TRY(send_pieces(g, c->path, 2, bytes, on_head_store, g, slot,
                             NULL));
        *sm_done = nsim_fabric_free_at(c->g->env->fab, sm_server);
        return NSIM_OK;
    }
    c->g->bytes[slot] = bytes; /* the same for every rank */
    NSIM_TRY(send_pieces(c->g, c->path, 2, bytes, on_part, c, seq,
                         &c->pieces_left[slot]));
    *sm_done = nsim_fabric_free_at(c->g->env->fab, sm_server);
    return NSIM_OK;
}

static void on_credit(nsim_sim *sim, nsim_event *ev)
{
    nvls_group *g = ev->target;
    (void)sim;
    for (uint32_t r = 0; r < g->n; r++)
        g->env->credit(g->env->exec, g->up[r]->conn);
}

/* NVLSTree: every GPU has gathered a chunk of head arg. */
static void on_store_credit(nsim_sim *sim, nsim_event *ev)
{
    nvls_group *g = ev->target;
    (void)sim;
    g->env->credit(g->env->exec, g->store[ev->arg.u64]->conn);
}

/* NVLSTree: the head has taken its j-th reduced chunk (chunk j x H + its
 * part) from the switch: its up slot is free; slots return in scatter
 * order. */
static int red_consumed(nvls_conn *c)
{
    nvls_group *g = c->g;
    uint32_t part = nsim_plan_nvls_part(g->env->plan, g->channel, c->rank);
    uint32_t slot = (uint32_t)((c->consumed++ * g->heads + part) % SLOTS);
    g->contrib[slot] = 0;
    g->up_freed[slot] = 1;
    while (g->up_freed[g->up_next % SLOTS]) {
        g->up_freed[g->up_next++ % SLOTS] = 0;
        NSIM_TRY(nsim_sim_schedule(g->env->sim, g->credit_lat, on_credit, g,
                                   0, 0, NULL));
    }
    return NSIM_OK;
}

/* NVLSTree: a GPU has gathered chunk k (of head nsim_plan_nvls_head);
 * once every GPU has, the head's down slot returns to its store. */
static int tree_gathered(nvls_conn *c)
{
    nvls_group *g = c->g;
    uint64_t k = c->consumed++;
    uint32_t h = nsim_plan_nvls_head(g->env->plan, g->channel, k);
    uint32_t slot = h * SLOTS + (uint32_t)(k / g->heads % SLOTS);
    if (++g->gathered[slot] < g->n)
        return NSIM_OK;
    g->gathered[slot] = 0;
    return nsim_sim_schedule(g->env->sim, g->credit_lat, on_store_credit, g,
                             0, h, NULL);
}

/* A GPU has gathered the oldest reduced chunk; once all have, the slot
 * is free on every scatter connection. */
static int nvls_consumed(void *state)
{
    nvls_conn *c = state;
    nvls_group *g = c->g;
    if (c->role == NSIM_NVLS_REDUCED)
        return red_consumed(c);
    if (g->tree)
        return tree_gathered(c);
    uint32_t slot = (uint32_t)(c->consumed++ % SLOTS);
    if (++g->gathered[slot] < g->n)
        return NSIM_OK;
    g->gathered[slot] = 0;
    g->contrib[slot] = 0;
    return nsim_sim_schedule(g->env->sim, g->credit_lat, on_credit, g, 0, 0,
                             NULL);
}

const nsim_transport_ops nsim_nvls_transport = {
    .name = "NVLS",
    .init = nvls_init,
    .fini = nvls_fini,
    .setup = nvls_setup,
    .teardown = nvls_teardown,
    .send = nvls_send,
    .consumed = nvls_consumed,
};
