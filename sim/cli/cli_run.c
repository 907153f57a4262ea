/* SPDX-License-Identifier: MIT
 *
 * cli_run.c - "ncclsim run", "ncclsim plan" and "ncclsim params".
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "output/report.h"
#include "output/export.h"
#include "output/stats.h"
#include "output/trace.h"
#include "sim/core/fileio.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"
#include "sim/exec/exec.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"
#include "sim/topo/nccl_graph.h"
#include "sim/plan/search.h"
#include "sim/plan/tune.h"


extern char **environ;

enum { OPT_NCH = 256, OPT_QPS, OPT_SEED, OPT_JSON, OPT_SIZE, OPT_QUIET,
       OPT_TIMING, OPT_ALGO, OPT_PROTO, OPT_COLL, OPT_TUNING, OPT_MODE,
       OPT_STATS, OPT_DEBUG, OPT_GRAPH, OPT_CMPGRAPH, OPT_CSV, OPT_PLOT,
       OPT_TRACE, OPT_GDUMP, OPT_PARAMS, OPT_TRACE_CAP,
       OPT_FIDELITY, OPT_MAXEV, OPT_MAXMEM, OPT_FOLD };

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
    {"output", required_argument, NULL, 'O'},
    {"op", required_argument, NULL, 'o'},
    {"datatype", required_argument, NULL, 'd'},
    {"root", required_argument, NULL, 'r'},
    {"nthreads", required_argument, NULL, 't'},
    {"ngpus", required_argument, NULL, 'g'},
    {"iters", required_argument, NULL, 'n'},
    {"warmup_iters", required_argument, NULL, 'w'},
    {"agg_iters", required_argument, NULL, 'm'},
    {"check", required_argument, NULL, 'c'},
    {"blocking", required_argument, NULL, 'z'},
    {"cudagraph", required_argument, NULL, 'G'},
    {"average", required_argument, NULL, 'a'},
    {"report_cputime", required_argument, NULL, 'C'},
    {"local_register", required_argument, NULL, 'R'},
    {"run_cycles", required_argument, NULL, 'N'},
    {"parallel_init", required_argument, NULL, 'p'},
    {"collective", required_argument, NULL, OPT_COLL},
    {"tuning", no_argument, NULL, OPT_TUNING},
    {"mode", required_argument, NULL, OPT_MODE},
    {"algo", required_argument, NULL, OPT_ALGO},
    {"proto", required_argument, NULL, OPT_PROTO},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"timing", no_argument, NULL, OPT_TIMING},
    {"stats", no_argument, NULL, OPT_STATS},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"csv", required_argument, NULL, OPT_CSV},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"trace-cap", required_argument, NULL, OPT_TRACE_CAP},
    {"compare-graph", required_argument, NULL, OPT_CMPGRAPH},
    {"graph-dump", no_argument, NULL, OPT_GDUMP},
    {"params", required_argument, NULL, OPT_PARAMS},
    {"fidelity", required_argument, NULL, OPT_FIDELITY},
    {"fold", required_argument, NULL, OPT_FOLD},
    {"max-events", required_argument, NULL, OPT_MAXEV},
    {"max-memory", required_argument, NULL, OPT_MAXMEM},
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

/* --max-events N (1e9 and 2.5e10 too) / --max-memory SIZE (K, M, G);
 * "none" lifts the budget. */
static int parse_budget(const char *cmd, const char *opt, const char *v,
                        int is_bytes, uint64_t *out)
{
    char *end;
    if (strcmp(v, "none") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    if (is_bytes) {
        const char *why;
        if (nsim_units_parse_size(v, out, &why) != NSIM_OK || *out == 0)
            return nsim_cli_usage(cmd, "%s: expected a size such as 500M "
                                       "or 8G, or none; got '%s'",
                                  opt, v);
        return 0;
    }
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || !(d >= 1) || d > 1.8e19)
        return nsim_cli_usage(cmd, "%s: expected a count such as 1000000 "
                                   "or 1e9, or none; got '%s'",
                              opt, v);
    *out = (uint64_t)d;
    return 0;
}

/* nccl-tests flags that do not change a deterministic simulation: a
 * one-line note, then ignored (after their value is checked). */
static int note_ignored(const char *cmd, int c, const char *v)
{
    const char *why = "";
    long max = 1L << 30;
    char *end;
    switch (c) {
    case 't': why = "the topology fixes the ranks; threads launch in "
                    "parallel"; break;
    case 'n':
    case 'w':
    case 'm': why = "a deterministic simulation needs one iteration"; break;
    case 'c': why = "a simulation moves no data to check (#wrong is N/A)"; break;
    case 'z': why = "one collective at a time is simulated"; max = 3; break;
    case 'a': why = "the collective couples the ranks: in steady state "
                    "every rank's time per op is the same, so rank 0, "
                    "average, min and max agree"; max = 3; break;
    case 'N': why = "every cycle of a deterministic simulation is the "
                    "same; one is run"; break;
    case 'p': why = "communicator set-up is not simulated"; max = 1; break;
    case 'R': why = "buffer registration is not modelled: times are for "
                    "NCCL's own buffers (as -R 0)"; max = 2; break;
    }
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 0 || n > max)
        return nsim_cli_usage(cmd, "-%c: expected 0..%ld, got '%s'", c, max,
                              v);
    fprintf(stderr, "ncclsim: note: -%c %s ignored: %s\n", c, v, why);
    return 0;
}

/* One option of run/plan. Returns 0 or a usage exit status; -1 with err
 * set for a bad value that is an input error. */
static int apply_opt(const char *cmd, int c, const char *arg, char **argv,
                     nsim_scenario *s, nsim_cli_run_opts *ro, nsim_err *err)
{
    char *end;
    uint32_t v32 = 0;
    switch (c) {
    case 'b': return parse_u64(cmd, "-b", arg, &s->min_bytes);
    case 'e': return parse_u64(cmd, "-e", arg, &s->max_bytes);
    case 'i':
        s->step_factor = 1;
        if (parse_u64(cmd, "-i", arg, &s->step_bytes) != 0)
            return NSIM_EXIT_USAGE;
        if (s->step_bytes == 0)
            return nsim_cli_usage(cmd, "-i: expected a step > 0 bytes, got "
                                       "'%s'", arg);
        return 0;
    case 'f':
        s->step_factor = strtod(arg, &end);
        if (end == arg || *end != '\0' || !isfinite(s->step_factor) ||
            s->step_factor <= 1 || s->step_factor > 1e6)
            return nsim_cli_usage(cmd, "-f: expected a factor above 1 (up to "
                                       "1e6; -i for a fixed step), got '%s'",
                                  arg);
        s->step_bytes = 0;
        return 0;
    case OPT_NCH:
        s->min_channels = s->max_channels = 0;
        s->nchannels_given = 1;
        return parse_count(cmd, "--nchannels", arg, NSIM_MAX_CHANNELS,
                           &s->nchannels);
    case OPT_QPS: return parse_count(cmd, "--qps", arg, 128, &s->qps_per_conn);
    case OPT_SEED: return parse_u64(cmd, "--seed", arg, &s->seed);
    case OPT_MAXEV:
        return parse_budget(cmd, "--max-events", arg, 0, &s->max_events);
    case OPT_MAXMEM:
        return parse_budget(cmd, "--max-memory", arg, 1, &s->max_memory);
    case OPT_JSON: ro->json_out = arg; return 0;
    case 'O': ro->plan_out = arg; return 0;
    case 'o':
        if (strcmp(cmd, "plan") == 0) {
            ro->plan_out = arg;
            return 0;
        }
        return nsim_scenario_set_op(s, arg, "-o", err) ? -1 : 0;
    case 'd': return nsim_scenario_set_dtype(s, arg, "-d", err) ? -1 : 0;
    case 'r': {
        unsigned long long r = strtoull(arg, &end, 10);
        /* no wrap-around: the run checks it against the ranks */
        if (end == arg || *end != '\0' || arg[0] == '-' || r > (1u << 20))
            return nsim_cli_usage(cmd, "-r: expected a root rank, got '%s'",
                                  arg);
        s->root = (uint32_t)r;
        return 0;
    }
    case OPT_COLL:
        if (nsim_coll_parse(arg, &s->coll) != NSIM_OK)
            return nsim_cli_usage(cmd, "--collective: expected allreduce, "
                                       "..., or a nccl-tests binary name "
                                       "(all_gather_perf, ...), got '%s'",
                                  arg);
        return 0;
    case OPT_ALGO: /* "auto": NCCL's tuner, even if the scenario forces one */
        if (strcasecmp(arg, "auto") == 0) {
            s->algo_set = 0;
            s->algo_off = 0;
            s->algo_list[0] = '\0';
            return 0;
        }
        return nsim_scenario_set_algo(s, arg, "--algo", err) ? -1 : 0;
    case OPT_PROTO:
        if (strcasecmp(arg, "auto") == 0) {
            s->proto_set = 0;
            s->proto_off = 0;
            s->proto_list[0] = '\0';
            return 0;
        }
        return nsim_scenario_set_proto(s, arg, "--proto", err) ? -1 : 0;
    case OPT_SIZE: return parse_u64(cmd, "--size", arg, &ro->size);
    case OPT_QUIET: ro->quiet = 1; return 0;
    case OPT_TIMING: ro->timing = 1; return 0;
    case OPT_TUNING: ro->tuning = 1; return 0;
    case OPT_STATS: ro->stats = 1; return 0;
    case OPT_DEBUG: ro->debug = 1; return 0;
    case OPT_GRAPH: ro->graph = arg; return 0;
    case OPT_PARAMS: /* over the scenario's own (ncclsim calibrate -o) */
        return nsim_params_load(&s->params, arg, err) == NSIM_OK ? 0 : -1;
    case OPT_CSV: ro->csv_out = arg; return 0;
    case OPT_PLOT: ro->plot_out = arg; return 0;
    case OPT_TRACE: ro->trace_out = arg; return 0;
    case OPT_TRACE_CAP: {
        uint32_t k = 0;
        int rc = parse_count(cmd, "--trace-cap", arg, 100000000, &k);
        ro->trace_cap = k;
        return rc;
    }
    case OPT_CMPGRAPH:
        if (strcmp(cmd, "plan") != 0)
            return nsim_cli_usage(cmd, "--compare-graph is an option of "
                                       "'ncclsim plan'");
        ro->compare_graph = arg;
        return 0;
    case OPT_GDUMP:
        if (strcmp(cmd, "plan") != 0)
            return nsim_cli_usage(cmd, "--graph-dump is an option of "
                                       "'ncclsim plan'");
        ro->graph_dump = 1;
        return 0;
    case OPT_MODE:
        if (strcmp(arg, "analytic") == 0)
            ro->analytic = 1;
        else if (strcmp(arg, "simulate") != 0)
            return nsim_cli_usage(cmd, "--mode: expected simulate or "
                                       "analytic, got '%s'", arg);
        return 0;
    case 'g':
        return parse_count(cmd, "-g", arg, 1024, &s->gpus_per_thread);
    case OPT_FIDELITY:
        if (nsim_fidelity_parse(arg, &s->fidelity) != NSIM_OK)
            return nsim_cli_usage(cmd, "--fidelity: expected packet, flow or "
                                       "auto, got '%s'", arg);
        return 0;
    case OPT_FOLD:
        if (nsim_fold_mode_parse(arg, &s->fold) != NSIM_OK)
            return nsim_cli_usage(cmd, "--fold: expected auto, on or off, "
                                       "got '%s'", arg);
        return 0;
    case 't': case 'n': case 'w': case 'm': case 'c': case 'z':
    case 'a': case 'N': case 'p': case 'R':
        return note_ignored(cmd, c, arg);
    case 'G': /* CUDA graphs: the host's launches leave the critical path */
        v32 = (uint32_t)strtoul(arg, &end, 10);
        if (end == arg || *end != '\0' || arg[0] == '-' || v32 > (1u << 20))
            return nsim_cli_usage(cmd, "-G: expected a count of graph "
                                       "launches, got '%s'", arg);
        ro->cudagraph = v32;
        return 0;
    case 'C':
        if (strcmp(arg, "0") && strcmp(arg, "1"))
            return nsim_cli_usage(cmd, "-C: expected 0 or 1, got '%s'", arg);
        ro->cputime = arg[0] == '1';
        if (ro->cputime && ro->analytic)
            return nsim_cli_usage(cmd, "-C 1: NCCL's model predicts GPU "
                                       "time, not CPU time");
        return 0;
    case ':': return nsim_cli_usage(cmd, "%s needs a value", argv[optind - 1]);
    default: return nsim_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
    }
}

/* Applies the command-line options to the scenario. */
static int parse_opts(const char *cmd, int argc, char **argv,
                      nsim_scenario *s, nsim_cli_run_opts *ro, nsim_err *err)
{
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv,
                                       ":b:e:f:i:o:d:r:t:g:n:w:m:c:z:G:a:C:R:N:p:",
                                       run_long, NULL)) != -1)
        rc = apply_opt(cmd, c, optarg, argv, s, ro, err);
    if (rc == 0 && optind != argc - 1)
        rc = nsim_cli_usage(cmd, "expected exactly one scenario file");
    return rc;
}

nsim_report_meta nsim_cli_meta(const nsim_scenario *s, int tuning)
{
    nsim_plan_req req = nsim_scenario_request(s, 0);
    nsim_report_meta m = {
        s->name,          nsim_topo_name(s->topo), nsim_coll_name(s->coll),
        nsim_coll_test_name(s->coll), s->dtype,
        nsim_coll_has_op(s->coll) ? s->redop : "none",
        s->proto_set        ? nsim_proto_name(s->proto)
        : s->proto_list[0] ? s->proto_desc
                           : "auto (NCCL's tuner)",
        nsim_coll_is_p2p(s->coll) ? "P2P (point-to-point channels)"
        : s->algo_set             ? nsim_algo_name(s->algo)
        : s->algo_list[0]         ? s->algo_desc
                                  : "auto (NCCL's tuner)",
        s->channel_mode == NSIM_CHANNEL_SHARED ? "shared" : "dedicated",
        nsim_topo_nranks(s->topo), nsim_topo_nhosts(s->topo),
        s->algo_set && !s->nchannels_given &&
                (s->algo == NSIM_ALGO_NVLS || s->algo == NSIM_ALGO_NVLSTREE)
            ? nsim_plan_req_nvls_channels(s->topo, &req)
            : s->nchannels,
        s->qps_per_conn, s->buffsize, s->seed,
        nsim_coll_has_root(s->coll) ? (int)s->root : -1,
        !s->algo_set || !s->proto_set || tuning, tuning};
    m.fidelity = nsim_fidelity_name(s->fidelity);
    return m;
}

/* Row r of the table (its n-th, prev the one before or NULL), with the
 * header before the first; under --fidelity auto (the default) a line
 * says where the fidelity changes, and why. */
static void print_row(const nsim_cli_run_opts *ro, const nsim_scenario *s,
                      const nsim_report_meta *m, const nsim_run_row *r,
                      const nsim_run_row *prev, size_t n)
{
    if (!ro->quiet && n == 0) {
        nsim_report_meta first = *m;
        first.hosts_played = r->fold.played;
        first.chain_played = r->fold.chain_hosts;
        first.tree_chain = r->fold.tree_chain;
        first.tree_chain_of = r->fold.tree_chain_of;
        first.tree_chain_short = r->fold.tree_chain_short;
        first.hosts_struck = r->fold.struck;
        first.fabric_faults_idle =
            r->fold.fabric_links > 0 && r->fold.fabric_conns == 0;
        first.struck_fold = r->fold.phantom_conns > 0       ? 1
                            : r->fold.partner != UINT32_MAX ? 2
                                                            : 0;
        nsim_report_header(stdout, &first);
    }
    if (!ro->quiet && !ro->analytic && s->fidelity == NSIM_FIDELITY_AUTO &&
        strcmp(r->fidelity, prev != NULL ? prev->fidelity : "packet") != 0) {
        char why[200];
        nsim_auto_why_text(s, r, why, sizeof why);
        printf("# fidelity %s from %llu B (%s; README \"Fidelity\")\n",
               r->fidelity, (unsigned long long)r->size,
               why[0] ? why : "auto");
    }
    if (!ro->quiet) {
        nsim_run_row_print(stdout, m, r);
        fflush(stdout);
    }
    if (ro->timing) {
        fprintf(stderr, "# timing: %llu B: %.3f s wall, %llu events, "
                        "%.2f M events/s%s%s",
                (unsigned long long)r->size, r->wall_s,
                (unsigned long long)r->events,
                (double)r->events / r->wall_s / 1e6,
                strcmp(r->fidelity, "packet") ? ", fidelity " : "",
                strcmp(r->fidelity, "packet") ? r->fidelity : "");
        if (r->fidelity_why != NSIM_AUTO_NONE) {
            char why[200];
            nsim_auto_why_text(s, r, why, sizeof why);
            fprintf(stderr, " (%s)", why);
        }
        if (r->flow.flows > 0)
            fprintf(stderr, " (%llu flows, %llu of them twins; %llu "
                            "recomputes visiting %llu flows)",
                    (unsigned long long)r->flow.flows,
                    (unsigned long long)r->flow.twins,
                    (unsigned long long)r->flow.recomputes,
                    (unsigned long long)r->flow.visited);
        if (r->flow.checked > 0)
            fprintf(stderr, " (flow_check: %llu of %llu flows looked at "
                            "after a recompute below max-min)",
                    (unsigned long long)r->flow.below,
                    (unsigned long long)r->flow.checked);
        const nsim_fold_info *f = &r->fold;
        if (f->played < f->hosts) {
            if (f->phantom_conns > 0) {
                fprintf(stderr, ", folded: %u of %u hosts played (one per "
                                "role in the two trees",
                        f->played, f->hosts);
                if (f->slow_roles > 0)
                    fprintf(stderr, ", for %u role(s) whose hosts reach "
                                    "their parents by different routes the "
                                    "host of the slowest",
                            f->slow_roles);
                fprintf(stderr, "; %u of %u NET connections to or from a "
                                "phantom host)",
                        f->phantom_conns, f->net_conns);
            }
            else if (f->partner != UINT32_MAX && f->played > 2)
                fprintf(stderr, ", folded: %u of %u hosts played (the "
                                "NVLink domains of hosts %u-%u and %u-%u, "
                                "each sending to the other)",
                        f->played, f->hosts, f->first_played,
                        f->first_played + f->played / 2 - 1, f->partner,
                        f->partner + f->played / 2 - 1);
            else if (f->partner != UINT32_MAX)
                fprintf(stderr, ", folded: %u of %u hosts played (hosts %u "
                                "and %u, each sending to the other)",
                        f->played, f->hosts, f->first_played, f->partner);
            else if (f->chain_hosts > 0)
                fprintf(stderr, ", folded: %u of %u hosts played from host "
                                "%u, then %u (a chain: each of the other %u "
                                "hosts adds %.2f us, and their routes "
                                "%+.2f us in all)",
                        f->played, f->hosts, f->first_played,
                        f->chain_hosts / 2, f->hosts - f->played,
                        (double)f->chain_host_ps / 1e6,
                        (double)f->chain_lat_ps / 1e6);
            else
                fprintf(stderr, ", folded: %u of %u hosts played from host "
                                "%u",
                        f->played, f->hosts, f->first_played);
            if (f->fabric_links > 0)
                fprintf(stderr, " (%u of %u NET connections cross the %u "
                                "faulted link(s) between switches, "
                                "InfiniBand taking one path per NIC pair)",
                        f->fabric_conns, f->net_conns, f->fabric_links);
            if (f->struck > 0 && f->partner != UINT32_MAX)
                fprintf(stderr, " (host %u the one the faults strike, its "
                                "sends and receives a host's)",
                        f->first_played);
            else if (f->struck > 0 && f->phantom_conns > 0)
                fprintf(stderr, " (and the %u host(s) the faults strike, "
                                "each standing for the hosts of its roles, "
                                "where a tree runs at its slowest hop)",
                        f->struck);
            else if (f->struck > 0)
                fprintf(stderr, " (around the %u host(s) the faults strike, "
                                "each standing for its twins: %u of %u hosts "
                                "struck, where a ring runs at its slowest "
                                "hop)",
                        f->struck, f->struck * (f->hosts / f->played),
                        f->hosts);
            if (f->net_unlike > 0 && f->partner != UINT32_MAX)
                fprintf(stderr, " (%u of %u NET connections have a faster "
                                "route than the played, by up to %.2f us)",
                        f->net_unlike, f->net_conns,
                        (double)f->lat_diff_ps / 1e6);
            else if (f->net_unlike > 0)
                fprintf(stderr, " (%u of %u NET connections have a faster "
                                "route than the played, by up to %.2f us: "
                                "%.2f us over the ring's laps, where it is "
                                "latency-bound%s)",
                        f->net_unlike, f->net_conns,
                        (double)f->lat_diff_ps / 1e6,
                        (double)f->lat_added_ps / 1e6,
                        r->pred_us > 0 && (double)f->lat_added_ps / 1e6 >
                                              NSIM_FOLD_LAT_TOL * r->pred_us
                            ? "; past the 1 % of NCCL's estimate a fold may "
                              "add, folded as --fold on asks: the row errs "
                              "long by about that"
                            : "");
            if (f->bytes_diff > 0)
                fprintf(stderr, " (the size does not divide evenly: every "
                                "chunk played at its largest, as the size "
                                "rounded up to whole chunks, +%.3f %% of a "
                                "lane's payload at most, %.2f us at its "
                                "share of the narrowest route)",
                        f->bytes_added * 100,
                        (double)f->bytes_time_ps / 1e6);
        } else if (f->why_not[0] != '\0') {
            fprintf(stderr, f->tree_chain > 0 ? ", every host played: %s"
                                              : ", not folded: %s",
                    f->why_not);
        }
        if (f->tree_chain > 0)
            fprintf(stderr, "; each node's chain of %u ranks played with "
                            "%u and with %u (each rank more adds %.2f us)",
                    f->tree_chain_of, f->tree_chain, f->tree_chain_short,
                    (double)f->tree_chain_rank_ps / 1e6);
        fprintf(stderr, "\n");
    }
}

/* --stats / --debug: the last (largest) size in detail (row: its row). */
static cJSON *report_detail(const nsim_scenario *s, const nsim_cli_run_opts *ro,
                            const nsim_run_row *row, const nsim_plan *p,
                            const nsim_exec_result *r)
{
    if (!ro->quiet && ro->stats && row->fold.played < row->fold.hosts &&
        row->fold.chain_hosts > 0)
        printf("# folded: a chain played on %u of %u hosts, each of the "
               "others adding %.2f us to the row's time: the connections, "
               "links, NIC ports, QPs and CQs below are the played run's "
               "(--fold off: every host)\n",
               row->fold.played, row->fold.hosts,
               (double)row->fold.chain_host_ps / 1e6);
    else if (!ro->quiet && ro->stats && row->fold.played < row->fold.hosts)
        printf("# folded: %u of %u hosts played, each doing its twins' work: "
               "the connections, links, NIC ports, QPs and CQs below are "
               "theirs (--fold off: every host)\n",
               row->fold.played, row->fold.hosts);
    if (!ro->quiet && ro->stats && row->fold.tree_chain > 0)
        printf("# folded: each node's Tree chain of %u ranks played with %u "
               "and with %u, each rank not played adding %.2f us to the "
               "row's time: the connections, links, NIC ports, QPs and CQs "
               "below are the %u-rank run's (--fold off: every rank)\n",
               row->fold.tree_chain_of, row->fold.tree_chain,
               row->fold.tree_chain_short,
               (double)row->fold.tree_chain_rank_ps / 1e6,
               row->fold.tree_chain);
    if (!ro->quiet && ro->stats)
        nsim_stats_print(stdout, s->topo, p, r);
    if (!ro->quiet && ro->debug)
        nsim_debug_hcas(stdout, s->topo, p, r);
    return ro->stats && ro->json_out ? nsim_stats_json(s->topo, p, r) : NULL;
}

/* --debug: the largest size's whole plan, printed before the rows. A
 * plan over the memory budget stops the run here: each size's run
 * would build the same whole plan and meet the same budget. */
static int debug_plan(nsim_scenario *s, nsim_err *err)
{
    nsim_plan *dp = NULL;
    nsim_plan_req dr;
    double pred;
    nsim_err e = {0};
    uint64_t cnt, bytes = nsim_coll_test_bytes(
        s->coll, nsim_topo_nranks(s->topo), s->type_size, s->max_bytes, &cnt);
    int rc = nsim_run_request(s, bytes, &dr, &pred, NULL);
    if (rc == NSIM_OK && (rc = nsim_plan_build(s->topo, &dr, &dp, &e)) ==
                             NSIM_OK)
        nsim_debug_plan(stdout, s->topo, dp);
    nsim_plan_destroy(dp);
    if (rc != NSIM_EBUDGET)
        return NSIM_OK; /* the run says what else is wrong, size by size */
    return NSIM_ERR(err, rc, "%s: %llu bytes: %s; --debug keeps the whole "
                             "plan, every host played and every op placed: "
                             "drop it at this scale",
                    s->source, (unsigned long long)bytes, e.msg);
}

/* --csv, --plot, --trace (the largest size's thread blocks). */
static int write_exports(const nsim_cli_run_opts *ro, const nsim_report_meta *m,
                         const nsim_run_row *rows, size_t n,
                         const nsim_topo *t, const nsim_plan *kp,
                         const nsim_exec_result *kr, nsim_err *err)
{
    int rendered = 0;
    if (ro->csv_out != NULL)
        NSIM_TRY(nsim_export_csv(ro->csv_out, m, rows, n, err));
    if (ro->trace_out != NULL && kp != NULL)
        NSIM_TRY(nsim_trace_write(ro->trace_out, t, kp, kr, ro->trace_cap,
                                  err));
    if (ro->plot_out != NULL) {
        NSIM_TRY(nsim_export_plot(ro->plot_out, m, rows, n, &rendered, err));
        if (!rendered)
            fprintf(stderr, "ncclsim: note: gnuplot did not render %s "
                            "(install gnuplot-nox); %s.gp and %s.dat are "
                            "written\n",
                    ro->plot_out, ro->plot_out, ro->plot_out);
    }
    return NSIM_OK;
}

static int run_sweep(nsim_scenario *s, const nsim_cli_run_opts *ro, nsim_err *err)
{
    nsim_report_meta m = nsim_cli_meta(s, ro->tuning);
    nsim_run_row *rows = NULL;
    uint64_t *sizes = NULL;
    size_t n = 0, nsizes = 0;
    int detail = (ro->stats || ro->debug || ro->trace_out) && !ro->analytic;
    nsim_plan *kp = NULL;
    nsim_exec_result kr = {0};
    nsim_run_opts o = {.analytic = ro->analytic, .keep = detail,
                       .want_trace = ro->trace_out != NULL,
                       .cudagraph = ro->cudagraph > 0,
                       .cputime = ro->cputime, .trace_cap = ro->trace_cap,
                       /* --stats alone reads no op's placement: the run
                        * folds as it would without it; --trace too where
                        * the run folds (its ops then name no chunk) */
                       .keep_compact = !ro->debug && ro->trace_out == NULL,
                       .trace_fold = !ro->debug};
    m.analytic = ro->analytic;
    m.time_note = ro->cputime ? "time: the host thread's CPU time per op "
                                "(nccl-tests -C 1): its kernel launches, "
                                "one per GPU it drives (-g)"
                  : ro->cudagraph ? "time: ops launched from a CUDA graph "
                                    "(nccl-tests -G): the host thread's "
                                    "launches are off the critical path"
                                  : NULL;
    NSIM_TRY(nsim_run_sizes(s, &sizes, &nsizes, err));
    rows = calloc(nsizes ? nsizes : 1, sizeof *rows);
    if (rows == NULL) {
        free(sizes);
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    if (ro->debug && !ro->quiet && debug_plan(s, err) != NSIM_OK) {
        free(rows);
        free(sizes);
        return NSIM_EBUDGET;
    }
    char why[sizeof rows[0].fold.why_not];
    if (!ro->analytic && nsizes > 0 &&
        nsim_run_fault_blocks_fold(s, sizes[nsizes - 1], why, sizeof why))
        /* before the run, which may then take minutes */
        fprintf(stderr, "# note: every host of %u played: %s\n",
                nsim_topo_nhosts(s->topo), why);
    if (!ro->analytic && nsizes > 0 && s->fidelity == NSIM_FIDELITY_PACKET) {
        /* packet fidelity, asked for, where auto (the default) would
         * pick flow: said before a run that grows with the packets
         * (README "Fidelity"; 2,048 GPUs took minutes a size) */
        double pk = nsim_run_packets_estimate(s, sizes[nsizes - 1]);
        if (pk > (double)s->params.flow_auto_packets)
            fprintf(stderr, "# note: packet fidelity moves about %.0f M "
                            "packets and stream pieces at %llu B, past the "
                            "%.0f M where auto, the default, picks flow "
                            "(far fewer events at this scale)\n",
                    pk / 1e6, (unsigned long long)sizes[nsizes - 1],
                    (double)s->params.flow_auto_packets / 1e6);
    }
    int rc = NSIM_OK;
    for (size_t i = 0; i < nsizes; i++) {
        if (kp != NULL) { /* keep only the largest size's details */
            nsim_exec_result_free(&kr);
            nsim_plan_destroy(kp);
            kp = NULL;
        }
        if ((rc = nsim_run_size(s, &o, sizes[i], &rows[n], &kp, &kr, err)) !=
            NSIM_OK)
            break;
        print_row(ro, s, &m, &rows[n], n > 0 ? &rows[n - 1] : NULL, n);
        n++;
    }
    free(sizes);
    cJSON *extra = NULL;
    if (rc == NSIM_OK && !ro->quiet)
        nsim_report_footer(stdout, rows, n);
    if (rc == NSIM_OK && kp != NULL)
        extra = report_detail(s, ro, &rows[n - 1], kp, &kr);
    if (rc == NSIM_OK && ro->json_out != NULL)
        rc = nsim_report_write_json(ro->json_out, &m, rows, n, extra, err);
    else
        cJSON_Delete(extra);
    if (rc == NSIM_OK)
        rc = write_exports(ro, &m, rows, n, s->topo, kp, &kr, err);
    if (kp != NULL)
        nsim_exec_result_free(&kr);
    nsim_plan_destroy(kp);
    free(rows);
    return rc;
}

/* --graph: NCCL's dumped rings and NICs replace the planner's; the
 * channel count becomes NCCL's (the graph's, doubled as NCCL's postset
 * does, nccl-internals 2.5) unless one was given. */
static int use_graph(nsim_scenario *s, const char *path, nsim_err *err)
{
    NSIM_TRY(nsim_ncclgraph_load(path, s->topo, &s->graph, err));
    const nsim_graph_info *gi = nsim_ncclgraph_find(s->graph, NSIM_GRAPH_RING);
    if (gi == NULL || gi->nchannels == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: no ring graph (id 0) to replay", path);
    if (!s->nchannels_given) {
        uint32_t n = 2 * gi->nchannels;
        s->nchannels = n > NSIM_MAX_CHANNELS ? NSIM_MAX_CHANNELS : n;
    }
    return NSIM_OK;
}

int nsim_cli_load_run(const char *cmd, int argc, char **argv,
                      nsim_scenario **out, nsim_cli_run_opts *ro, nsim_err *err)
{
    int rc;
    for (int i = 1; i < argc; i++) /* the scenario is the non-option arg */
        if (argv[i][0] != '-' && (i == 1 || argv[i - 1][0] != '-' ||
                                  strchr(argv[i - 1], '=') != NULL ||
                                  strcmp(argv[i - 1], "--quiet") == 0 ||
                                  strcmp(argv[i - 1], "--timing") == 0 ||
                                  strcmp(argv[i - 1], "--tuning") == 0)) {
            if (nsim_scenario_load(argv[i], out, err) != NSIM_OK)
                return -1;
            break;
        }
    if (*out == NULL)
        return nsim_cli_usage(cmd, "expected a scenario file");
    nsim_scenario *s = *out;
    char note[2048];
    /* NCCL_* from the shell, as NCCL reads them, under the scenario's own;
     * the command line overrides both */
    if (nsim_scenario_apply_shell_env(s, environ, note, sizeof note, err) !=
        NSIM_OK)
        return -1;
    static int noted; /* once, though a sweep loads every point */
    if (note[0] != '\0' && !noted++)
        fprintf(stderr, "ncclsim: note: %s\n", note);
    if ((rc = parse_opts(cmd, argc, argv, *out, ro, err)) != 0)
        return rc;
    if (ro->cputime && ro->cudagraph)
        return nsim_cli_usage(cmd, "-C 1 with -G: the CPU time of a CUDA "
                                   "graph launch is not modelled");
    if (nsim_scenario_check_dtype(s, err) != NSIM_OK)
        return -1;
    /* a forced algorithm the hardware cannot run: refused before any
     * search (NVLSTree on A100s) */
    if (s->algo_set && !nsim_coll_is_p2p(s->coll) &&
        nsim_tune_check(s->topo, s->coll, s->algo,
                        s->proto_set ? s->proto : NSIM_PROTO_SIMPLE,
                        err) != NSIM_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        NSIM_ERR(err, NSIM_ECONFIG, "%s: %s", s->source, msg);
        return -1;
    }
    nsim_scenario_resolve_channels(*out);
    if (ro->graph != NULL && use_graph(*out, ro->graph, err) != NSIM_OK)
        return -1;
    nsim_fault_plan fp;
    if (nsim_scenario_check_sizes(*out, err) != NSIM_OK ||
        nsim_scenario_fault_plan(*out, (*out)->nchannels, &fp, err) != NSIM_OK)
        return -1;
    return 0;
}

int nsim_cmd_run(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_cli_run_opts ro = {0};
    nsim_out_begin(); /* --json, --csv, --plot, --trace: all or none */
    int rc = nsim_cli_load_run("run", argc, argv, &s, &ro, &err);
    if (rc == 0 && run_sweep(s, &ro, &err) != NSIM_OK)
        rc = -1;
    nsim_scenario_destroy(s);
    return nsim_cli_outputs_done(rc < 0 ? nsim_cli_fail(&err) : rc);
}

/* The planner's channel c as seen from host 0: its GPU order there, the
 * NIC it enters host 0 on and the NIC it leaves on. */
static void host0_view(const nsim_plan *p, const nsim_topo *t, uint32_t c,
                       uint32_t *order, uint32_t *n, int32_t *nic_in,
                       int32_t *nic_out)
{
    *n = 0;
    *nic_in = *nic_out = -1;
    for (uint32_t i = 0; i < p->nranks && *n < 1024; i++) {
        uint32_t r = p->ring[c * p->nranks + i];
        if (nsim_topo_device(t, nsim_topo_rank_device(t, r))->host == 0)
            order[(*n)++] = r;
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *pc = &p->conns[i];
        if (pc->channel != c || pc->transport != NSIM_TRANSPORT_NET)
            continue;
        if (nsim_topo_device(t, pc->recv_nic)->host == 0)
            *nic_in = (int32_t)pc->recv_nic;
        if (nsim_topo_device(t, pc->send_nic)->host == 0)
            *nic_out = (int32_t)pc->send_nic;
    }
}

static const char *nic_name(const nsim_topo *t, int32_t d)
{
    return d < 0 ? "-" : nsim_topo_device(t, (uint32_t)d)->name;
}

static int same_channel(const nsim_graph_chan *gc, const uint32_t *order,
                        uint32_t n, int32_t in, int32_t out)
{
    if (n != gc->ngpus || (gc->nic_in >= 0 && gc->nic_in != in) ||
        (gc->nic_out >= 0 && gc->nic_out != out))
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (order[i] != gc->ranks[i])
            return 0;
    return 1;
}

static int same_search_channel(const nsim_graph_chan *gc,
                               const nsim_search_graph *sg, uint32_t c)
{
    const uint32_t *order = &sg->intra[c * sg->ngpus];
    return same_channel(gc, order, sg->ngpus, sg->nic_in[c], sg->nic_out[c]);
}

static void print_order(const char *who, const uint32_t *o, uint32_t n,
                        const nsim_topo *t, int32_t in, int32_t out)
{
    printf("  %-8s:", who);
    for (uint32_t i = 0; i < n; i++)
        printf(" %u", o[i]);
    printf("  in %s out %s\n", nic_name(t, in), nic_name(t, out));
}

/* plan --compare-graph: NCCL's search (search.c) and the planner's rings
 * against NCCL's dump: channel counts, bandwidths, types, and per channel
 * the GPU order and NICs. */
static int compare_graph(const nsim_scenario *s, const nsim_plan *p,
                         const char *path, nsim_err *err)
{
    nsim_ncclgraph *g = NULL;
    nsim_search_graph *sg = NULL;
    nsim_search_opts so = {0, s->cross_nic, 0, 0, -1};
    NSIM_TRY(nsim_ncclgraph_load(path, s->topo, &g, err));
    const nsim_graph_info *gi = nsim_ncclgraph_find(g, NSIM_GRAPH_RING);
    if (gi == NULL) {
        nsim_ncclgraph_destroy(g);
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: no ring graph (id 0)", path);
    }
    if (nsim_search_compute(s->topo, &so, &sg, err) != NSIM_OK) {
        nsim_ncclgraph_destroy(g);
        return NSIM_ECONFIG;
    }
    uint32_t gidx = (uint32_t)(gi - nsim_ncclgraph_graph(g, 0));
    uint32_t diff = 0, d;
    printf("# search and planner vs %s (ring graph, seen from host 0)\n",
           path);
    d = sg->nchannels != gi->nchannels ||
        fabs(sg->bw_intra - gi->bw_intra / 1e9) > 1e-3 ||
        sg->type_intra != gi->type_intra;
    diff += d;
    printf("graph: search %u x %g/%g GB/s %s/%s crossNic %d, NCCL %u x "
           "%g/%g GB/s %s/%s crossNic %d%s\n",
           sg->nchannels, sg->bw_intra, sg->bw_inter,
           nsim_path_type_name(sg->type_intra),
           nsim_path_type_name(sg->type_inter), sg->crossnic, gi->nchannels,
           gi->bw_intra / 1e9, gi->bw_inter / 1e9,
           nsim_path_type_name(gi->type_intra),
           nsim_path_type_name(gi->type_inter), gi->crossnic,
           d ? "  DIFFERS" : "");
    d = p->nchannels != 2 * gi->nchannels;
    diff += d;
    printf("channels: planner %u, graph %u (%u after NCCL's doubling)%s\n",
           p->nchannels, gi->nchannels, 2 * gi->nchannels,
           d ? "  DIFFERS" : "");
    for (uint32_t c = 0; c < gi->nchannels; c++) {
        const nsim_graph_chan *gc = nsim_ncclgraph_channel(g, gidx, c);
        uint32_t order[1024], n = 0;
        int32_t in = -1, out = -1;
        int ss = c < sg->nchannels && same_search_channel(gc, sg, c);
        int sp = 0;
        if (c < p->nchannels) {
            host0_view(p, s->topo, c, order, &n, &in, &out);
            sp = same_channel(gc, order, n, in, out);
        }
        diff += !ss;
        printf("channel %02u: search %s, planner %s\n", c,
               ss ? "same" : "DIFFERS", sp ? "same" : "differs");
        print_order("graph", gc->ranks, gc->ngpus, s->topo, gc->nic_in,
                    gc->nic_out);
        if (c < sg->nchannels)
            print_order("search", &sg->intra[c * sg->ngpus], sg->ngpus,
                        s->topo, sg->nic_in[c], sg->nic_out[c]);
        if (c < p->nchannels)
            print_order("planner", order, n, s->topo, in, out);
    }
    printf("%u difference(s) between the search and NCCL\n", diff);
    nsim_search_graph_destroy(sg);
    nsim_ncclgraph_destroy(g);
    return NSIM_OK;
}

/* plan --graph-dump: NCCL's ring graph search on the scenario's topology,
 * printed as NCCL's NCCL_GRAPH log, and the communicator's channels. */
static int graph_dump(const nsim_scenario *s, nsim_err *err)
{
    nsim_search_graph *g = NULL;
    nsim_search_opts o = {0, s->cross_nic, 0, 0, -1};
    if (nsim_search_compute(s->topo, &o, &g, err) != NSIM_OK)
        return -1;
    nsim_search_dump(g, s->topo, stdout);
    printf("%u coll channels (graph %u x 2 postset",
           nsim_search_comm_channels(g, s->min_channels, s->max_channels),
           g->nchannels);
    if (s->min_channels || s->max_channels)
        printf(", NCCL_MIN/MAX_NCHANNELS %u/%u", s->min_channels,
               s->max_channels);
    printf(")\n");
    nsim_search_graph_destroy(g);
    return 0;
}

int nsim_cmd_plan(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_plan *plan = NULL;
    nsim_cli_run_opts ro = {0};
    char *text = NULL;
    nsim_out_begin();
    int rc = nsim_cli_load_run("plan", argc, argv, &s, &ro, &err);
    if (rc == 0 && ro.graph_dump) {
        rc = graph_dump(s, &err);
        nsim_scenario_destroy(s);
        return rc < 0 ? nsim_cli_fail(&err) : rc;
    }
    if (rc == 0 && ro.compare_graph != NULL) {
        nsim_plan_req req = nsim_scenario_request(s, s->max_bytes);
        req.algo = NSIM_ALGO_RING;
        req.proto = NSIM_PROTO_SIMPLE;
        req.coll = NSIM_COLL_ALLREDUCE;
        if (nsim_plan_build(s->topo, &req, &plan, &err) != NSIM_OK ||
            compare_graph(s, plan, ro.compare_graph, &err) != NSIM_OK)
            rc = -1;
        nsim_plan_destroy(plan);
        nsim_scenario_destroy(s);
        return rc < 0 ? nsim_cli_fail(&err) : rc;
    }
    if (rc == 0) {
        nsim_plan_req req;
        double pred;
        if (nsim_run_request(s, ro.size ? ro.size : s->max_bytes, &req,
                             &pred, &err) != NSIM_OK ||
            nsim_plan_build(s->topo, &req, &plan, &err) != NSIM_OK ||
            nsim_plan_to_json(plan, s->topo, &text, &err) != NSIM_OK)
            rc = -1;
    }
    if (rc == 0 && ro.plan_out != NULL) {
        size_t n = strlen(text);
        text[n] = '\n'; /* over the NUL: the length says where it ends */
        if (nsim_write_file_atomic(ro.plan_out, text, n + 1, &err))
            rc = -1;
    } else if (rc == 0) {
        printf("%s\n", text);
    }
    free(text);
    nsim_plan_destroy(plan);
    nsim_scenario_destroy(s);
    return nsim_cli_outputs_done(rc < 0 ? nsim_cli_fail(&err) : rc);
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
    if (argc == 2) { /* the file's values: its sources, or its name */
        cJSON *out = cJSON_Parse(text), *in = NULL;
        if (out == NULL || nsim_json_load(argv[1], &in, &err) != NSIM_OK) {
            cJSON_Delete(out);
            free(text);
            return nsim_cli_fail(&err);
        }
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(in, "params");
        if (fp == NULL)
            fp = in;
        cJSON *op = cJSON_GetObjectItemCaseSensitive(out, "params");
        const cJSON *it;
        cJSON_ArrayForEach(it, fp)
        {
            cJSON *e = cJSON_GetObjectItemCaseSensitive(op, it->string);
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, "source");
            char buf[1200];
            snprintf(buf, sizeof buf, "set by %s", argv[1]);
            if (e != NULL)
                cJSON_ReplaceItemInObjectCaseSensitive(
                    e, "source", cJSON_CreateString(cJSON_IsString(src)
                                                        ? src->valuestring
                                                        : buf));
        }
        free(text);
        text = cJSON_Print(out);
        cJSON_Delete(out);
        cJSON_Delete(in);
        if (text == NULL) {
            fprintf(stderr, "ncclsim: out of memory\n");
            return NSIM_EXIT_ERR;
        }
    }
    printf("%s\n", text);
    free(text);
    return NSIM_EXIT_OK;
}
