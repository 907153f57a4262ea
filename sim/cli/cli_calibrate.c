/* SPDX-License-Identifier: MIT
 *
 * cli_calibrate.c - "ncclsim calibrate SCENARIO MEASURED... -o PARAMS.json
 * [--fit p1,p2,...] [--sizes N] [--min-size S] [--max-size S]
 * [--max-iter N] [run's
 * options]": fits the model constants the measurements pin (see
 * sim/exec/calibrate.h), prints each with its 95 % interval, the value it
 * replaces and the error before and after, and writes a params file that
 * `run --params` and a scenario's "params" use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "models/params.h"
#include "sim/exec/calibrate.h"
#include "sim/exec/compare.h"
#include "sim/exec/measure.h"
#include "sim/exec/scenario.h"

static int own_opt(const char *a)
{
    static const char *const one[] = {"-o", "--output", "--fit", "--try",
                                      "--sizes",
                                      "--max-iter", "--max-size",
                                      "--min-size", NULL};
    for (int i = 0; one[i]; i++)
        if (strcmp(a, one[i]) == 0)
            return 1;
    if (strcmp(a, "--in-place") == 0 || strcmp(a, "--out-of-place") == 0)
        return 0;
    return -1;
}

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "ncclsim calibrate: warning: %s\n", msg);
}

static const char *default_source(const char *name)
{
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++)
        if (strcmp(pi->name, name) == 0)
            return pi->source;
    return "?";
}

static void print_result(const nsim_calib_result *r, double wall, int timing)
{
    printf("fitted on %zu measured sizes (log time), %d iterations, %zu "
           "simulator runs (%zu from the cache)\n", r->npoints,
           r->iterations, r->runs, r->cached);
    printf("%-28s %14s %32s  %s\n", "constant", "value", "95% interval",
           "replaces");
    for (size_t j = 0; j < r->nfit; j++) {
        const nsim_calib_fit *f = &r->fit[j];
        char v[48], lo[48], hi[48], b[48], iv[100];
        nsim_calib_format(f->kind, f->value, v, sizeof v);
        nsim_calib_format(f->kind, f->lo95, lo, sizeof lo);
        nsim_calib_format(f->kind, f->hi95, hi, sizeof hi);
        nsim_calib_format(f->kind, f->before, b, sizeof b);
        snprintf(iv, sizeof iv, "[%s, %s]", lo, hi);
        printf("%-28s %14s %32s  %s (%.60s...)\n", f->name, v, iv, b,
               default_source(f->name));
    }
    printf("error on the fitted sizes: median |busbw error| %.1f%% -> "
           "%.1f%%, rms log error %.3f -> %.3f\n", r->med_before * 100,
           r->med_after * 100, r->rms_before, r->rms_after);
    for (const char *p = r->notes; *p;) {
        size_t l = strcspn(p, "\n");
        printf("%.*s\n", (int)l, p);
        p += l + (p[l] == '\n');
    }
    if (timing)
        fprintf(stderr, "calibrate: wall time %.1f s\n", wall);
}

int nsim_cmd_calibrate(int argc, char **argv)
{
    nsim_cli_measured a = {0};
    a.column = -1;
    nsim_err err = {0};
    int rc = nsim_cli_split_measured("calibrate", argc, argv, &a, own_opt);
    if (rc == 0 && a.out == NULL)
        rc = nsim_cli_usage("calibrate", "needs -o PARAMS.json");
    nsim_measure *m = NULL;
    nsim_measure_import_opts io = {0};
    io.warn = on_warn;
    if (rc == 0 && (nsim_measure_create(&m, &err) != NSIM_OK ||
                    nsim_measure_import(m, a.files, a.nfiles, &io, &err) !=
                        NSIM_OK))
        rc = -1;
    size_t n = m ? nsim_measure_nseries(m) : 0;
    nsim_scenario **scen = calloc(n + 1, sizeof *scen);
    const nsim_measure_series **ser = calloc(n + 1, sizeof *ser);
    char *fitbuf = a.fit ? strdup(a.fit) : NULL;
    const char *names[NSIM_CALIB_MAX_PARAMS + 1];
    size_t nnames = 0;
    if (rc == 0 && (scen == NULL || ser == NULL || (a.fit && !fitbuf))) {
        snprintf(err.msg, sizeof err.msg, "calibrate: out of memory");
        rc = -1;
    }
    char *save = NULL;
    for (char *t = fitbuf ? strtok_r(fitbuf, ",", &save) : NULL;
         rc == 0 && t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (nnames == NSIM_CALIB_MAX_PARAMS) {
            rc = nsim_cli_usage("calibrate", "--fit: at most %d constants",
                                NSIM_CALIB_MAX_PARAMS);
            break;
        }
        names[nnames++] = t;
    }
    int timing = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        nsim_cli_run_opts ro = {0};
        ser[k] = nsim_measure_series_at(m, k);
        int r = nsim_cli_load_run("calibrate", a.run_argc, a.run_argv,
                                  &scen[k], &ro, &err);
        char notes[4096];
        /* the scenario describes the machine: each measurement brings
         * its own collective (fit on AllReduce, predict AllGather) */
        if (r == 0 && ser[k]->collective[0] &&
            nsim_scenario_set_knob(scen[k], "collective",
                                   ser[k]->collective, ser[k]->source,
                                   &err) != NSIM_OK)
            r = -1;
        if (r == 0 &&
            (nsim_compare_check_fit(scen[k], ser[k], &err) != NSIM_OK ||
             nsim_compare_apply_knobs(scen[k], ser[k], notes, sizeof notes,
                                      &err) != NSIM_OK))
            r = -1;
        timing |= ro.timing;
        rc = r;
    }
    nsim_calib_result *res = calloc(1, sizeof *res);
    if (rc == 0 && res == NULL) {
        snprintf(err.msg, sizeof err.msg, "calibrate: out of memory");
        rc = -1;
    }
    if (rc == 0) {
        nsim_calib_opts co = {nnames ? names : NULL, nnames, a.try_only,
                              (size_t)a.sizes, a.max_size, a.max_iter,
                              a.column, a.min_size};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (nsim_calibrate(scen, ser, n, &co, res, &err) != NSIM_OK ||
            nsim_calibrate_write(res, a.files, a.nfiles, a.out, &err) !=
                NSIM_OK)
            rc = -1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rc == 0)
            print_result(res, (double)(t1.tv_sec - t0.tv_sec) +
                                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                         timing);
    }
    for (size_t k = 0; scen && k < n; k++)
        nsim_scenario_destroy(scen[k]);
    free(scen);
    free(ser);
    free(res);
    free(fitbuf);
    nsim_measure_destroy(m);
    free(a.run_argv);
    free(a.files);
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}
