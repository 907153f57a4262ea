/* SPDX-License-Identifier: MIT
 *
 * cli_run.c - "ncclsim run", "ncclsim plan" and "ncclsim params".
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "output/report.h"
#include "output/stats.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"
#include "sim/exec/exec.h"
#include "sim/exec/scenario.h"

typedef struct run_opts {
    const char *json_out, *plan_out;
    int quiet, timing, stats, debug;
    uint64_t size; /* plan: the size to plan */
} run_opts;

enum { OPT_NCH = 256, OPT_QPS, OPT_SEED, OPT_JSON, OPT_SIZE, OPT_QUIET,
       OPT_TIMING, OPT_STATS, OPT_DEBUG };

static const struct option run_long[] = {
    {"minbytes", required_argument, NULL, 'b'},
    {"maxbytes", required_argument, NULL, 'e'},
    {"stepfactor", required_argument, NULL, 'f'},
    {"stepbytes", required_argument, NULL, 'i'},
    {"nchannels", required_argument, NULL, OPT_NCH},
    {"qps", required_argument, NULL, OPT_QPS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"json", required_argument, NULL, OPT_JSON},
    {"size", required_argument, NULL, OPT_SIZE},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"timing", no_argument, NULL, OPT_TIMING},
    {"stats", no_argument, NULL, OPT_STATS},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {NULL, 0, NULL, 0},
};

static int parse_u64(const char *cmd, const char *opt, const char *v,
                     uint64_t *out)
{
    const char *why;
    if (nsim_units_parse_size(v, out, &why) != NSIM_OK)
        return nsim_cli_usage(cmd, "%s: '%s': %s", opt, v, why);
    return 0;
}

static int parse_count(const char *cmd, const char *opt, const char *v,
                       uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end != '\0' || n < 1 || n > max)
        return nsim_cli_usage(cmd, "%s: expected 1..%u, got '%s'", opt, max, v);
    *out = (uint32_t)n;
    return 0;
}

/* Applies the command-line options to the scenario. */
static int parse_opts(const char *cmd, int argc, char **argv,
                      nsim_scenario *s, run_opts *ro)
{
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":b:e:f:i:o:", run_long, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'b': rc = parse_u64(cmd, "-b", optarg, &s->min_bytes); break;
        case 'e': rc = parse_u64(cmd, "-e", optarg, &s->max_bytes); break;
        case 'i':
            rc = parse_u64(cmd, "-i", optarg, &s->step_bytes);
            s->step_factor = 1;
            break;
        case 'f':
            s->step_factor = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || s->step_factor < 1)
                rc = nsim_cli_usage(cmd, "-f: expected a factor >= 1");
            break;
        case OPT_NCH:
            rc = parse_count(cmd, "--nchannels", optarg, NSIM_MAX_CHANNELS,
                             &s->nchannels);
            s->min_channels = s->max_channels = 0;
            break;
        case OPT_QPS:
            rc = parse_count(cmd, "--qps", optarg, 128, &s->qps_per_conn);
            break;
        case OPT_SEED: rc = parse_u64(cmd, "--seed", optarg, &s->seed); break;
        case OPT_JSON: ro->json_out = optarg; break;
        case 'o': ro->plan_out = optarg; break;
        case OPT_SIZE: rc = parse_u64(cmd, "--size", optarg, &ro->size); break;
        case OPT_QUIET: ro->quiet = 1; break;
        case OPT_TIMING: ro->timing = 1; break;
        case OPT_STATS: ro->stats = 1; break;
        case OPT_DEBUG: ro->debug = 1; break;
        case ':': rc = nsim_cli_usage(cmd, "%s needs a value", argv[optind - 1]); break;
        default: rc = nsim_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (rc == 0 && optind != argc - 1)
        rc = nsim_cli_usage(cmd, "expected exactly one scenario file");
    return rc;
}

static nsim_report_meta make_meta(const nsim_scenario *s)
{
    static char test[64];
    snprintf(test, sizeof test, "%s_perf",
             s->coll == NSIM_COLL_ALLREDUCE ? "all_reduce" : nsim_coll_name(s->coll));
    nsim_report_meta m = {
        s->name,          nsim_topo_name(s->topo), nsim_coll_name(s->coll),
        test,             s->dtype,                s->redop,
        nsim_proto_name(s->proto), nsim_algo_name(s->algo),
        s->channel_mode == NSIM_CHANNEL_SHARED ? "shared" : "dedicated",
        nsim_topo_nranks(s->topo), nsim_topo_nhosts(s->topo), s->nchannels,
        s->qps_per_conn, s->buffsize, s->seed, -1};
    return m;
}

/* One size: plan, simulate, fill the row. With keep, the plan and the
 * result (with statistics) are handed to the caller. */
static int run_size(nsim_scenario *s, uint64_t bytes, int keep,
                    nsim_report_row *row, nsim_plan **kept_plan,
                    nsim_exec_result *kept_res, nsim_err *err)
{
    nsim_plan *plan = NULL;
    nsim_exec_result res = {0};
    nsim_plan_req req = nsim_scenario_request(s, bytes);
    nsim_exec_opts eo = {s->seed, keep, &s->net};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = nsim_plan_build(s->topo, &req, &plan, err);
    if (rc == NSIM_OK)
        rc = nsim_exec_run(s->topo, plan, &s->params, &eo, &res, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != NSIM_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        NSIM_ERR(err, rc, "%s: %llu bytes: %s", s->source,
                 (unsigned long long)bytes, msg);
        nsim_plan_destroy(plan);
        return rc;
    }
    double t_us = (double)res.time_ps / 1e6;
    double alg = (double)bytes / (t_us * 1e-6) / 1e9;
    double bus = alg * nsim_coll_busbw_factor(s->coll, plan->nranks);
    *row = (nsim_report_row){bytes, bytes / s->type_size, plan->nchannels,
                             t_us, alg, bus, t_us, alg, bus, res.events,
                             (double)(t1.tv_sec - t0.tv_sec) +
                                 (t1.tv_nsec - t0.tv_nsec) / 1e9};
    if (keep) {
        *kept_plan = plan;
        *kept_res = res;
        return NSIM_OK;
    }
    nsim_exec_result_free(&res);
    nsim_plan_destroy(plan);
    return NSIM_OK;
}

static int next_size(const nsim_scenario *s, uint64_t cur, uint64_t *next)
{
    uint64_t n = s->step_factor > 1 ? (uint64_t)((double)cur * s->step_factor)
                                    : cur + s->step_bytes;
    n -= n % s->type_size;
    if (n <= cur)
        return 0;
    *next = n;
    return n <= s->max_bytes;
}

static void print_row(const run_opts *ro, const nsim_report_meta *m,
                      const nsim_report_row *r, size_t n)
{
    if (!ro->quiet && n == 0)
        nsim_report_header(stdout, m);
    if (!ro->quiet) {
        nsim_report_row_print(stdout, m, r);
        fflush(stdout);
    }
    if (ro->timing)
        fprintf(stderr, "# timing: %llu B: %.3f s wall, %llu events, "
                        "%.2f M events/s\n",
                (unsigned long long)r->size, r->wall_s,
                (unsigned long long)r->events,
                (double)r->events / r->wall_s / 1e6);
}

/* --stats / --debug: the last (largest) size in detail. */
static cJSON *report_detail(const nsim_scenario *s, const run_opts *ro,
                            const nsim_plan *p, const nsim_exec_result *r)
{
    if (!ro->quiet && ro->stats)
        nsim_stats_print(stdout, s->topo, p, r);
    if (!ro->quiet && ro->debug)
        nsim_debug_hcas(stdout, s->topo, p, r);
    return ro->stats && ro->json_out ? nsim_stats_json(s->topo, p, r) : NULL;
}

static int run_sweep(nsim_scenario *s, const run_opts *ro, nsim_err *err)
{
    nsim_report_meta m = make_meta(s);
    nsim_report_row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = NSIM_OK, detail = ro->stats || ro->debug;
    nsim_plan *kp = NULL;
    nsim_exec_result kr = {0};
    uint64_t size = s->min_bytes, next = 0;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            nsim_report_row *r = realloc(rows, cap * sizeof *r);
            if (r == NULL) {
                rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
                break;
            }
            rows = r;
        }
        int last = !next_size(s, size, &next);
        if (ro->debug && n == 0 && !ro->quiet) {
            nsim_plan *dp = NULL;
            nsim_plan_req dr = nsim_scenario_request(s, s->max_bytes);
            if (nsim_plan_build(s->topo, &dr, &dp, NULL) == NSIM_OK)
                nsim_debug_plan(stdout, s->topo, dp);
            nsim_plan_destroy(dp);
        }
        if ((rc = run_size(s, size, detail && last, &rows[n], &kp, &kr,
                           err)) != NSIM_OK)
            break;
        print_row(ro, &m, &rows[n], n);
        n++;
        size = next;
        if (last)
            break;
    } while (1);
    cJSON *extra = NULL;
    if (rc == NSIM_OK && !ro->quiet)
        nsim_report_footer(stdout, rows, n);
    if (rc == NSIM_OK && kp != NULL)
        extra = report_detail(s, ro, kp, &kr);
    if (rc == NSIM_OK && ro->json_out != NULL)
        rc = nsim_report_write_json(ro->json_out, &m, rows, n, extra, err);
    else
        cJSON_Delete(extra);
    if (kp != NULL)
        nsim_exec_result_free(&kr);
    nsim_plan_destroy(kp);
    free(rows);
    return rc;
}

static int load_with_opts(const char *cmd, int argc, char **argv,
                          nsim_scenario **out, run_opts *ro, nsim_err *err)
{
    int rc;
    for (int i = 1; i < argc; i++) /* the scenario is the non-option arg */
        if (argv[i][0] != '-' && (i == 1 || argv[i - 1][0] != '-' ||
                                  strchr(argv[i - 1], '=') != NULL ||
                                  strcmp(argv[i - 1], "--quiet") == 0)) {
            if (nsim_scenario_load(argv[i], out, err) != NSIM_OK)
                return -1;
            break;
        }
    if (*out == NULL)
        return nsim_cli_usage(cmd, "expected a scenario file");
    if ((rc = parse_opts(cmd, argc, argv, *out, ro)) != 0)
        return rc;
    nsim_scenario_resolve_channels(*out);
    if (nsim_scenario_check_sizes(*out, err) != NSIM_OK)
        return -1;
    return 0;
}

int nsim_cmd_run(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    run_opts ro = {0};
    int rc = load_with_opts("run", argc, argv, &s, &ro, &err);
    if (rc == 0 && run_sweep(s, &ro, &err) != NSIM_OK)
        rc = -1;
    nsim_scenario_destroy(s);
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}

int nsim_cmd_plan(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_plan *plan = NULL;
    run_opts ro = {0};
    char *text = NULL;
    int rc = load_with_opts("plan", argc, argv, &s, &ro, &err);
    if (rc == 0) {
        nsim_plan_req req =
            nsim_scenario_request(s, ro.size ? ro.size : s->max_bytes);
        if (nsim_plan_build(s->topo, &req, &plan, &err) != NSIM_OK ||
            nsim_plan_to_json(plan, s->topo, &text, &err) != NSIM_OK)
            rc = -1;
    }
    if (rc == 0 && ro.plan_out != NULL) {
        if (nsim_write_file_atomic(ro.plan_out, text, strlen(text), &err))
            rc = -1;
    } else if (rc == 0) {
        printf("%s\n", text);
    }
    free(text);
    nsim_plan_destroy(plan);
    nsim_scenario_destroy(s);
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}

int nsim_cmd_params(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_params p;
    char *text = NULL;
    (void)argv;
    if (argc > 2)
        return nsim_cli_usage("params", "takes at most a params file");
    nsim_params_defaults(&p);
    if (argc == 2 && nsim_params_load(&p, argv[1], &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    if (nsim_params_to_json(&p, &text, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    printf("%s\n", text);
    free(text);
    return NSIM_EXIT_OK;
}
