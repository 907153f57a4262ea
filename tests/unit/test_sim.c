/* SPDX-License-Identifier: MIT
 *
 * test_sim.c - the event engine: differential test of the queue against a
 * sorted reference, FIFO ties, determinism, cancel, errors from handlers,
 * single step, run-until, counters and random substreams.
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

CU_TestInfo nsim_test_sim[] = {
    {"differential vs sorted reference", test_differential},
    {"chained schedules keep time order", test_chained_order_is_time_then_fifo},
    {"FIFO among equal times", test_fifo_ties},
    {"same seed, same event sequence", test_same_seed_same_sequence},
    {"substreams independent of creation order", test_substreams_independent},
    {"cancel before and after firing", test_cancel_before_and_after_firing},
    {"handler error reaches the caller", test_handler_error_reaches_caller},
    {"single step and run until", test_step_and_run_until},
    {"pool does not grow in steady state", test_no_allocation_in_steady_state},
    CU_TEST_INFO_NULL,
};
