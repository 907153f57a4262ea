/* SPDX-License-Identifier: MIT
 *
 * sweep.h - a parameter sweep: axes of knob values ("--set NAME=VALUES"),
 * the cartesian product of them as numbered points, a point applied to a
 * loaded scenario (nsim_scenario_set_knob, the loader's own readers), one
 * point run over the scenario's sizes (the run API), and the results as
 * CSV or JSON (written and read back, for --resume).
 *
 * Values: a list "1,2,4,8", a multiplying range "2:32:x2" (2 4 8 16 32)
 * or an adding range "1:8:+1"; range ends may carry size units ("1M").
 * Points are numbered with the first axis varying slowest; point i is the
 * same configuration whoever runs it, so results sorted by point are the
 * same whatever the number of workers.
 *
 * Owns: the axes (names and value strings) and the result rows.
 */
#ifndef NSIM_EXEC_SWEEP_H
#define NSIM_EXEC_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

#define NSIM_SWEEP_FORMAT "ncclsim-sweep"
#define NSIM_SWEEP_VERSION 1
#define NSIM_SWEEP_MAX_AXES 16
#define NSIM_SWEEP_MAX_VALUES 4096
#define NSIM_SWEEP_MAX_POINTS 1000000

typedef struct nsim_sweep nsim_sweep;

/* One result row: a point at one size. Plain data (no pointers) so that
 * workers can send it through a pipe or MPI as bytes. */
typedef struct nsim_sweep_row {
    uint32_t point;
    uint32_t nchannels;
    uint64_t size, count, events;
    double time_us, algbw, busbw;
    char algo[16], proto[16];
    char dtype[16], redop[8];
    char fidelity[8]; /* what ran: packet or flow (auto, the default,
                       * picks per size: README "Fidelity"); tuner for
                       * --mode analytic */
} nsim_sweep_row;

NSIM_NODISCARD int nsim_sweep_create(nsim_sweep **out, nsim_err *err);
void nsim_sweep_destroy(nsim_sweep *sw);

/* Adds an axis from "NAME=VALUES" (see above). Errors name the knob. */
NSIM_NODISCARD int nsim_sweep_add_axis(nsim_sweep *sw, const char *spec,
                                       nsim_err *err);
/* Sets every value of every axis, one after another, on scratch (a
 * scenario loaded for the purpose and thrown away after): errors name the
 * knob and the value before anything runs. */
NSIM_NODISCARD int nsim_sweep_check(const nsim_sweep *sw,
                                    nsim_scenario *scratch, nsim_err *err);

size_t nsim_sweep_naxes(const nsim_sweep *sw);
const char *nsim_sweep_axis_name(const nsim_sweep *sw, size_t axis);
size_t nsim_sweep_axis_nvalues(const nsim_sweep *sw, size_t axis);
size_t nsim_sweep_npoints(const nsim_sweep *sw);
/* The value axis takes at point. */
const char *nsim_sweep_value(const nsim_sweep *sw, size_t point, size_t axis);

/* Sets point's knobs on s (in axis order). */
NSIM_NODISCARD int nsim_sweep_apply(const nsim_sweep *sw, size_t point,
                                    nsim_scenario *s, nsim_err *err);

/* Runs one point on s (already applied) over the scenario's sizes:
 * *rows malloc'd, one per size. On an error *rows and *n hold the sizes
 * that ran before it (the caller frees *rows either way). */
NSIM_NODISCARD int nsim_sweep_run_point(nsim_scenario *s, int analytic,
                                        uint32_t point, nsim_sweep_row **rows,
                                        size_t *n, nsim_err *err);

/* The results as text, rows sorted by point then size (the caller sorts
 * with nsim_sweep_sort_rows): CSV or, with json, an "ncclsim-sweep"
 * document. *out malloc'd. */
void nsim_sweep_sort_rows(nsim_sweep_row *rows, size_t n);
NSIM_NODISCARD int nsim_sweep_format(const nsim_sweep *sw,
                                     const char *scenario_name, int json,
                                     const nsim_sweep_row *rows, size_t n,
                                     char **out, nsim_err *err);
/* Reads results written by nsim_sweep_format (CSV or JSON, by content)
 * for --resume: the file's knobs must be the sweep's, and each row's
 * values must be those of its point. *rows malloc'd. */
NSIM_NODISCARD int nsim_sweep_read(const nsim_sweep *sw, const char *path,
                                   nsim_sweep_row **rows, size_t *n,
                                   nsim_err *err);

#endif
