/* SPDX-License-Identifier: MIT
 *
 * compare.h - a scenario against a hardware measurement: the scenario run
 * through the run API at exactly the measured sizes and knobs, and the
 * error per size and in summary.
 *
 * Owns: the fit check (collective, ranks, hosts: a measurement of other
 * hardware is refused with both values named), carrying the measured
 * knobs into the scenario (data type, reduction, -g, the NCCL_* variables
 * of the measurement where the scenario and command line do not fix the
 * knob: algorithm, protocol, channels), the rows (measured and simulated
 * time and busbw, error = simulated busbw / measured - 1, what ncclsim ran,
 * what the log says NCCL ran) and the summary (median |error| >= 1 MiB
 * and < 1 MiB, bias = median signed error).
 */
#ifndef NSIM_EXEC_COMPARE_H
#define NSIM_EXEC_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"
#include "sim/exec/measure.h"
#include "sim/exec/scenario.h"

#define NSIM_COMPARE_LARGE (1u << 20) /* the 1 MiB split of the summary */

typedef struct nsim_compare_row {
    uint64_t size;
    int col;           /* NSIM_MEASURE_OOP or NSIM_MEASURE_IP */
    int line;          /* in the measurement's source */
    double meas_us, meas_busbw;
    double sim_us, sim_busbw;
    double err;        /* sim busbw / measured - 1 (= measured t / sim t - 1) */
    char algo[16], proto[16];
    uint32_t nchannels;
    char fidelity[8]; /* what the size ran: packet or flow (auto, the
                       * default, picks per size) */
    char nccl_algo[16], nccl_proto[16]; /* from the log, "" */
} nsim_compare_row;

typedef struct nsim_compare_summary {
    double med_large, med_small, bias; /* fractions; < 0 (med): no sizes */
    size_t n_large, n_small;
} nsim_compare_summary;

typedef struct nsim_compare_opts {
    int column;  /* -1: out-of-place where measured, else in-place */
    uint64_t max_size; /* 0: no limit; larger sizes are left out */
} nsim_compare_opts;

/* 0 if m can describe s, else NSIM_ECONFIG naming both values. */
NSIM_NODISCARD int nsim_compare_check_fit(const nsim_scenario *s,
                                          const nsim_measure_series *m,
                                          nsim_err *err);

/* Carries m's knobs into s; each knob applied or left is described in
 * notes (one line each, at most len bytes in all). */
NSIM_NODISCARD int nsim_compare_apply_knobs(nsim_scenario *s,
                                            const nsim_measure_series *m,
                                            char *notes, size_t len,
                                            nsim_err *err);

/* Runs s at m's sizes: *rows (malloc'd, *nrows). */
NSIM_NODISCARD int nsim_compare_run(nsim_scenario *s,
                                    const nsim_measure_series *m,
                                    const nsim_compare_opts *o,
                                    nsim_compare_row **rows, size_t *nrows,
                                    nsim_err *err);

void nsim_compare_summarize(const nsim_compare_row *rows, size_t n,
                            nsim_compare_summary *out);

/* The median of v[0..n) (v is sorted in place); 0 for n == 0. */
double nsim_compare_median(double *v, size_t n);

#endif
