/* SPDX-License-Identifier: MIT
 *
 * bench_engine.c - the hold model: N events pending at random future
 * times; each fired event schedules one more at now + exp(mean). Prints
 * events per second for the engine alone. Used by scripts/bench.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "sim/core/sim.h"

typedef struct hold {
    gsl_rng *rng;
    uint64_t *delays; /* pre-drawn delays so that the RNG is not timed */
    size_t ndelays, next;
    uint64_t remaining;
} hold;

static void on_hold(nsim_sim *sim, nsim_event *ev)
{
    hold *h = ev->target;
    if (h->remaining == 0)
        return;
    h->remaining--;
    uint64_t d = h->delays[h->next++];
    if (h->next == h->ndelays)
        h->next = 0;
    if (nsim_sim_schedule(sim, d, on_hold, h, 0, 0, NULL) != NSIM_OK)
        nsim_sim_fail(sim, NSIM_ENOMEM, "schedule failed");
}

int main(int argc, char **argv)
{
    size_t pending = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
    nsim_err err = {0};
    nsim_sim *sim = NULL;
    hold h = {0};
    if (nsim_sim_create(1, &sim, &err) != NSIM_OK ||
        nsim_sim_stream(sim, 1, &h.rng) != NSIM_OK)
        return 1;
    h.ndelays = 1 << 20;
    h.delays = malloc(h.ndelays * sizeof *h.delays);
    for (size_t i = 0; i < h.ndelays; i++)
        h.delays[i] = 1 + (uint64_t)gsl_ran_exponential(h.rng, 1e6);
    h.remaining = total - pending;
    for (size_t i = 0; i < pending; i++)
        if (nsim_sim_schedule(sim, h.delays[i], on_hold, &h, 0, 0, NULL))
            return 1;
    /* wall time, and the process's CPU time: on a shared machine the CPU
     * figure is the engine's, the wall figure includes the others' load */
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (nsim_sim_run(sim, NSIM_TIME_MAX) != NSIM_OK)
        return 1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    double cs = (double)(c1.tv_sec - c0.tv_sec) +
                (c1.tv_nsec - c0.tv_nsec) / 1e9;
    nsim_sim_counters c = nsim_sim_get_counters(sim);
    printf("engine hold model: %zu pending, %llu events in %.3f s: "
           "%.1f M events/s wall, %.1f M events/cpu-s (peak pending %llu, "
           "pool %llu)\n",
           pending, (unsigned long long)c.events_run, s,
           (double)c.events_run / s / 1e6,
           (double)c.events_run / (cs > 0 ? cs : 1e-9) / 1e6,
           (unsigned long long)c.peak_pending,
           (unsigned long long)c.pool_events);
    free(h.delays);
    nsim_sim_destroy(sim);
    return 0;
}
