/* SPDX-License-Identifier: MIT
 *
 * cli.h - the ncclsim command: the table of subcommands and what they share.
 *
 * Exit status: 0 success, 1 input or simulation error (one line on
 * stderr), 2 usage error. Only this layer prints to the terminal or exits.
 */
#ifndef NSIM_CLI_H
#define NSIM_CLI_H

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

/* Loads a topology from a JSON file, or an NCCL topology XML file when
 * the name ends in .xml (where the importer is built in). */
struct nsim_topo;
int nsim_cli_load_topo(const char *path, struct nsim_topo **out,
                       nsim_err *err);

int nsim_cmd_topo(int argc, char **argv);
int nsim_cmd_log(int argc, char **argv);
int nsim_cmd_run(int argc, char **argv);
int nsim_cmd_plan(int argc, char **argv);
int nsim_cmd_params(int argc, char **argv);

#endif
