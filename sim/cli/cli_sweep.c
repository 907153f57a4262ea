/* SPDX-License-Identifier: MIT
 *
 * cli_sweep.c - "ncclsim sweep": the cartesian product of --set knobs over
 * a scenario's sizes, on -j worker processes or over MPI ranks (--mpi),
 * written (atomically, sorted by point, so the same whatever runs it) as
 * CSV or JSON, checkpointed as points finish so that --resume skips the
 * points already in the output.
 *
 * Workers are forked processes (the models keep per-run state in the
 * executor, but a process per worker also isolates a point that crashes);
 * each reads point numbers from a pipe and answers with its rows.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef NSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "sim/core/fileio.h"
#include "sim/core/jread.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"
#include "sim/exec/sweep.h"

#define MAX_OUTPUTS 4
#define MAX_JOBS 256

typedef struct sweep_cli {
    nsim_sweep *sw;
    const char *outputs[MAX_OUTPUTS];
    int noutputs;
    int jobs, resume, mpi, quiet, analytic, keep_going;
    /* --jobs: each worker's memory budget where the run gives none (the
     * default, 75% of what is available, shared by the workers); 0: the
     * run's own */
    uint64_t worker_memory;
    size_t nfailed;
    const char *from[64]; /* --from FILE: rows of points already run */
    int nfrom;
    size_t shard, nshards, skipped; /* --shard I/N */
    int argc;      /* run's options and the scenario, for nsim_cli_load_run */
    char **argv;
    char name[128];
    /* results */
    nsim_sweep_row *rows;
    size_t nrows, caprows;
    unsigned char *done; /* per point */
    size_t npoints, ndone, ntodo, nrun;
    double t0, last_write;
    int progress;
} sweep_cli;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* nccl-tests flags that only print a note: dropped from the per-point
 * loads after the first so that the note is printed once. */
static int is_noted_flag(const char *a, int *takes_value)
{
    static const char *const longs[] = {"--nthreads", "--iters",
                                        "--warmup_iters", "--agg_iters",
                                        "--check", "--blocking", "--average",
                                        "--run_cycles", "--parallel_init",
                                        "--local_register", NULL};
    *takes_value = 0;
    if (a[0] == '-' && a[1] != '-' && a[1] != '\0' && strchr("tnwmczaNpR", a[1])) {
        *takes_value = a[2] == '\0';
        return 1;
    }
    for (const char *const *l = longs; *l; l++) {
        size_t n = strlen(*l);
        if (strncmp(a, *l, n) == 0 && (a[n] == '\0' || a[n] == '=')) {
            *takes_value = a[n] == '\0';
            return 1;
        }
    }
    return 0;
}

static int load_point(sweep_cli *c, int first, nsim_scenario **s,
                      nsim_err *err)
{
    nsim_cli_run_opts ro = {0};
    char *argv[512];
    int argc = 0;
    for (int i = 0; i < c->argc && argc < 511; i++) {
        int tv;
        if (!first && i > 0 && is_noted_flag(c->argv[i], &tv)) {
            i += tv;
            continue;
        }
        argv[argc++] = c->argv[i];
    }
    argv[argc] = NULL;
    *s = NULL;
    int rc = nsim_cli_load_run("sweep", argc, argv, s, &ro, err);
    if (rc > 0)
        return rc;
    if (rc == 0 && (ro.json_out || ro.csv_out || ro.plot_out ||
                    ro.trace_out || ro.stats || ro.debug || ro.plan_out ||
                    ro.graph_dump || ro.timing))
        return nsim_cli_usage("sweep", "--json/--csv/--plot/--trace/--stats/"
                                       "--debug/--timing are options of "
                                       "'ncclsim run'; sweep writes -o FILE "
                                       "(.csv or .json)");
    if (rc == 0)
        c->analytic = ro.analytic;
    return rc < 0 ? -1 : 0;
}

static int run_one(sweep_cli *c, uint32_t point, nsim_sweep_row **rows,
                   size_t *n, nsim_err *err)
{
    nsim_scenario *s = NULL;
    int rc = load_point(c, 0, &s, err);
    if (rc == 0 && s->max_memory == 0 && c->worker_memory != 0)
        s->max_memory = c->worker_memory;
    if (rc == 0 && nsim_sweep_apply(c->sw, point, s, err) != NSIM_OK)
        rc = -1;
    if (rc == 0 &&
        nsim_sweep_run_point(s, c->analytic, point, rows, n, err) != NSIM_OK)
        rc = -1;
    nsim_scenario_destroy(s);
    if (rc != 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        char where[384] = "";
        size_t len = 0;
        for (size_t a = 0; a < nsim_sweep_naxes(c->sw) && len < 300; a++)
            len += (size_t)snprintf(where + len, sizeof where - len, "%s%s=%s",
                                    a ? " " : "", nsim_sweep_axis_name(c->sw, a),
                                    nsim_sweep_value(c->sw, point, a));
        return NSIM_ERR(err, NSIM_ECONFIG, "point %u (%s): %s", point, where,
                        msg);
    }
    return NSIM_OK;
}

static int add_rows(sweep_cli *c, const nsim_sweep_row *r, size_t n,
                    nsim_err *err)
{
    if (n == 0)
        return NSIM_OK; /* a point that failed (--keep-going) */
    if (c->nrows + n > c->caprows) {
        size_t cap = c->caprows ? c->caprows : 256;
        while (cap < c->nrows + n)
            cap *= 2;
        nsim_sweep_row *g = realloc(c->rows, cap * sizeof *g);
        if (g == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        c->rows = g;
        c->caprows = cap;
    }
    if (n > 0) /* a failed point hands no rows (r NULL) */
        memcpy(c->rows + c->nrows, r, n * sizeof *r);
    c->nrows += n;
    return NSIM_OK;
}

static int write_outputs(sweep_cli *c, nsim_err *err)
{
    nsim_sweep_sort_rows(c->rows, c->nrows);
    for (int i = 0; i < c->noutputs; i++) {
        char *text = NULL;
        NSIM_TRY(nsim_sweep_format(c->sw, c->name,
                                   ends_with(c->outputs[i], ".json"), c->rows,
                                   c->nrows, &text, err));
        int rc = strcmp(c->outputs[i], "-") == 0
                     ? (fputs(text, stdout) < 0 ? NSIM_EIO : NSIM_OK)
                     : nsim_write_file_atomic(c->outputs[i], text,
                                              strlen(text), err);
        free(text);
        if (rc != NSIM_OK)
            return rc == NSIM_EIO ? NSIM_ERR(err, rc, "stdout: write failed")
                                  : rc;
    }
    c->last_write = now_s();
    return NSIM_OK;
}

static void progress(sweep_cli *c, int final)
{
    if (!c->progress)
        return;
    double el = now_s() - c->t0;
    double frac = c->ntodo ? (double)c->nrun / (double)c->ntodo : 1;
    double eta = c->nrun ? el / (double)c->nrun * (double)(c->ntodo - c->nrun)
                         : 0;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\rsweep [%s] %zu/%zu points %3.0f%%  %d:%02d elapsed",
            bar, c->nrun, c->ntodo, frac * 100, (int)el / 60, (int)el % 60);
    if (c->nrun && !final)
        fprintf(stderr, "  ETA %d:%02d ", (int)eta / 60, (int)eta % 60);
    else
        fprintf(stderr, "           ");
    if (final)
        fprintf(stderr, "\n");
    fflush(stderr);
}

/* A point finished: keep its rows, checkpoint every 2 s. */
static int point_done(sweep_cli *c, uint32_t point, const nsim_sweep_row *r,
                      size_t n, nsim_err *err)
{
    NSIM_TRY(add_rows(c, r, n, err));
    c->done[point] = 1;
    c->nrun++;
    progress(c, 0);
    if (now_s() - c->last_write >= 2.0 && c->nrun < c->ntodo)
        NSIM_TRY(write_outputs(c, err));
    return NSIM_OK;
}

/* --keep-going: a point that failed is reported, the sizes it ran
 * before the error are kept, and the sweep goes on. */
static int point_failed(sweep_cli *c, uint32_t point, const nsim_sweep_row *r,
                        size_t n, const nsim_err *perr, nsim_err *err)
{
    if (c->progress)
        fprintf(stderr, "\n");
    fprintf(stderr, "ncclsim sweep: %s\n", perr->msg);
    c->nfailed++;
    return point_done(c, point, r, n, err);
}

static int run_serial(sweep_cli *c, nsim_err *err)
{
    for (size_t p = 0; p < c->npoints; p++) {
        if (c->done[p])
            continue;
        nsim_sweep_row *r = NULL;
        size_t n = 0;
        int rc = run_one(c, (uint32_t)p, &r, &n, err);
        if (rc == NSIM_OK)
            rc = point_done(c, (uint32_t)p, r, n, err);
        else if (c->keep_going)
            rc = point_failed(c, (uint32_t)p, r, n, err, err);
        free(r);
        NSIM_TRY(rc);
    }
    return NSIM_OK;
}

/* --- worker processes --- */

typedef struct msg_head {
    uint32_t point;
    int32_t rc;
    uint64_t nrows;
    char msg[sizeof(((nsim_err *)0)->msg)];
} msg_head;

static int full_io(int fd, void *buf, size_t len, int wr)
{
    char *p = buf;
    while (len > 0) {
        ssize_t k = wr ? write(fd, p, len) : read(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static void worker_main(sweep_cli *c, int cmd, int res)
{
    uint32_t point;
    /* the parent's temporary files are the parent's to remove */
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    while (full_io(cmd, &point, sizeof point, 0) == 0) {
        nsim_err err = {0};
        nsim_sweep_row *r = NULL;
        size_t n = 0;
        msg_head h = {point, 0, 0, ""};
        h.rc = run_one(c, point, &r, &n, &err);
        h.nrows = n;
        if (h.rc != NSIM_OK)
            snprintf(h.msg, sizeof h.msg, "%s", err.msg);
        if (full_io(res, &h, sizeof h, 1) != 0 ||
            (n && full_io(res, r, n * sizeof *r, 1) != 0))
            _exit(1);
        free(r);
    }
    _exit(0);
}

typedef struct worker {
    pid_t pid;
    int cmd, res; /* parent's ends */
    int64_t point; /* running, -1 idle */
} worker;

static void stop_workers(worker *w, int n)
{
    for (int i = 0; i < n; i++) {
        if (w[i].cmd >= 0)
            close(w[i].cmd);
        w[i].cmd = -1;
    }
    for (int i = 0; i < n; i++) {
        if (w[i].pid > 0) {
            if (w[i].point >= 0)
                kill(w[i].pid, SIGTERM);
            waitpid(w[i].pid, NULL, 0);
        }
        if (w[i].res >= 0)
            close(w[i].res);
    }
}

static int start_worker(sweep_cli *c, worker *w, nsim_err *err)
{
    int a[2], b[2];
    if (pipe(a) != 0)
        return NSIM_ERR(err, NSIM_EIO, "pipe: %s", strerror(errno));
    if (pipe(b) != 0) {
        close(a[0]);
        close(a[1]);
        return NSIM_ERR(err, NSIM_EIO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(a[0]); close(a[1]); close(b[0]); close(b[1]);
        return NSIM_ERR(err, NSIM_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        worker_main(c, a[0], b[1]);
    }
    close(a[0]);
    close(b[1]);
    *w = (worker){pid, a[1], b[0], -1};
    return NSIM_OK;
}

static int dispatch(worker *w, size_t *next, const sweep_cli *c)
{
    while (*next < c->npoints && c->done[*next])
        (*next)++;
    if (*next >= c->npoints)
        return 0;
    uint32_t p = (uint32_t)*next;
    if (full_io(w->cmd, &p, sizeof p, 1) != 0)
        return -1;
    w->point = (int64_t)p;
    (*next)++;
    return 1;
}

/* One answer from w: its rows, or the error. */
static int collect(sweep_cli *c, worker *w, nsim_err *err)
{
    msg_head h;
    if (full_io(w->res, &h, sizeof h, 0) != 0) {
        int st = 0;
        waitpid(w->pid, &st, 0);
        w->pid = -1;
        return NSIM_ERR(err, NSIM_EIO, "the worker running point %lld died%s",
                        (long long)w->point,
                        WIFSIGNALED(st) ? " (killed by a signal)" : "");
    }
    if (h.rc != NSIM_OK && !c->keep_going) {
        w->point = -1;
        return NSIM_ERR(err, h.rc, "%s", h.msg);
    }
    nsim_sweep_row *r = calloc(h.nrows ? h.nrows : 1, sizeof *r);
    if (r == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    if (h.nrows && full_io(w->res, r, h.nrows * sizeof *r, 0) != 0) {
        free(r);
        return NSIM_ERR(err, NSIM_EIO, "the worker running point %u died",
                        h.point);
    }
    w->point = -1;
    nsim_err perr = {0};
    snprintf(perr.msg, sizeof perr.msg, "%s", h.msg);
    int rc = h.rc == NSIM_OK ? point_done(c, h.point, r, h.nrows, err)
                             : point_failed(c, h.point, r, h.nrows, &perr, err);
    free(r);
    return rc;
}

static int run_parallel(sweep_cli *c, nsim_err *err)
{
    int n = c->jobs;
    worker w[MAX_JOBS];
    struct pollfd pf[MAX_JOBS];
    size_t next = 0;
    int busy = 0, rc = NSIM_OK;
    if ((size_t)n > c->ntodo)
        n = (int)c->ntodo;
    signal(SIGPIPE, SIG_IGN);
    /* n runs at once: each gets a share of the default memory budget,
     * so that together they stay in memory */
    nsim_exec_default_budget(NULL, &c->worker_memory);
    c->worker_memory /= (uint64_t)n;
    for (int i = 0; i < n; i++)
        w[i] = (worker){-1, -1, -1, -1};
    for (int i = 0; i < n && rc == NSIM_OK; i++)
        rc = start_worker(c, &w[i], err);
    for (int i = 0; i < n && rc == NSIM_OK; i++) {
        int d = dispatch(&w[i], &next, c);
        if (d < 0)
            rc = NSIM_ERR(err, NSIM_EIO, "a worker exited early");
        busy += d > 0;
    }
    while (rc == NSIM_OK && busy > 0) {
        int np = 0, map[MAX_JOBS];
        for (int i = 0; i < n; i++)
            if (w[i].point >= 0) {
                pf[np] = (struct pollfd){w[i].res, POLLIN, 0};
                map[np++] = i;
            }
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = NSIM_ERR(err, NSIM_EIO, "poll: %s", strerror(errno));
            break;
        }
        for (int k = 0; k < np && rc == NSIM_OK; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            worker *x = &w[map[k]];
            busy--;
            if ((rc = collect(c, x, err)) != NSIM_OK)
                break;
            int d = dispatch(x, &next, c);
            if (d < 0)
                rc = NSIM_ERR(err, NSIM_EIO, "a worker exited early");
            busy += d > 0;
        }
    }
    stop_workers(w, n);
    return rc;
}

/* --- MPI: points split over ranks, rows gathered on rank 0 --- */

#ifdef NSIM_HAVE_MPI
/* A rank done with its points waits for the others without spinning (an
 * MPI collective busy-polls, taking a core from the ranks still
 * simulating when ranks share cores). */
static void idle_barrier(void)
{
    MPI_Request req;
    int done = 0;
    struct timespec ms = {0, 5000000};
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&ms, NULL);
    }
}

static int run_mpi(sweep_cli *c, int rank, int size, nsim_err *err)
{
    int rc = NSIM_OK, any = 0;
    size_t k = 0;
    MPI_Bcast(c->done, (int)c->npoints, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    c->nrun = 0;
    for (size_t p = 0; p < c->npoints && rc == NSIM_OK; p++) {
        if (c->done[p])
            continue;
        if ((int)(k++ % (size_t)size) != rank)
            continue;
        nsim_sweep_row *r = NULL;
        size_t n = 0;
        rc = run_one(c, (uint32_t)p, &r, &n, err);
        if (rc != NSIM_OK && c->keep_going) {
            fprintf(stderr, "ncclsim sweep: rank %d: %s\n", rank, err->msg);
            c->nfailed++;
            rc = NSIM_OK;
        }
        if (rc == NSIM_OK)
            rc = add_rows(c, r, n, err);
        c->nrun++;
        if (rank == 0)
            progress(c, 0);
        free(r);
    }
    int mine = rc != NSIM_OK;
    idle_barrier();
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        if (!mine)
            NSIM_ERR(err, NSIM_ECONFIG, "another rank failed (see its "
                                        "message)");
        return mine ? rc : NSIM_ECONFIG;
    }
    /* rank 0 keeps the resumed rows it read; every rank sends what it ran */
    size_t own = rank == 0 ? c->nrows : c->nrows;
    long long bytes = (long long)(own * sizeof(nsim_sweep_row));
    long long *counts = NULL;
    if (rank == 0 && (counts = calloc((size_t)size, sizeof *counts)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    MPI_Gather(&bytes, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (rank != 0) {
        /* in chunks of < 2 GiB (MPI counts are int) */
        const char *p = (const char *)c->rows;
        for (long long off = 0; off < bytes;) {
            int chunk = (int)(bytes - off > (1 << 30) ? (1 << 30) : bytes - off);
            MPI_Send(p + off, chunk, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
            off += chunk;
        }
        return NSIM_OK;
    }
    for (int r = 1; r < size && rc == NSIM_OK; r++) {
        size_t nr = (size_t)counts[r] / sizeof(nsim_sweep_row);
        nsim_sweep_row *buf = calloc(nr ? nr : 1, sizeof *buf);
        if (buf == NULL) {
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
            break;
        }
        char *p = (char *)buf;
        for (long long off = 0; off < counts[r];) {
            int chunk = (int)(counts[r] - off > (1 << 30) ? (1 << 30)
                                                          : counts[r] - off);
            MPI_Recv(p + off, chunk, MPI_BYTE, r, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            off += chunk;
        }
        rc = add_rows(c, buf, nr, err);
        free(buf);
    }
    free(counts);
    return rc;
}
#endif

/* --- options --- */

static int usage_value(const char *opt)
{
    return nsim_cli_usage("sweep", "%s needs a value", opt);
}

/* Takes sweep's own options out of argv; the rest (the scenario and run's
 * options) stays in c->argv. */
static int parse_args(sweep_cli *c, int argc, char **argv, nsim_err *err)
{
    c->argv = calloc((size_t)argc + 1, sizeof *c->argv);
    if (c->argv == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory"), -1;
    c->argv[c->argc++] = argv[0];
    c->jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--set") == 0 || strcmp(a, "-j") == 0 ||
            strcmp(a, "--jobs") == 0 || strcmp(a, "--out") == 0 ||
            strcmp(a, "-o") == 0) {
            if (i + 1 >= argc)
                return usage_value(a);
            v = argv[++i];
        } else if (strncmp(a, "--set=", 6) == 0 || strncmp(a, "--jobs=", 7) == 0 ||
                   strncmp(a, "--out=", 6) == 0) {
            v = strchr(a, '=') + 1;
        } else if (strncmp(a, "-j", 2) == 0 && a[2] != '\0') {
            v = a + 2;
        }
        if (v != NULL && (strncmp(a, "--set", 5) == 0)) {
            if (nsim_sweep_add_axis(c->sw, v, err) != NSIM_OK)
                return nsim_cli_usage("sweep", "%s", err->msg);
        } else if (v != NULL && (a[1] == 'j' || strncmp(a, "--jobs", 6) == 0)) {
            char *end;
            long j = strtol(v, &end, 10);
            if (end == v || *end != '\0' || j < 1 || j > MAX_JOBS)
                return nsim_cli_usage("sweep", "-j: expected 1..%d, got '%s'",
                                      MAX_JOBS, v);
            c->jobs = (int)j;
        } else if (v != NULL) {
            if (c->noutputs == MAX_OUTPUTS)
                return nsim_cli_usage("sweep", "-o: at most %d outputs",
                                      MAX_OUTPUTS);
            if (!ends_with(v, ".csv") && !ends_with(v, ".json") &&
                strcmp(v, "-") != 0)
                return nsim_cli_usage("sweep", "-o '%s': expected a .csv or "
                                               ".json file, or - (CSV on "
                                               "stdout)", v);
            c->outputs[c->noutputs++] = v;
        } else if (strcmp(a, "--resume") == 0) {
            c->resume = 1;
        } else if (strcmp(a, "--mpi") == 0) {
            c->mpi = 1;
        } else if (strcmp(a, "--from") == 0 || strcmp(a, "--shard") == 0) {
            if (i + 1 >= argc)
                return usage_value(a);
            const char *val = argv[++i];
            if (a[2] == 'f') {
                if (c->nfrom == 64)
                    return nsim_cli_usage("sweep", "--from: at most 64 files");
                c->from[c->nfrom++] = val;
            } else {
                char *e1, *e2;
                unsigned long si = strtoul(val, &e1, 10), sn = 0;
                if (e1 != val && *e1 == '/')
                    sn = strtoul(e1 + 1, &e2, 10);
                if (e1 == val || *e1 != '/' || sn < 1 || sn > 100000 ||
                    *e2 != '\0' || si >= sn || val[0] == '-')
                    return nsim_cli_usage("sweep", "--shard: expected I/N "
                                                   "with 0 <= I < N, got '%s'",
                                          val);
                c->shard = si;
                c->nshards = sn;
            }
        } else if (strcmp(a, "--keep-going") == 0 || strcmp(a, "-k") == 0) {
            c->keep_going = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            c->quiet = 1;
        } else {
            c->argv[c->argc++] = argv[i];
        }
    }
    if (nsim_sweep_naxes(c->sw) == 0)
        return nsim_cli_usage("sweep", "expected at least one --set KNOB=VALUES");
    if (c->noutputs == 0)
        return nsim_cli_usage("sweep", "expected -o FILE.csv or -o FILE.json");
    if (c->resume) {
        for (int i = 0; i < c->noutputs; i++)
            if (strcmp(c->outputs[i], "-") == 0)
                return nsim_cli_usage("sweep", "--resume reads the output "
                                               "back: -o - cannot be resumed");
    }
    if (c->mpi && c->nshards > 1)
        return nsim_cli_usage("sweep", "--shard and --mpi both split the "
                                       "points: use one");
    if (c->mpi && c->jobs > 1)
        return nsim_cli_usage("sweep", "--mpi runs one process per rank: "
                                       "start more ranks instead of -j");
    return 0;
}

/* How many sizes point runs (its knobs may change the sizes). */
static int point_sizes(sweep_cli *c, uint32_t point, size_t *n, nsim_err *err)
{
    nsim_scenario *s = NULL;
    uint64_t *sizes = NULL;
    int rc = load_point(c, 0, &s, err) == 0 ? NSIM_OK : NSIM_ECONFIG;
    if (rc == NSIM_OK)
        rc = nsim_sweep_apply(c->sw, point, s, err);
    if (rc == NSIM_OK)
        rc = nsim_run_sizes(s, &sizes, n, err);
    free(sizes);
    nsim_scenario_destroy(s);
    return rc;
}

/* The rows of the points that are complete in path (--resume: the
 * first output; --from: a shard's output); a point already done is not
 * taken twice. */
static int read_done(sweep_cli *c, const char *path, int forget,
                     nsim_err *err)
{
    nsim_sweep_row *r = NULL;
    size_t n = 0;
    NSIM_TRY(nsim_sweep_read(c->sw, path, &r, &n, err));
    if (forget)
        nsim_inputs_forget(path); /* read back to be rewritten */
    nsim_sweep_sort_rows(r, n);
    int rc = NSIM_OK;
    for (size_t i = 0, j; i < n && rc == NSIM_OK; i = j) {
        for (j = i; j < n && r[j].point == r[i].point; j++)
            ;
        if (c->done[r[i].point])
            continue;
        /* a point counts as done when all of its sizes are there */
        size_t want = 0;
        rc = point_sizes(c, r[i].point, &want, err);
        if (rc == NSIM_OK && want == j - i) {
            rc = add_rows(c, r + i, j - i, err);
            c->done[r[i].point] = 1;
            c->ndone++;
        }
    }
    free(r);
    return rc;
}

static int resume(sweep_cli *c, nsim_err *err)
{
    for (int i = 0; i < c->nfrom; i++)
        NSIM_TRY(read_done(c, c->from[i], 0, err));
    if (c->resume && access(c->outputs[0], F_OK) == 0)
        NSIM_TRY(read_done(c, c->outputs[0], 1, err));
    /* --shard I/N: the others' points count as done here */
    if (c->nshards > 1)
        for (size_t p = 0; p < c->npoints; p++)
            if (!c->done[p] && p % c->nshards != c->shard) {
                c->done[p] = 1;
                c->skipped++;
            }
    return NSIM_OK;
}

static int sweep_main(sweep_cli *c, int argc, char **argv, int rank,
                      int nranks, nsim_err *err)
{
    nsim_scenario *s = NULL;
    int rc = parse_args(c, argc, argv, err);
    if (rc != 0)
        return rc;
    rc = load_point(c, rank == 0, &s, err);
    if (rc == 0) {
        snprintf(c->name, sizeof c->name, "%s", s->name);
        if (nsim_sweep_check(c->sw, s, err) != NSIM_OK)
            rc = -1;
    }
    nsim_scenario_destroy(s);
    if (rc != 0)
        return rc;
    c->npoints = nsim_sweep_npoints(c->sw);
    if ((c->done = calloc(c->npoints, 1)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory"), -1;
    if (rank == 0 && resume(c, err) != NSIM_OK)
        return -1;
    c->ntodo = c->npoints - c->ndone - c->skipped;
    c->t0 = c->last_write = now_s();
    c->progress = rank == 0 && !c->quiet && isatty(STDERR_FILENO);
    if (rank == 0 && c->ndone)
        fprintf(stderr, "sweep: resuming: %zu of %zu points already in %s\n",
                c->ndone, c->npoints,
                c->nfrom ? "the --from files" : c->outputs[0]);
    if (c->mpi) {
#ifdef NSIM_HAVE_MPI
        c->ntodo = (c->ntodo + (size_t)nranks - 1 - (size_t)rank) /
                   (size_t)nranks;
        MPI_Bcast(&c->ndone, sizeof c->ndone, MPI_BYTE, 0, MPI_COMM_WORLD);
        rc = run_mpi(c, rank, nranks, err) != NSIM_OK ? -1 : 0;
#else
        (void)nranks;
#endif
    } else if (c->jobs > 1 && c->ntodo > 1) {
        rc = run_parallel(c, err) != NSIM_OK ? -1 : 0;
    } else {
        rc = run_serial(c, err) != NSIM_OK ? -1 : 0;
    }
    progress(c, 1);
#ifdef NSIM_HAVE_MPI
    if (c->mpi) {
        unsigned long long mine = c->nfailed, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                      MPI_COMM_WORLD);
        c->nfailed = (size_t)all;
    }
#endif
    if (rank == 0) {
        nsim_err werr = {0};
        /* on an error, the points that finished are kept for --resume */
        if (write_outputs(c, rc == 0 ? err : &werr) != NSIM_OK && rc == 0)
            rc = -1;
        else if (rc != 0 && c->nrows > 0)
            fprintf(stderr, "ncclsim sweep: the points that finished are in "
                            "%s (--resume continues)\n", c->outputs[0]);
    }
    if (rc == 0 && c->nfailed > 0) {
        NSIM_ERR(err, NSIM_ESIM, "sweep: %zu of %zu point(s) failed (above); "
                                 "%s holds the others",
                 c->nfailed, c->ntodo, c->outputs[0]);
        rc = -1;
    }
    return rc;
}

int nsim_cmd_sweep(int argc, char **argv)
{
    nsim_err err = {0};
    sweep_cli c = {0};
    int rank = 0, nranks = 1, mpi = 0, rc;
    for (int i = 1; i < argc; i++)
        mpi |= strcmp(argv[i], "--mpi") == 0;
    if (nsim_sweep_create(&c.sw, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    if (mpi) {
#ifdef NSIM_HAVE_MPI
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
#else
        nsim_sweep_destroy(c.sw);
        fprintf(stderr, "ncclsim sweep: --mpi: this ncclsim was built "
                        "without MPI (install libopenmpi-dev, then rebuild: "
                        "cmake finds it)\n");
        return NSIM_EXIT_ERR;
#endif
    }
    rc = sweep_main(&c, argc, argv, rank, nranks, &err);
#ifdef NSIM_HAVE_MPI
    if (mpi) {
        /* a usage error found by every rank alike; report it once */
        int any = rc != 0, all = 0;
        MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
    if (rc < 0 && !(mpi && rank != 0 &&
                    strncmp(err.msg, "another rank", 12) == 0))
        rc = nsim_cli_fail(&err);
    free(c.rows);
    free(c.done);
    free(c.argv);
    nsim_sweep_destroy(c.sw);
    return rc;
}
