/* SPDX-License-Identifier: MIT
 *
 * cli_compare.c - "ncclsim compare SCENARIO MEASURED... [run options]
 * [--plot FILE.png] [--json FILE] [--in-place|--out-of-place]
 * [--max-size SIZE]": the scenario at each measurement's sizes and knobs,
 * per size measured and simulated time and busbw, the error, what ncclsim
 * ran and what NCCL ran; a summary; JSON ("ncclsim-compare") and a
 * gnuplot plot of both curves and the error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "output/export.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"
#include "sim/exec/compare.h"
#include "sim/exec/measure.h"
#include "sim/exec/scenario.h"

/* run's options that take no value (every other option takes one). */
static int is_flag(const char *a)
{
    static const char *const flags[] = {"--quiet", "--timing", "--tuning",
                                        "--analytic", "--stats", "--debug",
                                        "--graph-dump", NULL};
    for (int i = 0; flags[i]; i++)
        if (strcmp(a, flags[i]) == 0)
            return 1;
    return strchr(a, '=') != NULL;
}

/* Splits argv: the first positional is the scenario, later positionals
 * are measurements; own options are taken out, run's passed on. own(a)
 * says how many values an own option takes (-1: not ours). */
int nsim_cli_split_measured(const char *cmd, int argc, char **argv,
                            nsim_cli_measured *a, int (*own)(const char *))
{
    a->run_argv = calloc((size_t)argc + 1, sizeof *a->run_argv);
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (a->run_argv == NULL || a->files == NULL)
        return nsim_cli_usage(cmd, "out of memory");
    a->run_argv[a->run_argc++] = argv[0];
    int have_scen = 0;
    for (int i = 1; i < argc; i++) {
        const char *x = argv[i];
        int k = own(x);
        if (k >= 0) {
            if (i + k >= argc)
                return nsim_cli_usage(cmd, "%s needs a value", x);
            if (strcmp(x, "--plot") == 0)
                a->plot = argv[i + 1];
            else if (strcmp(x, "--json") == 0)
                a->json = argv[i + 1];
            else if (strcmp(x, "-o") == 0 || strcmp(x, "--output") == 0)
                a->out = argv[i + 1];
            else if (strcmp(x, "--sizes") == 0 || strcmp(x, "--max-iter") == 0) {
                char *end;
                long v = strtol(argv[i + 1], &end, 10);
                if (*end != '\0' || v < 1 || v > 100000)
                    return nsim_cli_usage(cmd, "%s %s: expected a whole "
                                          "number >= 1", x, argv[i + 1]);
                if (x[2] == 's')
                    a->sizes = (int)v;
                else
                    a->max_iter = (int)v;
            }
            else if (strcmp(x, "--fit") == 0)
                a->fit = argv[i + 1];
            else if (strcmp(x, "--try") == 0) {
                a->fit = argv[i + 1];
                a->try_only = 1;
            }
            else if (strcmp(x, "--in-place") == 0)
                a->column = 1;
            else if (strcmp(x, "--out-of-place") == 0)
                a->column = 0;
            else if (strcmp(x, "--max-size") == 0 ||
                     strcmp(x, "--min-size") == 0) {
                const char *why = NULL;
                uint64_t *to = strcmp(x, "--max-size") == 0 ? &a->max_size
                                                       : &a->min_size;
                if (nsim_units_parse_size(argv[i + 1], to, &why))
                    return nsim_cli_usage(cmd, "%s %s: %s", x, argv[i + 1],
                                          why ? why : "bad size");
            }
            i += k;
            continue;
        }
        if (x[0] == '-' && x[1] != '\0') {
            a->run_argv[a->run_argc++] = argv[i];
            if (!is_flag(x) && i + 1 < argc)
                a->run_argv[a->run_argc++] = argv[++i];
            continue;
        }
        if (!have_scen) {
            a->run_argv[a->run_argc++] = argv[i];
            have_scen = 1;
        } else {
            a->files[a->nfiles++] = argv[i];
        }
    }
    if (!have_scen)
        return nsim_cli_usage(cmd, "expected a scenario file");
    if (a->nfiles == 0)
        return nsim_cli_usage(cmd, "expected one or more measurements "
                              "after the scenario");
    return 0;
}

static int own_opt(const char *a)
{
    if (strcmp(a, "--plot") == 0 || strcmp(a, "--json") == 0 ||
        strcmp(a, "--max-size") == 0)
        return 1;
    if (strcmp(a, "--in-place") == 0 || strcmp(a, "--out-of-place") == 0)
        return 0;
    return -1;
}

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "ncclsim compare: warning: %s\n", msg);
}

static void pct(char *b, size_t n, double v)
{
    if (v < 0)
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.1f%%", v * 100);
}

static void print_rows(const nsim_measure_series *m, const char *notes,
                       const nsim_compare_row *r, size_t n,
                       const nsim_compare_summary *sum, const char *scen)
{
    printf("== %s:%d: %s %s%s%s on %s\n", m->source, m->line, m->tool,
           m->test[0] ? m->test : "?", m->label[0] ? " " : "", m->label,
           scen);
    if (!m->collective[0])
        printf("   (the measurement does not name its collective: the "
               "scenario's is assumed)\n");
    for (const char *p = notes; *p;) {
        size_t l = strcspn(p, "\n");
        printf("   %.*s\n", (int)l, p);
        p += l + (p[l] == '\n');
    }
    printf("%14s %4s %11s %11s %9s %9s %8s  %-22s %s\n", "size", "col",
           "meas us", "sim us", "meas bus", "sim bus", "error",
           "ncclsim ran", "NCCL ran");
    for (size_t i = 0; i < n; i++) {
        char ran[48], nccl[40] = "-";
        /* a size run in flow says so (auto, the default, picks per
         * size) */
        snprintf(ran, sizeof ran, "%s/%s/%u%s", r[i].algo, r[i].proto,
                 r[i].nchannels,
                 strcmp(r[i].fidelity, "flow") == 0 ? "/flow" : "");
        if (r[i].nccl_algo[0])
            snprintf(nccl, sizeof nccl, "%s/%s", r[i].nccl_algo,
                     r[i].nccl_proto);
        printf("%14llu %4s %11.2f %11.2f %9.2f %9.2f %+7.1f%%  %-22s %s\n",
               (unsigned long long)r[i].size, r[i].col ? "ip" : "oop",
               r[i].meas_us, r[i].sim_us, r[i].meas_busbw, r[i].sim_busbw,
               r[i].err * 100, ran, nccl);
    }
    if (m->log[0] && m->log_channels > 0)
        printf("   NCCL's log: %d channels\n", m->log_channels);
    char a[16], b[16];
    pct(a, sizeof a, sum->med_large);
    pct(b, sizeof b, sum->med_small);
    printf("summary: median |error| >= 1 MiB %s (%zu sizes), < 1 MiB %s (%zu "
           "sizes), bias %+.1f%%\n", a, sum->n_large, b, sum->n_small,
           sum->bias * 100);
}

static cJSON *rows_json(const nsim_measure_series *m, const char *notes,
                        const nsim_compare_row *r, size_t n,
                        const nsim_compare_summary *sum)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", m->source);
    cJSON_AddNumberToObject(o, "line", m->line);
    cJSON_AddStringToObject(o, "test", m->test);
    cJSON *nl = cJSON_AddArrayToObject(o, "knobs");
    for (const char *p = notes; nl && *p;) {
        size_t l = strcspn(p, "\n");
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)l, p);
        cJSON_AddItemToArray(nl, cJSON_CreateString(buf));
        p += l + (p[l] == '\n');
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "rows");
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, x);
        cJSON_AddNumberToObject(x, "size", (double)r[i].size);
        cJSON_AddStringToObject(x, "column",
                                r[i].col ? "in_place" : "out_of_place");
        cJSON_AddNumberToObject(x, "measured_us", r[i].meas_us);
        cJSON_AddNumberToObject(x, "simulated_us", r[i].sim_us);
        cJSON_AddNumberToObject(x, "measured_busbw", r[i].meas_busbw);
        cJSON_AddNumberToObject(x, "simulated_busbw", r[i].sim_busbw);
        cJSON_AddNumberToObject(x, "error", r[i].err);
        cJSON_AddStringToObject(x, "algorithm", r[i].algo);
        cJSON_AddStringToObject(x, "protocol", r[i].proto);
        cJSON_AddNumberToObject(x, "channels", r[i].nchannels);
        cJSON_AddStringToObject(x, "fidelity", r[i].fidelity);
        if (r[i].nccl_algo[0]) {
            cJSON_AddStringToObject(x, "nccl_algorithm", r[i].nccl_algo);
            cJSON_AddStringToObject(x, "nccl_protocol", r[i].nccl_proto);
        }
    }
    cJSON *s = cJSON_AddObjectToObject(o, "summary");
    if (s) {
        if (sum->med_large >= 0)
            cJSON_AddNumberToObject(s, "median_abs_error_ge_1MiB",
                                    sum->med_large);
        if (sum->med_small >= 0)
            cJSON_AddNumberToObject(s, "median_abs_error_lt_1MiB",
                                    sum->med_small);
        cJSON_AddNumberToObject(s, "bias", sum->bias);
        cJSON_AddNumberToObject(s, "sizes_ge_1MiB", (double)sum->n_large);
        cJSON_AddNumberToObject(s, "sizes_lt_1MiB", (double)sum->n_small);
    }
    return o;
}

/* Appends printf output to a growable buffer; NULL on no memory. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb(sbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);
static void sb(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = b->oom ? 0
                       : vsnprintf(b->p ? b->p + b->n : NULL,
                                   b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->oom || k < 0)
            return;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* PATH.dat (one block per measurement), PATH.gp, and PATH via gnuplot. */
static int write_plot(const char *path, const char *scen, char **titles,
                      nsim_compare_row **rows, size_t *nrows, size_t nser,
                      nsim_err *err)
{
    char dat[4096], gp[4096];
    snprintf(dat, sizeof dat, "%s.dat", path);
    snprintf(gp, sizeof gp, "%s.gp", path);
    sbuf b = {0};
    sb(&b, "# size measured_busbw simulated_busbw error_percent\n");
    for (size_t k = 0; k < nser; k++) {
        for (size_t i = 0; i < nrows[k]; i++)
            sb(&b, "%llu %.4f %.4f %.3f\n",
               (unsigned long long)rows[k][i].size, rows[k][i].meas_busbw,
               rows[k][i].sim_busbw, rows[k][i].err * 100);
        sb(&b, "\n\n");
    }
    if (b.oom)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    int rc = nsim_write_file_atomic(dat, b.p, b.n, err);
    b.n = 0;
    if (rc != NSIM_OK) {
        free(b.p);
        return rc;
    }
    sb(&b, "set terminal pngcairo noenhanced size 1000,760\n"
           "set output '%s'\nset multiplot layout 2,1 title \"%s\"\n"
           "set logscale x 2\nset format x '%%.0b%%BB'\nset grid\n"
           "set key left top\nset ylabel 'busbw (GB/s)'\n"
           "set lmargin 10\nplot ", path, scen);
    for (size_t k = 0; k < nser; k++)
        sb(&b, "%s'%s' index %zu using 1:2 with points pt 7 title "
               "'measured %s', '%s' index %zu using 1:3 with lines lw 2 "
               "title 'simulated'", k ? ", " : "", dat, k, titles[k], dat, k);
    sb(&b, "\nset ylabel 'error (%%): simulated busbw / measured - 1'\n"
           "set xlabel 'size'\nunset key\nset yrange [*:*]\n"
           "plot 0 with lines lc 'black' notitle");
    for (size_t k = 0; k < nser; k++)
        sb(&b, ", '%s' index %zu using 1:4 with linespoints pt 7", dat, k);
    sb(&b, "\nunset multiplot\n");
    if (b.oom)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    rc = nsim_write_file_atomic(gp, b.p, b.n, err);
    free(b.p);
    return rc;
}

/* After the outputs are committed: PATH from PATH.gp. */
static void render_plot(const char *path)
{
    char gp[4096];
    snprintf(gp, sizeof gp, "%s.gp", path);
    if (nsim_export_run_gnuplot(gp) != 0)
        fprintf(stderr, "ncclsim: note: gnuplot did not render %s (install "
                "gnuplot-nox); %s and %s.dat are written\n", path, gp,
                path);
}

int nsim_cmd_compare(int argc, char **argv)
{
    nsim_cli_measured a = {0};
    a.column = -1;
    nsim_err err = {0};
    int rc = nsim_cli_split_measured("compare", argc, argv, &a, own_opt);
    nsim_measure *m = NULL;
    nsim_measure_import_opts io = {0};
    io.warn = on_warn;
    if (rc == 0 && (nsim_measure_create(&m, &err) != NSIM_OK ||
                    nsim_measure_import(m, a.files, a.nfiles, &io, &err) !=
                        NSIM_OK))
        rc = -1;
    size_t nser = m ? nsim_measure_nseries(m) : 0;
    nsim_compare_row **rows = calloc(nser + 1, sizeof *rows);
    size_t *nrows = calloc(nser + 1, sizeof *nrows);
    char **titles = calloc(nser + 1, sizeof *titles);
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "comparisons") : NULL;
    if (rc == 0 && (!rows || !nrows || !titles || !arr))
        rc = -1;
    char scen_name[512] = "";
    for (size_t k = 0; rc == 0 && k < nser; k++) {
        const nsim_measure_series *ms = nsim_measure_series_at(m, k);
        nsim_scenario *s = NULL;
        nsim_cli_run_opts ro = {0};
        int r = nsim_cli_load_run("compare", a.run_argc, a.run_argv, &s, &ro,
                                  &err);
        char notes[4096];
        nsim_compare_opts co = {a.column, a.max_size};
        if (r == 0 && (nsim_compare_check_fit(s, ms, &err) != NSIM_OK ||
                       nsim_compare_apply_knobs(s, ms, notes, sizeof notes,
                                                &err) != NSIM_OK ||
                       nsim_compare_run(s, ms, &co, &rows[k], &nrows[k],
                                        &err) != NSIM_OK))
            r = -1;
        if (r == 0) {
            nsim_compare_summary sum;
            nsim_compare_summarize(rows[k], nrows[k], &sum);
            snprintf(scen_name, sizeof scen_name, "%s", s->source);
            print_rows(ms, notes, rows[k], nrows[k], &sum, s->source);
            cJSON_AddItemToArray(arr,
                                 rows_json(ms, notes, rows[k], nrows[k], &sum));
            titles[k] = strdup(ms->test[0] ? ms->test : ms->tool);
        }
        nsim_scenario_destroy(s);
        rc = r;
    }
    nsim_out_begin(); /* all of the outputs or none */
    if (rc == 0 && a.json != NULL) {
        cJSON_AddStringToObject(root, "format", "ncclsim-compare");
        cJSON_AddNumberToObject(root, "version", 1);
        cJSON_AddStringToObject(root, "scenario", scen_name);
        char *text = cJSON_Print(root);
        if (text == NULL ||
            nsim_write_file_atomic(a.json, text, strlen(text), &err) !=
                NSIM_OK)
            rc = -1;
        free(text);
    }
    if (rc == 0 && a.plot != NULL &&
        write_plot(a.plot, scen_name, titles, rows, nrows, nser, &err) !=
            NSIM_OK)
        rc = -1;
    if (rc == 0 && nsim_out_commit(&err) != NSIM_OK)
        rc = -1;
    if (rc != 0)
        nsim_out_abort();
    if (rc == 0 && a.plot != NULL)
        render_plot(a.plot);
    for (size_t k = 0; k < nser; k++) {
        free(rows ? rows[k] : NULL);
        free(titles ? titles[k] : NULL);
    }
    free(rows);
    free(nrows);
    free(titles);
    cJSON_Delete(root);
    nsim_measure_destroy(m);
    free(a.run_argv);
    free(a.files);
    if (rc < 0 && err.msg[0] == '\0')
        snprintf(err.msg, sizeof err.msg, "compare: out of memory");
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}
