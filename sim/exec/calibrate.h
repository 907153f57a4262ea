/* SPDX-License-Identifier: MIT
 *
 * calibrate.h - fitting model constants (models/params.c) to hardware
 * measurements, over the simulator itself.
 *
 * Owns: the candidate constants with their physical bounds and the kind
 * of measurement that pins each; the choice of sizes (a few per
 * measurement, log-spread); the residuals log(simulated / measured time);
 * a finite-difference Jacobian from re-running nsim_run_size with each
 * constant perturbed (runs cached by the exact constant values, series and
 * size); the identifiability checks (a column ~0: the data do not move
 * with the constant; collinear columns: the data cannot tell two apart;
 * a 95 % interval covering most of the bounds); GSL's trust-region
 * nonlinear least squares (gsl_multifit_nlinear) in a bounded transform
 * (v = lo + (hi - lo) / (1 + e^-x)); the 95 % intervals from the
 * covariance scaled by the residual variance; and the params file
 * (nsim_params_load reads it; each value's source names the calibration).
 */
#ifndef NSIM_EXEC_CALIBRATE_H
#define NSIM_EXEC_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"
#include "sim/exec/measure.h"
#include "sim/exec/scenario.h"

#define NSIM_CALIB_MAX_PARAMS 16

typedef struct nsim_calib_opts {
    const char *const *fit; /* names; NULL: every candidate the data pin */
    size_t nfit;
    int try_only; /* fit: candidates to try (those the data leave
                   * unidentified are noted, not refused) */
    size_t sizes_per_series; /* 0: 6 */
    uint64_t max_size;       /* 0: 1 GiB */
    int max_iter;            /* 0: 40 */
    int column;              /* -1: out-of-place where measured */
    uint64_t min_size;       /* 0: no floor */
} nsim_calib_opts;

typedef struct nsim_calib_fit {
    char name[48];
    double before, value, lo95, hi95; /* in the table's base unit */
    double lo, hi;                    /* bounds */
    int kind;                         /* nsim_param_kind */
} nsim_calib_fit;

typedef struct nsim_calib_result {
    size_t nfit;
    nsim_calib_fit fit[NSIM_CALIB_MAX_PARAMS];
    size_t npoints;              /* residuals (series x sizes) */
    double rms_before, rms_after; /* of log(sim / measured) */
    double med_before, med_after; /* median |sim busbw / measured - 1| */
    int iterations;
    size_t runs, cached;          /* simulator runs, cache hits */
    char notes[4096];             /* what was not fitted and why */
} nsim_calib_result;

/* Fits over n (scenario, series) pairs; each scenario already carries its
 * series' knobs (nsim_compare_apply_knobs). The fitted values are left in
 * every scenario's params. Errors: a named constant the data leave
 * unidentified (naming the measurement that would pin it), too few
 * points, no convergence. */
NSIM_NODISCARD int nsim_calibrate(nsim_scenario **scen,
                                  const nsim_measure_series *const *series,
                                  size_t n, const nsim_calib_opts *o,
                                  nsim_calib_result *res, nsim_err *err);

/* The params file of r: {"calibration": {...}, "params": {NAME: {"value",
 * "source"}}}, sources naming files (date-free, deterministic). */
NSIM_NODISCARD int nsim_calibrate_write(const nsim_calib_result *r,
                                        char *const *files, size_t nfiles,
                                        const char *path, nsim_err *err);

/* "6.1 us", "2500 GB/s", "85": a value of a kind in its unit. */
void nsim_calib_format(int kind, double v, char *buf, size_t len);

#endif
