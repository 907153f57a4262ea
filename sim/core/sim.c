/* SPDX-License-Identifier: MIT
 *
 * sim.c - discrete-event engine (see sim.h for the contract).
 *
 * The queue is a radix queue: a radix heap (Ahuja, Mehlhorn, Orlin and
 * Tarjan 1990) with 256-way digits, whose buckets are FIFO sequences:
 * cur and the three lowest levels (events up to ~16 us ahead) keep
 * (time, event) entries in chunks of 31, the higher levels lists threaded
 * through the events themselves. It relies on time being monotone: nothing
 * is scheduled before now, and the queue hands out events in time order.
 *
 *   - `last` is the time of the event at the front (<= every queued time,
 *     and <= now between calls). `cur` lists the events at time last.
 *   - Any other event, at time t > last, lives in level l = (the highest
 *     byte in which t differs from last), bucket d = byte l of t. Levels
 *     are ordered (a lower level is earlier) and so are the buckets of a
 *     level, so the lowest non-empty (level, bucket) holds the earliest
 *     events. Bit masks find it in O(1) (a bit per bucket, and a bit per
 *     mask word that is not 0: two count-trailing-zeros, no scan); each
 *     bucket also keeps its earliest time, so the next time is known
 *     without walking a list.
 *   - When cur runs dry, the lowest non-empty bucket is opened: last
 *     becomes its earliest time and its events are re-filed against the
 *     new last. Each lands in cur or in a lower level, so an event moves at
 *     most 8 times in all; in practice once or twice (an event 1 us ahead
 *     is filed in level 2 and moves to level 1, then 0). A level-0 bucket
 *     holds a single time and becomes cur as a whole, in O(1). Buckets not
 *     opened stay valid, since the new last shares their digits above.
 *   - Why entries: at scale (tens of thousands of events pending, a
 *     packet-level ring on 16+ DGX nodes) an event re-filed from a list
 *     was a cache miss per move, ~40% of a run. Entries are re-filed by
 *     reading 16-byte entries in order, without loading the events; those
 *     that land in cur or level 0 are prefetched, as they fire next (all
 *     of a small bucket's, RQ_PREFETCH_ALL). With the buckets numbered
 *     flat (level * 256 + digit), filing inlined, and the coin-toss
 *     branches made selects, and a bucket's bit set only by the append
 *     that finds it empty, the hold model (scripts/bench_engine.c) costs
 *     237 instructions an event (callgrind), against 269 for the lists
 *     before the chunks.
 *
 * Why the order is (time, seq) without comparing seq: events at one time
 * are always in the same bucket; a new event has the largest seq so far and
 * goes to a tail; opening a bucket walks it in order and appends, so it is
 * stable; and it only happens when every lower bucket and cur are empty,
 * so moved events never land behind newer ones. A zero-delay event goes to
 * the tail of cur, behind the events already due now.
 *
 * Costs are O(1) amortized per event whatever the pattern: ties and zero
 * delays cost one append, a timeout seconds ahead waits in a high level,
 * and bursts only fill buckets. The queue needs the events, a fixed table
 * of 8 x 256 buckets and a pool of chunks (about one per 31 near events,
 * plus one per bucket in use and a reserve for a re-filing), so a run
 * allocates nothing once the pools have grown to the peak. Against
 * the 4-ary heap it replaced: about 2x the events per second with 1,000 to
 * 100,000 pending (scripts/bench_engine.c), and no O(log n) sift for ties.
 *
 * run(until) opens a bucket only if its earliest time is <= until, so last
 * never passes until. When the queue empties, last is reset to now.
 *
 * Cancel is O(1). An event in a far list is unlinked at once (each event
 * keeps a back link, pprev) and recycled, so a timeout that is set and
 * cancelled for every message holds no memory until its time, and a list
 * left empty is cleared. An event in a chunk (cur, or up to ~16 us ahead)
 * is only marked: its entry moves on with the others, still counted live,
 * and rq_next drops it, and recycles the event, when it reaches the front
 * of cur. Finding the entry would be a scan of its bucket, and flow
 * fidelity cancels a near event, a flow's end, at each change of its
 * rate: with scans, a third of the time of a 1,024-GPU flow run.
 */
#include "sim.h"
#include "hugemem.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define POOL_BLOCK 1024u
#define RQ_DIGIT_BITS 8u
#define RQ_DIGITS (1u << RQ_DIGIT_BITS)
#define RQ_LEVELS (64u / RQ_DIGIT_BITS)
#define RQ_NEAR 3u          /* levels below this keep entries in chunks */
#define RQ_CHUNK 31u        /* entries per chunk (512 bytes) */
#define RQ_CHUNK_BLOCK 128u /* chunks carved from a slab at a time */
#define RQ_PREFETCH_ALL 128u /* a bucket opened with at most this many
                              * entries has all its events fetched */
#define RQ_BUCKETS (RQ_LEVELS * RQ_DIGITS)
#define RQ_NEAR_BUCKETS (RQ_NEAR * RQ_DIGITS)
_Static_assert(RQ_BUCKETS / 64 <= 32, "a bit of words for each mask word");

/* A FIFO list through the events' next_free links; each event's pprev
 * points at the link that points to it, so it can be unlinked in O(1).
 * The far levels (RQ_NEAR and up) use these. */
typedef struct rq_list {
    nsim_event *head;
    nsim_event **tailp; /* &head when empty, else &tail->next_free */
    nsim_time min;      /* earliest time in the list */
    uint64_t n;         /* events in the list */
} rq_list;

/* cur and the near levels keep (time, event) entries in chunks, in FIFO
 * order: re-filing them reads the entries, not the events (see the top of
 * this file). ev is never NULL: a cancelled event stays, marked, until
 * its entry reaches the front of cur (rq_next). */
typedef struct rq_ent {
    nsim_time when;
    nsim_event *ev;
} rq_ent;

/* next first: taking a free chunk and writing its first entry touch one
 * line */
typedef struct rq_chunk {
    struct rq_chunk *next;
    uint64_t pad;
    rq_ent e[RQ_CHUNK];
} rq_chunk;
_Static_assert(sizeof(rq_chunk) == 512, "a chunk is eight lines");

/* Every chunk but the tail is full; the count of the tail's entries lives
 * here, beside the other fields an append writes, so that an append
 * touches one line of the chunk. */
typedef struct rq_vec {
    /* While tail is NULL the vector has no chunk and at most one entry,
     * single, at time min: sparse near buckets (a level-1 bucket spans
     * 256 ps) hold one more often than not, and a chunk for each was a
     * tenth of the engine's instructions on the hold model. */
    union {
        rq_chunk *head;
        nsim_event *single;
    };
    rq_chunk *tail;
    nsim_time min;   /* earliest time in the vector (buckets only) */
    uint32_t live;   /* entries not yet taken (a cancelled one too,
                      * until rq_next drops it) */
    uint16_t pos;    /* entries of head already taken (cur only) */
    uint16_t tail_n; /* entries in tail */
} __attribute__((aligned(32))) rq_vec; /* two a line, none astride */
_Static_assert(sizeof(rq_vec) == 32, "a bucket is half a line");

static inline uint32_t chunk_n(const rq_vec *v, const rq_chunk *c)
{
    return c == v->tail ? v->tail_n : RQ_CHUNK;
}

typedef struct pool_block {
    nsim_event events[POOL_BLOCK];
} pool_block;

typedef struct stream {
    uint64_t id;
    gsl_rng *rng;
} stream;

struct nsim_sim {
    nsim_time now;
    uint64_t next_seq;
    size_t queued; /* pending events */
    nsim_event *free_list;
    /* the radix queue (see the top of this file) */
    nsim_time last;  /* <= every queued time, and <= now between calls */
    rq_vec cur;      /* the events at time last, in seq order */
    /* Bucket b = level * RQ_DIGITS + digit: near[b] below RQ_NEAR_BUCKETS,
     * far[b - RQ_NEAR_BUCKETS] above. Bit b of mask is set iff bucket b is
     * not empty, and bit w of words iff mask[w] is not 0: the lowest set
     * bits name the earliest bucket, with no scan of the words. */
    uint32_t words;
    uint64_t mask[RQ_BUCKETS / 64];
    rq_vec near[RQ_NEAR_BUCKETS];
    rq_list far[RQ_BUCKETS - RQ_NEAR_BUCKETS];
    rq_chunk *chunk_free; /* the entries' chunks not in use */
    size_t chunks_free;
    nsim_huge_slab slab; /* the pools' blocks, on huge pages */
    int stop;    /* stop after this event: nsim_sim_stop, or a failure */
    int stop_rc; /* the first failure's code */
    nsim_err err;
    nsim_sim_counters counters;
    nsim_trace_fn *trace_fn;
    void *trace_ud;
    stream *streams;
    size_t nstreams, streams_cap;
    uint64_t seed;
    uint64_t max_events; /* 0: none */
    uint64_t max_bytes;  /* 0: none */
    uint64_t charged;    /* bytes charged against max_bytes */
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
    /* the buckets are aligned (two a line); a size that is a multiple of
     * the alignment, as aligned_alloc asks */
    nsim_sim *sim = aligned_alloc(_Alignof(nsim_sim), sizeof *sim);
    if (sim != NULL)
        memset(sim, 0, sizeof *sim);
    if (sim == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "engine: out of memory");
    sim->seed = seed;
    for (size_t b = 0; b < RQ_NEAR_BUCKETS; b++)
        sim->near[b].min = NSIM_TIME_MAX;
    for (size_t b = 0; b < RQ_BUCKETS - RQ_NEAR_BUCKETS; b++) {
        sim->far[b].tailp = &sim->far[b].head;
        sim->far[b].min = NSIM_TIME_MAX;
    }
    *out = sim;
    return NSIM_OK;
}

void nsim_sim_destroy(nsim_sim *sim)
{
    if (sim == NULL)
        return;
    nsim_huge_release(&sim->slab);
    for (size_t i = 0; i < sim->nstreams; i++)
        gsl_rng_free(sim->streams[i].rng);
    free(sim->streams);
    free(sim);
}

nsim_time nsim_sim_now(const nsim_sim *sim) { return sim->now; }

static int over_memory(nsim_sim *sim, uint64_t bytes)
{
    if (sim->max_bytes == 0 || sim->charged + bytes <= sim->max_bytes) {
        sim->charged += bytes;
        return NSIM_OK;
    }
    nsim_sim_fail(sim, NSIM_EBUDGET,
                  "memory budget: the simulation's state would pass "
                  "%.1f MiB at %.3f us simulated (%llu events run)",
                  (double)sim->max_bytes / (1 << 20), (double)sim->now / 1e6,
                  (unsigned long long)sim->counters.events_run);
    return NSIM_EBUDGET;
}

int nsim_sim_charge(nsim_sim *sim, uint64_t bytes)
{
    return over_memory(sim, bytes);
}

uint64_t nsim_sim_charged(const nsim_sim *sim) { return sim->charged; }

void nsim_sim_set_budget(nsim_sim *sim, uint64_t max_events,
                         uint64_t max_bytes)
{
    sim->max_events = max_events;
    sim->max_bytes = max_bytes;
}

/* The growth paths are kept out of line: inlined, their registers were
 * saved and restored on every schedule. */
static __attribute__((noinline, cold)) int pool_grow(nsim_sim *sim)
{
    if (over_memory(sim, sizeof(pool_block)) != NSIM_OK)
        return NSIM_EBUDGET;
    pool_block *b = nsim_huge_take(&sim->slab, sizeof *b);
    if (b == NULL)
        return NSIM_ENOMEM;
    for (size_t i = POOL_BLOCK; i-- > 0;) {
        b->events[i].next_free = sim->free_list;
        sim->free_list = &b->events[i];
    }
    sim->counters.pool_events += POOL_BLOCK;
    return NSIM_OK;
}

static __attribute__((noinline, cold)) int chunk_grow(nsim_sim *sim,
                                                      size_t n)
{
    while (sim->chunks_free < n) {
        rq_chunk *b = nsim_huge_take(&sim->slab, RQ_CHUNK_BLOCK * sizeof *b);
        if (b == NULL)
            return NSIM_ENOMEM;
        for (size_t i = RQ_CHUNK_BLOCK; i-- > 0;) {
            b[i].next = sim->chunk_free;
            sim->chunk_free = &b[i];
        }
        sim->chunks_free += RQ_CHUNK_BLOCK;
    }
    return NSIM_OK;
}

/* Makes sure n chunks are free, carving more from the slab if needed. */
static inline int chunk_reserve(nsim_sim *sim, size_t n)
{
    return sim->chunks_free >= n ? NSIM_OK : chunk_grow(sim, n);
}

int nsim_sim_reserve(nsim_sim *sim, size_t n)
{
    /* events, and chunks for n entries however they spread */
    while (sim->counters.pool_events < n)
        if (pool_grow(sim) != NSIM_OK)
            return NSIM_ENOMEM;
    return chunk_reserve(sim, n / RQ_CHUNK + RQ_NEAR * RQ_DIGITS + 2);
}

/* ---- the radix queue --------------------------------------------------- */

static inline void list_append(rq_list *l, nsim_event *ev)
{
    ev->next_free = NULL;
    ev->pprev = l->tailp;
    *l->tailp = ev;
    l->tailp = &ev->next_free;
    l->n++;
}

#define RQ_INLINE static inline __attribute__((always_inline))

static inline void mask_set(nsim_sim *sim, unsigned b)
{
    sim->mask[b / 64] |= 1ull << (b % 64);
    sim->words |= 1u << (b / 64);
}

/* Appends (t, ev) to bucket b (RQ_BUCKETS: cur, which has no bit); a chunk
 * must be free (chunk_reserve). Inlined where it is filed, as rq_file is:
 * called, each spent ~15 instructions of an event saving registers. Only
 * an append to an empty bucket sets its bit: a bucket is empty exactly
 * when its bit is clear, and most appends (a level-2 bucket spans 65 ns)
 * find it set; setting it on each was 4 % of the hold model's
 * instructions. */
RQ_INLINE void vec_append(nsim_sim *sim, rq_vec *v, unsigned b, nsim_time t,
                          nsim_event *ev)
{
    rq_chunk *c = v->tail;
    if (c == NULL || v->tail_n == RQ_CHUNK) {
        if (c == NULL && v->live == 0) {
            /* empty, or cur whose single entry was taken */
            v->single = ev;
            v->pos = 0;
            v->live = 1;
            v->min = t;
            if (b != RQ_BUCKETS)
                mask_set(sim, b);
            return;
        }
        rq_chunk *k = sim->chunk_free;
        sim->chunk_free = k->next;
        sim->chunks_free--;
        k->next = NULL;
        if (c == NULL) {
            /* the single entry (not taken: live is 1) moves in first */
            k->e[0] = (rq_ent){v->min, v->single};
            v->head = k;
            v->tail_n = 1;
        } else {
            c->next = k;
            v->tail_n = 0;
        }
        v->tail = c = k;
    }
    c->e[v->tail_n++] = (rq_ent){t, ev};
    v->live++;
    /* a store either way, no branch: times within a bucket come in any
     * order, and the branch was mispredicted every ~8th append */
    nsim_time min = v->min;
    v->min = t < min ? t : min;
}

/* Gives v's chunks back and empties it. */
static void vec_clear(nsim_sim *sim, rq_vec *v)
{
    rq_chunk *c = v->tail != NULL ? v->head : NULL;
    while (c != NULL) {
        rq_chunk *next = c->next;
        c->next = sim->chunk_free;
        sim->chunk_free = c;
        sim->chunks_free++;
        c = next;
    }
    *v = (rq_vec){.min = NSIM_TIME_MAX};
}

/* The bucket of time t, where x = t ^ last is not 0: level l = the
 * highest byte in which t differs from last, digit = byte l of t. */
static inline unsigned rq_bucket(nsim_time t, nsim_time x)
{
    /* l * RQ_DIGIT_BITS, from the highest differing bit */
    unsigned shift =
        (63u - (unsigned)__builtin_clzll(x)) & ~(RQ_DIGIT_BITS - 1);
    return (shift / RQ_DIGIT_BITS) * RQ_DIGITS +
           ((unsigned)(t >> shift) & (RQ_DIGITS - 1));
}

/* Files (t, ev), t >= last, at the tail of its bucket (or of cur). Near
 * levels need a free chunk; the event is not read. */
RQ_INLINE void rq_file(nsim_sim *sim, nsim_time t, nsim_event *ev)
{
    nsim_time x = t ^ sim->last;
    if (x == 0) {
        vec_append(sim, &sim->cur, RQ_BUCKETS, t, ev);
        return;
    }
    unsigned b = rq_bucket(t, x);
    if (b < RQ_NEAR_BUCKETS) {
        vec_append(sim, &sim->near[b], b, t, ev);
    } else {
        rq_list *l = &sim->far[b - RQ_NEAR_BUCKETS];
        list_append(l, ev);
        if (t < l->min)
            l->min = t;
        mask_set(sim, b);
    }
}

/* Files ev: in a chunk (pprev NULL) or a far list. */
static inline void rq_insert(nsim_sim *sim, nsim_event *ev)
{
    ev->pprev = NULL;
    rq_file(sim, ev->when, ev);
}

static inline void mask_clear(nsim_sim *sim, unsigned b)
{
    uint64_t *m = &sim->mask[b / 64];
    *m &= ~(1ull << (b % 64));
    /* no branch: whether a word empties is a coin toss */
    sim->words &= ~((uint32_t)(*m == 0) << (b / 64));
}

/* Re-files the entries of near bucket v (level >= 1) against the new
 * last. Those that land in cur or level 0 fire soon: their events are
 * fetched now, while the rest of the bucket is filed. */
static void open_near(nsim_sim *sim, rq_vec *v)
{
    nsim_time soon = v->live <= RQ_PREFETCH_ALL ? NSIM_TIME_MAX : RQ_DIGITS;
    for (rq_chunk *c = v->head; c != NULL; c = c->next)
        for (uint32_t i = 0, n = chunk_n(v, c); i < n; i++) {
            rq_ent e = c->e[i];
            if ((e.when ^ sim->last) < soon)
                __builtin_prefetch(e.ev, 1);
            rq_file(sim, e.when, e.ev);
        }
    vec_clear(sim, v);
}

/* Re-files the events of far list l against the new last (stable). */
static void open_far(nsim_sim *sim, rq_list *l)
{
    nsim_event *ev = l->head;
    *l = (rq_list){.tailp = &l->head, .min = NSIM_TIME_MAX};
    while (ev != NULL) {
        nsim_event *next = ev->next_free;
        rq_insert(sim, ev);
        ev = next;
    }
}

/* Opens the lowest non-empty bucket, if its earliest time is <= until:
 * last becomes that time and its events move to cur or lower levels.
 * Returns 0 if there was none to open, -1 if the chunks for the move could
 * not be had (the run fails), else 1. */
static int rq_open(nsim_sim *sim, nsim_time until)
{
    unsigned w = (unsigned)__builtin_ctz(sim->words);
    unsigned b = w * 64 + (unsigned)__builtin_ctzll(sim->mask[w]);
    if (b >= RQ_NEAR_BUCKETS) {
        rq_list *l = &sim->far[b - RQ_NEAR_BUCKETS];
        if (l->min > until)
            return 0;
        /* each entry needs at most its share of a chunk, and each bucket
         * it may land in one more */
        if (chunk_reserve(sim, l->n / RQ_CHUNK + RQ_DIGITS * RQ_NEAR + 2) !=
            NSIM_OK)
            goto no_memory;
        mask_clear(sim, b);
        sim->last = l->min;
        open_far(sim, l);
        return 1;
    }
    rq_vec *v = &sim->near[b];
    unsigned level = b / RQ_DIGITS;
    nsim_time t = v->min;
    if (t > until)
        return 0;
    if (v->tail == NULL) {
        /* a single entry (the common case while events are sparse)
         * becomes cur as it is */
        nsim_event *ev = v->single;
        __builtin_prefetch(ev, 1);
        mask_clear(sim, b);
        sim->last = t;
        v->live = 0;
        v->min = NSIM_TIME_MAX;
        if (sim->cur.tail != NULL)
            vec_clear(sim, &sim->cur);
        sim->cur.single = ev;
        sim->cur.live = 1;
        sim->cur.pos = 0;
        sim->cur.min = t;
        return 1;
    }
    if (level == 0) {
        /* every entry at time t: the bucket becomes cur as it is */
        mask_clear(sim, b);
        sim->last = t;
        vec_clear(sim, &sim->cur);
        sim->cur = *v;
        *v = (rq_vec){.min = NSIM_TIME_MAX};
        return 1;
    }
    if (chunk_reserve(sim, v->live / RQ_CHUNK + RQ_DIGITS * level + 2) !=
        NSIM_OK)
        goto no_memory;
    mask_clear(sim, b);
    sim->last = t;
    open_near(sim, v);
    return 1;
no_memory:
    nsim_sim_fail(sim, NSIM_ENOMEM, "engine: out of memory");
    return -1;
}

/* The event at the front of cur (whose live count is not 0). */
static inline nsim_event *cur_front(nsim_sim *sim)
{
    rq_vec *v = &sim->cur;
    if (v->tail == NULL)
        return v->single;
    for (;;) {
        rq_chunk *c = v->head;
        if (v->pos == chunk_n(v, c)) {
            v->head = c->next;
            c->next = sim->chunk_free;
            sim->chunk_free = c;
            sim->chunks_free++;
            v->pos = 0;
            continue;
        }
        return c->e[v->pos].ev;
    }
}

/* Makes the next event the front of cur, unless the queue is empty or every
 * event lies past until; returns that event or NULL (also when the run
 * failed for memory). Only buckets that may hold an event at or before
 * until are opened, so last never passes until and a later schedule at now
 * stays at or above last. */
static inline void event_free(nsim_sim *sim, nsim_event *ev);

static nsim_event *rq_next(nsim_sim *sim, nsim_time until)
{
    for (;;) {
        while (sim->cur.live == 0) {
            if (sim->words == 0) {
                /* Empty: any last <= now will do, and now keeps it so. */
                vec_clear(sim, &sim->cur);
                sim->last = sim->now;
                return NULL;
            }
            if (rq_open(sim, until) <= 0)
                return NULL;
        }
        if (sim->last > until)
            return NULL;
        nsim_event *ev = cur_front(sim);
        if (ev->cancelled != 1)
            return ev;
        /* cancelled while its entry sat in a chunk: gone now */
        sim->cur.pos++;
        sim->cur.live--;
        event_free(sim, ev);
    }
}

/* Removes the front of cur (which rq_next returned). */
static inline void rq_pop_cur(nsim_sim *sim)
{
    sim->cur.pos++;
    sim->cur.live--;
    sim->queued--;
}

/* ---- scheduling and the run loop --------------------------------------- */

static inline int schedule_at(nsim_sim *sim, nsim_time when, nsim_event_fn *fn,
                              void *target, uint32_t kind, uint64_t arg,
                              nsim_event_handle *out)
{
    if (when < sim->now || fn == NULL)
        return NSIM_EINVAL;
    if (sim->free_list == NULL && pool_grow(sim) != NSIM_OK)
        return NSIM_ENOMEM;
    if (sim->chunks_free == 0 && chunk_reserve(sim, 1) != NSIM_OK)
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
    rq_insert(sim, ev);
    sim->queued++;
    sim->counters.events_scheduled++;
    if (sim->queued > sim->counters.peak_pending)
        sim->counters.peak_pending = sim->queued;
    if (out != NULL)
        *out = (nsim_event_handle){ev, ev->seq};
    return NSIM_OK;
}

int nsim_sim_schedule_at(nsim_sim *sim, nsim_time when, nsim_event_fn *fn,
                         void *target, uint32_t kind, uint64_t arg,
                         nsim_event_handle *out)
{
    return schedule_at(sim, when, fn, target, kind, arg, out);
}

int nsim_sim_schedule(nsim_sim *sim, nsim_time delay, nsim_event_fn *fn,
                      void *target, uint32_t kind, uint64_t arg,
                      nsim_event_handle *out)
{
    if (delay > NSIM_TIME_MAX - sim->now)
        return NSIM_EINVAL;
    return schedule_at(sim, sim->now + delay, fn, target, kind, arg, out);
}

static inline void event_free(nsim_sim *sim, nsim_event *ev)
{
    ev->fn = NULL;
    ev->next_free = sim->free_list;
    sim->free_list = ev;
}

/* Takes a queued event out of the queue. In a far list it is unlinked
 * (returns 1: free it now), keeping the masks exact. In a chunk (cur or a
 * near bucket) its entry stays where it is and counts as live until it
 * comes to the front of cur, where rq_next drops it (returns 0: it is
 * freed then): finding the entry would be a scan of its bucket, and flow
 * fidelity cancels a near event (a flow's end) at every rate change. */
static int rq_remove(nsim_sim *sim, nsim_event *ev)
{
    sim->queued--;
    if (ev->pprev == NULL)
        return 0;
    unsigned b = rq_bucket(ev->when, ev->when ^ sim->last);
    rq_list *l = &sim->far[b - RQ_NEAR_BUCKETS];
    *ev->pprev = ev->next_free;
    if (ev->next_free != NULL)
        ev->next_free->pprev = ev->pprev;
    else
        l->tailp = ev->pprev;
    if (--l->n == 0) {
        l->min = NSIM_TIME_MAX;
        mask_clear(sim, b);
    }
    return 1;
}

int nsim_sim_cancel(nsim_sim *sim, nsim_event_handle h)
{
    /* A fired or cancelled event goes back to the pool and may be reused
     * with a new seq; a seq mismatch therefore means "already gone". */
    if (h.ev == NULL || h.ev->seq != h.seq || h.ev->fn == NULL ||
        h.ev->cancelled)
        return NSIM_ENOENT;
    if (rq_remove(sim, h.ev))
        event_free(sim, h.ev);
    else
        h.ev->cancelled = 1; /* its entry is dropped at the front */
    sim->counters.events_cancelled++;
    return NSIM_OK;
}

/* Runs ev, the head of cur, taking it out of the queue first. */
static inline void fire(nsim_sim *sim, nsim_event *ev)
{
    rq_pop_cur(sim);
    assert(ev->when >= sim->now && ev->when == sim->last);
    sim->now = ev->when;
    if (sim->trace_fn != NULL)
        sim->trace_fn(sim->trace_ud, ev);
    ev->cancelled = 2; /* firing: a cancel now finds it already fired */
    ev->fn(sim, ev);
    event_free(sim, ev);
    sim->counters.events_run++;
}

/* The event budget is spent: stop before the next event. */
static int over_events(nsim_sim *sim)
{
    return nsim_sim_fail(sim, NSIM_EBUDGET,
                         "event budget: %llu events run by %.3f us "
                         "simulated, and more are pending",
                         (unsigned long long)sim->counters.events_run,
                         (double)sim->now / 1e6);
}

/* The event after the front of cur, as the queue stands (what the front
 * schedules may come first), is in cache (filed just now, or fetched
 * when its bucket was opened): fetch what its handler will read first,
 * its argument (a piece, a flow), while the front runs. A prefetch of
 * an argument that is not a pointer is harmless. */
static inline void prefetch_next_arg(const nsim_sim *sim)
{
    const rq_vec *v = &sim->cur;
    const rq_chunk *c = v->tail != NULL ? v->head : NULL;
    const nsim_event *next = NULL;
    if (c != NULL && v->pos + 1u < chunk_n(v, c))
        next = c->e[v->pos + 1].ev;
    else if (c != NULL && c->next != NULL)
        next = c->next->e[0].ev;
    else if (sim->words & 0xfu) {
        unsigned w = (unsigned)__builtin_ctz(sim->words);
        const rq_vec *b =
            &sim->near[w * 64 + (unsigned)__builtin_ctzll(sim->mask[w])];
        next = b->tail != NULL ? b->head->e[0].ev : b->single;
    }
    if (next != NULL && next->arg.ptr != NULL)
        __builtin_prefetch(next->arg.ptr, 1);
}

int nsim_sim_run(nsim_sim *sim, nsim_time until)
{
    nsim_event *ev;
    sim->stop = sim->stop_rc != NSIM_OK;
    uint64_t left = sim->max_events == 0 ? UINT64_MAX
                    : sim->max_events > sim->counters.events_run
                        ? sim->max_events - sim->counters.events_run
                        : 0;
    while ((ev = rq_next(sim, until)) != NULL) {
        if (left-- == 0)
            return over_events(sim);
        prefetch_next_arg(sim);
        fire(sim, ev);
        if (sim->stop) /* one test an event: a failure sets it too */
            return sim->stop_rc;
    }
    if (sim->stop_rc != NSIM_OK)
        return sim->stop_rc; /* no memory to open a bucket */
    if (until != NSIM_TIME_MAX && until > sim->now)
        sim->now = until;
    return NSIM_OK;
}

int nsim_sim_step(nsim_sim *sim)
{
    nsim_event *ev = rq_next(sim, NSIM_TIME_MAX);
    if (ev == NULL)
        return sim->stop_rc != NSIM_OK ? sim->stop_rc : NSIM_ENOENT;
    if (sim->max_events != 0 && sim->counters.events_run >= sim->max_events)
        return over_events(sim);
    fire(sim, ev);
    return sim->stop_rc;
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
    sim->stop = 1;
    return code;
}

const nsim_err *nsim_sim_error(const nsim_sim *sim) { return &sim->err; }

size_t nsim_sim_pending(const nsim_sim *sim)
{
    return sim->queued;
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
