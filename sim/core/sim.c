/* SPDX-License-Identifier: MIT
 *
 * sim.c - discrete-event engine (see sim.h for the contract).
 *
 * The heap holds (when, seq, event) triples by value so that sifting reads
 * no event memory; a 4-ary layout halves the depth of a binary heap and
 * keeps siblings in one cache line. The pool hands out events from blocks
 * of POOL_BLOCK and takes them back on a free list.
 */
#include "sim.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define POOL_BLOCK 1024u
#define HEAP_ARITY 4u

/* The key packs (when, seq) into one 128-bit integer, so ordering is one
 * unsigned comparison. */
__extension__ typedef unsigned __int128 heap_key;

typedef struct heap_entry {
    heap_key key;
    nsim_event *ev;
} heap_entry;

static inline heap_key make_key(nsim_time when, uint64_t seq)
{
    return ((heap_key)when << 64) | seq;
}

typedef struct pool_block {
    struct pool_block *next;
    nsim_event events[POOL_BLOCK];
} pool_block;

typedef struct stream {
    uint64_t id;
    gsl_rng *rng;
} stream;

struct nsim_sim {
    nsim_time now;
    uint64_t next_seq;
    uint64_t seed;
    heap_entry *heap;
    size_t heap_len, heap_cap;
    size_t ncancelled_pending;
    int top_firing; /* heap[0] is the event being fired, not yet removed */
    nsim_event *free_list;
    pool_block *blocks;
    int stop;
    int stop_rc;
    nsim_err err;
    nsim_sim_counters counters;
    nsim_trace_fn *trace_fn;
    void *trace_ud;
    stream *streams;
    size_t nstreams, streams_cap;
};

uint64_t nsim_hash64(uint64_t a, uint64_t b)
{
    /* splitmix64 finalizer over a combined word. */
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int nsim_sim_create(uint64_t seed, nsim_sim **out, nsim_err *err)
{
    nsim_sim *sim = calloc(1, sizeof *sim);
    if (sim == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "engine: out of memory");
    sim->seed = seed;
    *out = sim;
    return NSIM_OK;
}

void nsim_sim_destroy(nsim_sim *sim)
{
    if (sim == NULL)
        return;
    while (sim->blocks != NULL) {
        pool_block *b = sim->blocks;
        sim->blocks = b->next;
        free(b);
    }
    for (size_t i = 0; i < sim->nstreams; i++)
        gsl_rng_free(sim->streams[i].rng);
    free(sim->streams);
    free(sim->heap);
    free(sim);
}

nsim_time nsim_sim_now(const nsim_sim *sim) { return sim->now; }

static int pool_grow(nsim_sim *sim)
{
    pool_block *b = malloc(sizeof *b);
    if (b == NULL)
        return NSIM_ENOMEM;
    b->next = sim->blocks;
    sim->blocks = b;
    for (size_t i = POOL_BLOCK; i-- > 0;) {
        b->events[i].next_free = sim->free_list;
        sim->free_list = &b->events[i];
    }
    sim->counters.pool_events += POOL_BLOCK;
    return NSIM_OK;
}

static int heap_grow(nsim_sim *sim, size_t want)
{
    size_t cap = sim->heap_cap ? sim->heap_cap : 1024;
    while (cap < want)
        cap *= 2;
    heap_entry *h = realloc(sim->heap, cap * sizeof *h);
    if (h == NULL)
        return NSIM_ENOMEM;
    sim->heap = h;
    sim->heap_cap = cap;
    return NSIM_OK;
}

int nsim_sim_reserve(nsim_sim *sim, size_t n)
{
    if (n > sim->heap_cap && heap_grow(sim, n) != NSIM_OK)
        return NSIM_ENOMEM;
    while (sim->counters.pool_events < n)
        if (pool_grow(sim) != NSIM_OK)
            return NSIM_ENOMEM;
    return NSIM_OK;
}

static void sift_up(heap_entry *h, size_t i)
{
    heap_entry e = h[i];
    while (i > 0) {
        size_t parent = (i - 1) / HEAP_ARITY;
        if (e.key >= h[parent].key)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

static inline size_t min_of(const heap_entry *h, size_t a, size_t b)
{
    /* written so that the compiler emits a conditional move: heap keys are
     * random, so a branch here would mispredict half the time */
    int lt = h[b].key < h[a].key;
    return lt ? b : a;
}

static void sift_down(heap_entry *h, size_t len, size_t i)
{
    heap_entry e = h[i];
    for (;;) {
        size_t first = i * HEAP_ARITY + 1;
        if (first >= len)
            break;
        size_t best = first;
        if (first + HEAP_ARITY <= len) {
            best = min_of(h, min_of(h, first, first + 1),
                          min_of(h, first + 2, first + 3));
        } else {
            for (size_t c = first + 1; c < len; c++)
                best = min_of(h, best, c);
        }
        if (h[best].key >= e.key)
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

int nsim_sim_schedule_at(nsim_sim *sim, nsim_time when, nsim_event_fn *fn,
                         void *target, uint32_t kind, uint64_t arg,
                         nsim_event_handle *out)
{
    if (when < sim->now || fn == NULL)
        return NSIM_EINVAL;
    if (sim->free_list == NULL && pool_grow(sim) != NSIM_OK)
        return NSIM_ENOMEM;
    if (!sim->top_firing && sim->heap_len == sim->heap_cap &&
        heap_grow(sim, sim->heap_len + 1) != NSIM_OK)
        return NSIM_ENOMEM;
    nsim_event *ev = sim->free_list;
    sim->free_list = ev->next_free;
    ev->when = when;
    ev->seq = sim->next_seq++;
    ev->fn = fn;
    ev->target = target;
    ev->kind = kind;
    ev->arg.u64 = arg;
    ev->cancelled = 0;
    heap_entry *h = sim->heap;
    if (sim->top_firing) {
        /* The handler of the top event schedules: the new event takes the
         * top slot and sinks, one sift instead of a pop and a push. */
        sim->top_firing = 0;
        h[0] = (heap_entry){make_key(when, ev->seq), ev};
        sift_down(h, sim->heap_len, 0);
    } else {
        h[sim->heap_len] = (heap_entry){make_key(when, ev->seq), ev};
        sift_up(h, sim->heap_len++);
    }
    sim->counters.events_scheduled++;
    size_t pending = nsim_sim_pending(sim);
    if (pending > sim->counters.peak_pending)
        sim->counters.peak_pending = pending;
    if (out != NULL)
        *out = (nsim_event_handle){ev, ev->seq};
    return NSIM_OK;
}

int nsim_sim_schedule(nsim_sim *sim, nsim_time delay, nsim_event_fn *fn,
                      void *target, uint32_t kind, uint64_t arg,
                      nsim_event_handle *out)
{
    if (delay > NSIM_TIME_MAX - sim->now)
        return NSIM_EINVAL;
    return nsim_sim_schedule_at(sim, sim->now + delay, fn, target, kind, arg,
                                out);
}

int nsim_sim_cancel(nsim_sim *sim, nsim_event_handle h)
{
    /* A fired event goes back to the pool and may be reused with a new seq;
     * a seq mismatch therefore means "already fired". */
    if (h.ev == NULL || h.ev->seq != h.seq || h.ev->fn == NULL ||
        h.ev->cancelled)
        return NSIM_ENOENT;
    h.ev->cancelled = 1;
    sim->ncancelled_pending++;
    sim->counters.events_cancelled++;
    return NSIM_OK;
}

static void heap_remove_top(nsim_sim *sim)
{
    heap_entry *h = sim->heap;
    if (--sim->heap_len > 0) {
        h[0] = h[sim->heap_len];
        sift_down(h, sim->heap_len, 0);
    }
}

static nsim_event *heap_pop(nsim_sim *sim)
{
    heap_entry *h = sim->heap;
    nsim_event *ev = h[0].ev;
    if (--sim->heap_len > 0) {
        h[0] = h[sim->heap_len];
        sift_down(h, sim->heap_len, 0);
    }
    return ev;
}

static void event_free(nsim_sim *sim, nsim_event *ev)
{
    ev->fn = NULL;
    ev->next_free = sim->free_list;
    sim->free_list = ev;
}

/* Pops and runs the top event; 1 if one ran, 0 if it was a cancelled one. */
static int fire_top(nsim_sim *sim)
{
    nsim_event *ev = sim->heap[0].ev;
    if (ev->cancelled) {
        heap_pop(sim);
        sim->ncancelled_pending--;
        event_free(sim, ev);
        return 0;
    }
    assert(ev->when >= sim->now);
    sim->now = ev->when;
    if (sim->trace_fn != NULL)
        sim->trace_fn(sim->trace_ud, ev);
    sim->top_firing = 1;
    ev->cancelled = 2; /* firing: a cancel now finds it already fired */
    ev->fn(sim, ev);
    if (sim->top_firing) {
        sim->top_firing = 0;
        heap_remove_top(sim);
    }
    event_free(sim, ev);
    sim->counters.events_run++;
    return 1;
}

int nsim_sim_run(nsim_sim *sim, nsim_time until)
{
    sim->stop = 0;
    while (sim->heap_len > 0 && (nsim_time)(sim->heap[0].key >> 64) <= until) {
        fire_top(sim);
        if (sim->stop_rc != NSIM_OK)
            return sim->stop_rc;
        if (sim->stop)
            return NSIM_OK;
    }
    if (until != NSIM_TIME_MAX && until > sim->now)
        sim->now = until;
    return NSIM_OK;
}

int nsim_sim_step(nsim_sim *sim)
{
    while (sim->heap_len > 0) {
        if (fire_top(sim))
            return sim->stop_rc;
    }
    return NSIM_ENOENT;
}

void nsim_sim_stop(nsim_sim *sim) { sim->stop = 1; }

int nsim_sim_fail(nsim_sim *sim, int code, const char *fmt, ...)
{
    va_list ap;
    if (sim->stop_rc != NSIM_OK)
        return code; /* keep the first error */
    va_start(ap, fmt);
    nsim__err_setv(&sim->err, code, __FILE__, __LINE__, fmt, ap);
    va_end(ap);
    sim->stop_rc = code;
    return code;
}

const nsim_err *nsim_sim_error(const nsim_sim *sim) { return &sim->err; }

size_t nsim_sim_pending(const nsim_sim *sim)
{
    return sim->heap_len - sim->ncancelled_pending - (size_t)sim->top_firing;
}

nsim_sim_counters nsim_sim_get_counters(const nsim_sim *sim)
{
    return sim->counters;
}

void nsim_sim_set_trace(nsim_sim *sim, nsim_trace_fn *fn, void *ud)
{
    sim->trace_fn = fn;
    sim->trace_ud = ud;
}

uint64_t nsim_sim_seed(const nsim_sim *sim) { return sim->seed; }

int nsim_sim_stream(nsim_sim *sim, uint64_t component_id, gsl_rng **out)
{
    for (size_t i = 0; i < sim->nstreams; i++) {
        if (sim->streams[i].id == component_id) {
            *out = sim->streams[i].rng;
            return NSIM_OK;
        }
    }
    if (sim->nstreams == sim->streams_cap) {
        size_t cap = sim->streams_cap ? sim->streams_cap * 2 : 8;
        stream *s = realloc(sim->streams, cap * sizeof *s);
        if (s == NULL)
            return NSIM_ENOMEM;
        sim->streams = s;
        sim->streams_cap = cap;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL)
        return NSIM_ENOMEM;
    gsl_rng_set(rng, (unsigned long)nsim_hash64(sim->seed, component_id));
    sim->streams[sim->nstreams++] = (stream){component_id, rng};
    *out = rng;
    return NSIM_OK;
}
