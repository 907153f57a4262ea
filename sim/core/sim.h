/* SPDX-License-Identifier: MIT
 *
 * sim.h - the discrete-event engine: simulated time, the event queue, the
 * run loop, the seeded random streams and the engine counters.
 *
 * Time is an integer count of picoseconds (nsim_time); 2^64 ps is about
 * 213 days. Events come from a pool owned by the engine and are recycled,
 * so a run allocates nothing per event once the pool has grown to the peak
 * number of pending events. The queue (a radix queue, see sim.c) orders
 * events by (time, sequence): events at the same time fire in the order
 * they were scheduled, so every run of the same inputs is identical.
 *
 * Cancel is O(1): an event more than ~16 us ahead leaves the queue at
 * once, so cancelled timeouts hold no memory; a nearer one is dropped
 * when its time comes (its memory held until then). A handle (event
 * pointer + sequence) tells a cancel before firing from a cancel after
 * it.
 *
 * Workload: tens of millions of schedule/fire pairs per run, a few thousand
 * pending at a time; cancel is rare (timeouts, faults).
 */
#ifndef NSIM_CORE_SIM_H
#define NSIM_CORE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "err.h"

typedef uint64_t nsim_time; /* picoseconds */
#define NSIM_TIME_MAX UINT64_MAX
#define NSIM_PS_PER_NS 1000ull
#define NSIM_PS_PER_US 1000000ull
#define NSIM_PS_PER_S 1000000000000ull

typedef struct nsim_sim nsim_sim;
typedef struct nsim_event nsim_event;
typedef void nsim_event_fn(nsim_sim *sim, nsim_event *ev);

/* The event a handler receives; valid only during the handler call. */
struct nsim_event {
    nsim_time when;     /* absolute fire time */
    uint64_t seq;       /* schedule order: FIFO tie-break, handle check */
    nsim_event_fn *fn;  /* called exactly once unless cancelled */
    void *target;       /* the component the event is for */
    union {
        uint64_t u64;
        void *ptr;
        struct {
            uint32_t a, b;
        } u32;
    } arg;
    uint32_t kind;      /* handler opcode, for traces */
    uint32_t cancelled; /* engine-private: 1 cancelled but still queued,
                         * 2 while the handler runs */
    nsim_event *next_free;  /* engine-private: pool and queue link */
    nsim_event **pprev;     /* engine-private: the link that points here */
};

/* Names a scheduled event for a later cancel. */
typedef struct nsim_event_handle {
    nsim_event *ev;
    uint64_t seq;
} nsim_event_handle;

typedef struct nsim_sim_counters {
    uint64_t events_run;
    uint64_t events_scheduled;
    uint64_t events_cancelled;
    uint64_t peak_pending;
    uint64_t pool_events; /* events ever allocated into the pool */
} nsim_sim_counters;

typedef void nsim_trace_fn(void *ud, const nsim_event *ev);

NSIM_NODISCARD int nsim_sim_create(uint64_t seed, nsim_sim **out,
                                   nsim_err *err);
void nsim_sim_destroy(nsim_sim *sim); /* NULL-safe */

nsim_time nsim_sim_now(const nsim_sim *sim);

/* Schedules fn(target) at now + delay. out may be NULL. */
NSIM_NODISCARD int nsim_sim_schedule(nsim_sim *sim, nsim_time delay,
                                     nsim_event_fn *fn, void *target,
                                     uint32_t kind, uint64_t arg,
                                     nsim_event_handle *out);
/* As above, at an absolute time that must not lie in the past. */
NSIM_NODISCARD int nsim_sim_schedule_at(nsim_sim *sim, nsim_time when,
                                        nsim_event_fn *fn, void *target,
                                        uint32_t kind, uint64_t arg,
                                        nsim_event_handle *out);
/* NSIM_OK if the event was pending and is now cancelled; NSIM_ENOENT if it
 * has already fired or was already cancelled. */
int nsim_sim_cancel(nsim_sim *sim, nsim_event_handle h);

/* Runs events whose time is <= until. Returns NSIM_OK when the queue is
 * empty or the next event lies past until (now is then set to until, or
 * left at the last event when until is NSIM_TIME_MAX), or the code a
 * handler passed to nsim_sim_fail. */
NSIM_NODISCARD int nsim_sim_run(nsim_sim *sim, nsim_time until);
/* Runs exactly one event. NSIM_OK, NSIM_ENOENT when nothing is pending, or
 * a handler's failure code. */
NSIM_NODISCARD int nsim_sim_step(nsim_sim *sim);
/* Asks the engine to stop after the current event. */
void nsim_sim_stop(nsim_sim *sim);

/* From a handler: records the error on the engine and stops the run; the
 * run then returns code. Returns code. */
int nsim_sim_fail(nsim_sim *sim, int code, const char *fmt, ...)
    NSIM_PRINTF(3, 4);
const nsim_err *nsim_sim_error(const nsim_sim *sim);

size_t nsim_sim_pending(const nsim_sim *sim);
nsim_sim_counters nsim_sim_get_counters(const nsim_sim *sim);
void nsim_sim_set_trace(nsim_sim *sim, nsim_trace_fn *fn, void *ud);

/* Budgets (0: none). The run stops with NSIM_EBUDGET, cleanly, before
 * the event that would pass max_events runs, or when the memory charged
 * (the engine's own pool, plus what the models charge for the state they
 * grow) would pass max_bytes; nsim_sim_error then says which. */
void nsim_sim_set_budget(nsim_sim *sim, uint64_t max_events,
                         uint64_t max_bytes);
/* Charges bytes of model state against the memory budget (a pool or ring
 * growing); NSIM_EBUDGET (and the run fails) when over it. */
NSIM_NODISCARD int nsim_sim_charge(nsim_sim *sim, uint64_t bytes);
/* Bytes charged so far (engine pool included). */
uint64_t nsim_sim_charged(const nsim_sim *sim);

/* Reserves room for n pending events so that a run allocates nothing. */
NSIM_NODISCARD int nsim_sim_reserve(nsim_sim *sim, size_t n);

/* The engine's seed and its random streams. Each component asks for its own
 * stream by a stable id: the stream is seeded from hash(seed, id), so
 * adding a component does not change the draws of the others. The stream
 * is owned by the engine. */
uint64_t nsim_sim_seed(const nsim_sim *sim);
NSIM_NODISCARD int nsim_sim_stream(nsim_sim *sim, uint64_t component_id,
                                   gsl_rng **out);
uint64_t nsim_hash64(uint64_t a, uint64_t b);

#endif
