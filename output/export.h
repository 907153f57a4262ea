/* SPDX-License-Identifier: MIT
 *
 * export.h - results in other forms: CSV rows, a gnuplot data file and
 * script (rendered to PNG when gnuplot is installed, which is optional).
 * The Chrome trace of a run is output/trace.h. Files are written
 * atomically. Reads results only.
 */
#ifndef NSIM_OUTPUT_EXPORT_H
#define NSIM_OUTPUT_EXPORT_H

#include <stddef.h>

#include "output/report.h"
#include "sim/exec/exec.h"
#include "sim/plan/plan.h"

NSIM_NODISCARD int nsim_export_csv(const char *path,
                                   const nsim_report_meta *m,
                                   const nsim_run_row *rows, size_t n,
                                   nsim_err *err);
/* Writes PATH.dat and PATH.gp, then runs gnuplot to make PATH (PNG) if it
 * is installed; *rendered says whether it did. */
NSIM_NODISCARD int nsim_export_plot(const char *path,
                                    const nsim_report_meta *m,
                                    const nsim_run_row *rows, size_t n,
                                    int *rendered, nsim_err *err);

/* Runs gnuplot on a script file; its exit status (127: no gnuplot, -1:
 * could not run it). */
int nsim_export_run_gnuplot(const char *script);

#endif
