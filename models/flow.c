/* SPDX-License-Identifier: MIT
 *
 * flow.c - flows over the fabric's servers, shared max-min fairly (see
 * flow.h).
 *
 * Each server keeps an array of references (flow, index of the use in the
 * flow); each use of a flow keeps its position in that array, so a flow
 * joins and leaves a server in O(1). A recompute is progressive filling
 * over the working flows (those on a dirty server): every server they use
 * starts with its bandwidth less the load of the flows outside; the
 * server with the lowest level (room / summed weights of its unfrozen
 * flows) saturates first and freezes its flows at that level; levels only
 * rise as flows freeze, so a heap of the servers (each at most once,
 * keyed by a lower bound of its level, brought up to date at the top)
 * gives the order.
 */
#include "flow.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define FLOW_BLOCK 1024u
/* A piece's hop (which flow fidelity does not walk) once it is cut
 * (nsim_flownet_cut) */
#define PIECE_CUT UINT32_MAX
#define EPS_REL 1e-9
#define PROPAGATE_REL 1e-3 /* a fall in rate that is passed on */
/* A server this close to full counts as saturated: a flow that leaves it
 * or joins it has all its flows recomputed. A fall smaller than
 * PROPAGATE_REL is not passed on, so a bottleneck can be left with that
 * much room; with a tighter bound (1e-6) it then looked like a server
 * with room to spare, and when flows left it the ones it limited kept
 * their rates, and the twins that took their places after them (NVLS
 * AllReduce 1 GiB on one DGX H100 without NVLink responses: every GPU's
 * up link at 56 % with 16 to 32 flows on it, 297 GB/s, now 459). */
#define SATURATED_REL PROPAGATE_REL

typedef struct use {
    uint32_t srv, pos; /* server, index in its reference array (| USE_LOAD) */
    double coef;       /* server bytes per payload byte */
} use;

/* In a use's pos: the use loads its server but does not bound its flow
 * (an IB responder's ACKs on the link back: see route_build). */
#define USE_LOAD 0x80000000u
#define USE_POS(u) ((u).pos & ~USE_LOAD)
#define USE_BOUNDS(u) (((u).pos & USE_LOAD) == 0)

typedef struct flow flow;

typedef struct ref {
    flow *f;
    uint32_t u; /* index of the use in f */
} ref;

/* A flow is two 64-byte lines in two arrays of its block: what a
 * recompute reads of every working flow (uses, rates, marks) and a rate
 * change writes in one (struct flow), the rest, read as it starts and
 * ends, in the other (flow_cold, cold_of). Both arrays dense, so that
 * the hot lines of a block's flows spread over every cache set. */
struct flow {
    _Alignas(64) use *use;
    double rate, nrate;  /* payload bytes/s; the recompute's result (< 0
                          * until the filling freezes it) */
    double rem;          /* payload bytes still to pass */
    nsim_time t_last;    /* when rem was last brought up to date */
    /* armed: an end event is pending, at ev_at, no later than end_at
     * (when rem runs out at rate); a rate that falls moves end_at and
     * leaves the event, which finds the flow not done and moves itself
     * there (set_rate, on_end) */
    nsim_time end_at;
    uint32_t mark;       /* recompute epoch */
    uint32_t bneck;      /* the server its last filling froze it at
                          * (index in fn->s) + 1; 0: none known */
    uint16_t nuse;       /* 2 per hop and one: at most 513 (topo.c's
                          * routes have at most 256 hops) */
    uint8_t live;        /* on its servers */
    uint8_t armed;
    uint8_t fifo_active; /* the one flow of its path through its FIFO */
};

typedef struct flow_cold {
    _Alignas(64) nsim_piece *p;
    nsim_time tail;      /* transfer end -> delivery */
    nsim_piece_fn *drained;
    nsim_event_handle end;
    nsim_time ev_at;
    flow *next_free;     /* also: the next flow waiting at a FIFO */
    uint32_t cap;        /* uses the use array holds */
    uint32_t fifo;       /* its first server (index in fn->s) + 1 if that
                          * one is FIFO */
} flow_cold;

/* A server is a line of what a recompute and a rate change touch (per
 * use of each working flow: its mark, room, weights, chain and load), in
 * fn->s, and the rest (its flows, its FIFO), read as flows join and
 * leave, at the same index in fn->sc (sc_of). */
typedef struct srv {
    _Alignas(64) uint32_t mark;
    uint32_t wcount;      /* uses by the work set (all: s->n) */
    uint32_t whead, wtail; /* its work set's uses: a chain in fn->wref */
    double rcap, wsum;
    double wleft;         /* wsum below this: no unfrozen flow left */
    double load;          /* sum of rate x coef of its flows */
    double bw;            /* cached from the fabric */
    uint32_t n;           /* its flows */
    uint8_t dirty, force; /* force: its flows are recomputed */
    uint8_t down;
    uint8_t every; /* its bandwidth changed, or a pass left it saturated
                    * with flows it did not take: every flow on it is
                    * recomputed, not only those it bounds */
} srv;

typedef struct srv_cold {
    ref *r;               /* its flows (n of them) */
    uint32_t cap;
    /* a thread block or DMA engine (raw, first on its flows' paths) is a
     * FIFO per path: one flow of a connection at a time passes it, its
     * next ones wait their turn (other connections' flows share it) */
    flow *wait_head, *wait_tail;
    double waiting;      /* bytes of the waiting flows */
    /* time with at least one flow on it: summed up to occ_since, and
     * since then while n > 0 (nsim_flownet_occupied) */
    nsim_time occ_ps, occ_since;
    /* gathered in epoch excl_epoch with its flows below excl_top left
     * out (gather): a pass that leaves it saturated brings them in only
     * if its working flows end up below them */
    double excl_top;
    uint32_t excl_epoch;
    /* the rate of the flows the last filling froze here: a flow frozen
     * here that is still at it (and the server saturated) has its
     * max-min rate while nothing here changes */
    double level;
} srv_cold;

_Static_assert(sizeof(srv) == 64, "a server's hot part is one line");

/* A working flow's use of a server, and the next one on that server. */
typedef struct wlink {
    flow *f;
    uint32_t next; /* index in fn->wref, or UINT32_MAX */
    uint8_t load;  /* the use loads the server, does not bound f there */
} wlink;

/* A server in the filling's heap, keyed by a lower bound of its level. */
typedef struct hent {
    double key;
    uint32_t s;
} hent;

/* A flow that ended since the last recompute, the marks it would leave
 * on its servers held back (see hold_end). */
typedef struct ended_use {
    uint32_t srv;
    uint8_t force; /* the server was saturated before it left */
    uint8_t load;  /* a load use: leaves no mark */
    double coef;
} ended_use;

typedef struct ended {
    uint32_t first, n; /* its uses in fn->eu */
    uint32_t bneck;    /* as the flow's */
    double rate;
    uint8_t taken;     /* a flow on the same servers took its place */
} ended;

#define TWIN_LOOKBACK 64 /* ended flows a starting one is compared with */

typedef struct flow_block {
    flow flows[FLOW_BLOCK];
    flow_cold cold[FLOW_BLOCK]; /* cold[i] is flows[i]'s */
    struct flow_block *next;
} flow_block;

_Static_assert(sizeof(flow) == 64 && sizeof(flow_cold) == 64 &&
                   offsetof(flow_block, cold) ==
                       FLOW_BLOCK * sizeof(flow),
               "a flow is a hot line and, a block's flows on, a cold one");

/* f's cold line: a fixed distance on in its block. */
static flow_cold *cold_of(const flow *f)
{
    return (flow_cold *)(uintptr_t)((uintptr_t)f +
                                    FLOW_BLOCK * sizeof(flow));
}

/* A route: what a send of given bytes and packet size along a path costs
 * on each hop, kept so that the next send with the same key (the next
 * slice of a connection) copies it instead of computing it again (a
 * send's per-hop wire bytes, server lookups and times were a quarter of
 * a 1,024-rank ring's instructions). The fabric's counters take the sends
 * a route has made in one sum when it is evicted or they are read
 * (nsim_flownet_sync). */
#define ROUTE_SLOTS 16384u /* direct-mapped; a power of two */
#define ROUTE_WINDOW (16 * ROUTE_SLOTS) /* sends between looks at misses */
#define ROUTE_MISS_MAX 4 /* 1 in this many missing: kept routes are off */
#define ROUTE_MAX_HOPS 32u  /* longer paths are computed every time */

typedef struct route_hop {
    uint32_t id, rid;      /* the server, its reverse */
    uint64_t wire, rev;    /* wire bytes on it, bytes charged to rid */
    nsim_time wire_ps, rev_ps;
} route_hop;

typedef struct route {
    const uint32_t *path;  /* NULL: an empty slot */
    uint64_t bytes, unit;
    uint32_t nhops, flags, read_hops, gen; /* the key, and its epoch */
    uint32_t nuse, fifo;   /* as a flow's */
    nsim_time tail, alone; /* a flow's tail; a delay's whole time */
    uint64_t pending;      /* sends not yet in the fabric's counters */
    uint64_t packets;      /* a send's packets */
    uint8_t control;       /* a delay only */
    uint32_t cap;          /* hops the block below holds */
    use *use;              /* 2 cap + 1 uses, then cap hops, cap ids */
    uint32_t *ids;
    route_hop *hop;
} route;

struct nsim_flownet {
    nsim_fabric *fab;
    nsim_sim *sim;
    const nsim_params *p;
    /* the servers flows have used, densely (a cluster's fabric has
     * millions, a run's flows touch a few thousand): map takes a fabric
     * server id to its index in s, or UINT32_MAX */
    srv *s;
    srv_cold *sc; /* beside s */
    uint32_t ns, scap, sccap;
    uint32_t *map;
    uint32_t nmap;
    flow *free_list;
    flow_block *blocks;
    uint32_t *dirty;
    uint32_t ndirty, dirty_cap;
    flow **fresh;        /* flows started since the last recompute */
    uint32_t nfresh, fresh_cap;
    ended *ended;        /* flows ended since the last recompute */
    uint32_t nended, ended_cap;
    ended_use *eu;
    uint32_t neu, eu_cap;
    int pending; /* a recompute is scheduled for this instant */
    uint32_t epoch;
    flow **work;
    uint32_t nwork, work_cap;
    uint32_t *wsrv;
    uint32_t nwsrv, wsrv_cap;
    wlink *wref; /* the work set's uses, chained per server (gather) */
    uint32_t wref_cap;
    uint32_t nwuse; /* uses of the working flows */
    hent *heap; /* servers, by (level, id) */
    uint32_t nheap, heap_cap;
    route *routes;   /* ROUTE_SLOTS, made on the first send */
    uint8_t routes_off; /* too many routes to keep: each send computed */
    uint32_t route_sends, route_misses; /* in this window */
    route scratch;   /* a path too long to keep */
    uint32_t route_gen; /* bumped when a server changes */
    uint8_t unsynced;   /* some route has sends not yet counted */
    nsim_flownet_counters st;
};

static void oom(nsim_flownet *fn)
{
    nsim_sim_fail(fn->sim, NSIM_ENOMEM, "flow: out of memory");
}

/* Grows *arr (of elements of size sz) to hold at least need; aligned to
 * align (0: malloc's) and sz a multiple of it. */
static int grow_to(void **arr, uint32_t *cap, uint32_t need, size_t sz,
                   size_t align)
{
    if (need <= *cap)
        return NSIM_OK;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a;
    if (align == 0) {
        a = realloc(*arr, (size_t)c * sz);
    } else { /* no aligned realloc: a new block, the old one copied */
        a = aligned_alloc(align, (size_t)c * sz);
        if (a != NULL && *cap > 0)
            memcpy(a, *arr, (size_t)*cap * sz);
        if (a != NULL)
            free(*arr);
    }
    if (a == NULL)
        return NSIM_ENOMEM;
    *arr = a;
    *cap = c;
    return NSIM_OK;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t sz)
{
    return grow_to(arr, cap, need, sz, 0);
}

int nsim_flownet_create(nsim_fabric *fab, nsim_sim *sim,
                        const nsim_params *params, nsim_flownet **out,
                        nsim_err *err)
{
    nsim_flownet *fn = calloc(1, sizeof *fn);
    if (fn == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "flow: out of memory");
    fn->fab = fab;
    fn->sim = sim;
    fn->p = params;
    *out = fn;
    return NSIM_OK;
}

static void routes_drop(nsim_flownet *fn);

void nsim_flownet_destroy(nsim_flownet *fn)
{
    if (fn == NULL)
        return;
    while (fn->blocks != NULL) {
        flow_block *b = fn->blocks;
        fn->blocks = b->next;
        for (uint32_t i = 0; i < FLOW_BLOCK; i++)
            free(b->flows[i].use);
        free(b);
    }
    for (uint32_t i = 0; i < fn->ns; i++)
        free(fn->sc[i].r);
    free(fn->s);
    free(fn->sc);
    free(fn->map);
    free(fn->dirty);
    free(fn->fresh);
    free(fn->ended);
    free(fn->eu);
    free(fn->work);
    free(fn->wsrv);
    free(fn->wref);
    free(fn->heap);
    routes_drop(fn);
    free(fn->scratch.use);
    free(fn);
}

nsim_flownet_counters nsim_flownet_get_counters(const nsim_flownet *fn)
{
    nsim_flownet_counters c = fn->st;
    c.route_slots = fn->routes_off ? 0 : ROUTE_SLOTS;
    return c;
}

/* The index in fn->s of fabric server id, its state made on first use
 * (the fabric may have gained servers, thread blocks, since). */
static int server_index(nsim_flownet *fn, uint32_t id, uint32_t *out)
{
    if (id >= fn->nmap) {
        uint32_t n = nsim_fabric_nservers(fn->fab);
        n = n > id ? n : id + 1;
        uint32_t *m = realloc(fn->map, (size_t)n * sizeof *m);
        if (m == NULL)
            return NSIM_ENOMEM;
        memset(m + fn->nmap, 0xff, (size_t)(n - fn->nmap) * sizeof *m);
        fn->map = m;
        fn->nmap = n;
    }
    if (fn->map[id] == UINT32_MAX) {
        NSIM_TRY(grow_to((void **)&fn->s, &fn->scap, fn->ns + 1,
                         sizeof *fn->s, _Alignof(srv)));
        NSIM_TRY(grow((void **)&fn->sc, &fn->sccap, fn->ns + 1,
                      sizeof *fn->sc));
        srv *s = &fn->s[fn->ns];
        nsim_server_info si = nsim_fabric_server_info(fn->fab, id);
        memset(s, 0, sizeof *s);
        memset(&fn->sc[fn->ns], 0, sizeof fn->sc[fn->ns]);
        s->bw = si.bw;
        s->down = (uint8_t)si.down;
        fn->map[id] = fn->ns++;
    }
    *out = fn->map[id];
    return NSIM_OK;
}

/* The index of fabric server id, or UINT32_MAX if no flow used it. */
static uint32_t server_known(const nsim_flownet *fn, uint32_t id)
{
    return id < fn->nmap ? fn->map[id] : UINT32_MAX;
}

/* The cold part of server s. */
static srv_cold *sc_of(const nsim_flownet *fn, const srv *s)
{
    return &fn->sc[s - fn->s];
}

static int flow_get(nsim_flownet *fn, flow **out)
{
    if (fn->free_list == NULL) {
        flow_block *b = aligned_alloc(_Alignof(flow), sizeof *b);
        if (b == NULL)
            return NSIM_ENOMEM;
        memset(b, 0, sizeof *b);
        b->next = fn->blocks;
        fn->blocks = b;
        for (uint32_t i = FLOW_BLOCK; i-- > 0;) {
            b->cold[i].next_free = fn->free_list;
            fn->free_list = &b->flows[i];
        }
    }
    flow *f = fn->free_list;
    flow_cold *c = cold_of(f);
    fn->free_list = c->next_free;
    use *u = f->use;
    uint32_t cap = c->cap;
    memset(f, 0, sizeof *f);
    memset(c, 0, sizeof *c);
    f->use = u;
    c->cap = cap;
    *out = f;
    return NSIM_OK;
}

static void flow_put(nsim_flownet *fn, flow *f)
{
    cold_of(f)->next_free = fn->free_list;
    fn->free_list = f;
}

static void on_recompute(nsim_sim *sim, nsim_event *ev);

static int saturated(const srv *s)
{
    return s->down || s->load >= s->bw * (1 - SATURATED_REL);
}

static void schedule_recompute(nsim_flownet *fn)
{
    if (!fn->pending) {
        fn->pending = 1;
        if (nsim_sim_schedule(fn->sim, 0, on_recompute, fn, 0, 0, NULL) !=
            NSIM_OK)
            oom(fn);
    }
}

/* Server s changed: its flows are recomputed if it is saturated then, or
 * with force in any case (those it bounds: every one if s->every). */
static void mark_dirty(nsim_flownet *fn, uint32_t s, int force)
{
    fn->s[s].force |= (uint8_t)force;
    if (fn->s[s].dirty)
        return;
    if (grow((void **)&fn->dirty, &fn->dirty_cap, fn->ndirty + 1,
             sizeof *fn->dirty) != NSIM_OK) {
        oom(fn);
        return;
    }
    fn->s[s].dirty = 1;
    fn->dirty[fn->ndirty++] = s;
    schedule_recompute(fn);
}

/* ---- joining and leaving servers ------------------------------------------ */

static void set_rate(nsim_flownet *fn, flow *f, double rate);

/* An unpaired flow that ended in this instant on exactly f's servers with
 * f's weights, or NULL. */
static ended *twin_of(nsim_flownet *fn, const flow *f)
{
    uint32_t lo = fn->nended > TWIN_LOOKBACK ? fn->nended - TWIN_LOOKBACK : 0;
    for (uint32_t e = fn->nended; e-- > lo;) {
        ended *d = &fn->ended[e];
        if (d->taken || d->n != f->nuse)
            continue;
        const ended_use *u = &fn->eu[d->first];
        uint32_t k = 0;
        while (k < f->nuse && u[k].srv == f->use[k].srv &&
               u[k].coef == f->use[k].coef)
            k++;
        if (k == f->nuse)
            return d;
    }
    return NULL;
}

static int attach(nsim_flownet *fn, flow *f)
{
    /* a twin: the set of flows on every server is what it was, so
     * max-min gives every flow its old rate, and f the one it replaces */
    ended *twin = twin_of(fn, f);
    nsim_time now = nsim_sim_now(fn->sim);
    for (uint32_t i = 0; i < f->nuse; i++) {
        srv *s = &fn->s[f->use[i].srv];
        srv_cold *c = sc_of(fn, s);
        NSIM_TRY(grow((void **)&c->r, &c->cap, s->n + 1, sizeof *c->r));
        if (s->n == 0)
            c->occ_since = now;
        f->use[i].pos = s->n | (f->use[i].pos & USE_LOAD);
        c->r[s->n++] = (ref){f, i};
        /* (a load use changes too little there to re-share it: the
         * server is marked when a bounding flow comes or goes) */
        if (twin == NULL && USE_BOUNDS(f->use[i]))
            mark_dirty(fn, f->use[i].srv, 0);
    }
    f->live = 1;
    f->t_last = now;
    if (twin != NULL) {
        twin->taken = 1;
        fn->st.twins++;
        f->bneck = twin->bneck;
        set_rate(fn, f, twin->rate);
        return NSIM_OK;
    }
    NSIM_TRY(grow((void **)&fn->fresh, &fn->fresh_cap, fn->nfresh + 1,
                  sizeof *fn->fresh));
    fn->fresh[fn->nfresh++] = f;
    schedule_recompute(fn);
    return NSIM_OK;
}

/* f is leaving at its rate: keeps what it would mark until the
 * recompute, so that a flow starting in this instant on the same servers
 * can take its place (a slice after the one before it, the next message
 * of a QP) without a recompute. 0 when it cannot be kept. */
static int hold_end(nsim_flownet *fn, const flow *f)
{
    if (!(f->rate > 0) ||
        grow((void **)&fn->ended, &fn->ended_cap, fn->nended + 1,
             sizeof *fn->ended) != NSIM_OK ||
        grow((void **)&fn->eu, &fn->eu_cap, fn->neu + f->nuse,
             sizeof *fn->eu) != NSIM_OK)
        return 0;
    fn->ended[fn->nended++] = (ended){fn->neu, f->nuse, f->bneck, f->rate,
                                      0};
    for (uint32_t i = 0; i < f->nuse; i++) {
        const srv *s = &fn->s[f->use[i].srv];
        fn->eu[fn->neu++] = (ended_use){f->use[i].srv,
                                        (uint8_t)saturated(s),
                                        (uint8_t)!USE_BOUNDS(f->use[i]),
                                        f->use[i].coef};
    }
    schedule_recompute(fn);
    return 1;
}

/* The marks of the ended flows no starting flow replaced. */
static void release_ends(nsim_flownet *fn)
{
    for (uint32_t e = 0; e < fn->nended; e++) {
        const ended *d = &fn->ended[e];
        for (uint32_t k = 0; !d->taken && k < d->n; k++)
            if (!fn->eu[d->first + k].load)
                mark_dirty(fn, fn->eu[d->first + k].srv,
                           fn->eu[d->first + k].force);
    }
    fn->nended = fn->neu = 0;
}

/* f leaves its servers; hold: its marks wait for the recompute
 * (hold_end), else its servers are marked now. */
static void detach(nsim_flownet *fn, flow *f, int hold)
{
    int held = hold && hold_end(fn, f);
    nsim_time now = nsim_sim_now(fn->sim);
    for (uint32_t i = 0; i < f->nuse; i++) {
        srv *s = &fn->s[f->use[i].srv];
        srv_cold *c = sc_of(fn, s);
        ref *r = c->r;
        uint32_t pos = USE_POS(f->use[i]);
        ref last = r[--s->n];
        if (s->n == 0)
            c->occ_ps += now - c->occ_since;
        if (pos != s->n) {
            r[pos] = last;
            last.f->use[last.u].pos =
                pos | (last.f->use[last.u].pos & USE_LOAD);
        }
        /* its share goes to the others if the server was their limit */
        if (!held && USE_BOUNDS(f->use[i]))
            mark_dirty(fn, f->use[i].srv, saturated(s));
        s->load -= f->rate * f->use[i].coef;
        if (s->n == 0 || s->load < 0)
            s->load = 0;
    }
    f->live = 0;
    if (f->armed)
        (void)nsim_sim_cancel(fn->sim, cold_of(f)->end);
    f->armed = 0;
}

static void start(nsim_flownet *fn, flow *f);

/* f leaves its FIFO: the next waiting flow of its path starts. */
static void fifo_next(nsim_flownet *fn, flow *f)
{
    if (!f->fifo_active)
        return;
    f->fifo_active = 0;
    srv_cold *c = &fn->sc[cold_of(f)->fifo - 1];
    const uint32_t *path = cold_of(f)->p->path;
    flow *prev = NULL, *n = c->wait_head;
    while (n != NULL && cold_of(n)->p->path != path) {
        prev = n;
        n = cold_of(n)->next_free;
    }
    if (n == NULL)
        return;
    if (prev != NULL)
        cold_of(prev)->next_free = cold_of(n)->next_free;
    else
        c->wait_head = cold_of(n)->next_free;
    if (c->wait_tail == n)
        c->wait_tail = prev;
    c->waiting -= n->rem;
    cold_of(n)->next_free = NULL;
    n->fifo_active = 1;
    start(fn, n);
}

/* Is a flow of f's path through its FIFO, or waiting there before it? */
static int fifo_busy(const nsim_flownet *fn, const flow *f)
{
    uint32_t fifo = cold_of(f)->fifo;
    const uint32_t *path = cold_of(f)->p->path;
    const srv *s = &fn->s[fifo - 1];
    const srv_cold *c = sc_of(fn, s);
    for (uint32_t k = 0; k < s->n; k++) {
        const flow *g = c->r[k].f;
        if (g->fifo_active && cold_of(g)->fifo == fifo &&
            cold_of(g)->p->path == path)
            return 1;
    }
    for (const flow *w = c->wait_head; w != NULL; w = cold_of(w)->next_free)
        if (cold_of(w)->p->path == path)
            return 1;
    return 0;
}

/* ---- delivery --------------------------------------------------------------- */

static void deliver(nsim_flownet *fn, nsim_piece *p)
{
    p->done(fn->sim, p);
    nsim_fabric_piece_release(fn->fab, p);
}

static void on_deliver(nsim_sim *sim, nsim_event *ev)
{
    (void)sim;
    deliver(ev->target, (nsim_piece *)(uintptr_t)ev->arg.u64);
}

static void on_end(nsim_sim *sim, nsim_event *ev)
{
    nsim_flownet *fn = ev->target;
    flow *f = (flow *)(uintptr_t)ev->arg.u64;
    flow_cold *c = cold_of(f);
    nsim_piece *p = c->p;
    nsim_time tail = c->tail;
    nsim_piece_fn *drained = c->drained;
    f->armed = 0;
    if (nsim_sim_now(sim) < f->end_at) { /* its rate fell since */
        if (nsim_sim_schedule_at(sim, f->end_at, on_end, fn, 0,
                                 (uint64_t)(uintptr_t)f, &c->end) != NSIM_OK) {
            oom(fn);
            return;
        }
        c->ev_at = f->end_at;
        f->armed = 1;
        return;
    }
    detach(fn, f, 1);
    fifo_next(fn, f);
    flow_put(fn, f);
    if (drained != NULL)
        drained(sim, p);
    if (tail == 0) {
        deliver(fn, p);
        return;
    }
    if (nsim_sim_schedule(sim, tail, on_deliver, fn, 0,
                          (uint64_t)(uintptr_t)p, NULL) != NSIM_OK)
        oom(fn);
}

/* Brings rem up to now at the old rate and sets the new one. */
static void set_rate(nsim_flownet *fn, flow *f, double rate)
{
    nsim_time now = nsim_sim_now(fn->sim);
    f->rem -= f->rate * (double)(now - f->t_last) / (double)NSIM_PS_PER_S;
    if (f->rem < 0)
        f->rem = 0;
    f->t_last = now;
    for (uint32_t i = 0; i < f->nuse; i++)
        fn->s[f->use[i].srv].load += (rate - f->rate) * f->use[i].coef;
    f->rate = rate;
    flow_cold *c = cold_of(f);
    if (!(rate > 0)) { /* stalled (a server with no bandwidth) */
        if (f->armed)
            (void)nsim_sim_cancel(fn->sim, c->end);
        f->armed = 0;
        return;
    }
    f->end_at = now + (nsim_time)ceil(f->rem / rate * (double)NSIM_PS_PER_S);
    if (f->armed && c->ev_at <= f->end_at)
        return; /* the pending event comes first and moves itself */
    if (f->armed)
        (void)nsim_sim_cancel(fn->sim, c->end);
    if (nsim_sim_schedule_at(fn->sim, f->end_at, on_end, fn, 0,
                             (uint64_t)(uintptr_t)f, &c->end) != NSIM_OK) {
        oom(fn);
        f->armed = 0;
        return;
    }
    c->ev_at = f->end_at;
    f->armed = 1;
}

/* ---- the recompute ---------------------------------------------------------- */

/* The filling's heap holds each entry's key beside its server, so that
 * sifting compares without loading the servers (hdown was 10 % of a
 * 512-GPU NVLSTree run when it read s->key). Ties go to the lower id. */
static int hless(hent a, hent b)
{
    /* without branches: which of two keys is less is a coin toss */
    return (a.key < b.key) | ((a.key == b.key) & (a.s < b.s));
}

/* Sifts entry i down: the hole goes to a leaf along the lesser children
 * (no test that stops it halfway, whose outcome the branch predictor
 * could not learn: it was a third of a 16-host NVLSTree run's
 * mispredictions), then the entry climbs back to its place, a step or
 * two. The order the filling takes servers in is that of (key, id)
 * alone, so it does not depend on the heap's layout. */
static void hdown(nsim_flownet *fn, uint32_t i)
{
    hent *h = fn->heap;
    hent e = h[i];
    uint32_t n = fn->nheap, top = i;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        /* h[n] is always written (the heap keeps one entry past its
         * end), so reading h[c + 1] is safe when c + 1 == n */
        c += (uint32_t)((c + 1 < n) & hless(h[c + 1], h[c]));
        h[i] = h[c];
        i = c;
    }
    while (i > top) {
        uint32_t up = (i - 1) / 2;
        if (!hless(e, h[up]))
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = e;
}

/* The top leaves the heap. */
static void hpop(nsim_flownet *fn)
{
    if (--fn->nheap > 0) {
        fn->heap[0] = fn->heap[fn->nheap];
        hdown(fn, 0);
    }
}

static double level(const srv *s)
{
    return (s->rcap > 0 ? s->rcap : 0) / s->wsum;
}

static int work_add(nsim_flownet *fn, flow *f)
{
    if (f->mark == fn->epoch || !f->live)
        return NSIM_OK;
    f->mark = fn->epoch;
    f->nrate = -1;
    NSIM_TRY(grow((void **)&fn->work, &fn->work_cap, fn->nwork + 1,
                  sizeof *fn->work));
    fn->work[fn->nwork++] = f;
    fn->nwuse += f->nuse;
    return NSIM_OK;
}

/* f is bounded by the server it last froze at, not self (index + 1):
 * that one is saturated and f is still at the rate it froze its flows
 * at. */
static int bounded_elsewhere(const nsim_flownet *fn, const flow *f,
                             uint32_t self)
{
    if (f->bneck == 0 || f->bneck == self)
        return 0;
    const srv *t = &fn->s[f->bneck - 1];
    return saturated(t) &&
           f->rate >= sc_of(fn, t)->level * (1 - PROPAGATE_REL);
}

/* The working flows: those started since, and every flow on a changed
 * server that is (or was, for a flow that left) its limit; and the
 * servers they use, with the room the other flows leave on them. */
static int gather(nsim_flownet *fn)
{
    uint32_t ep = fn->epoch;
    fn->nwork = fn->nwsrv = fn->nwuse = 0;
    for (uint32_t i = 0; i < fn->nfresh; i++)
        NSIM_TRY(work_add(fn, fn->fresh[i]));
    fn->nfresh = 0;
    for (uint32_t i = 0; i < fn->ndirty; i++) {
        srv *s = &fn->s[fn->dirty[i]];
        int all = s->force || saturated(s), every = s->every;
        s->dirty = s->force = s->every = 0;
        if (!all)
            continue;
        double load = 0, top = 0;
        const ref *r = sc_of(fn, s)->r;
        for (uint32_t k = 0; k < s->n; k++) {
            const flow *f = r[k].f;
            load += f->rate * f->use[r[k].u].coef;
            if (USE_BOUNDS(f->use[r[k].u]))
                top = f->rate > top ? f->rate : top;
        }
        s->load = load; /* exact again */
        /* the flows it bounds, at the top rate (a filling freezes every
         * flow a server bounds at its level), and those whose own bound
         * lapsed: the others are held where they are by another server,
         * saturated, at whose level they still are. Where the change
         * takes the share here below theirs (a flow joined), the server
         * comes out of the filling saturated with flows left out above
         * its working flows, and the next pass takes all of them. */
        double floor = every ? -1 : top * (1 - PROPAGATE_REL), out = -1;
        uint32_t self = fn->dirty[i] + 1;
        for (uint32_t k = 0; k < s->n; k++) {
            flow *f = r[k].f;
            /* (a load use is never bounded here, whatever its rate) */
            if ((f->rate >= floor && USE_BOUNDS(f->use[r[k].u])) ||
                !bounded_elsewhere(fn, f, self))
                NSIM_TRY(work_add(fn, f));
            else if (f->rate > out)
                out = f->rate;
        }
        if (out >= 0) {
            srv_cold *c = sc_of(fn, s);
            c->excl_top = out;
            c->excl_epoch = ep;
        }
    }
    fn->ndirty = 0;
    /* per server the uses of the working flows, in the order of the
     * flows, so that the filling visits those and not every flow of a
     * busy server */
    uint32_t nref = 0;
    NSIM_TRY(grow((void **)&fn->wsrv, &fn->wsrv_cap, fn->nwuse + 1,
                  sizeof *fn->wsrv));
    NSIM_TRY(grow((void **)&fn->wref, &fn->wref_cap, fn->nwuse + 1,
                  sizeof *fn->wref));
    for (uint32_t i = 0; i < fn->nwork; i++) {
        flow *f = fn->work[i];
        for (uint32_t k = 0; k < f->nuse; k++) {
            uint32_t id = f->use[k].srv;
            srv *s = &fn->s[id];
            if (s->mark != ep) {
                s->mark = ep;
                s->rcap = s->down ? 0 : s->bw - s->load;
                s->wsum = 0;
                s->wcount = 0;
                s->whead = nref;
                fn->wsrv[fn->nwsrv++] = id;
            } else {
                fn->wref[s->wtail].next = nref;
            }
            s->wtail = nref;
            fn->wref[nref++] =
                (wlink){f, UINT32_MAX, (uint8_t)!USE_BOUNDS(f->use[k])};
            s->wsum += f->use[k].coef;
            s->wcount++;
            s->rcap += f->rate * f->use[k].coef; /* its own load back */
        }
    }
    return NSIM_OK;
}

/* Progressive filling of the working flows. */
static int fill(nsim_flownet *fn)
{
    uint32_t left = fn->nwork;
    fn->nheap = 0;
    NSIM_TRY(grow((void **)&fn->heap, &fn->heap_cap, fn->nwsrv + 1,
                  sizeof *fn->heap));
    for (uint32_t i = 0; i < fn->nwsrv; i++) {
        srv *s = &fn->s[fn->wsrv[i]];
        if (s->wsum > 0) {
            s->wleft = EPS_REL * s->wsum;
            fn->heap[fn->nheap++] = (hent){level(s), fn->wsrv[i]};
        }
    }
    fn->heap[fn->nheap] = (hent){INFINITY, UINT32_MAX}; /* see hdown */
    for (uint32_t i = fn->nheap / 2; i-- > 0;) /* heapify, O(n) */
        hdown(fn, i);
    while (left > 0 && fn->nheap > 0) {
        /* keys are lower bounds (levels only rise as flows freeze): the
         * top is brought up to date, and taken when it stays the least */
        uint32_t at = fn->heap[0].s;
        srv *s = &fn->s[at];
        if (!(s->wsum > s->wleft)) {
            hpop(fn); /* every flow on it froze elsewhere */
            continue;
        }
        double lv = level(s);
        if (lv > fn->heap[0].key) {
            fn->heap[0].key = lv;
            hdown(fn, 0);
            continue;
        }
        hpop(fn);
        sc_of(fn, s)->level = lv;
        for (uint32_t k = s->whead; k != UINT32_MAX; k = fn->wref[k].next) {
            flow *g = fn->wref[k].f;
            /* a use that only loads s: its share stayed reserved at this
             * level (its weight was in the sum), the flow rises on */
            if (g->nrate >= 0 || fn->wref[k].load)
                continue;
            g->nrate = lv;
            g->bneck = at + 1;
            left--;
            for (uint32_t j = 0; j < g->nuse; j++) {
                uint32_t id = g->use[j].srv;
                srv *t = &fn->s[id];
                t->rcap -= lv * g->use[j].coef;
                t->wsum -= g->use[j].coef;
                /* one left with no unfrozen flow stays in the heap until
                 * it comes to the top, or the filling ends first: taking
                 * it out at once was 8 % of the instructions */
            }
        }
    }
    fn->nheap = 0;
    for (uint32_t i = 0; i < fn->nwork; i++)
        if (fn->work[i]->nrate < 0) {
            fn->work[i]->nrate = 0; /* no server bounds it: cannot happen */
            fn->work[i]->bneck = 0;
        }
    return NSIM_OK;
}

/* s was gathered with its flows below the top left out, and its
 * working flows (their new rates) stay at or above every one of them:
 * max-min holds at s as it is. */
static int above_left_out(const nsim_flownet *fn, const srv *s)
{
    const srv_cold *c = sc_of(fn, s);
    if (c->excl_epoch != fn->epoch)
        return 0;
    double top = 0;
    for (uint32_t k = s->whead; k != UINT32_MAX; k = fn->wref[k].next)
        if (!fn->wref[k].load)
            top = fn->wref[k].f->rate > top ? fn->wref[k].f->rate : top;
    return top >= c->excl_top * (1 + PROPAGATE_REL);
}

/* Some working flow takes a share of s (not only a load use's
 * reservation): what the filling gave them there may leave the others
 * on s out of max-min. */
static int bounds_work(const nsim_flownet *fn, const srv *s)
{
    for (uint32_t k = s->whead; k != UINT32_MAX; k = fn->wref[k].next)
        if (!fn->wref[k].load)
            return 1;
    return 0;
}

static void recompute(nsim_flownet *fn)
{
    uint32_t passes = (uint32_t)fn->p->flow_passes;
    for (uint32_t pass = 0; fn->ndirty > 0 && pass < passes; pass++) {
        fn->epoch++;
        fn->st.recomputes++;
        if (gather(fn) != NSIM_OK || fill(fn) != NSIM_OK) {
            oom(fn);
            return;
        }
        fn->st.visited += fn->nwork;
        for (uint32_t i = 0; i < fn->nwork; i++) {
            flow *f = fn->work[i];
            double old = f->rate, nr = f->nrate;
            if (fabs(nr - old) <= EPS_REL * (old > nr ? old : nr) && f->armed)
                continue;
            if (nr < old * (1 - PROPAGATE_REL) && pass + 1 < passes)
                for (uint32_t k = 0; k < f->nuse; k++)
                    if (USE_BOUNDS(f->use[k])) /* a load use frees little */
                        mark_dirty(fn, f->use[k].srv, 1);
            set_rate(fn, f, nr);
        }
        /* a server the working flows filled up, with other flows on it
         * that kept their rates: share it out among all of them */
        for (uint32_t i = 0; pass + 1 < passes && i < fn->nwsrv; i++) {
            srv *s = &fn->s[fn->wsrv[i]];
            if (saturated(s) && s->wcount < s->n && bounds_work(fn, s) &&
                !above_left_out(fn, s)) {
                s->every = 1;
                mark_dirty(fn, fn->wsrv[i], 1);
            }
        }
    }
    /* what is left dirty after the last pass waits for the next change */
    for (uint32_t i = 0; i < fn->ndirty; i++)
        fn->s[fn->dirty[i]].dirty = 0;
    fn->ndirty = 0;
}

/* flow_check: every flow on some saturated server (each flow counted
 * once, at its first use). */
static void check_maxmin(nsim_flownet *fn)
{
    for (uint32_t i = 0; i < fn->ns; i++) {
        const srv *s = &fn->s[i];
        const ref *r = sc_of(fn, s)->r;
        for (uint32_t k = 0; k < s->n; k++) {
            const flow *f = r[k].f;
            if (r[k].u != 0)
                continue;
            uint32_t u = 0;
            while (u < f->nuse && (!USE_BOUNDS(f->use[u]) ||
                                   !saturated(&fn->s[f->use[u].srv])))
                u++;
            fn->st.checked++;
            fn->st.below += u == f->nuse;
        }
    }
}

static void on_recompute(nsim_sim *sim, nsim_event *ev)
{
    nsim_flownet *fn = ev->target;
    (void)sim;
    release_ends(fn); /* marks while pending: no new recompute event */
    fn->st.idle += fn->ndirty == 0;
    /* nor the marks of its own passes: the next pass takes them, and what
     * the last leaves waits for the next change (an event for them found
     * nothing to do: 1.66 M of a 128-host NVLSTree run's 4.41 M) */
    recompute(fn);
    fn->pending = 0;
    if (fn->p->flow_check)
        check_maxmin(fn);
}

/* ---- starting flows ---------------------------------------------------------- */

/* Wire bytes of bytes cut in packets of u (n of them) on server id, and
 * bytes charged to its reverse server. */
static uint64_t train_wire(const nsim_flownet *fn, uint32_t id,
                           nsim_server_info si, uint64_t bytes, uint64_t u,
                           uint64_t n, uint32_t flags, uint64_t *rev)
{
    const nsim_fabric *fab = fn->fab;
    if (n <= 1)
        return nsim_fabric_wire_bytes(fab, id, bytes, flags, rev);
    uint64_t r0, r1, r2;
    uint32_t mid = flags & ~(NSIM_PIECE_FIRST | NSIM_PIECE_LAST);
    uint64_t w = nsim_fabric_wire_bytes(fab, id, u, flags & ~NSIM_PIECE_LAST,
                                        &r0) +
                 (n - 2) * nsim_fabric_wire_bytes(fab, id, u, mid, &r1) +
                 nsim_fabric_wire_bytes(fab, id, bytes - (n - 1) * u,
                                        flags & ~NSIM_PIECE_FIRST, &r2);
    *rev = r0 + (n - 2) * r1 + r2;
    if (si.wire == NSIM_WIRE_IB || si.wire == NSIM_WIRE_ROCE) {
        /* the responder's ACKs, every ack_every packets, come back on the
         * reverse link (the message's last one is a piece of its own) */
        uint64_t ra, ack = nsim_fabric_wire_bytes(fab, id, 0, NSIM_PIECE_ACK,
                                                  &ra);
        uint64_t every = fn->p->ib_ack_every_packets;
        *rev += (n - 1) / (every ? every : 1) * ack;
    }
    return w;
}

static nsim_time wire_ps(uint64_t bytes, double bw)
{
    return bw > 0 ? (nsim_time)((double)bytes * (double)NSIM_PS_PER_S / bw +
                                0.5)
                  : 0;
}

/* A piece whose path crosses a down server is lost there (the owner's
 * timers notice): counted as dropped and given back; 1 if so. */
static int lost_on_down(nsim_flownet *fn, nsim_piece *p)
{
    for (uint32_t h = 0; nsim_fabric_ndown(fn->fab) > 0 && h < p->nhops; h++)
        if (nsim_fabric_server_info(fn->fab, p->path[h]).down) {
            nsim_fabric_count_drop(fn->fab, p->path[h]);
            nsim_fabric_piece_release(fn->fab, p);
            return 1;
        }
    return 0;
}

static void start(nsim_flownet *fn, flow *f)
{
    flow_cold *fc = cold_of(f);
    if (fc->p->hop == PIECE_CUT)
        f->rem = 0; /* cut before it started: ends as it starts */
    if (fc->fifo != 0 && !f->fifo_active) {
        srv_cold *c = &fn->sc[fc->fifo - 1];
        if (fifo_busy(fn, f)) {
            fc->next_free = NULL;
            if (c->wait_tail != NULL)
                cold_of(c->wait_tail)->next_free = f;
            else
                c->wait_head = f;
            c->wait_tail = f;
            c->waiting += f->rem;
            return;
        }
        f->fifo_active = 1;
    }
    if (lost_on_down(fn, fc->p)) {
        fifo_next(fn, f);
        flow_put(fn, f);
        return;
    }
    if (attach(fn, f) != NSIM_OK)
        oom(fn);
}

static void on_start(nsim_sim *sim, nsim_event *ev)
{
    (void)sim;
    start(ev->target, (flow *)(uintptr_t)ev->arg.u64);
}

/* The route's block holds uses, ids and hops for n hops. */
static int route_reserve(route *r, uint32_t n)
{
    if (n <= r->cap)
        return NSIM_OK;
    size_t sz = (2 * (size_t)n + 1) * sizeof(use) +
                (size_t)n * (sizeof(route_hop) + sizeof(uint32_t));
    use *u = realloc(r->use, sz);
    if (u == NULL)
        return NSIM_ENOMEM;
    r->use = u;
    r->hop = (route_hop *)(u + 2 * n + 1);
    r->ids = (uint32_t *)(r->hop + n);
    r->cap = n;
    return NSIM_OK;
}

static void routes_drop(nsim_flownet *fn)
{
    for (uint32_t i = 0; fn->routes != NULL && i < ROUTE_SLOTS; i++)
        free(fn->routes[i].use);
    free(fn->routes);
    fn->routes = NULL;
}

/* The fabric's counters take the route's sends not yet in them. */
static void route_sync(nsim_flownet *fn, route *r)
{
    uint64_t k = r->pending;
    if (k == 0)
        return;
    r->pending = 0;
    for (uint32_t h = 0; h < r->nhops; h++) {
        const route_hop *rh = &r->hop[h];
        nsim_fabric_account(fn->fab, rh->id, k * r->bytes, k * rh->wire,
                            k * r->packets, (nsim_time)k * rh->wire_ps);
        if (rh->rev > 0)
            nsim_fabric_account(fn->fab, rh->rid, 0, k * rh->rev, 0,
                                (nsim_time)k * rh->rev_ps);
    }
}

void nsim_flownet_sync(nsim_flownet *fn)
{
    if (!fn->unsynced)
        return;
    fn->unsynced = 0;
    for (uint32_t i = 0; fn->routes != NULL && i < ROUTE_SLOTS; i++)
        route_sync(fn, &fn->routes[i]);
}

/* Fills r with what a send of p's bytes in packets of u costs per hop. */
static int route_build(nsim_flownet *fn, route *r, const nsim_piece *p,
                       uint64_t unit, uint32_t read_hops)
{
    uint64_t bytes = p->bytes;
    uint64_t u = unit && unit < bytes ? unit : bytes;
    uint64_t n = u ? (bytes + u - 1) / u : 1;
    uint64_t ctl = fn->p->flow_control_bytes;
    nsim_time lat = 0, sum_unit = 0, max_unit = 0, alone = 0;
    int control = 1;
    r->path = NULL; /* an empty slot until it is whole */
    NSIM_TRY(route_reserve(r, p->nhops));
    r->bytes = bytes;
    r->unit = unit;
    r->nhops = p->nhops;
    r->flags = p->hdr_flags;
    r->read_hops = read_hops;
    r->gen = fn->route_gen;
    r->packets = n;
    r->nuse = r->fifo = 0;
    if (p->nhops > 0) /* (memcpy's pointers must not be NULL) */
        memcpy(r->ids, p->path, p->nhops * sizeof *r->ids);
    for (uint32_t h = 0; h < p->nhops; h++) {
        uint32_t id = p->path[h];
        nsim_server_info si = nsim_fabric_server_info(fn->fab, id);
        uint32_t flags = p->hdr_flags;
        if (read_hops != 0 && h >= read_hops)
            flags &= ~NSIM_PIECE_READ;
        uint64_t rev = 0, w = train_wire(fn, id, si, bytes, u, n, flags, &rev);
        uint64_t urev, uw = nsim_fabric_wire_bytes(
                           fn->fab, id, u, flags & ~(NSIM_PIECE_FIRST |
                                                     NSIM_PIECE_LAST),
                           &urev);
        nsim_time t1 = wire_ps(uw, si.bw);
        lat += si.lat_ps;
        sum_unit += t1;
        max_unit = t1 > max_unit ? t1 : max_unit;
        alone += wire_ps(w, si.bw) + si.lat_ps;
        if (w > ctl || rev > ctl)
            control = 0;
        route_hop *rh = &r->hop[h];
        *rh = (route_hop){id, si.reverse, w, rev, wire_ps(w, si.bw), 0};
        if (bytes > 0) {
            uint32_t k;
            NSIM_TRY(server_index(fn, id, &k));
            r->use[r->nuse++] = (use){k, 0, (double)w / (double)bytes};
            if (rev > 0) {
                NSIM_TRY(server_index(fn, si.reverse, &k));
                /* an IB responder's ACKs (at most a 30-byte packet a
                 * packet: <= 0.8 % of the bytes) load the link back but
                 * do not hold the flow to the rate of the flows that
                 * link bounds, as a shared use would under max-min (the
                 * packet model queues them there and never waits for
                 * them); reserved at the level the link fills at, they
                 * overfill it by at most their share of a later rise.
                 * NVLink responses (up to 15 % of NVLS bytes) stay a
                 * bound: docs/fidelity.md */
                uint32_t load = si.wire == NSIM_WIRE_IB ||
                                        si.wire == NSIM_WIRE_ROCE
                                    ? USE_LOAD
                                    : 0;
                r->use[r->nuse++] =
                    (use){k, load, (double)rev / (double)bytes};
            }
        }
        if (rev > 0)
            rh->rev_ps = wire_ps(rev, nsim_fabric_server_info(fn->fab,
                                                               si.reverse).bw);
    }
    r->control = (uint8_t)(control || bytes == 0 || p->nhops == 0);
    r->alone = alone;
    r->tail = lat + sum_unit - max_unit;
    if (!r->control &&
        nsim_fabric_server_info(fn->fab, p->path[0]).wire == NSIM_WIRE_RAW) {
        uint32_t k;
        NSIM_TRY(server_index(fn, p->path[0], &k));
        r->fifo = k + 1;
    }
    r->path = p->path;
    return NSIM_OK;
}

/* (a loop: memcmp's call cost more than the compare on 2-12 hops) */
static int same_ids(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static int route_hit(const nsim_flownet *fn, const route *r,
                     const nsim_piece *p, uint64_t unit, uint32_t read_hops)
{
    return r->path == p->path && r->bytes == p->bytes && r->unit == unit &&
           r->nhops == p->nhops && r->flags == p->hdr_flags &&
           r->read_hops == read_hops && r->gen == fn->route_gen &&
           same_ids(r->ids, p->path, p->nhops);
}

/* The route of a send of p (a kept one, or one built now), with the send
 * counted on it. */
static int route_of(nsim_flownet *fn, const nsim_piece *p, uint64_t unit,
                    uint32_t read_hops, route **out)
{
    route *r;
    if (fn->route_sends == ROUTE_WINDOW) {
        /* a run over more paths than the table keeps (NVLSTree on 128
         * DGX H100, folded: 28,256 routes; 28 % of the first 524,288
         * sends missed): a miss costs a build and the table's memory,
         * so every send is computed. A larger table (65,536 and 262,144
         * slots, tried 2026-12-07) kept the routes but missed the cache
         * instead: 13 MB more and a third more last-level misses. */
        if (fn->route_misses > ROUTE_WINDOW / ROUTE_MISS_MAX) {
            nsim_flownet_sync(fn);
            routes_drop(fn);
            fn->routes_off = 1;
        }
        fn->route_sends = fn->route_misses = 0;
    }
    if (fn->routes == NULL && !fn->routes_off) {
        fn->routes = calloc(ROUTE_SLOTS, sizeof *fn->routes);
        if (fn->routes == NULL)
            return NSIM_ENOMEM;
    }
    if (p->nhops > ROUTE_MAX_HOPS || fn->routes_off) {
        r = &fn->scratch;
        fn->st.route_builds++;
        NSIM_TRY(route_build(fn, r, p, unit, read_hops));
        r->pending = 1;
        route_sync(fn, r);
        *out = r;
        return NSIM_OK;
    }
    uint64_t h = (uint64_t)(uintptr_t)p->path ^
                 (p->bytes * 0x9e3779b97f4a7c15ull) ^ (unit << 17) ^
                 ((uint64_t)p->hdr_flags << 7) ^ ((uint64_t)read_hops << 11) ^
                 p->nhops;
    h *= 0xff51afd7ed558ccdull;
    r = &fn->routes[(h >> 32) & (ROUTE_SLOTS - 1)];
    fn->route_sends++;
    if (!route_hit(fn, r, p, unit, read_hops)) {
        fn->route_misses++;
        fn->st.route_builds++;
        route_sync(fn, r);
        NSIM_TRY(route_build(fn, r, p, unit, read_hops));
    }
    r->pending++;
    fn->unsynced = 1;
    *out = r;
    return NSIM_OK;
}

int nsim_flownet_send(nsim_flownet *fn, nsim_piece *p, uint64_t unit,
                      uint32_t read_hops, nsim_piece_fn *drained)
{
    route *r;
    NSIM_TRY(route_of(fn, p, unit, read_hops, &r));
    if (r->control) {
        /* a delay only: its unloaded store-and-forward time */
        fn->st.delays++;
        if (lost_on_down(fn, p))
            return NSIM_OK;
        return nsim_sim_schedule(fn->sim, p->start_delay + r->alone,
                                 on_deliver, fn, 0, (uint64_t)(uintptr_t)p,
                                 NULL);
    }
    flow *f;
    NSIM_TRY(flow_get(fn, &f));
    NSIM_TRY(grow((void **)&f->use, &cold_of(f)->cap, r->nuse, sizeof *f->use));
    memcpy(f->use, r->use, r->nuse * sizeof *f->use);
    f->nuse = r->nuse;
    cold_of(f)->p = p;
    fn->st.flows++;
    f->rem = (double)p->bytes;
    cold_of(f)->tail = r->tail;
    cold_of(f)->drained = drained;
    cold_of(f)->fifo = r->fifo;
    if (p->start_delay == 0) {
        /* on its servers at once: free_at sees it */
        start(fn, f);
        return NSIM_OK;
    }
    return nsim_sim_schedule(fn->sim, p->start_delay, on_start, fn, 0,
                             (uint64_t)(uintptr_t)f, NULL);
}

/* ---- queries and changes ------------------------------------------------------ */

nsim_time nsim_flownet_free_at(nsim_flownet *fn, uint32_t id)
{
    nsim_time now = nsim_sim_now(fn->sim);
    uint32_t at = server_known(fn, id);
    if (at == UINT32_MAX)
        return now; /* no flow has used it */
    const srv *s = &fn->s[at];
    const srv_cold *c = &fn->sc[at];
    double bw = s->bw, work = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        const flow *f = c->r[k].f;
        double rem = f->rem - f->rate * (double)(now - f->t_last) /
                                  (double)NSIM_PS_PER_S;
        if (rem > 0)
            work += rem * f->use[c->r[k].u].coef;
    }
    work += c->waiting;
    return now + (bw > 0 ? (nsim_time)(work / bw * (double)NSIM_PS_PER_S)
                         : 0);
}

nsim_time nsim_flownet_occupied(const nsim_flownet *fn, uint32_t id)
{
    uint32_t k = server_known(fn, id);
    if (k == UINT32_MAX)
        return 0;
    const srv_cold *c = &fn->sc[k];
    return c->occ_ps +
           (fn->s[k].n > 0 ? nsim_sim_now(fn->sim) - c->occ_since : 0);
}

void nsim_flownet_cut(nsim_flownet *fn, nsim_piece *p)
{
    uint32_t at = p->nhops > 0 ? server_known(fn, p->path[0]) : UINT32_MAX;
    /* not on its servers yet (its start delayed, or waiting at its
     * FIFO): it passes nothing when it starts */
    p->hop = PIECE_CUT;
    if (at == UINT32_MAX)
        return;
    const srv *s = &fn->s[at];
    const ref *r = fn->sc[at].r;
    for (uint32_t k = 0; k < s->n; k++) {
        flow *f = r[k].f;
        if (cold_of(f)->p != p || !f->live)
            continue;
        /* what has passed stays passed; the rest never goes */
        f->t_last = nsim_sim_now(fn->sim);
        f->rem = 0;
        set_rate(fn, f, f->rate);
        return;
    }
}

void nsim_flownet_changed(nsim_flownet *fn, uint32_t id)
{
    fn->route_gen++; /* kept routes are built again */
    uint32_t k = server_known(fn, id);
    if (k == UINT32_MAX)
        return; /* no flow has used it: read when one does */
    nsim_server_info si = nsim_fabric_server_info(fn->fab, id);
    srv *s = &fn->s[k];
    s->bw = si.bw;
    s->down = (uint8_t)si.down;
    if (!si.down) {
        s->every = 1;
        mark_dirty(fn, k, 1);
        return;
    }
    while (s->n > 0) {
        flow *f = fn->sc[k].r[s->n - 1].f;
        nsim_fabric_count_drop(fn->fab, id);
        detach(fn, f, 0);
        nsim_fabric_piece_release(fn->fab, cold_of(f)->p);
        fifo_next(fn, f);
        flow_put(fn, f);
    }
}
