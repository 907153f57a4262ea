/* SPDX-License-Identifier: MIT
 *
 * cli_validate.c - "ncclsim validate": the scenario's plans (or one plan
 * from `ncclsim plan`) executed on real hardware by a backend (host,
 * cuda, nccl, verbs), timed as nccl-tests times them, written as a
 * measurement file ("ncclsim-measurement") for compare / calibrate, with
 * the simulated time of the same plan beside each measured row and a
 * trace of one executed op (the --trace viewer shows it beside the
 * simulated one). Also --describe-host: this machine as a topology.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "models/host/host_xport.h"
#include "output/trace.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"
#include "sim/exec/hwbackends.h"
#include "sim/exec/measure.h"
#include "sim/exec/measure_int.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"
#include "sim/plan/plan_read.h"

typedef struct vopts {
    const char *backend, *out, *plan, *trace;
    uint32_t warmup, iters;
    int check, processes, describe_host, microbench;
    double timeout_s;
    int32_t die_rank;
    /* --describe-host */
    uint32_t ranks;
    double bw;
    const char *scenario_out;
    /* nccl */
    const char *nccl_lib;
    /* verbs */
    nsim_verbs_opts verbs;
} vopts;

static int parse_uint(const char *opt, const char *v, uint32_t lo,
                      uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end != '\0' || errno || v[0] == '-' || n < lo || n > hi)
        return nsim_cli_usage("validate", "%s: expected %u..%u, got '%s'",
                              opt, lo, hi, v);
    *out = (uint32_t)n;
    return 0;
}

static int is_opt(const char *a, const char *s, const char *l)
{
    return (s != NULL && strcmp(a, s) == 0) || (l != NULL && strcmp(a, l) == 0);
}

/* Takes validate's own options out of argv (the rest are run's and go
 * to nsim_cli_load_run); -o is the output here, the reduction is --op. */
static int take_opts(int *argc, char **argv, vopts *o)
{
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < *argc ? argv[i + 1] : NULL;
        int rc = 0, val = 1;
        if (is_opt(a, "--backend", NULL))
            o->backend = v;
        else if (is_opt(a, "-o", "--output"))
            o->out = v;
        else if (is_opt(a, "--plan", NULL))
            o->plan = v;
        else if (is_opt(a, "--trace", NULL))
            o->trace = v;
        else if (is_opt(a, "-n", "--iters"))
            rc = v ? parse_uint("-n", v, 1, 1000000, &o->iters) : 0;
        else if (is_opt(a, "-w", "--warmup_iters"))
            rc = v ? parse_uint("-w", v, 0, 1000000, &o->warmup) : 0;
        else if (is_opt(a, "-c", "--check")) {
            uint32_t c = 1;
            rc = v ? parse_uint("-c", v, 0, 1, &c) : 0;
            o->check = (int)c;
        } else if (is_opt(a, "--timeout", NULL)) {
            uint32_t t = 0;
            rc = v ? parse_uint("--timeout", v, 1, 3600, &t) : 0;
            o->timeout_s = t;
        } else if (is_opt(a, "--ranks", NULL))
            rc = v ? parse_uint("--ranks", v, 2, 1024, &o->ranks) : 0;
        else if (is_opt(a, "--bw", NULL)) {
            const char *why = NULL;
            if (v && nsim_units_parse_bw(v, &o->bw, &why) != NSIM_OK)
                rc = nsim_cli_usage("validate", "--bw: '%s': %s", v, why);
        } else if (is_opt(a, "--scenario-out", NULL))
            o->scenario_out = v;
        else if (is_opt(a, "--nccl-lib", NULL))
            o->nccl_lib = v;
        else if (is_opt(a, "--hosts", NULL))
            o->verbs.hosts = v;
        else if (is_opt(a, "--rank", NULL)) {
            uint32_t r = 0;
            rc = v ? parse_uint("--rank", v, 0, 1 << 20, &r) : 0;
            o->verbs.rank = (int32_t)r;
        } else if (is_opt(a, "--token", NULL))
            o->verbs.token = v;
        else if (is_opt(a, "--test-lose-rank", NULL)) {
            uint32_t r = 0;
            rc = v ? parse_uint("--test-lose-rank", v, 0, 1 << 20, &r) : 0;
            o->die_rank = (int32_t)r;
        } else {
            val = 0;
            if (is_opt(a, "--processes", NULL))
                o->processes = 1;
            else if (is_opt(a, "--describe-host", NULL))
                o->describe_host = 1;
            else if (is_opt(a, "--microbench", NULL))
                o->microbench = 1;
            else {
                argv[n++] = argv[i];
                continue;
            }
        }
        if (rc != 0)
            return rc;
        if (val && v == NULL)
            return nsim_cli_usage("validate", "%s needs a value", a);
        i += val;
    }
    argv[n] = NULL;
    *argc = n;
    return 0;
}

/* ---- --describe-host: this machine as a topology --------------------- */

/* Cores as ranks (GPU devices of gen "host", no peer-to-peer, so NCCL's
 * SHM path: through host memory), each joined to the memory (a CPU
 * device) by a C2C link at the memory's rate (every core copying at
 * once); one core's own rate is the scenario's host_core_copy_bw, the
 * streaming rate of a rank's "thread block". */
static int describe_host(const vopts *o, nsim_err *err)
{
    uint32_t n = o->ranks;
    double bw = o->bw, membw = o->bw * 2;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (n == 0)
        n = cpus >= 2 ? (uint32_t)cpus : 2;
    if (bw <= 0) {
        bw = nsim_host_memcpy_bw(64ull << 20, 5);
        membw = nsim_host_memcpy_bw_all(cpus > 0 ? (uint32_t)cpus : 1,
                                        64ull << 20, 5);
        membw = membw > bw ? membw : bw;
        fprintf(stderr, "ncclsim: memcpy: one core %.2f GB/s, %ld cores at "
                        "once %.2f GB/s (64 MiB, best of 5)\n",
                bw / 1e9, cpus, membw / 1e9);
    }
    if (o->out == NULL)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--describe-host needs -o FILE for the topology");
    char name[64], bwtxt[64], memtxt[64], comment[320];
    snprintf(name, sizeof name, "host-%ucore", n);
    snprintf(bwtxt, sizeof bwtxt, "%.6g GB/s", bw / 1e9);
    snprintf(memtxt, sizeof memtxt, "%.6g GB/s", membw / 1e9);
    snprintf(comment, sizeof comment,
             "this machine for `ncclsim validate --backend host`: %u cores "
             "as ranks (%ld online), memory links at the cores' aggregate "
             "memcpy rate %s; one core copies at %s (host_core_copy_bw)",
             n, cpus, memtxt, bwtxt);
    cJSON *root = cJSON_CreateObject(), *devs = cJSON_CreateArray(),
          *links = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "format", "ncclsim-topology");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddStringToObject(root, "comment", comment);
    cJSON *mem = cJSON_CreateObject();
    cJSON_AddStringToObject(mem, "id", "h0.mem");
    cJSON_AddStringToObject(mem, "type", "cpu");
    cJSON_AddNumberToObject(mem, "host", 0);
    cJSON_AddItemToArray(devs, mem);
    for (uint32_t r = 0; r < n; r++) {
        char id[32];
        snprintf(id, sizeof id, "h0.core%u", r);
        cJSON *d = cJSON_CreateObject(), *l = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "id", id);
        cJSON_AddStringToObject(d, "type", "gpu");
        cJSON_AddNumberToObject(d, "host", 0);
        cJSON_AddStringToObject(d, "gen", "host");
        cJSON_AddNumberToObject(d, "sm", 60);
        cJSON_AddNumberToObject(d, "rank", r);
        cJSON_AddBoolToObject(d, "p2p", 0);
        cJSON_AddItemToArray(devs, d);
        cJSON_AddStringToObject(l, "a", id);
        cJSON_AddStringToObject(l, "b", "h0.mem");
        cJSON_AddStringToObject(l, "type", "c2c");
        cJSON_AddStringToObject(l, "bw", memtxt);
        cJSON_AddStringToObject(l, "latency", "100 ns");
        cJSON_AddItemToArray(links, l);
    }
    cJSON_AddItemToObject(root, "devices", devs);
    cJSON_AddItemToObject(root, "links", links);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    int rc = nsim_write_file_atomic(o->out, text, strlen(text), err);
    free(text);
    if (rc != NSIM_OK || o->scenario_out == NULL)
        return rc;
    /* a scenario over it: the host backend's knobs, the core rate */
    const char *base = strrchr(o->out, '/');
    char sc[2048];
    int len = snprintf(
        sc, sizeof sc,
        "{\n\t\"format\":\t\"ncclsim-scenario\",\n\t\"version\":\t1,\n"
        "\t\"name\":\t\"%s-allreduce\",\n\t\"comment\":\t\"this machine's "
        "cores as ranks (ncclsim validate --describe-host)\",\n"
        "\t\"topology\":\t\"%s\",\n\t\"collective\":\t\"all_reduce_perf\",\n"
        "\t\"datatype\":\t\"float\",\n\t\"op\":\t\"sum\",\n"
        "\t\"min_bytes\":\t\"4K\",\n\t\"max_bytes\":\t\"16M\",\n"
        "\t\"step_factor\":\t4,\n\t\"algorithm\":\t\"Ring\",\n"
        "\t\"protocol\":\t\"Simple\",\n\t\"nchannels\":\t1,\n"
        "\t\"params\":\t{\"host_core_copy_bw\": \"%s\"}\n}\n",
        name, base ? base + 1 : o->out, bwtxt);
    return nsim_write_file_atomic(o->scenario_out, sc, (size_t)len, err);
}

/* ---- the measurement file -------------------------------------------- */

typedef struct vrow {
    uint64_t size, count;
    double time_us, time_ip_us, sim_us;
    int64_t wrong, wrong_ip;
    uint32_t nchannels;
    const char *algo, *proto;
} vrow;

/* The measurement in the schema of sim/exec/measure.h: one series, the
 * tool "ncclsim-validate" with the backend as its test, the NCCL_* knobs
 * the scenario sets. */
static int write_measurement(const char *path, const nsim_scenario *s,
                             const vopts *o, const vrow *rows, size_t n,
                             const cJSON *info, nsim_err *err)
{
    nsim_measure *m = NULL;
    NSIM_TRY(nsim_measure_create(&m, err));
    nsim_measure_series *se = nsim_measure__series_new(m, s->source);
    uint32_t nr = nsim_topo_nranks(s->topo);
    double f = nsim_coll_busbw_factor(s->coll, nr);
    int rc = se ? NSIM_OK : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    if (rc == NSIM_OK) {
        snprintf(se->tool, sizeof se->tool, "ncclsim-validate");
        snprintf(se->test, sizeof se->test, "%s %s", o->backend,
                 nsim_coll_test_name(s->coll));
        snprintf(se->label, sizeof se->label, "%s on %s (%s)", o->backend,
                 nsim_topo_name(s->topo),
                 o->processes ? "a process per rank" : "threads");
        snprintf(se->collective, sizeof se->collective, "%s",
                 nsim_coll_name(s->coll));
        se->ranks = (int32_t)nr;
        se->hosts = (int32_t)nsim_topo_nhosts(s->topo);
        se->gpus_per_thread = 1;
        snprintf(se->dtype, sizeof se->dtype, "%s", s->dtype);
        snprintf(se->redop, sizeof se->redop, "%s",
                 nsim_coll_has_op(s->coll) ? s->redop : "none");
        se->root = nsim_coll_has_root(s->coll) ? (int32_t)s->root : -1;
        const cJSON *v = info ? cJSON_GetObjectItem(info, "nccl_version")
                              : NULL;
        if (cJSON_IsString(v))
            snprintf(se->nccl_version, sizeof se->nccl_version, "%s",
                     v->valuestring);
        v = info ? cJSON_GetObjectItem(info, "coll_channels") : NULL;
        if (cJSON_IsNumber(v) && v->valuedouble > 0)
            se->log_channels = (int32_t)v->valuedouble;
        v = info ? cJSON_GetObjectItem(info, "nccl_debug_file") : NULL;
        if (cJSON_IsString(v))
            snprintf(se->log, sizeof se->log, "%s", v->valuestring);
        char val[32];
        snprintf(val, sizeof val, "%u", s->nchannels);
        if (nsim_measure__env_set(se, "NCCL_MAX_NCHANNELS", val) < 0)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        if (s->proto_set &&
            nsim_measure__env_set(se, "NCCL_PROTO",
                                  nsim_proto_name(s->proto)) < 0)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        if (s->algo_set &&
            nsim_measure__env_set(se, "NCCL_ALGO", nsim_algo_name(s->algo)) < 0)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == NSIM_OK && i < n; i++) {
        const vrow *r = &rows[i];
        nsim_measure_row *mr = nsim_measure__row_new(se);
        if (mr == NULL) {
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
            break;
        }
        mr->size = r->size;
        mr->count = r->count;
        for (int c = 0; c < 2; c++) {
            double t = c ? r->time_ip_us : r->time_us;
            double alg = (double)r->size / (t * 1e-6) / 1e9;
            mr->col[c] = (nsim_measure_col){1, t, alg, alg * f,
                                            c ? r->wrong_ip : r->wrong};
        }
    }
    /* nccl: what NCCL ran at each size, from its INFO log (TUNING) */
    if (rc == NSIM_OK && se->log[0] != '\0') {
        nsim_err lerr = {0};
        if (nsim_measure__attach_log(se, se->log, &lerr) != NSIM_OK)
            fprintf(stderr, "ncclsim validate: warning: NCCL's log: %s\n",
                    lerr.msg);
    }
    if (rc == NSIM_OK)
        rc = nsim_measure_write(m, path, err);
    nsim_measure_destroy(m);
    return rc;
}

/* ---- the run --------------------------------------------------------- */

static void print_header(const nsim_scenario *s, const vopts *o)
{
    printf("# ncclsim validate: %s on \"%s\" (%u ranks), backend %s%s, "
           "%u warm-up + %u timed iterations\n",
           nsim_coll_test_name(s->coll), nsim_topo_name(s->topo),
           nsim_topo_nranks(s->topo), o->backend,
           o->processes ? " (a process per rank)" : "", o->warmup, o->iters);
    printf("#%11s %12s %8s %6s %9s %8s %8s %7s %9s %8s %8s %7s %9s %7s\n",
           "size", "count", "type", "redop", "time", "algbw", "busbw",
           "#wrong", "time", "algbw", "busbw", "#wrong", "sim", "error");
    printf("#%11s %12s %8s %6s %9s %8s %8s %7s %9s %8s %8s %7s %9s %7s\n",
           "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(%)");
    printf("# sim: the same plan simulated; error: simulated busbw / "
           "measured - 1 (out of place), as ncclsim compare\n");
}

static void print_row(const nsim_scenario *s, const vrow *r)
{
    double f = nsim_coll_busbw_factor(s->coll, nsim_topo_nranks(s->topo));
    double a = (double)r->size / (r->time_us * 1e-6) / 1e9;
    double ai = (double)r->size / (r->time_ip_us * 1e-6) / 1e9;
    char w[24], wi[24];
    snprintf(w, sizeof w, r->wrong < 0 ? "N/A" : "%lld", (long long)r->wrong);
    snprintf(wi, sizeof wi, r->wrong_ip < 0 ? "N/A" : "%lld",
             (long long)r->wrong_ip);
    char sim[24] = "-", e[24] = "-";
    if (r->sim_us > 0) {
        snprintf(sim, sizeof sim, "%.2f", r->sim_us);
        snprintf(e, sizeof e, "%+.1f", (r->time_us / r->sim_us - 1) * 100);
    }
    printf(" %11llu %12llu %8s %6s %9.2f %8.2f %8.2f %7s %9.2f %8.2f %8.2f "
           "%7s %9s %7s\n",
           (unsigned long long)r->size, (unsigned long long)r->count, s->dtype,
           nsim_coll_has_op(s->coll) ? s->redop : "none", r->time_us, a,
           a * f, w, r->time_ip_us, ai, ai * f, wi, sim, e);
    fflush(stdout);
}

static int measure_one(const nsim_scenario *s, const vopts *o,
                       const nsim_plan *plan, nsim_nccl *nc, int record,
                       vrow *row, nsim_exec_result *spans, nsim_err *err)
{
    nsim_hdt dt;
    nsim_hop op;
    nsim_hwx_measure m = {0};
    if (nsim_hdt_parse(s->dtype, &dt) != 0 || nsim_hop_parse(s->redop, &op))
        return NSIM_ERR(err, NSIM_ENOTSUP, "%s: datatype %s / op %s: not "
                        "known to the hardware executor", s->source, s->dtype,
                        s->redop);
    if (strcmp(o->backend, "host") == 0) {
        nsim_host_cfg hc = {plan, dt, op, o->processes, o->timeout_s,
                            o->warmup, o->iters, o->check, record,
                            o->die_rank};
        NSIM_TRY(nsim_host_measure(&hc, &m, spans, err));
    } else if (strcmp(o->backend, "verbs") == 0) {
        nsim_verbs_opts vo = o->verbs;
        vo.timeout_s = o->timeout_s;
        NSIM_TRY(nsim_verbs_measure(&vo, plan, dt, op, o->warmup, o->iters,
                                    o->check, &m, err));
    } else if (strcmp(o->backend, "cuda") == 0) {
        NSIM_TRY(nsim_cuda_measure(plan, dt, op, o->warmup, o->iters,
                                   o->check, o->timeout_s, &m, err));
    } else if (nc != NULL) {
        NSIM_TRY(nsim_nccl_measure_size(nc, row->size, &m, err));
    } else {
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "backend %s plays no plan in this build", o->backend);
    }
    row->time_us = m.time_us;
    row->time_ip_us = m.time_ip_us;
    row->wrong = m.wrong;
    row->wrong_ip = m.wrong_ip;
    return NSIM_OK;
}

/* The simulated time of the same plan (the models' answer). */
static int simulate_plan(nsim_scenario *s, const nsim_plan *plan, double *us,
                         nsim_err *err)
{
    nsim_exec_result res = {0};
    nsim_fault_plan fp;
    NSIM_TRY(nsim_scenario_fault_plan(s, plan->nchannels, &fp, err));
    nsim_exec_opts eo = {s->seed, 0, &s->net, &fp, s->gpus_per_thread, 0};
    NSIM_TRY(nsim_exec_run(s->topo, plan, &s->params, &eo, &res, err));
    *us = (double)res.time_ps / 1e6;
    nsim_exec_result_free(&res);
    return NSIM_OK;
}

static int check_plan_fits(const nsim_scenario *s, const nsim_plan *p,
                           const char *path, nsim_err *err)
{
    if (p->req.coll != s->coll)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: collective: the plan is %s, scenario %s runs %s",
                        path, nsim_coll_name(p->req.coll), s->source,
                        nsim_coll_name(s->coll));
    if (p->req.type_size != s->type_size)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: type_size: the plan has %u-byte elements, "
                        "scenario %s's %s has %u",
                        path, p->req.type_size, s->source, s->dtype,
                        s->type_size);
    return NSIM_OK;
}

static int run_validate(nsim_scenario *s, const vopts *o, nsim_nccl *nc,
                        nsim_err *err)
{
    uint64_t *sizes = NULL;
    size_t nsizes = 0, n = 0;
    nsim_plan *fixed = NULL;
    if (o->plan != NULL) {
        NSIM_TRY(nsim_plan_load(o->plan, s->topo, &fixed, err));
        if (check_plan_fits(s, fixed, o->plan, err) != NSIM_OK) {
            nsim_plan_destroy(fixed);
            return err->code;
        }
        nsizes = 1;
    } else {
        NSIM_TRY(nsim_run_sizes(s, &sizes, &nsizes, err));
    }
    vrow *rows = calloc(nsizes ? nsizes : 1, sizeof *rows);
    nsim_exec_result spans = {0};
    nsim_plan *trace_plan = NULL;
    int rc = rows ? NSIM_OK : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    /* NCCL runs a one-rank collective as a copy on the GPU (no channels,
     * no peers). ncclsim's planner needs two ranks, so with one rank the
     * nccl backend measures without a plan and the rows have no
     * simulated time: what a single-GPU machine can still measure is
     * NCCL's own cost per call. */
    int unplanned = fixed == NULL && nc != NULL &&
                    nsim_topo_nranks(s->topo) == 1;
    if (rc == NSIM_OK)
        print_header(s, o);
    for (size_t i = 0; rc == NSIM_OK && i < nsizes; i++) {
        nsim_plan *plan = fixed;
        nsim_plan_req req;
        double pred;
        uint64_t bytes = fixed ? fixed->req.bytes : sizes[i];
        if (plan == NULL && !unplanned &&
            ((rc = nsim_run_request(s, bytes, &req, &pred, err)) != NSIM_OK ||
             (rc = nsim_plan_build(s->topo, &req, &plan, err)) != NSIM_OK))
            break;
        vrow *r = &rows[n];
        int record = o->trace != NULL && i + 1 == nsizes;
        nsim_exec_result sp = {0};
        r->size = bytes;
        (void)nsim_coll_test_bytes(s->coll, nsim_topo_nranks(s->topo),
                                   s->type_size, bytes, &r->count);
        r->nchannels = plan ? plan->nchannels : 0;
        r->algo = plan == NULL                ? "-"
                  : nsim_coll_is_p2p(s->coll) ? "P2P"
                                              : nsim_algo_name(plan->req.algo);
        r->proto = plan ? nsim_proto_name(plan->req.proto) : "-";
        rc = measure_one(s, o, plan, nc, record, r, &sp, err);
        if (rc == NSIM_OK && plan != NULL)
            rc = simulate_plan(s, plan, &r->sim_us, err);
        if (rc == NSIM_OK) {
            print_row(s, r);
            n++;
        }
        if (record && rc == NSIM_OK) {
            spans = sp;
            trace_plan = plan;
        } else {
            nsim_exec_result_free(&sp);
            if (plan != fixed)
                nsim_plan_destroy(plan);
        }
    }
    cJSON *info = nc != NULL ? nsim_nccl_info(nc) : NULL;
    if (rc == NSIM_OK && o->out != NULL)
        rc = write_measurement(o->out, s, o, rows, n, info, err);
    cJSON_Delete(info);
    if (rc == NSIM_OK && o->trace != NULL && trace_plan != NULL)
        rc = nsim_trace_write(o->trace, s->topo, trace_plan, &spans, 0, err);
    int64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += (rows[i].wrong > 0 ? rows[i].wrong : 0) +
               (rows[i].wrong_ip > 0 ? rows[i].wrong_ip : 0);
    if (rc == NSIM_OK)
        printf("# Out of bounds values : %lld %s\n", (long long)bad,
               bad ? "FAILED" : "OK");
    if (rc == NSIM_OK && bad)
        rc = NSIM_ERR(err, NSIM_ESTATE,
                      "%lld wrong elements: the executed collective did not "
                      "produce the expected data", (long long)bad);
    nsim_exec_result_free(&spans);
    if (trace_plan != fixed)
        nsim_plan_destroy(trace_plan);
    nsim_plan_destroy(fixed);
    free(rows);
    free(sizes);
    return rc;
}

int nsim_cmd_validate(int argc, char **argv)
{
    nsim_err err = {0};
    vopts o = {0};
    o.warmup = 5;
    o.iters = 20;
    o.check = 1;
    o.timeout_s = 30;
    o.die_rank = -1;
    o.verbs.rank = -1;
    int rc = take_opts(&argc, argv, &o);
    if (rc != 0)
        return rc;
    if (o.describe_host)
        return describe_host(&o, &err) != NSIM_OK ? nsim_cli_fail(&err)
                                                  : NSIM_EXIT_OK;
    if (o.backend == NULL)
        return nsim_cli_usage("validate", "--backend host|cuda|nccl|verbs "
                                          "is required");
    if (strcmp(o.backend, "cuda") == 0 && o.microbench) {
        if (nsim_cuda_microbench(o.out, &err) != NSIM_OK)
            return nsim_cli_fail(&err);
        return NSIM_EXIT_OK;
    }
    if (strcmp(o.backend, "host") && strcmp(o.backend, "cuda") &&
        strcmp(o.backend, "nccl") && strcmp(o.backend, "verbs"))
        return nsim_cli_usage("validate", "--backend: expected host, cuda, "
                                          "nccl or verbs, got '%s'",
                              o.backend);
    if (o.verbs.rank < 0) { /* launched by mpirun / srun */
        const char *env[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                             "SLURM_PROCID", NULL};
        for (int i = 0; env[i] != NULL && o.verbs.rank < 0; i++)
            if (getenv(env[i]) != NULL)
                o.verbs.rank = atoi(getenv(env[i]));
    }
    if (o.die_rank >= 0 && !o.processes)
        return nsim_cli_usage("validate", "--test-lose-rank needs "
                                          "--processes");
    nsim_scenario *s = NULL;
    nsim_cli_run_opts ro = {0};
    rc = nsim_cli_load_run("validate", argc, argv, &s, &ro, &err);
    if (rc == 0 && ro.trace_out != NULL)
        o.trace = ro.trace_out;
    if (rc == 0 && strcmp(o.backend, "cuda") == 0 &&
        nsim_cuda_check_device(&err) != NSIM_OK)
        rc = -1;
    nsim_nccl *nc = NULL;
    nsim_nccl_opts no = {o.nccl_lib, o.warmup, o.iters, o.timeout_s};
    if (rc == 0 && strcmp(o.backend, "nccl") == 0 &&
        nsim_nccl_open(s, &no, &nc, &err) != NSIM_OK)
        rc = -1;
    if (rc == 0 && strcmp(o.backend, "verbs") == 0 &&
        nsim_verbs_check(&o.verbs, &err) != NSIM_OK)
        rc = -1;
    if (rc == 0 && run_validate(s, &o, nc, &err) != NSIM_OK)
        rc = -1;
    nsim_nccl_close(nc);
    nsim_scenario_destroy(s);
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}
