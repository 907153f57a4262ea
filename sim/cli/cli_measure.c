/* SPDX-License-Identifier: MIT
 *
 * cli_measure.c - "ncclsim measure import FILE... -o M.json" (hardware
 * measurements as users have them into the ncclsim-measurement schema)
 * and "ncclsim measure show FILE..." (what they hold).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/exec/measure.h"

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "ncclsim measure: warning: %s\n", msg);
}

static int parse_pos(const char *opt, const char *v, int32_t *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > 1 << 24)
        return nsim_cli_usage("measure", "%s %s: expected a whole number "
                              ">= 1", opt, v);
    *out = (int32_t)n;
    return 0;
}

/* Options shared by import and show; files collected in files[]. */
static int parse_args(int argc, char **argv, const char **out,
                      nsim_measure_import_opts *o, char **files,
                      size_t *nfiles, char **envs, size_t *nenv)
{
    *nfiles = 0;
    *nenv = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && more)
            *out = argv[++i];
        else if (strcmp(a, "--partial") == 0)
            o->partial = 1;
        else if (strcmp(a, "--collective") == 0 && more)
            o->collective = argv[++i];
        else if (strcmp(a, "--ranks") == 0 && more) {
            int rc = parse_pos(a, argv[++i], &o->ranks);
            if (rc)
                return rc;
        } else if (strcmp(a, "--hosts") == 0 && more) {
            int rc = parse_pos(a, argv[++i], &o->hosts);
            if (rc)
                return rc;
        } else if (strcmp(a, "--gpus-per-thread") == 0 && more) {
            int rc = parse_pos(a, argv[++i], &o->gpus_per_thread);
            if (rc)
                return rc;
        } else if (strcmp(a, "--env") == 0 && more) {
            envs[(*nenv)++] = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0')
            return nsim_cli_usage("measure", "unknown option or missing "
                                  "value: %s", a);
        else
            files[(*nfiles)++] = argv[i];
    }
    if (*nfiles == 0)
        return nsim_cli_usage("measure", "no input file");
    return 0;
}

static void print_col(const nsim_measure_col *c)
{
    if (!c->present) {
        printf(" %10s %8s %8s", "-", "-", "-");
        return;
    }
    if (c->time_us > 0)
        printf(" %10.2f", c->time_us);
    else
        printf(" %10s", "-");
    if (c->algbw >= 0)
        printf(" %8.2f", c->algbw);
    else
        printf(" %8s", "-");
    if (c->busbw >= 0)
        printf(" %8.2f", c->busbw);
    else
        printf(" %8s", "-");
}

static void show(const nsim_measure *m)
{
    for (size_t i = 0; i < nsim_measure_nseries(m); i++) {
        const nsim_measure_series *s = nsim_measure_series_at(m, i);
        printf("== %s:%d: %s %s%s%s%s\n", s->source, s->line, s->tool,
               s->test[0] ? s->test : "?", s->label[0] ? " [" : "",
               s->label, s->label[0] ? "]" : "");
        printf("   collective %s, ranks %d, hosts %d, -g %d, %s %s",
               s->collective[0] ? s->collective : "?", s->ranks, s->hosts,
               s->gpus_per_thread, s->dtype[0] ? s->dtype : "?",
               s->redop[0] ? s->redop : "?");
        if (s->nccl_version[0])
            printf(", NCCL %s", s->nccl_version);
        if (s->qps > 0)
            printf(", %d QPs", s->qps);
        printf("\n");
        if (s->log[0] && s->log_channels > 0)
            printf("   log %s: %d channels\n", s->log, s->log_channels);
        else if (s->log[0])
            printf("   log %s: no channel count\n", s->log);
        for (size_t k = 0; k < s->nenv; k++)
            printf("   %s=%s\n", s->env[k].key, s->env[k].value);
        printf("%14s %10s %8s %8s %10s %8s %8s  %s\n", "size", "oop us",
               "algbw", "busbw", "ip us", "algbw", "busbw", "NCCL ran");
        for (size_t k = 0; k < s->nrows; k++) {
            const nsim_measure_row *r = &s->rows[k];
            printf("%14llu", (unsigned long long)r->size);
            print_col(&r->col[0]);
            print_col(&r->col[1]);
            if (r->algo[0])
                printf("  %s/%s", r->algo, r->proto);
            printf("\n");
        }
    }
}

int nsim_cmd_measure(int argc, char **argv)
{
    if (argc < 2)
        return nsim_cli_usage("measure", "expected import or show");
    const char *act = argv[1];
    if (strcmp(act, "import") != 0 && strcmp(act, "show") != 0)
        return nsim_cli_usage("measure", "unknown action '%s' (import, "
                              "show)", act);
    const char *out = NULL;
    nsim_measure_import_opts o = {0};
    o.warn = on_warn;
    char **files = calloc((size_t)argc, sizeof *files);
    if (files == NULL) {
        fprintf(stderr, "ncclsim: out of memory\n");
        return NSIM_EXIT_ERR;
    }
    size_t nfiles = 0, nenv = 0;
    char **envs = calloc((size_t)argc, sizeof *envs);
    int rc = envs ? parse_args(argc, argv, &out, &o, files, &nfiles, envs,
                               &nenv)
                  : NSIM_EXIT_ERR;
    o.env = envs;
    o.nenv = nenv;
    if (rc == 0 && strcmp(act, "import") == 0 && out == NULL)
        rc = nsim_cli_usage("measure", "import needs -o FILE.json");
    if (rc == 0 && strcmp(act, "show") == 0 && out != NULL)
        rc = nsim_cli_usage("measure", "show takes no -o");
    if (rc != 0) {
        free(files);
        free(envs);
        return rc;
    }
    nsim_err err = {0};
    nsim_measure *m = NULL;
    if (nsim_measure_create(&m, &err) != NSIM_OK ||
        nsim_measure_import(m, files, nfiles, &o, &err) != NSIM_OK ||
        (out != NULL && nsim_measure_write(m, out, &err) != NSIM_OK)) {
        nsim_measure_destroy(m);
        free(files);
        free(envs);
        return nsim_cli_fail(&err);
    }
    if (out == NULL)
        show(m);
    else
        printf("%s: %zu series\n", out, nsim_measure_nseries(m));
    nsim_measure_destroy(m);
    free(files);
    free(envs);
    return NSIM_EXIT_OK;
}
