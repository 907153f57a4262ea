/* SPDX-License-Identifier: MIT
 *
 * main.c - ncclsim entry point: the subcommand table, help and version.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef NSIM_VERSION
#define NSIM_VERSION "0.1.0"
#endif

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

const nsim_cmd nsim_cli_commands[] = {
    {"topo", "ACTION FILE...",
     "check, show, import, build, draw or read NCCL graphs of topologies",
     "ncclsim topo check FILE   validate FILE; prints a one-line summary\n"
     "ncclsim topo show [--host H] FILE\n"
     "                          the GPU/NIC matrix of path types (as\n"
     "                          nvidia-smi topo -m), devices, links, and the\n"
     "                          route between every pair of GPUs\n"
     "ncclsim topo import A.xml [B.xml ...] -o OUT.json [--fabric F]\n"
     "        [--radix K] [--oversubscription R] [--roce] [--bw physical|nccl]\n"
     "        [--gpu-gen G] [--nic-speed BW]\n"
     "                          NCCL topology XML (NCCL_TOPO_DUMP_FILE) to\n"
     "                          our JSON; several hosts joined by a fabric\n"
     "ncclsim topo build --nodes N --node-preset P [--fabric switch|\n"
     "        rail-fat-tree|fat-tree] [--radix K] [--oversubscription R]\n"
     "        [--roce] [-o OUT.json]\n"
     "                          a cluster of N preset nodes (dgx-a100,\n"
     "                          dgx-h100, hgx-h100, hgx-h200, pcie-8xl40s,\n"
     "                          pcie-2gpu-nop2p, gb200-nvl)\n"
     "ncclsim topo dot FILE [-o F]   Graphviz\n"
     "ncclsim topo graph GRAPH.xml --topo T\n"
     "                          what an NCCL graph dump holds, on T\n"
     "FILE is a JSON topology (\"ncclsim-topology\", README) or NCCL XML\n"
     "(docs/topology-import.md).\n",
     nsim_cmd_topo},
    {"run", "SCENARIO [OPTIONS]",
     "simulate a collective over a size range (nccl-tests table)",
     "ncclsim run SCENARIO [OPTIONS]\n"
     "  -b, --minbytes SIZE    smallest size (default: the scenario's)\n"
     "  -e, --maxbytes SIZE    largest size\n"
     "  -f, --stepfactor F     multiply the size by F each step\n"
     "  -i, --stepbytes SIZE   add SIZE each step instead\n"
     "  --nchannels N          force N channels (NCCL_MIN/MAX_NCHANNELS)\n"
     "  --qps N                QPs per connection (NCCL_IB_QPS_PER_CONNECTION)\n"
     "  --seed N               random seed\n"
     "  --max-events N         stop a size that needs more events (default\n"
     "                         2e10; none: no limit)\n"
     "  --max-memory SIZE      stop a size whose state needs more (default\n"
     "                         75% of the memory available; none)\n"
     "  --json FILE            also write the results as JSON\n"
     "  --csv FILE             the rows as CSV\n"
     "  --plot FILE.png        busbw against size with gnuplot (writes\n"
     "                         FILE.png.gp and .dat; PNG if gnuplot is there)\n"
     "  --trace FILE           Chrome trace (Perfetto) of every thread\n"
     "                         block's ops for the largest size\n"
     "  --quiet                print nothing (with --json)\n"
     "  --timing               print wall time and events per size (stderr)\n"
     "  --stats                counters of the largest size: connections,\n"
     "                         links, NIC ports, QPs, CQs (also in --json)\n"
     "  --graph GRAPH.xml      replay NCCL's dumped rings and NICs\n"
     "                         (NCCL_GRAPH_DUMP_FILE) instead of planning\n"
     "  --debug                an NCCL_DEBUG=INFO-style account of the plan\n"
     "                         and an ibstat-like table of every HCA and QP\n"
     "  --collective NAME      replace the scenario's collective (allgather,\n"
     "                         ... or all_gather_perf, ...)\n"
     "  -d, --datatype TYPE    nccl-tests data type (float, half, ...)\n"
     "  -o, --op OP            reduction: sum, prod, max, min, avg\n"
     "  -r, --root RANK        root of broadcast / reduce\n"
     "  --algo A, --proto P    force NCCL_ALGO (Ring, Tree, NVLS,\n"
     "                         NVLSTree, PAT) / NCCL_PROTO (Simple, LL,\n"
     "                         LL128); auto: the\n"
     "                         tuner's pick, even if the scenario forces one\n"
     "  -g N                   GPUs per host thread (nccl-tests -g): the\n"
     "                         thread's N launches per op bound its time\n"
     "  -t -n -w -m -c -z      nccl-tests flags that do not change a\n"
     "                         deterministic simulation: noted, ignored\n"
     "The scenario's collective may be a nccl-tests binary name\n"
     "(all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
     "broadcast_perf, reduce_perf, sendrecv_perf, alltoall_perf).\n"
     "Sizes take K, M, G suffixes (powers of 1024), as nccl-tests.\n",
     nsim_cmd_run},
    {"plan", "SCENARIO [-o FILE]",
     "write the plan (rings, connections, per-rank ops) as JSON",
     "ncclsim plan SCENARIO [--size SIZE] [-o FILE] [--nchannels N] [--qps N]\n"
     "  writes the plan for SIZE (default: the scenario's max_bytes)\n"
     "  --graph GRAPH.xml          use NCCL's dumped rings and NICs\n"
     "  --compare-graph GRAPH.xml  print where the planner's own rings,\n"
     "                             channel count and NICs differ from it\n",
     nsim_cmd_plan},
    {"params", "[FILE]", "print every model constant with its source",
     "ncclsim params [FILE]\n  prints the parameter table (with FILE's "
     "overrides applied) as JSON\n",
     nsim_cmd_params},
    {"log", "FILE", "what an NCCL_DEBUG=INFO log or nccl-tests output holds",
     "ncclsim log FILE   rings, trees, transports, NICs and the nccl-tests table\n", nsim_cmd_log},
    {"version", "", "print the version", "ncclsim version\n", cmd_version},
    {"help", "[COMMAND]", "general help, or help on one command",
     "ncclsim help [COMMAND]\n", cmd_help},
    {NULL, NULL, NULL, NULL, NULL},
};

static const nsim_cmd *find_cmd(const char *name)
{
    for (const nsim_cmd *c = nsim_cli_commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static void print_usage(FILE *f)
{
    fprintf(f, "usage: ncclsim COMMAND [ARGS]\n\n"
               "ncclsim simulates NCCL collectives over channels and queue "
               "pairs.\n\ncommands:\n");
    for (const nsim_cmd *c = nsim_cli_commands; c->name != NULL; c++)
        fprintf(f, "  %-8s %-22s %s\n", c->name, c->args, c->summary);
    fprintf(f, "\nncclsim help COMMAND shows the options of one command.\n");
}

static int cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return nsim_cli_usage("version", "takes no arguments");
    printf("ncclsim %s\n", NSIM_VERSION);
    return NSIM_EXIT_OK;
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 2)
        return nsim_cli_usage("help", "takes at most one command name");
    if (argc == 1) {
        print_usage(stdout);
        return NSIM_EXIT_OK;
    }
    const nsim_cmd *c = find_cmd(argv[1]);
    if (c == NULL)
        return nsim_cli_usage("help", "no command named '%s'", argv[1]);
    printf("%s", c->help);
    return NSIM_EXIT_OK;
}

int nsim_cli_fail(const nsim_err *err)
{
    fprintf(stderr, "ncclsim: %s\n",
            err->msg[0] ? err->msg : nsim_strerror(err->code));
    return NSIM_EXIT_ERR;
}

int nsim_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ncclsim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see: ncclsim help %s)\n", cmd);
    return NSIM_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return NSIM_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(1, argv + 1);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv + 1);
    const nsim_cmd *c = find_cmd(argv[1]);
    if (c == NULL) {
        fprintf(stderr, "ncclsim: unknown command '%s'\n", argv[1]);
        print_usage(stderr);
        return NSIM_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
