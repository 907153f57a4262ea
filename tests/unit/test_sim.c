/* SPDX-License-Identifier: MIT
 *
 * test_sim.c - the event engine: differential tests of the queue against a
 * sorted reference (static and dynamic mixes of ties, zero delays, far
 * timeouts, cancels), FIFO ties, extreme times, determinism, cancel and
 * its memory, errors from handlers, single step, run-until, counters and
 * random substreams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "nsim_test.h"
#include "sim/core/sim.h"

typedef struct rec {
    uint64_t id[200000];
    nsim_time at[200000];
    size_t n;
} rec;

static void on_record(nsim_sim *sim, nsim_event *ev)
{
    rec *r = ev->target;
    r->id[r->n] = ev->arg.u64;
    r->at[r->n++] = nsim_sim_now(sim);
}

typedef struct ref_ev {
    nsim_time when;
    uint64_t seq, id;
    int cancelled;
} ref_ev;

static int ref_cmp(const void *a, const void *b)
{
    const ref_ev *x = a, *y = b;
    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Random schedule/cancel mixes: the engine's firing order must equal a
 * sorted reference of (time, schedule order) without the cancelled ones. */
static void test_differential(void)
{
    nsim_err err = {0};
    for (uint64_t seed = 1; seed <= 5; seed++) {
        nsim_sim *sim;
        static rec r;
        static ref_ev ref[20000];
        static nsim_event_handle hs[20000];
        size_t n = 0;
        r.n = 0;
        NSIM_ASSERT_OK(nsim_sim_create(seed, &sim, &err));
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, seed);
        for (size_t i = 0; i < 20000; i++) {
            /* few distinct times, so that ties are frequent */
            nsim_time when = gsl_rng_uniform_int(rng, seed == 1 ? 50 : 1000000);
            ref[n] = (ref_ev){when, i, n, 0};
            NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, when, on_record, &r, 0,
                                                n, &hs[n]));
            n++;
            if (gsl_rng_uniform(rng) < 0.3) {
                size_t victim = gsl_rng_uniform_int(rng, n);
                int rc = nsim_sim_cancel(sim, hs[victim]);
                CU_ASSERT_EQUAL(rc, ref[victim].cancelled ? NSIM_ENOENT
                                                          : NSIM_OK);
                ref[victim].cancelled = 1;
            }
        }
        size_t live = 0;
        for (size_t i = 0; i < n; i++)
            live += !ref[i].cancelled;
        CU_ASSERT_EQUAL(nsim_sim_pending(sim), live);
        NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
        qsort(ref, n, sizeof *ref, ref_cmp);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (ref[i].cancelled)
                continue;
            if (k >= r.n || r.id[k] != ref[i].id || r.at[k] != ref[i].when) {
                CU_FAIL("firing order differs from the sorted reference");
                break;
            }
            k++;
        }
        CU_ASSERT_EQUAL(k, r.n);
        CU_ASSERT_EQUAL(nsim_sim_pending(sim), 0);
        gsl_rng_free(rng);
        nsim_sim_destroy(sim);
    }
}

/* Handlers that schedule more events while running (the replace-top path)
 * against the same reference. */
typedef struct chain {
    rec *r;
    gsl_rng *rng;
    int left;
} chain;

static void on_chain(nsim_sim *sim, nsim_event *ev)
{
    chain *c = ev->target;
    c->r->id[c->r->n] = ev->arg.u64;
    c->r->at[c->r->n++] = nsim_sim_now(sim);
    for (int k = 0; k < 2 && c->left > 0; k++) {
        c->left--;
        if (nsim_sim_schedule(sim, gsl_rng_uniform_int(c->rng, 5), on_chain,
                              c, 0, (uint64_t)c->left, NULL) != NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "schedule");
    }
}

static void test_chained_order_is_time_then_fifo(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    chain c = {&r, gsl_rng_alloc(gsl_rng_mt19937), 50000};
    NSIM_ASSERT_OK(nsim_sim_create(3, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 0, on_chain, &c, 0, 999999, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 50001);
    int ok = 1;
    for (size_t i = 1; i < r.n; i++)
        ok &= r.at[i] >= r.at[i - 1];
    CU_ASSERT(ok);
    gsl_rng_free(c.rng);
    nsim_sim_destroy(sim);
}

static void test_fifo_ties(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    for (uint64_t i = 0; i < 1000; i++)
        NSIM_ASSERT_OK(nsim_sim_schedule(sim, 42, on_record, &r, 0, i, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 1000);
    for (uint64_t i = 0; i < r.n; i++)
        CU_ASSERT_EQUAL(r.id[i], i);
    nsim_sim_destroy(sim);
}

typedef struct rnd_model {
    gsl_rng *rng;
    uint64_t trace_hash;
    int left;
} rnd_model;

static void on_random(nsim_sim *sim, nsim_event *ev)
{
    rnd_model *m = ev->target;
    m->trace_hash = nsim_hash64(m->trace_hash, nsim_sim_now(sim) ^ ev->arg.u64);
    if (m->left-- > 0) {
        uint64_t d = gsl_rng_uniform_int(m->rng, 1000);
        if (nsim_sim_schedule(sim, d, on_random, m, 0, d, NULL) != NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "schedule");
    }
}

static uint64_t run_random(uint64_t seed)
{
    nsim_err err = {0};
    nsim_sim *sim;
    rnd_model m = {0};
    if (nsim_sim_create(seed, &sim, &err) != NSIM_OK ||
        nsim_sim_stream(sim, 7, &m.rng) != NSIM_OK)
        return 0;
    m.left = 10000;
    for (int i = 0; i < 10; i++)
        if (nsim_sim_schedule(sim, (nsim_time)i, on_random, &m, 0, 0, NULL))
            return 0;
    if (nsim_sim_run(sim, NSIM_TIME_MAX) != NSIM_OK)
        return 0;
    nsim_sim_destroy(sim);
    return m.trace_hash;
}

static void test_same_seed_same_sequence(void)
{
    uint64_t a = run_random(11), b = run_random(11), c = run_random(12);
    CU_ASSERT_NOT_EQUAL(a, 0);
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_NOT_EQUAL(a, c);
}

static void test_substreams_independent(void)
{
    nsim_err err = {0};
    nsim_sim *s1, *s2;
    gsl_rng *a1, *b1, *a2;
    NSIM_ASSERT_OK(nsim_sim_create(5, &s1, &err));
    NSIM_ASSERT_OK(nsim_sim_create(5, &s2, &err));
    /* s1 creates stream 2 before stream 1; s2 only stream 1 */
    NSIM_ASSERT_OK(nsim_sim_stream(s1, 2, &b1));
    NSIM_ASSERT_OK(nsim_sim_stream(s1, 1, &a1));
    NSIM_ASSERT_OK(nsim_sim_stream(s2, 1, &a2));
    (void)gsl_rng_get(b1);
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(gsl_rng_get(a1), gsl_rng_get(a2));
    gsl_rng *again;
    NSIM_ASSERT_OK(nsim_sim_stream(s1, 1, &again));
    CU_ASSERT_PTR_EQUAL(again, a1);
    nsim_sim_destroy(s1);
    nsim_sim_destroy(s2);
}

static void test_cancel_before_and_after_firing(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    nsim_event_handle h1, h2;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 10, on_record, &r, 0, 1, &h1));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 20, on_record, &r, 0, 2, &h2));
    CU_ASSERT_EQUAL(nsim_sim_cancel(sim, h2), NSIM_OK);
    CU_ASSERT_EQUAL(nsim_sim_cancel(sim, h2), NSIM_ENOENT);
    CU_ASSERT_EQUAL(nsim_sim_pending(sim), 1);
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(r.id[0], 1);
    /* after firing, and after the event memory has been reused */
    CU_ASSERT_EQUAL(nsim_sim_cancel(sim, h1), NSIM_ENOENT);
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 5, on_record, &r, 0, 3, NULL));
    CU_ASSERT_EQUAL(nsim_sim_cancel(sim, h1), NSIM_ENOENT);
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 2);
    nsim_sim_counters c = nsim_sim_get_counters(sim);
    CU_ASSERT_EQUAL(c.events_run, 2);
    CU_ASSERT_EQUAL(c.events_cancelled, 1);
    CU_ASSERT_EQUAL(c.peak_pending, 2);
    nsim_sim_destroy(sim);
}

static void on_fail(nsim_sim *sim, nsim_event *ev)
{
    (void)ev;
    nsim_sim_fail(sim, NSIM_ESIM, "link %d broke", 7);
}

static void test_handler_error_reaches_caller(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 1, on_record, &r, 0, 1, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 2, on_fail, NULL, 0, 0, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 3, on_record, &r, 0, 3, NULL));
    CU_ASSERT_EQUAL(nsim_sim_run(sim, NSIM_TIME_MAX), NSIM_ESIM);
    CU_ASSERT_STRING_EQUAL(nsim_sim_error(sim)->msg, "link 7 broke");
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 2);
    nsim_sim_destroy(sim);
}

static void on_stop(nsim_sim *sim, nsim_event *ev)
{
    (void)ev;
    nsim_sim_stop(sim);
}

/* A stop ends the run after its event, and the next run goes on; a
 * failure ends every later run too, with its code. */
static void test_stop_and_failure_end_the_run(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 1, on_record, &r, 0, 1, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 2, on_stop, NULL, 0, 0, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 3, on_record, &r, 0, 3, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 4, on_fail, NULL, 0, 0, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 5, on_record, &r, 0, 5, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 6, on_record, &r, 0, 6, NULL));
    CU_ASSERT_EQUAL(nsim_sim_run(sim, NSIM_TIME_MAX), NSIM_OK);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 2);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(nsim_sim_pending(sim), 4);
    CU_ASSERT_EQUAL(nsim_sim_run(sim, NSIM_TIME_MAX), NSIM_ESIM);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 4);
    CU_ASSERT_EQUAL(r.n, 2);
    CU_ASSERT_EQUAL(r.id[1], 3);
    /* failed: a later run stops again, with the first failure's code */
    CU_ASSERT_EQUAL(nsim_sim_run(sim, NSIM_TIME_MAX), NSIM_ESIM);
    CU_ASSERT(r.n <= 3);
    CU_ASSERT_STRING_EQUAL(nsim_sim_error(sim)->msg, "link 7 broke");
    nsim_sim_destroy(sim);
}

static void test_step_and_run_until(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    CU_ASSERT_EQUAL(nsim_sim_step(sim), NSIM_ENOENT);
    for (uint64_t i = 1; i <= 5; i++)
        NSIM_ASSERT_OK(nsim_sim_schedule(sim, i * 100, on_record, &r, 0, i,
                                         NULL));
    NSIM_ASSERT_OK(nsim_sim_step(sim));
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 100);
    NSIM_ASSERT_OK(nsim_sim_run(sim, 300));
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 300);
    NSIM_ASSERT_OK(nsim_sim_run(sim, 350));
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 350);
    CU_ASSERT_EQUAL(nsim_sim_schedule_at(sim, 349, on_record, &r, 0, 0, NULL),
                    NSIM_EINVAL);
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 5);
    nsim_sim_destroy(sim);
}

/* Dynamic differential test of the queue: handlers and the driver schedule
 * with a mix of zero delays, heavy ties, delays over many orders of
 * magnitude and far-future timeouts; events are cancelled (before and after
 * firing); the driver runs in slices with run(until) and step(). The firing
 * log must equal the sorted list of everything scheduled and not cancelled,
 * in (time, schedule order). */
#define MIX_MAX 120000

typedef struct mix {
    gsl_rng *rng;
    nsim_sim *sim;
    size_t n;     /* events scheduled so far (their ids) */
    size_t budget;
    ref_ev ref[MIX_MAX];
    nsim_event_handle hs[MIX_MAX];
    unsigned char fired[MIX_MAX];
    uint64_t log[MIX_MAX];
    size_t nlog;
    int bad;
} mix;

static void on_mix(nsim_sim *sim, nsim_event *ev);

static nsim_time mix_delay(mix *m)
{
    nsim_time now = nsim_sim_now(m->sim);
    double u = gsl_rng_uniform(m->rng);
    if (u < 0.25)
        return 0;
    if (u < 0.50)
        return 1000 * gsl_rng_uniform_int(m->rng, 4); /* heavy ties */
    if (u < 0.85) /* 1 ps .. 16 us, log-uniform */
        return gsl_rng_uniform_int(m->rng, 1ul << gsl_rng_uniform_int(m->rng, 25)) ;
    if (u < 0.93) /* a shared grid point: ties from different schedulers */
        return (now / 1000000 + 1) * 1000000 - now;
    return NSIM_PS_PER_S * (1 + gsl_rng_uniform_int(m->rng, 3)) +
           gsl_rng_uniform_int(m->rng, 1000); /* far-future timeout */
}

static void mix_schedule(mix *m)
{
    if (m->n >= m->budget)
        return;
    nsim_time d = mix_delay(m);
    size_t id = m->n;
    m->ref[id] = (ref_ev){nsim_sim_now(m->sim) + d, id, id, 0};
    if (nsim_sim_schedule(m->sim, d, on_mix, m, 0, id, &m->hs[id]) != NSIM_OK) {
        m->bad = 1;
        return;
    }
    m->n++;
}

static void mix_cancel(mix *m)
{
    if (m->n == 0)
        return;
    size_t v = gsl_rng_uniform_int(m->rng, m->n);
    int expect = m->ref[v].cancelled || m->fired[v] ? NSIM_ENOENT : NSIM_OK;
    if (nsim_sim_cancel(m->sim, m->hs[v]) != expect)
        m->bad = 1;
    m->ref[v].cancelled = 1;
}

static void on_mix(nsim_sim *sim, nsim_event *ev)
{
    mix *m = ev->target;
    uint64_t id = ev->arg.u64;
    if (nsim_sim_now(sim) != m->ref[id].when || m->fired[id] ||
        m->ref[id].cancelled)
        m->bad = 1;
    m->fired[id] = 1;
    m->log[m->nlog++] = id;
    unsigned k = (unsigned)gsl_rng_uniform_int(m->rng, 3); /* 0..2 children */
    for (unsigned i = 0; i < k; i++)
        mix_schedule(m);
    if (gsl_rng_uniform(m->rng) < 0.1)
        mix_cancel(m);
}

static void test_differential_dynamic(void)
{
    nsim_err err = {0};
    static mix m;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        memset(&m, 0, sizeof m);
        m.rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(m.rng, seed);
        m.budget = seed == 6 ? MIX_MAX : 30000;
        NSIM_ASSERT_OK(nsim_sim_create(seed, &m.sim, &err));
        /* seed 6 builds a large backlog first: ~50,000 pending */
        size_t initial = seed == 6 ? 50000 : 50 * seed;
        for (size_t i = 0; i < initial; i++)
            mix_schedule(&m);
        int more = 1;
        while (more) {
            double u = gsl_rng_uniform(m.rng);
            nsim_time now = nsim_sim_now(m.sim);
            if (u < 0.3) {
                NSIM_ASSERT_OK(nsim_sim_run(
                    m.sim, now + gsl_rng_uniform_int(m.rng, 1ul << 22)));
                /* run(until) leaves now at until: nothing fired is late */
                CU_ASSERT(nsim_sim_now(m.sim) >= now);
            } else if (u < 0.6) {
                int rc = nsim_sim_step(m.sim);
                CU_ASSERT(rc == NSIM_OK || rc == NSIM_ENOENT);
            } else if (u < 0.8) {
                mix_schedule(&m); /* from outside a handler, after run-until */
            } else if (u < 0.9) {
                mix_cancel(&m);
            } else {
                NSIM_ASSERT_OK(nsim_sim_run(m.sim, now + NSIM_PS_PER_S / 2));
            }
            more = nsim_sim_pending(m.sim) > 0 || m.n < m.budget;
            if (m.bad)
                break;
        }
        CU_ASSERT_FALSE(m.bad);
        size_t live = 0;
        for (size_t i = 0; i < m.n; i++)
            live += !m.ref[i].cancelled;
        qsort(m.ref, m.n, sizeof *m.ref, ref_cmp);
        size_t k = 0;
        for (size_t i = 0; i < m.n && k < m.nlog; i++) {
            if (m.ref[i].cancelled && !m.fired[m.ref[i].id])
                continue;
            if (m.log[k] != m.ref[i].id) {
                CU_FAIL("dynamic firing order differs from the reference");
                break;
            }
            k++;
        }
        /* a cancel after firing marks ref cancelled but it did fire */
        size_t fired = 0;
        for (size_t i = 0; i < m.n; i++)
            fired += m.fired[i];
        CU_ASSERT_EQUAL(k, m.nlog);
        CU_ASSERT_EQUAL(m.nlog, fired);
        CU_ASSERT(fired >= live);
        nsim_sim_counters c = nsim_sim_get_counters(m.sim);
        CU_ASSERT_EQUAL(c.events_run, m.nlog);
        CU_ASSERT_EQUAL(c.events_scheduled, m.n);
        CU_ASSERT_EQUAL(c.events_run + c.events_cancelled, m.n);
        gsl_rng_free(m.rng);
        nsim_sim_destroy(m.sim);
    }
}

/* Times across the whole 64-bit range, including the top levels of the
 * radix queue, fire in order. */
static void test_extreme_times(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    const nsim_time t[] = {NSIM_TIME_MAX, 1ull << 63, (1ull << 63) - 1,
                           1ull << 56,    255,        256,
                           0,             NSIM_TIME_MAX, 65535,
                           1ull << 40,    0,          (1ull << 63) + 1};
    const size_t n = sizeof t / sizeof t[0];
    static ref_ev ref[16];
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    for (size_t i = 0; i < n; i++) {
        ref[i] = (ref_ev){t[i], i, i, 0};
        NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, t[i], on_record, &r, 0, i,
                                            NULL));
    }
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    qsort(ref, n, sizeof *ref, ref_cmp);
    CU_ASSERT_EQUAL(r.n, n);
    for (size_t i = 0; i < n && i < r.n; i++) {
        CU_ASSERT_EQUAL(r.id[i], ref[i].id);
        CU_ASSERT_EQUAL(r.at[i], ref[i].when);
    }
    CU_ASSERT_EQUAL(nsim_sim_now(sim), NSIM_TIME_MAX);
    CU_ASSERT_EQUAL(nsim_sim_schedule(sim, 1, on_record, &r, 0, 0, NULL),
                    NSIM_EINVAL);
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 0, on_record, &r, 0, 99, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, n + 1);
    nsim_sim_destroy(sim);
}

/* Dropping cancelled events must not leave the queue unable to take an
 * event earlier than them, with run-until-empty, step and run-until. */
static void test_schedule_after_cancelled_tail(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    nsim_event_handle h;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 10, on_record, &r, 0, 1, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 1000000, on_record, &r, 0, 2, &h));
    NSIM_ASSERT_OK(nsim_sim_cancel(sim, h));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 10);
    /* just below and at the dropped event's time */
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 1000000, on_record, &r, 0, 9, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 999999, on_record, &r, 0, 10, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT_EQUAL(r.id[1], 10);
    CU_ASSERT_EQUAL(r.id[2], 9);
    /* again, then schedule below after step() drops a cancelled one */
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 1000000, on_record, &r, 0, 11, &h));
    NSIM_ASSERT_OK(nsim_sim_cancel(sim, h));
    CU_ASSERT_EQUAL(nsim_sim_step(sim), NSIM_ENOENT);
    r.n = 1;
    nsim_sim_destroy(sim);
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 10, on_record, &r, 0, 1, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    r.n = 1;
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 500, on_record, &r, 0, 3, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 400, on_record, &r, 0, 4, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 5000000, on_record, &r, 0, 5, &h));
    NSIM_ASSERT_OK(nsim_sim_cancel(sim, h));
    NSIM_ASSERT_OK(nsim_sim_step(sim));
    NSIM_ASSERT_OK(nsim_sim_step(sim));
    CU_ASSERT_EQUAL(nsim_sim_step(sim), NSIM_ENOENT);
    CU_ASSERT_EQUAL(nsim_sim_now(sim), 500);
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 600, on_record, &r, 0, 6, NULL));
    /* run-until that stops short of a bucket's earliest event */
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 70000, on_record, &r, 0, 7, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, 69999));
    NSIM_ASSERT_OK(nsim_sim_schedule_at(sim, 69999, on_record, &r, 0, 8, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    const uint64_t want[] = {1, 4, 3, 6, 8, 7};
    CU_ASSERT_EQUAL(r.n, 6);
    for (size_t i = 0; i < 6 && i < r.n; i++)
        CU_ASSERT_EQUAL(r.id[i], want[i]);
    CU_ASSERT_EQUAL(nsim_sim_pending(sim), 0);
    nsim_sim_destroy(sim);
}

/* A zero-delay event scheduled at now fires after the events already due at
 * now, and in schedule order among zero-delay events. */
static void on_zero_spawn(nsim_sim *sim, nsim_event *ev)
{
    rec *r = ev->target;
    on_record(sim, ev);
    if (ev->arg.u64 < 3) /* each of 0,1,2 spawns one zero-delay child */
        if (nsim_sim_schedule(sim, 0, on_zero_spawn, r, 0, ev->arg.u64 + 10,
                              NULL) != NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "schedule");
}

static void test_zero_delay_after_due_events(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    for (uint64_t i = 0; i < 5; i++)
        NSIM_ASSERT_OK(nsim_sim_schedule(sim, 7777, on_zero_spawn, &r, 0, i,
                                         NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    const uint64_t want[] = {0, 1, 2, 3, 4, 10, 11, 12};
    CU_ASSERT_EQUAL(r.n, 8);
    for (size_t i = 0; i < 8 && i < r.n; i++) {
        CU_ASSERT_EQUAL(r.id[i], want[i]);
        CU_ASSERT_EQUAL(r.at[i], 7777);
    }
    nsim_sim_destroy(sim);
}

/* A lone event (its bucket of one entry becomes the front as it is)
 * whose handler schedules at now, cancels one of those, and schedules
 * later: the zero-delay ones fire in order after it, the cancelled one
 * not, then the later ones by time. Covers the bucket's single entry
 * being taken, replaced, and moved into a chunk when a second comes. */
static nsim_event_handle lone_cancel;

static void on_lone(nsim_sim *sim, nsim_event *ev)
{
    rec *r = ev->target;
    on_record(sim, ev);
    if (ev->arg.u64 != 1)
        return;
    nsim_event_handle h[4];
    for (uint64_t k = 0; k < 4; k++)
        if (nsim_sim_schedule(sim, 0, on_lone, r, 0, 20 + k, &h[k]) !=
            NSIM_OK)
            nsim_sim_fail(sim, NSIM_ENOMEM, "schedule");
    lone_cancel = h[1];
    if (nsim_sim_cancel(sim, h[1]) != NSIM_OK ||
        nsim_sim_schedule(sim, 300, on_lone, r, 0, 31, NULL) != NSIM_OK ||
        nsim_sim_schedule(sim, 1, on_lone, r, 0, 30, NULL) != NSIM_OK)
        nsim_sim_fail(sim, NSIM_ENOMEM, "schedule");
}

static void test_lone_events(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    /* one event per bucket at every level, and one alone at 5 us */
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 5000000, on_lone, &r, 0, 1, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 70000, on_lone, &r, 0, 0, NULL));
    NSIM_ASSERT_OK(nsim_sim_schedule(sim, 9000000, on_lone, &r, 0, 2, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    const uint64_t want[] = {0, 1, 20, 22, 23, 30, 31, 2};
    const nsim_time at[] = {70000,   5000000, 5000000, 5000000,
                            5000000, 5000001, 5000300, 9000000};
    CU_ASSERT_EQUAL(r.n, 8);
    for (size_t i = 0; i < 8 && i < r.n; i++) {
        CU_ASSERT_EQUAL(r.id[i], want[i]);
        CU_ASSERT_EQUAL(r.at[i], at[i]);
    }
    CU_ASSERT_EQUAL(nsim_sim_cancel(sim, lone_cancel), NSIM_ENOENT);
    CU_ASSERT_EQUAL(nsim_sim_pending(sim), 0);
    nsim_sim_destroy(sim);
}

/* A timeout set and cancelled for every message holds no memory: the pool
 * stays at one block however many are cancelled. */
static void test_cancelled_timeouts_hold_no_memory(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    int ok = 1;
    for (uint64_t i = 0; i < 100000; i++) {
        nsim_event_handle to;
        ok &= nsim_sim_schedule(sim, NSIM_PS_PER_S, on_record, &r, 0, 1u << 30,
                                &to) == NSIM_OK;
        ok &= nsim_sim_schedule(sim, 1000, on_record, &r, 0, i, NULL) ==
              NSIM_OK;
        ok &= nsim_sim_run(sim, nsim_sim_now(sim) + 1000) == NSIM_OK;
        ok &= nsim_sim_cancel(sim, to) == NSIM_OK;
        ok &= nsim_sim_cancel(sim, to) == NSIM_ENOENT;
        ok &= nsim_sim_pending(sim) == 0;
    }
    CU_ASSERT(ok);
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    nsim_sim_counters c = nsim_sim_get_counters(sim);
    CU_ASSERT_EQUAL(r.n, 100000);
    CU_ASSERT_EQUAL(c.events_run, 100000);
    CU_ASSERT_EQUAL(c.events_cancelled, 100000);
    CU_ASSERT_EQUAL(c.peak_pending, 2);
    CU_ASSERT_EQUAL(c.pool_events, 1024);
    nsim_sim_destroy(sim);
}

static void test_no_allocation_in_steady_state(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    rnd_model m = {0};
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    NSIM_ASSERT_OK(nsim_sim_stream(sim, 1, &m.rng));
    m.left = 100000;
    for (int i = 0; i < 100; i++)
        NSIM_ASSERT_OK(nsim_sim_schedule(sim, 0, on_random, &m, 0, 0, NULL));
    NSIM_ASSERT_OK(nsim_sim_run(sim, NSIM_TIME_MAX));
    nsim_sim_counters c = nsim_sim_get_counters(sim);
    /* 100 pending at most: one pool block served 100,100 events */
    CU_ASSERT_EQUAL(c.pool_events, 1024);
    CU_ASSERT_EQUAL(c.events_run, 100100);
    nsim_sim_destroy(sim);
}

/* Budgets: the run stops before the event past max_events, with
 * NSIM_EBUDGET and a message; memory charged past max_bytes fails too. */
static void test_budgets(void)
{
    nsim_err err = {0};
    nsim_sim *sim;
    static rec r;
    r.n = 0;
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    nsim_sim_set_budget(sim, 10, 1u << 20);
    for (uint64_t i = 0; i < 20; i++)
        NSIM_ASSERT_OK(nsim_sim_schedule(sim, i, on_record, &r, 0, i, NULL));
    CU_ASSERT_EQUAL(nsim_sim_run(sim, NSIM_TIME_MAX), NSIM_EBUDGET);
    CU_ASSERT_EQUAL(r.n, 10);
    CU_ASSERT_EQUAL(nsim_sim_pending(sim), 10);
    CU_ASSERT(strstr(nsim_sim_error(sim)->msg, "event budget") != NULL);
    nsim_sim_destroy(sim);
    NSIM_ASSERT_OK(nsim_sim_create(1, &sim, &err));
    nsim_sim_set_budget(sim, 0, 1u << 20);
    uint64_t base = nsim_sim_charged(sim);
    NSIM_ASSERT_OK(nsim_sim_charge(sim, 1000));
    CU_ASSERT_EQUAL(nsim_sim_charged(sim), base + 1000);
    CU_ASSERT_EQUAL(nsim_sim_charge(sim, 2u << 20), NSIM_EBUDGET);
    CU_ASSERT(strstr(nsim_sim_error(sim)->msg, "memory budget") != NULL);
    nsim_sim_destroy(sim);
}

CU_TestInfo nsim_test_sim[] = {
    {"differential vs sorted reference", test_differential},
    {"chained schedules keep time order", test_chained_order_is_time_then_fifo},
    {"FIFO among equal times", test_fifo_ties},
    {"same seed, same event sequence", test_same_seed_same_sequence},
    {"substreams independent of creation order", test_substreams_independent},
    {"cancel before and after firing", test_cancel_before_and_after_firing},
    {"handler error reaches the caller", test_handler_error_reaches_caller},
    {"stop and failure end the run", test_stop_and_failure_end_the_run},
    {"single step and run until", test_step_and_run_until},
    {"pool does not grow in steady state", test_no_allocation_in_steady_state},
    {"dynamic differential: ties, zero delays, timeouts, cancels",
     test_differential_dynamic},
    {"times across the 64-bit range", test_extreme_times},
    {"schedule below dropped cancelled events", test_schedule_after_cancelled_tail},
    {"zero delay fires after events due now", test_zero_delay_after_due_events},
    {"lone events, taken, replaced and joined at the front", test_lone_events},
    {"cancelled timeouts hold no memory", test_cancelled_timeouts_hold_no_memory},
    {"event and memory budgets", test_budgets},
    CU_TEST_INFO_NULL,
};
