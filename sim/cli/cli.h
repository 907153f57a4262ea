/* SPDX-License-Identifier: MIT
 *
 * cli.h - the ncclsim command: the table of subcommands and what they share.
 *
 * Exit status: 0 success, 1 input or simulation error (one line on
 * stderr), 2 usage error. Only this layer prints to the terminal or exits.
 */
#ifndef NSIM_CLI_H
#define NSIM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "sim/core/err.h"

#define NSIM_EXIT_OK 0
#define NSIM_EXIT_ERR 1
#define NSIM_EXIT_USAGE 2

typedef struct nsim_cmd {
    const char *name;
    const char *args;    /* one-line synopsis of arguments */
    const char *summary; /* one line */
    const char *help;    /* full text for "ncclsim help NAME" */
    int (*run)(int argc, char **argv);
} nsim_cmd;

/* The table (NULL-terminated), defined in main.c. */
extern const nsim_cmd nsim_cli_commands[];

/* Prints "ncclsim: msg" for err and returns NSIM_EXIT_ERR. */
int nsim_cli_fail(const nsim_err *err);
/* Prints "ncclsim CMD: msg" and a hint, returns NSIM_EXIT_USAGE. */
int nsim_cli_usage(const char *cmd, const char *fmt, ...) NSIM_PRINTF(2, 3);

/* Ends a command that writes outputs (staged since nsim_out_begin): with
 * ex == 0 commits them (a failure prints and returns NSIM_EXIT_ERR),
 * otherwise drops them, so a failed command leaves none behind. */
int nsim_cli_outputs_done(int ex);

/* Loads a topology from a JSON file, or an NCCL topology XML file when
 * the name ends in .xml (where the importer is built in). */
struct nsim_topo;
int nsim_cli_load_topo(const char *path, struct nsim_topo **out,
                       nsim_err *err);

/* The options run and plan share (and the commands built on the run
 * API: compare, calibrate, sweep, explain, validate). */
typedef struct nsim_cli_run_opts {
    const char *json_out, *plan_out;
    int quiet, timing, tuning, analytic, stats, debug, graph_dump;
    const char *graph, *compare_graph;
    const char *csv_out, *plot_out, *trace_out;
    uint64_t size; /* plan: the size to plan */
    uint32_t cudagraph; /* nccl-tests -G: ops launched from a CUDA graph */
    int cputime;        /* nccl-tests -C 1: report the host's CPU time */
    size_t trace_cap; /* --trace-cap: events kept (0: the default) */
} nsim_cli_run_opts;

/* Loads the scenario named in argv and applies run's options to it (-b
 * -e -f -i, knobs, --algo ...); cmd names the command in messages.
 * Returns 0, a usage exit status, or -1 with err set. */
struct nsim_scenario;
int nsim_cli_load_run(const char *cmd, int argc, char **argv,
                      struct nsim_scenario **out, nsim_cli_run_opts *ro,
                      nsim_err *err);
/* The header facts of a scenario for the nccl-tests table. */
struct nsim_report_meta;
struct nsim_report_meta nsim_cli_meta(const struct nsim_scenario *s,
                                      int tuning);

/* The command line of compare and calibrate: SCENARIO MEASURED... with
 * run's options (passed to nsim_cli_load_run as run_argv) and their own
 * (own(opt): how many values it takes, -1 if not theirs). */
typedef struct nsim_cli_measured {
    char **run_argv; /* argv[0], the scenario, run's options */
    int run_argc;
    char **files;
    size_t nfiles;
    const char *plot, *json, *out, *fit;
    int column; /* -1 auto, 0 out-of-place, 1 in-place */
    uint64_t max_size, min_size;
    int sizes, max_iter;
    int try_only; /* --try LIST rather than --fit LIST */
} nsim_cli_measured;
int nsim_cli_split_measured(const char *cmd, int argc, char **argv,
                            nsim_cli_measured *a, int (*own)(const char *));

int nsim_cmd_topo(int argc, char **argv);
int nsim_cmd_log(int argc, char **argv);
int nsim_cmd_run(int argc, char **argv);
int nsim_cmd_plan(int argc, char **argv);
int nsim_cmd_params(int argc, char **argv);
int nsim_cmd_measure(int argc, char **argv);
int nsim_cmd_compare(int argc, char **argv);
int nsim_cmd_calibrate(int argc, char **argv);
int nsim_cmd_sweep(int argc, char **argv);
int nsim_cmd_plot(int argc, char **argv);
int nsim_cmd_explain(int argc, char **argv);
int nsim_cmd_validate(int argc, char **argv);

#endif
