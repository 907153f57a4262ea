/* SPDX-License-Identifier: MIT
 *
 * fabric.c - serializing servers and pieces that hop along paths (see
 * fabric.h).
 */
#include "fabric.h"

#include <stdlib.h>
#include <string.h>

#include "models/flow.h"
#include "sim/core/hugemem.h"
#include "sim/core/units.h"

#define PIECE_BLOCK 1024u
#define PATH_BLOCK (64u << 10) /* bytes of paths carved at a time */

/* What a hop reads and writes: one cache line. */
typedef struct server {
    double bw;
    nsim_time lat_ps;
    nsim_time free_at;
    uint32_t reverse; /* reverse server for NVLink responses, or self */
    uint8_t wire;     /* nsim_wire */
    uint8_t down;     /* drops every piece */
    uint8_t fair;     /* shares its rate among its inputs (cold.fair) */
    nsim_server_stats st;
} __attribute__((aligned(64))) server;

typedef struct fair_server fair_server;

/* The rest, beside it. */
typedef struct server_cold {
    double multimem;  /* NVLink: wire-time factor of multimem pieces */
    double efficiency; /* share of a set rate the link delivers */
    uint64_t dropped;
    fair_server *fair; /* shares its rate among its inputs, or NULL: FIFO */
} server_cold;

/* A shared server (params nvlink_fair_share, pcie_fair_share). NVLink
 * packets carry at most 256 bytes and PCIe TLPs a few hundred, and a port
 * interleaves the packets of its inputs; the model's stream pieces are a
 * simulation granularity (64 KiB), so a FIFO port lets whole pieces pass
 * in turns where the hardware shares. Here the inputs with pieces waiting
 * share the rate equally (generalized processor sharing), each input's
 * pieces in their order: a piece's finish tag is max(v, the input's last
 * tag) + its wire bytes, v grows at rate / (inputs waiting), and pieces
 * leave in tag order, the earliest alone holding an event. An input is
 * the server a piece came from (its thread block, or the link into the
 * switch), the piece's owner where it starts here, or the forward
 * server for the responses charged to a reverse link. */
typedef struct fair_job {
    nsim_piece *p; /* NULL: responses, nothing to pass on */
    double tag;
} fair_job;

typedef struct fair_input {
    uint64_t key;
    double last;    /* tag of its last job */
    fair_job *q;    /* FIFO ring of cap (a power of two) */
    uint32_t head, len, cap;
} fair_input;

struct fair_server {
    fair_input *in;
    uint32_t nin, in_cap;
    uint32_t *busy;   /* the inputs with jobs, nbusy of them */
    uint32_t nbusy;
    uint32_t id;
    double v;         /* wire bytes served to each busy input */
    nsim_time v_at;   /* when v was brought up to date */
    int armed;
    nsim_event_handle next; /* the earliest tag's departure */
};

/* An interned path: its ids, their count and hash (0: empty slot). */
typedef struct path_ent {
    const uint32_t *ids;
    uint32_t n, hash;
} path_ent;

_Static_assert(sizeof(nsim_piece) == 64, "a piece is one cache line");

typedef struct piece_block {
    nsim_piece pieces[PIECE_BLOCK];
} piece_block;

struct nsim_fabric {
    nsim_sim *sim;
    const nsim_params *params;
    server *servers;
    server_cold *cold;
    uint32_t nservers, cap;
    nsim_piece *free_list;
    nsim_huge_slab slab; /* the pool's blocks, on huge pages */
    nsim_flownet *flow; /* flow fidelity, or NULL */
    uint32_t ndown;     /* servers down now */
    nsim_topo *topo; /* routes are computed on demand */
    uint32_t *mem_server; /* per device: its host-memory server, or none */
    /* interned paths: an open-addressing table over ids packed in slabs */
    path_ent *paths;
    uint32_t npaths, paths_cap; /* cap: a power of two, or 0 */
    nsim_huge_slab path_slab;
    uint32_t *path_cur, *path_end;
};

static nsim_wire wire_of_link(const nsim_link *l)
{
    switch (l->type) {
    case NSIM_LINK_NVLINK:
        return NSIM_WIRE_NVLINK;
    case NSIM_LINK_PCIE:
        return NSIM_WIRE_PCIE;
    case NSIM_LINK_IB:
        return NSIM_WIRE_IB;
    case NSIM_LINK_ROCE:
    case NSIM_LINK_ETH:
        return NSIM_WIRE_ROCE;
    default:
        return NSIM_WIRE_SYS;
    }
}

int nsim_fabric_create(nsim_sim *sim, nsim_topo *topo,
                       const nsim_params *params, nsim_fabric **out,
                       nsim_err *err)
{
    nsim_fabric *f = calloc(1, sizeof *f);
    uint32_t n = nsim_topo_nlinks(topo);
    if (f == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
    f->sim = sim;
    f->params = params;
    f->cap = n + 64;
    f->servers = aligned_alloc(64, f->cap * sizeof *f->servers);
    f->cold = calloc(f->cap, sizeof *f->cold);
    if (f->servers == NULL || f->cold == NULL) {
        free(f->servers);
        free(f->cold);
        free(f);
        return NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        const nsim_link *l = nsim_topo_link(topo, i);
        nsim_time lat = l->lat_ps;
        const nsim_device *d = nsim_topo_device(topo, l->dst);
        /* a switch's port-to-port latency is paid on its way out */
        const nsim_device *s = nsim_topo_device(topo, l->src);
        if (s->type == NSIM_DEV_SWITCH || s->type == NSIM_DEV_NVSWITCH)
            lat += s->lat_ps;
        const nsim_device *gpu = s->type == NSIM_DEV_GPU ? s : d;
        double eff = nsim_params_link_efficiency(params, (int)l->type);
        f->servers[i] = (server){.bw = l->bw * eff, .lat_ps = lat,
                                 .reverse = l->reverse,
                                 .wire = (uint8_t)wire_of_link(l)};
        f->cold[i] = (server_cold){1.0, eff, 0, NULL};
        if (l->type == NSIM_LINK_NVLINK && gpu->type == NSIM_DEV_GPU)
            f->cold[i].multimem =
                nsim_params_multimem_factor(params, gpu->sm);
        if (((l->type == NSIM_LINK_NVLINK && params->nvlink_fair_share) ||
             (l->type == NSIM_LINK_PCIE && params->pcie_fair_share)) &&
            nsim_fabric_set_fair(f, i) != NSIM_OK) {
            f->nservers = i + 1;
            nsim_fabric_destroy(f);
            return NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
        }
    }
    f->nservers = n;
    f->topo = topo;
    f->mem_server = malloc(nsim_topo_ndevices(topo) * sizeof *f->mem_server +
                           1);
    if (f->mem_server == NULL) {
        nsim_fabric_destroy(f);
        return NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
    }
    for (uint32_t d = 0; d < nsim_topo_ndevices(topo); d++)
        f->mem_server[d] = UINT32_MAX;
    *out = f;
    return NSIM_OK;
}

void nsim_fabric_destroy(nsim_fabric *f)
{
    if (f == NULL)
        return;
    nsim_flownet_destroy(f->flow);
    for (uint32_t i = 0; i < f->nservers; i++) {
        fair_server *fs = f->cold[i].fair;
        if (fs == NULL)
            continue;
        for (uint32_t k = 0; k < fs->nin; k++)
            free(fs->in[k].q);
        free(fs->in);
        free(fs->busy);
        free(fs);
    }
    nsim_huge_release(&f->slab);
    nsim_huge_release(&f->path_slab);
    free(f->paths);
    free(f->mem_server);
    free(f->servers);
    free(f->cold);
    free(f);
}

int nsim_fabric_add_server(nsim_fabric *f, double bw, nsim_time lat_ps,
                           nsim_wire wire, uint32_t *out)
{
    if (f->nservers == f->cap) {
        uint32_t cap = f->cap * 2;
        server *s = aligned_alloc(64, cap * sizeof *s);
        server_cold *c = realloc(f->cold, cap * sizeof *c);
        if (s == NULL || c == NULL) {
            free(s);
            if (c != NULL)
                f->cold = c;
            return NSIM_ENOMEM;
        }
        memcpy(s, f->servers, f->nservers * sizeof *s);
        free(f->servers);
        f->servers = s;
        f->cold = c;
        f->cap = cap;
    }
    uint32_t id = f->nservers++;
    f->servers[id] = (server){.bw = bw, .lat_ps = lat_ps, .reverse = id,
                              .wire = (uint8_t)wire};
    f->cold[id] = (server_cold){1.0, 1.0, 0, NULL};
    *out = id;
    return NSIM_OK;
}

int nsim_fabric_set_fair(nsim_fabric *f, uint32_t id)
{
    if (f->cold[id].fair != NULL)
        return NSIM_OK;
    fair_server *fs = calloc(1, sizeof *fs);
    if (fs == NULL)
        return NSIM_ENOMEM;
    fs->id = id;
    fs->v_at = nsim_sim_now(f->sim);
    f->cold[id].fair = fs;
    f->servers[id].fair = 1;
    return NSIM_OK;
}

int nsim_fabric_memory_server(nsim_fabric *f, uint32_t dev, uint32_t *out)
{
    *out = UINT32_MAX;
    if (nsim_topo_device(f->topo, dev)->type != NSIM_DEV_CPU)
        return NSIM_OK;
    if (f->mem_server[dev] == UINT32_MAX)
        NSIM_TRY(nsim_fabric_add_server(f, f->params->host_mem_bw, 0,
                                        NSIM_WIRE_RAW, &f->mem_server[dev]));
    *out = f->mem_server[dev];
    return NSIM_OK;
}

int nsim_fabric_route_path(nsim_fabric *f, uint32_t a, uint32_t b,
                           uint32_t pick, uint32_t *out, uint32_t max,
                           uint32_t *n, nsim_err *err)
{
    const nsim_route *r;
    uint32_t ma, mb, k = 0;
    NSIM_TRY(nsim_topo_route(f->topo, a, b, &r, err));
    if (nsim_fabric_memory_server(f, a, &ma) != NSIM_OK ||
        nsim_fabric_memory_server(f, b, &mb) != NSIM_OK)
        return NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
    if (r->hops + (ma != UINT32_MAX) + (mb != UINT32_MAX) > max)
        return NSIM_ERR(err, NSIM_ENOTSUP, "fabric: route of %u hops too long",
                        r->hops);
    if (ma != UINT32_MAX)
        out[k++] = ma;
    const uint32_t *l = nsim_topo_route_path(r, pick);
    for (uint32_t i = 0; i < r->hops; i++)
        out[k++] = nsim_fabric_link_server(l[i]);
    if (mb != UINT32_MAX)
        out[k++] = mb;
    *n = k;
    return NSIM_OK;
}

static uint32_t path_hash(const uint32_t *ids, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = nsim_hash64(h, ids[i]);
    return (uint32_t)h | 1u; /* never 0, which marks an empty slot */
}

static int paths_grow(nsim_fabric *f)
{
    uint32_t cap = f->paths_cap ? f->paths_cap * 2 : 256;
    path_ent *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < f->paths_cap; i++) {
        path_ent e = f->paths[i];
        if (e.hash == 0)
            continue;
        uint32_t j = e.hash & (cap - 1);
        while (t[j].hash != 0)
            j = (j + 1) & (cap - 1);
        t[j] = e;
    }
    free(f->paths);
    f->paths = t;
    f->paths_cap = cap;
    return NSIM_OK;
}

/* Room for n ids, packed after the last path (paths are read one id at a
 * time, so they need no alignment beyond their type's). */
static uint32_t *path_room(nsim_fabric *f, uint32_t n)
{
    if ((size_t)(f->path_end - f->path_cur) < n) {
        size_t bytes = (size_t)n * sizeof(uint32_t);
        if (bytes < PATH_BLOCK)
            bytes = PATH_BLOCK;
        uint32_t *b = nsim_huge_take(&f->path_slab, bytes);
        if (b == NULL)
            return NULL;
        f->path_cur = b;
        f->path_end = b + bytes / sizeof(uint32_t);
    }
    uint32_t *p = f->path_cur;
    f->path_cur += n;
    return p;
}

int nsim_fabric_intern_path(nsim_fabric *f, const uint32_t *ids, uint32_t n,
                            const uint32_t **out)
{
    static const uint32_t empty[1];
    *out = empty; /* not NULL: callers may memcpy 0 ids from it */
    if (n == 0)
        return NSIM_OK;
    if (2 * (f->npaths + 1) > f->paths_cap && paths_grow(f) != NSIM_OK)
        return NSIM_ENOMEM;
    uint32_t h = path_hash(ids, n), j = h & (f->paths_cap - 1);
    for (; f->paths[j].hash != 0; j = (j + 1) & (f->paths_cap - 1)) {
        const path_ent *e = &f->paths[j];
        if (e->hash == h && e->n == n &&
            memcmp(e->ids, ids, n * sizeof *ids) == 0) {
            *out = e->ids;
            return NSIM_OK;
        }
    }
    uint32_t *p = path_room(f, n);
    if (p == NULL)
        return NSIM_ENOMEM;
    memcpy(p, ids, n * sizeof *ids);
    f->paths[j] = (path_ent){p, n, h};
    f->npaths++;
    *out = p;
    return NSIM_OK;
}

int nsim_fabric_piece(nsim_fabric *f, nsim_piece **out)
{
    if (f->free_list == NULL) {
        if (nsim_sim_charge(f->sim, sizeof(piece_block)) != NSIM_OK)
            return NSIM_EBUDGET;
        piece_block *b = nsim_huge_take(&f->slab, sizeof *b);
        if (b == NULL)
            return NSIM_ENOMEM;
        for (uint32_t i = PIECE_BLOCK; i-- > 0;) {
            b->pieces[i].ctx = f->free_list;
            f->free_list = &b->pieces[i];
        }
    }
    nsim_piece *p = f->free_list;
    f->free_list = p->ctx;
    memset(p, 0, sizeof *p);
    *out = p;
    return NSIM_OK;
}

static void piece_free(nsim_fabric *f, nsim_piece *p)
{
    p->ctx = f->free_list;
    f->free_list = p;
}

/* Bytes the piece occupies on a server of this wire type, and bytes it
 * charges to the reverse direction (NVLink responses). */
static uint64_t wire_bytes(const nsim_params *pr, const server *s,
                           const server_cold *c, const nsim_piece *p,
                           uint64_t *reverse)
{
    uint64_t b = p->bytes, n;
    *reverse = 0;
    switch (s->wire) {
    case NSIM_WIRE_NVLINK:
        n = (b + pr->nvlink_payload_bytes - 1) / pr->nvlink_payload_bytes;
        if (n == 0)
            n = 1;
        *reverse = n * pr->nvlink_response_bytes;
        b += n * pr->nvlink_header_bytes;
        if (p->hdr_flags & NSIM_PIECE_MULTIMEM) {
            /* multimem traffic holds the port longer per byte */
            *reverse = (uint64_t)((double)*reverse * c->multimem + 0.5);
            b = (uint64_t)((double)b * c->multimem + 0.5);
        }
        return b;
    case NSIM_WIRE_PCIE:
        if (p->hdr_flags & NSIM_PIECE_READ) {
            uint64_t rcb = pr->pcie_read_completion_bytes;
            n = (b + rcb - 1) / rcb;
            return b + (n ? n : 1) * pr->pcie_cpl_overhead_bytes;
        }
        n = (b + pr->pcie_mps_bytes - 1) / pr->pcie_mps_bytes;
        if (n == 0)
            n = 1;
        return b + n * pr->pcie_tlp_overhead_bytes;
    case NSIM_WIRE_IB:
        if (p->hdr_flags & NSIM_PIECE_ACK)
            return pr->ib_ack_bytes;
        return b + pr->ib_header_bytes +
               ((p->hdr_flags & NSIM_PIECE_FIRST) ? pr->ib_reth_bytes : 0) +
               ((p->hdr_flags & NSIM_PIECE_LAST) ? pr->ib_immdt_bytes : 0);
    case NSIM_WIRE_ROCE:
        if (p->hdr_flags & NSIM_PIECE_ACK)
            return pr->ib_ack_bytes - pr->ib_header_bytes +
                   pr->roce_header_bytes;
        return b + pr->roce_header_bytes +
               ((p->hdr_flags & NSIM_PIECE_FIRST) ? pr->ib_reth_bytes : 0) +
               ((p->hdr_flags & NSIM_PIECE_LAST) ? pr->ib_immdt_bytes : 0);
    default:
        return b;
    }
}

static void on_hop(nsim_sim *sim, nsim_event *ev);

/* ---- shared servers (fair_server above) ---------------------------------- */

#define FAIR_RESPONSES (1ull << 62) /* | forward server: its responses */
#define FAIR_OWNER (1ull << 63)     /* ^ owner: pieces that start here */

static void fair_advance(fair_server *fs, const server *s, nsim_time now)
{
    if (fs->nbusy > 0 && now > fs->v_at)
        fs->v += (double)(now - fs->v_at) * (s->bw * 1e-12) / fs->nbusy;
    fs->v_at = now;
}

static void on_fair_leave(nsim_sim *sim, nsim_event *ev);

/* The busy input whose waiting job has the earliest tag (the first of
 * equal ones), as an index into fs->busy; fs->nbusy > 0. */
static uint32_t fair_earliest(const fair_server *fs)
{
    uint32_t first = 0;
    for (uint32_t i = 1; i < fs->nbusy; i++) {
        const fair_input *a = &fs->in[fs->busy[i]];
        const fair_input *b = &fs->in[fs->busy[first]];
        if (a->q[a->head].tag < b->q[b->head].tag)
            first = i;
    }
    return first;
}

/* (Re)arms the departure of the earliest tag, after the busy inputs or the
 * rate changed. fs->v is up to date (fair_advance at now). */
static int fair_arm(nsim_fabric *f, fair_server *fs)
{
    if (fs->armed) {
        (void)nsim_sim_cancel(f->sim, fs->next);
        fs->armed = 0;
    }
    if (fs->nbusy == 0)
        return NSIM_OK;
    const fair_input *in = &fs->in[fs->busy[fair_earliest(fs)]];
    double tag = in->q[in->head].tag;
    double rate = f->servers[fs->id].bw * 1e-12; /* bytes a ps */
    if (!(rate > 0))
        return NSIM_OK; /* stopped until a rate is set (set_bw) */
    double dt = (tag - fs->v) * fs->nbusy / rate;
    nsim_time when = fs->v_at;
    if (dt > 0) {
        nsim_time d = (nsim_time)dt;
        when += d + ((double)d < dt);
    }
    fs->armed = 1;
    return nsim_sim_schedule_at(f->sim, when, on_fair_leave, f, 0, fs->id,
                                &fs->next);
}

/* The input of key, added if new (linear: a port has tens of inputs). */
static fair_input *fair_input_of(fair_server *fs, uint64_t key)
{
    for (uint32_t i = 0; i < fs->nin; i++)
        if (fs->in[i].key == key)
            return &fs->in[i];
    if (fs->nin == fs->in_cap) {
        uint32_t cap = fs->in_cap ? fs->in_cap * 2 : 8;
        fair_input *in = realloc(fs->in, cap * sizeof *in);
        if (in == NULL)
            return NULL;
        fs->in = in;
        uint32_t *busy = realloc(fs->busy, cap * sizeof *busy);
        if (busy == NULL)
            return NULL;
        fs->busy = busy;
        fs->in_cap = cap;
    }
    fair_input *in = &fs->in[fs->nin++];
    *in = (fair_input){.key = key};
    return in;
}

/* A job of wb wire bytes from input key joins server id now. */
static int fair_add(nsim_fabric *f, uint32_t id, nsim_piece *p, uint64_t key,
                    uint64_t wb)
{
    fair_server *fs = f->cold[id].fair;
    fair_advance(fs, &f->servers[id], nsim_sim_now(f->sim));
    fair_input *in = fair_input_of(fs, key);
    if (in == NULL)
        return NSIM_ENOMEM;
    if (in->len == in->cap) {
        uint32_t cap = in->cap ? in->cap * 2 : 4;
        if (nsim_sim_charge(f->sim, (size_t)(cap - in->cap) *
                                        sizeof *in->q) != NSIM_OK)
            return NSIM_EBUDGET;
        fair_job *q = malloc(cap * sizeof *q);
        if (q == NULL)
            return NSIM_ENOMEM;
        for (uint32_t k = 0; k < in->len; k++)
            q[k] = in->q[(in->head + k) & (in->cap - 1)];
        free(in->q);
        in->q = q;
        in->head = 0;
        in->cap = cap;
    }
    double tag = (in->last > fs->v ? in->last : fs->v) + (double)wb;
    in->last = tag;
    in->q[(in->head + in->len++) & (in->cap - 1)] = (fair_job){p, tag};
    if (in->len > 1)
        return NSIM_OK; /* a later tag than its input's waiting one */
    fs->busy[fs->nbusy++] = (uint32_t)(in - fs->in);
    return fair_arm(f, fs);
}

/* The earliest tag's job leaves: its piece goes on after the latency. */
static void on_fair_leave(nsim_sim *sim, nsim_event *ev)
{
    nsim_fabric *f = ev->target;
    uint32_t id = (uint32_t)ev->arg.u64;
    fair_server *fs = f->cold[id].fair;
    const server *s = &f->servers[id];
    fs->armed = 0;
    fair_advance(fs, s, nsim_sim_now(sim));
    uint32_t first = fair_earliest(fs);
    fair_input *in = &fs->in[fs->busy[first]];
    fair_job j = in->q[in->head];
    if (fs->v < j.tag)
        fs->v = j.tag; /* the time was rounded up to the picosecond */
    in->head = (in->head + 1) & (in->cap - 1);
    if (--in->len == 0)
        fs->busy[first] = fs->busy[--fs->nbusy];
    int rc = fair_arm(f, fs);
    if (rc == NSIM_OK && j.p != NULL)
        rc = nsim_sim_schedule(sim, s->lat_ps, on_hop, f, 0,
                               (uint64_t)(uintptr_t)j.p, NULL);
    if (rc != NSIM_OK)
        nsim_sim_fail(sim, rc, "fabric: out of memory");
}

/* Puts the piece on server path[hop] at time now. */
static int enter_server(nsim_fabric *f, nsim_piece *p)
{
    nsim_time now = nsim_sim_now(f->sim);
    uint32_t id = p->path[p->hop];
    server *s = &f->servers[id];
    uint64_t rev = 0, wb = wire_bytes(f->params, s, &f->cold[id], p, &rev);
    nsim_time ser = nsim_xfer_ps(wb, s->bw);
    nsim_time start = s->free_at > now ? s->free_at : now;
    s->free_at = start + ser;
    s->st.bytes += p->bytes;
    s->st.wire_bytes += wb;
    s->st.pieces++;
    s->st.busy_ps += ser;
    if (rev != 0) {
        /* responses share the reverse direction's wire time */
        server *r = &f->servers[s->reverse];
        nsim_time rser = nsim_xfer_ps(rev, r->bw);
        r->free_at = (r->free_at > now ? r->free_at : now) + rser;
        r->st.wire_bytes += rev;
        r->st.busy_ps += rser;
        if (r->fair)
            NSIM_TRY(fair_add(f, s->reverse, NULL, FAIR_RESPONSES | id, rev));
    }
    if (s->fair)
        return fair_add(f, id, p,
                        p->hop > 0 ? p->path[p->hop - 1]
                                   : FAIR_OWNER ^ (uint64_t)(uintptr_t)p->ctx,
                        wb);
    return nsim_sim_schedule_at(f->sim, s->free_at + s->lat_ps, on_hop, f, 0,
                                (uint64_t)(uintptr_t)p, NULL);
}

static void on_hop(nsim_sim *sim, nsim_event *ev)
{
    nsim_fabric *f = ev->target;
    nsim_piece *p = (nsim_piece *)(uintptr_t)ev->arg.u64;
    if (f->servers[p->path[p->hop]].down) {
        f->cold[p->path[p->hop]].dropped++;
        piece_free(f, p); /* lost on a down link */
        return;
    }
    if (++p->hop < p->nhops) {
        if (enter_server(f, p) != NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "fabric: out of memory");
        return;
    }
    p->done(sim, p);
    piece_free(f, p);
}

static void on_start(nsim_sim *sim, nsim_event *ev)
{
    nsim_fabric *f = ev->target;
    nsim_piece *p = (nsim_piece *)(uintptr_t)ev->arg.u64;
    if (p->nhops == 0) {
        p->done(sim, p);
        piece_free(f, p);
        return;
    }
    if (enter_server(f, p) != NSIM_OK)
        nsim_sim_fail(sim, NSIM_ENOMEM, "fabric: out of memory");
}

int nsim_fabric_send(nsim_fabric *f, nsim_piece *p)
{
    if (f->flow != NULL)
        return nsim_flownet_send(f->flow, p, 0, 0, NULL);
    p->hop = 0;
    if (p->start_delay == 0 && p->nhops > 0)
        return enter_server(f, p);
    return nsim_sim_schedule(f->sim, p->start_delay, on_start, f, 0,
                             (uint64_t)(uintptr_t)p, NULL);
}

uint32_t nsim_fabric_npieces(uint64_t bytes, uint64_t chunk)
{
    return bytes == 0 ? 1 : (uint32_t)((bytes + chunk - 1) / chunk);
}

uint64_t nsim_fabric_stream_piece(const nsim_params *pr, uint64_t bytes,
                                  uint64_t chunk)
{
    uint64_t n = pr->stream_min_pieces;
    if (n <= 1 || bytes <= NSIM_STREAM_MIN_PIECE)
        return chunk;
    /* bytes / n, rounded up to whole 4 KiB */
    uint64_t c = (bytes + n - 1) / n;
    c = (c + NSIM_STREAM_MIN_PIECE - 1) / NSIM_STREAM_MIN_PIECE *
        NSIM_STREAM_MIN_PIECE;
    return c < chunk ? c : chunk;
}

int nsim_fabric_send_stream(nsim_fabric *f, const uint32_t *path,
                            uint32_t nhops, uint64_t bytes, uint64_t chunk,
                            nsim_piece_fn *done, void *ctx, uint64_t tag,
                            uint32_t hdr_flags)
{
    uint64_t piece = nsim_fabric_stream_piece(f->params, bytes, chunk);
    return nsim_fabric_send_pieces(f, path, nhops, bytes, piece, done, ctx,
                                   tag, hdr_flags);
}

int nsim_fabric_send_pieces(nsim_fabric *f, const uint32_t *path,
                            uint32_t nhops, uint64_t bytes, uint64_t chunk,
                            nsim_piece_fn *done, void *ctx, uint64_t tag,
                            uint32_t hdr_flags)
{
    if (f->flow != NULL) {
        nsim_piece *p;
        NSIM_TRY(nsim_fabric_piece(f, &p));
        *p = (nsim_piece){.path = path, .nhops = nhops, .bytes = bytes,
                          .hdr_flags = hdr_flags, .done = done, .ctx = ctx,
                          .tag = tag};
        return nsim_flownet_send(f->flow, p, chunk, 0, NULL);
    }
    uint32_t np = nsim_fabric_npieces(bytes, chunk);
    for (uint32_t k = 0; k < np; k++) {
        uint64_t left = bytes - (uint64_t)k * chunk;
        nsim_piece *p;
        NSIM_TRY(nsim_fabric_piece(f, &p));
        p->path = path;
        p->nhops = nhops;
        p->bytes = left < chunk ? left : chunk;
        p->done = done;
        p->ctx = ctx;
        p->tag = tag;
        p->hdr_flags = hdr_flags;
        NSIM_TRY(nsim_fabric_send(f, p));
    }
    return NSIM_OK;
}

nsim_time nsim_fabric_free_at(const nsim_fabric *f, uint32_t id)
{
    if (f->flow != NULL)
        return nsim_flownet_free_at(f->flow, id);
    return f->servers[id].free_at;
}

uint32_t nsim_fabric_nservers(const nsim_fabric *f) { return f->nservers; }

nsim_server_stats nsim_fabric_stats(nsim_fabric *f, uint32_t id)
{
    nsim_server_stats st;
    if (f->flow != NULL)
        nsim_flownet_sync(f->flow); /* the sends it has not counted yet */
    st = f->servers[id].st;
    st.occupied_ps = f->flow != NULL ? nsim_flownet_occupied(f->flow, id)
                                     : st.busy_ps;
    return st;
}

uint32_t nsim_fabric_ndown(const nsim_fabric *f) { return f->ndown; }

void nsim_fabric_set_bw(nsim_fabric *f, uint32_t id, double bw)
{
    /* a shared server: what it served at the old rate, then the new
     * departure */
    fair_server *fs = f->flow == NULL ? f->cold[id].fair : NULL;
    if (fs != NULL)
        fair_advance(fs, &f->servers[id], nsim_sim_now(f->sim));
    f->servers[id].bw = bw * f->cold[id].efficiency;
    if (f->flow != NULL)
        nsim_flownet_changed(f->flow, id);
    else if (fs != NULL && fair_arm(f, fs) != NSIM_OK)
        nsim_sim_fail(f->sim, NSIM_ENOMEM, "fabric: out of memory");
}

void nsim_fabric_set_down(nsim_fabric *f, uint32_t id, int down)
{
    if (f->servers[id].down != (down != 0))
        f->ndown += down != 0 ? 1u : (uint32_t)-1;
    f->servers[id].down = (uint8_t)(down != 0);
    if (f->flow != NULL)
        nsim_flownet_changed(f->flow, id);
}

uint64_t nsim_fabric_dropped(const nsim_fabric *f, uint32_t id)
{
    return f->cold[id].dropped;
}

/* ---- fidelity ----------------------------------------------------------- */

int nsim_fabric_set_flow(nsim_fabric *f, nsim_err *err)
{
    if (f->flow != NULL)
        return NSIM_OK;
    return nsim_flownet_create(f, f->sim, f->params, &f->flow, err);
}

int nsim_fabric_is_flow(const nsim_fabric *f) { return f->flow != NULL; }

nsim_flownet_counters nsim_fabric_flow_counters(const nsim_fabric *f)
{
    nsim_flownet_counters none = {0};
    return f->flow != NULL ? nsim_flownet_get_counters(f->flow) : none;
}

uint32_t nsim_fabric_stream_npieces(const nsim_fabric *f, uint64_t bytes,
                                    uint64_t chunk)
{
    if (f->flow != NULL)
        return 1;
    uint64_t piece = nsim_fabric_stream_piece(f->params, bytes, chunk);
    return nsim_fabric_npieces(bytes, piece);
}

int nsim_fabric_send_unit(nsim_fabric *f, nsim_piece *p, uint64_t unit,
                          uint32_t read_hops, nsim_piece_fn *drained)
{
    if (f->flow != NULL)
        return nsim_flownet_send(f->flow, p, unit, read_hops, drained);
    return nsim_fabric_send(f, p);
}

void nsim_fabric_cut(nsim_fabric *f, nsim_piece *p)
{
    if (f->flow != NULL)
        nsim_flownet_cut(f->flow, p);
}

nsim_server_info nsim_fabric_server_info(const nsim_fabric *f, uint32_t id)
{
    const server *s = &f->servers[id];
    return (nsim_server_info){s->bw, s->lat_ps, (nsim_wire)s->wire, s->reverse,
                              s->down};
}

uint64_t nsim_fabric_wire_bytes(const nsim_fabric *f, uint32_t id,
                                uint64_t bytes, uint32_t flags,
                                uint64_t *reverse)
{
    nsim_piece p = {.bytes = bytes, .hdr_flags = flags};
    return wire_bytes(f->params, &f->servers[id], &f->cold[id], &p, reverse);
}

void nsim_fabric_account(nsim_fabric *f, uint32_t id, uint64_t bytes,
                         uint64_t wire, uint64_t pieces, nsim_time busy_ps)
{
    nsim_server_stats *st = &f->servers[id].st;
    st->bytes += bytes;
    st->wire_bytes += wire;
    st->pieces += pieces;
    st->busy_ps += busy_ps;
}

void nsim_fabric_count_drop(nsim_fabric *f, uint32_t id)
{
    f->cold[id].dropped++;
}

void nsim_fabric_piece_release(nsim_fabric *f, nsim_piece *p)
{
    piece_free(f, p);
}
