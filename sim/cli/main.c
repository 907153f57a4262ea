/* SPDX-License-Identifier: MIT
 *
 * main.c - ncclsim entry point: the subcommand table, help and version.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim/core/fileio.h"

#ifndef NSIM_VERSION
#define NSIM_VERSION "0.1.0"
#endif

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

const nsim_cmd nsim_cli_commands[] = {
    {"topo", "ACTION FILE...",
     "check, show, import, build, draw or read NCCL graphs of topologies",
     "ncclsim topo check FILE   validate FILE; prints a one-line summary\n"
     "ncclsim topo show [--host H | --all] FILE\n"
     "                          the GPU/NIC matrix of path types (as\n"
     "                          nvidia-smi topo -m), devices, links, and the\n"
     "                          route between every pair of GPUs; beyond\n"
     "                          128 devices or 16 GPUs only host 0's (or\n"
     "                          --host H's), unless --all\n"
     "ncclsim topo import A.xml [B.xml ...] -o OUT.json [--fabric F]\n"
     "        [--radix K] [--oversubscription R] [--roce] [--bw physical|nccl]\n"
     "        [--gpu-gen G] [--nic-speed BW] [--gpu-nvlink auto|none]\n"
     "                          NCCL topology XML (NCCL_TOPO_DUMP_FILE) to\n"
     "                          our JSON; several hosts joined by a fabric\n"
     "                          (GPUs a vendor file lists without <gpu>\n"
     "                          get the NVLinks NVML would report for the\n"
     "                          part or --gpu-gen; a note says what was\n"
     "                          assumed; --gpu-nvlink none: no NVLink)\n"
     "ncclsim topo build --nodes N --node-preset P [--fabric switch|\n"
     "        rail-fat-tree|fat-tree] [--radix K] [--oversubscription R]\n"
     "        [--roce] [-o OUT.json]\n"
     "                          a cluster of N preset nodes (dgx-a100,\n"
     "                          dgx-h100, hgx-h100, hgx-h200, pcie-8xl40s,\n"
     "                          pcie-2gpu-nop2p, gb200-nvl)\n"
     "ncclsim topo dot FILE [-o F]   Graphviz\n"
     "ncclsim topo graph GRAPH.xml --topo T\n"
     "                          what an NCCL graph dump holds, on T\n"
     "-o - writes to stdout. FILE is a JSON topology (\"ncclsim-topology\",\n"
     "README) or NCCL XML\n"
     "(docs/topology-import.md).\n",
     nsim_cmd_topo},
    {"run", "SCENARIO [OPTIONS]",
     "simulate a collective over a size range (nccl-tests table)",
     "ncclsim run SCENARIO [OPTIONS]\n"
     "sizes (K, M, G suffixes: powers of 1024, as nccl-tests):\n"
     "  -b, --minbytes SIZE    smallest size (default: the scenario's)\n"
     "  -e, --maxbytes SIZE    largest size (at most 1 TiB)\n"
     "  -f, --stepfactor F     multiply the size by F (> 1) each step\n"
     "  -i, --stepbytes SIZE   add SIZE (> 0) each step instead\n"
     "                         (a sweep visits at most 4096 sizes)\n"
     "the collective:\n"
     "  --collective NAME      replace the scenario's collective (allgather,\n"
     "                         ... or all_gather_perf, ...)\n"
     "  -d, --datatype TYPE    nccl-tests data type (int8, uint8, int32,\n"
     "                         uint32, int64, uint64, half, float, double,\n"
     "                         bfloat16, f8e4m3, f8e5m2: fp8 needs sm >= 90)\n"
     "  -o, --op OP            reduction: sum, prod, max, min, avg\n"
     "  -r, --root RANK        root of broadcast / reduce\n"
     "NCCL's knobs (the shell's NCCL_* variables apply too, under the\n"
     "scenario's \"env\"; a note on stderr says which took effect):\n"
     "  --algo A               NCCL_ALGO: Ring, Tree, NVLS, NVLSTree, PAT, a\n"
     "                         list (ring,tree: the tuner picks among them),\n"
     "                         ^ and a list to exclude, or auto (the tuner,\n"
     "                         even if the scenario forces one)\n"
     "  --proto P              NCCL_PROTO: Simple, LL, LL128, a list, ^list\n"
     "                         or auto\n"
     "  --nchannels N          force N channels (NCCL_MIN/MAX_NCHANNELS)\n"
     "  --qps N                QPs per connection (NCCL_IB_QPS_PER_CONNECTION)\n"
     "  --seed N               random seed\n"
     "  --fidelity F           auto (default: packet, but flow where the\n"
     "                         packet run would be slow or pass a budget;\n"
     "                         the table says from which size), packet\n"
     "                         (MTU packets hop by hop, at any cost) or\n"
     "                         flow (every WR and slice one max-min shared\n"
     "                         flow: for 1,000+ GPUs and sweeps)\n"
     "  --fold auto|on|off     a ring, tree, AllToAll or SendRecv on\n"
     "                         identical hosts played by a few of them\n"
     "                         (every host does its twin's work; the hosts\n"
     "                         a fault strikes among them); a Broadcast or\n"
     "                         Reduce chain (flow) played twice on a few,\n"
     "                         each other host adding the delay of one: auto\n"
     "                         (default) in flow runs, on in packet runs\n"
     "                         too and past the latency a fold may add (the\n"
     "                         row then errs long), off plays every host\n"
     "  --params FILE          model constants over the scenario's (a\n"
     "                         params file, e.g. ncclsim calibrate -o)\n"
     "  --graph GRAPH.xml      replay NCCL's dumped rings and NICs\n"
     "                         (NCCL_GRAPH_DUMP_FILE) instead of planning\n"
     "  --max-events N         stop a size that needs more events (default\n"
     "                         2e10; none: no limit)\n"
     "  --max-memory SIZE      stop a size whose state needs more (default\n"
     "                         75% of the memory available; none)\n"
     "how:\n"
     "  --mode simulate|analytic\n"
     "                         simulate (default), or NCCL's own tuner model\n"
     "                         (predicted times; none for sendrecv/alltoall)\n"
     "  --tuning               show each row's algorithm/protocol/channels\n"
     "                         and NCCL's predicted time\n"
     "outputs (FILE '-' is stdout; written whole when the run succeeds,\n"
     "none on failure; an output that is an input is refused):\n"
     "  --json FILE            the results as JSON\n"
     "  --csv FILE             the rows as CSV\n"
     "  --plot FILE.png        busbw against size with gnuplot (writes\n"
     "                         FILE.png.gp and .dat; PNG if gnuplot is there)\n"
     "  --trace FILE           Chrome trace (Perfetto) of the largest size:\n"
     "                         per rank a track per channel's thread block,\n"
     "                         per NET connection and QP (WRs, CQEs,\n"
     "                         retransmissions), slots in flight and link\n"
     "                         busy counters, flow arrows send->receive\n"
     "  --trace-cap N          at most about N trace events (default 1M):\n"
     "                         beyond it ops and records are sampled (noted)\n"
     "  --quiet                print no table (with --json)\n"
     "  --timing               print wall time and events per size (stderr)\n"
     "  --stats                counters of the largest size: connections,\n"
     "                         links, NIC ports, QPs, CQs (also in --json)\n"
     "  --debug                an NCCL_DEBUG=INFO-style account of the plan\n"
     "                         and an ibstat-like table of every HCA and QP\n"
     "nccl-tests flags:\n"
     "  -g, --ngpus N          GPUs per host thread: the thread's N launches\n"
     "                         per op bound its time\n"
     "  -G, --cudagraph N      ops launched from a CUDA graph: the host's\n"
     "                         launches leave the critical path\n"
     "  -C, --report_cputime 1 report the host thread's CPU time per op\n"
     "  -t -n -w -m -c -z -a -N -p -R\n"
     "                         (--nthreads --iters --warmup_iters\n"
     "                         --agg_iters --check --blocking --average\n"
     "                         --run_cycles --parallel_init\n"
     "                         --local_register) do not change a\n"
     "                         deterministic simulation: checked, noted,\n"
     "                         ignored\n"
     "The scenario's collective may be a nccl-tests binary name\n"
     "(all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
     "broadcast_perf, reduce_perf, sendrecv_perf, alltoall_perf).\n",
     nsim_cmd_run},
    {"plan", "SCENARIO [-o FILE]",
     "write the plan (rings, connections, per-rank ops) as JSON",
     "ncclsim plan SCENARIO [--size SIZE] [-o FILE] [RUN OPTIONS]\n"
     "  writes the plan for SIZE (default: the scenario's max_bytes) to\n"
     "  FILE (- or none: stdout); takes run's options (--algo, --proto,\n"
     "  --nchannels, --qps, ...: ncclsim help run)\n"
     "  --graph GRAPH.xml          use NCCL's dumped rings and NICs\n"
     "  --compare-graph GRAPH.xml  print where the planner's own rings,\n"
     "                             channel count and NICs differ from it\n",
     nsim_cmd_plan},
    {"sweep", "SCENARIO --set K=V...",
     "run the cartesian product of knob values (-j N, --mpi, --resume)",
     "ncclsim sweep SCENARIO --set KNOB=VALUES [--set ...] -o OUT.csv|OUT.json\n"
     "        [-j N] [--resume] [--mpi] [--quiet] [run's options: -b -e -f ...]\n"
     "  --set KNOB=VALUES  VALUES: a list 1,2,4,8, a range 2:32:x2 (multiply)\n"
     "                     or 1:8:+1 (add); KNOB: a scenario field (nchannels,\n"
     "                     qps_per_connection, buffsize, protocol, algorithm,\n"
     "                     channel_mode, collective, datatype, op, root, seed,\n"
     "                     gpus_per_thread, fidelity, fold), a fault's\n"
     "                     field (faults[0].at, .nic, .bw, .probability,\n"
     "                     .channel, .from, .to, .qp), an NCCL_* variable,\n"
     "                     or a model parameter (ncclsim params)\n"
     "  -o FILE            results, one row per point and size with every knob\n"
     "                     (.csv or .json; may be given twice; - : CSV on stdout)\n"
     "  -j N               N worker processes (output identical whatever N)\n"
     "  --resume           skip the points already in the (first) output\n"
     "  --mpi              under mpirun: points split over the ranks, rank 0\n"
     "                     gathers and writes (built when MPI is found)\n"
     "  --shard I/N        run only the points p with p % N == I (a Slurm\n"
     "                     array task; scripts/slurm_sweep_array.sh)\n"
     "  --from FILE        take the points FILE holds (a shard's output; may\n"
     "                     be repeated): merging the shards with the same\n"
     "                     --set options gives the single-machine output\n"
     "  --keep-going, -k   a point that fails is reported and the sweep goes\n"
     "                     on (the sizes it ran are kept; exit status 1)\n"
     "  --quiet            no progress bar (shown only when stderr is a tty)\n"
     "In a sweep -o is the output; the reduction is --op or --set op=...\n",
     nsim_cmd_sweep},
    {"plot", "RESULTS... --kind K",
     "gnuplot pictures of sweeps and comparisons (PNG or SVG)",
     "ncclsim plot RESULTS... --kind curves|heatmap|compare -o OUT.png|OUT.svg\n"
     "  --kind curves      busbw against size, one curve per configuration of\n"
     "                     a sweep (several files are overlaid)\n"
     "  --kind heatmap     --x KNOB --y KNOB [--size SIZE]: one cell per pair\n"
     "                     at SIZE (default: the largest size)\n"
     "  --kind compare     simulated vs measured busbw and the error (%), from\n"
     "                     ncclsim compare --json\n"
     "  --where KNOB=V     keep the rows with that knob value (repeatable)\n"
     "  --metric M         busbw (default), algbw or time\n"
     "  --title T, --width PX, --height PX\n"
     "  --script FILE      write the gnuplot script instead of rendering (-: stdout)\n"
     "RESULTS: the CSV or JSON of ncclsim sweep. The picture is written\n"
     "atomically (rendered to a temporary name, then renamed).\n",
     nsim_cmd_plot},
    {"explain", "SCENARIO -b SIZE",
     "what bounds one size: links, waits, phases, the tuner's pick",
     "ncclsim explain SCENARIO -b SIZE [--json FILE] [run's options]\n"
     "  simulates SIZE (default: the scenario's max_bytes) and names what\n"
     "  bounds it: the busiest link and NIC port and their utilisation, the\n"
     "  thread block (channel, rank) that waited longest and on what (a free\n"
     "  slot: credits; the receiver's CTS; the proxy's CQ poll; PCIe reads\n"
     "  from host memory; data from upstream), the blocks' copy rate, the\n"
     "  launch/latency floor, the share of time per phase (launch, fill,\n"
     "  steady, drain) and what NCCL's tuner would pick instead\n"
     "  --json FILE   the same figures as JSON (\"ncclsim-explain\")\n",
     nsim_cmd_explain},
    {"validate", "--backend B SCENARIO",
     "execute the plans on real hardware (host, cuda, nccl, verbs)",
     "ncclsim validate --backend host|cuda|nccl|verbs SCENARIO [OPTIONS]\n"
     "  runs the scenario's plan at each size on real hardware, timed as\n"
     "  nccl-tests times it, and prints measured and simulated time\n"
     "  --plan PLAN.json       play this plan (from `ncclsim plan`) instead\n"
     "                         of planning; refused if it does not fit\n"
     "  -o, --output FILE      the measurement (\"ncclsim-measurement\")\n"
     "  -n N, -w N, -c 0|1     timed iterations (20), warm-up (5), check\n"
     "  --op OP                the reduction (-o is the output here)\n"
     "  --trace FILE           Chrome trace of one executed op, per rank and\n"
     "                         channel, as `run --trace` draws the simulated\n"
     "  --timeout S            bound of every wait (30 s)\n"
     "  host:  --processes     a process per rank (fork, shared memory)\n"
     "                         instead of threads of one process\n"
     "  verbs: --hosts H:P --rank R --token T   one process per rank;\n"
     "                         rank 0 listens on H:P; under mpirun the rank\n"
     "                         comes from OMPI_COMM_WORLD_RANK / PMI_RANK\n"
     "  nccl:  --nccl-lib PATH libnccl.so to dlopen\n"
     "  cuda:  --microbench -o F  one GPU's block copy/reduce rates,\n"
     "                         launch overhead, pinned PCIe rates; F is also\n"
     "                         a params file (--params F) of what they imply\n"
     "  and every option of `ncclsim run` (-b -e -f -d --nchannels ...)\n"
     "ncclsim validate --describe-host -o TOPO.json [--ranks N] [--bw BW]\n"
     "        [--scenario-out SCENARIO.json]\n"
     "  this machine as a topology: cores as ranks, memory links at the\n"
     "  measured rate of all cores copying at once, one core's measured\n"
     "  memcpy rate as host_core_copy_bw (--bw BW: that rate, links 2 BW)\n",
     nsim_cmd_validate},
    {"params", "[FILE]", "print every model constant with its source",
     "ncclsim params [FILE]\n  prints the parameter table (with FILE's "
     "overrides applied) as JSON\n",
     nsim_cmd_params},
    {"log", "FILE", "what an NCCL_DEBUG=INFO log or nccl-tests output holds",
     "ncclsim log FILE   rings, trees, transports, NICs and the nccl-tests table\n", nsim_cmd_log},
    {"measure", "import|show FILE...",
     "hardware measurements into the ncclsim-measurement schema",
     "ncclsim measure import FILE... -o M.json [--partial]\n"
     "        [--collective C] [--ranks N] [--hosts N]\n"
     "        [--gpus-per-thread N] [--env NCCL_X=V ...]\n"
     "  reads nccl-tests output (launcher tags, -g, one or both columns),\n"
     "  NCCL_DEBUG=INFO logs (joined to the tables of the other files),\n"
     "  vendor markdown busbw tables, perftest output or its markdown\n"
     "  summaries, and ncclsim-measurement files; writes one file\n"
     "  (README \"Measurements\")\n"
     "  --partial       drop rows cut short instead of failing\n"
     "  --collective, --ranks, --hosts, --gpus-per-thread (-g), --env\n"
     "                  what a file does not say (a differing value is\n"
     "                  an error)\n"
     "ncclsim measure show FILE...   the series, as import reads them\n",
     nsim_cmd_measure},
    {"compare", "SCENARIO MEASURED...",
     "the scenario at measured sizes and knobs against the measurement",
     "ncclsim compare SCENARIO MEASURED... [run's options] [--plot F.png]\n"
     "        [--json F] [--in-place|--out-of-place] [--max-size SIZE]\n"
     "  MEASURED: anything measure import reads (nccl-tests output, INFO\n"
     "  logs, vendor tables, ncclsim-measurement files). Runs the scenario\n"
     "  at each measured size with the measured data type, reduction, -g\n"
     "  and NCCL_* settings (where the scenario or options do not fix the\n"
     "  algorithm, protocol or channels); prints measured and simulated\n"
     "  time and busbw, the error (simulated busbw / measured - 1), what\n"
     "  ncclsim ran and what the log says NCCL ran; a summary (median\n"
     "  |error| >= 1 MiB and < 1 MiB, bias = median signed error).\n"
     "  A measurement of another collective, rank or host count is refused.\n"
     "  --plot F.png   both busbw curves and the error (gnuplot)\n"
     "  --json F       the rows and summaries (\"ncclsim-compare\")\n"
     "  --in-place     compare the in-place column (default: out-of-place\n"
     "                 where measured)\n"
     "  --max-size S   leave out larger sizes\n",
     nsim_cmd_compare},
    {"calibrate", "SCENARIO MEASURED... -o P",
     "fit model constants to measurements (GSL nonlinear least squares)",
     "ncclsim calibrate SCENARIO MEASURED... -o PARAMS.json [--fit p1,p2]\n"
     "        [--sizes N] [--min-size S] [--max-size S] [--max-iter N]\n"
     "        [run's options]\n"
     "  fits, in log-time space over the simulator itself (trust region,\n"
     "  finite-difference Jacobian from re-runs, cached), the constants of\n"
     "  models/params.c that the measurements pin: step and launch\n"
     "  latencies, proxy and HCA costs, per-block copy rate, NVLS\n"
     "  efficiency, NVLink/PCIe/network link efficiency, PCIe and HCA read\n"
     "  efficiency, host-memory staging rate, CTS cost. Prints each fitted value\n"
     "  with its 95% interval and the value it replaces, the error before\n"
     "  and after; names what the data leave unidentified and which\n"
     "  measurement would pin it (an error for constants named in --fit).\n"
     "  The scenario describes the machine and its knobs: each measurement\n"
     "  that names its collective is run with it (fit on AllReduce,\n"
     "  predict AllGather).\n"
     "  -o FILE       the params file (run --params FILE, scenario params)\n"
     "  --fit LIST    only these constants\n"
     "  --try LIST    only these candidates; those the data leave\n"
     "                unidentified are noted, not refused\n"
     "  --sizes N     sizes per measurement (default 6, log-spread)\n"
     "  --min-size S  leave out smaller sizes (a constant that only large\n"
     "                sizes show: a link efficiency)\n"
     "  --max-size S  leave out larger sizes (default 1 GiB)\n"
     "  --max-iter N  trust-region iterations (default 40)\n"
     "  --timing      the wall time on stderr\n",
     nsim_cmd_calibrate},
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

int nsim_cli_outputs_done(int ex)
{
    nsim_err err = {0};
    if (ex == NSIM_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        NSIM_ERR(&err, NSIM_EIO, "stdout: cannot write: %s", strerror(errno));
        ex = nsim_cli_fail(&err); /* the table is lost: no outputs either */
    }
    if (ex != NSIM_EXIT_OK) {
        nsim_out_abort();
        return ex;
    }
    return nsim_out_commit(&err) == NSIM_OK ? NSIM_EXIT_OK
                                            : nsim_cli_fail(&err);
}

int main(int argc, char **argv)
{
    nsim_out_install_signals(); /* no temporary file outlives a ^C */
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
    int ex = c->run(argc - 1, argv + 1);
    /* what was printed must have reached stdout (> /dev/full: exit 1) */
    if (ex == NSIM_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "ncclsim: stdout: cannot write: %s\n",
                strerror(errno));
        return NSIM_EXIT_ERR;
    }
    return ex;
}
