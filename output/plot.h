/* SPDX-License-Identifier: MIT
 *
 * plot.h - pictures of results with gnuplot (PNG or SVG by the output's
 * extension): busbw against size for several configurations of a sweep
 * (log x, sizes with units), a heatmap of two knobs at one size, and
 * simulated against measured curves with their error (the JSON `ncclsim
 * compare --json` writes). The picture is rendered to a temporary file
 * and renamed (atomic); the gnuplot script can be kept instead.
 *
 * Owns: the table read from a sweep's CSV or JSON, and the scripts.
 */
#ifndef NSIM_OUTPUT_PLOT_H
#define NSIM_OUTPUT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"

typedef enum nsim_plot_kind {
    NSIM_PLOT_CURVES,
    NSIM_PLOT_HEATMAP,
    NSIM_PLOT_COMPARE,
} nsim_plot_kind;

typedef enum nsim_plot_metric {
    NSIM_METRIC_BUSBW,
    NSIM_METRIC_ALGBW,
    NSIM_METRIC_TIME,
} nsim_plot_metric;

#define NSIM_PLOT_MAX_WHERE 8

typedef struct nsim_plot_opts {
    nsim_plot_kind kind;
    nsim_plot_metric metric;
    const char *out;    /* .png or .svg */
    const char *script; /* write the gnuplot script here (no rendering) */
    const char *title;  /* NULL: from the data */
    const char *x, *y;  /* heatmap knobs (columns, rows) */
    uint64_t size;      /* heatmap: the size (bytes); 0: the largest */
    const char *where[NSIM_PLOT_MAX_WHERE]; /* "KNOB=VALUE" filters */
    size_t nwhere;
    unsigned width, height; /* pixels; 0: defaults */
} nsim_plot_opts;

/* Makes the picture (or the script) from the input files (sweep results
 * for curves and heatmap, compare JSON for compare; several files are
 * overlaid). Errors name the file and the field. */
NSIM_NODISCARD int nsim_plot(const char *const *inputs, size_t ninputs,
                             const nsim_plot_opts *o, nsim_err *err);

/* The gnuplot script alone, as text (malloc'd): for tests and --script. */
NSIM_NODISCARD int nsim_plot_script(const char *const *inputs, size_t ninputs,
                                    const nsim_plot_opts *o,
                                    const char *render_to, char **out,
                                    nsim_err *err);

#endif
