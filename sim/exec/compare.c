/* SPDX-License-Identifier: MIT
 *
 * compare.c - a scenario against a measurement (see compare.h).
 */
#include "compare.h"
#include "sim/exec/run.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nsim_compare_check_fit(const nsim_scenario *s,
                           const nsim_measure_series *m, nsim_err *err)
{
    const char *src = m->source[0] ? m->source : "measurement";
    if (strcmp(m->tool, "perftest") == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: %s is a perftest "
                        "measurement of one NIC pair, not a collective: "
                        "compare runs nccl-tests measurements", src, m->line,
                        m->test);
    nsim_coll c;
    if (m->collective[0] && nsim_coll_parse(m->collective, &c) == 0 &&
        c != s->coll)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: the measurement is %s, "
                        "the scenario %s runs %s", src, m->line,
                        nsim_coll_name(c), s->source, nsim_coll_name(s->coll));
    uint32_t nr = nsim_topo_nranks(s->topo), nh = nsim_topo_nhosts(s->topo);
    if (m->ranks > 0 && (uint32_t)m->ranks != nr)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: the measurement has %d "
                        "ranks, the scenario %s has %u", src, m->line,
                        m->ranks, s->source, nr);
    if (m->hosts > 0 && (uint32_t)m->hosts != nh)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: the measurement ran on %d "
                        "hosts, the scenario %s has %u", src, m->line,
                        m->hosts, s->source, nh);
    return NSIM_OK;
}

static void note(char *notes, size_t len, const char *fmt, ...)
    NSIM_PRINTF(3, 4);
static void note(char *notes, size_t len, const char *fmt, ...)
{
    size_t used = strlen(notes);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + used, len - used, fmt, ap);
    va_end(ap);
    used = strlen(notes);
    if (used + 1 < len) {
        notes[used] = '\n';
        notes[used + 1] = '\0';
    }
}

int nsim_compare_apply_knobs(nsim_scenario *s, const nsim_measure_series *m,
                             char *notes, size_t len, nsim_err *err)
{
    notes[0] = '\0';
    const char *src = m->source[0] ? m->source : "measurement";
    if (m->dtype[0] && strcmp(m->dtype, s->dtype) != 0) {
        NSIM_TRY(nsim_scenario_set_dtype(s, m->dtype, src, err));
        note(notes, len, "data type %s (measured)", m->dtype);
    }
    if (m->redop[0] && nsim_coll_has_op(s->coll) &&
        strcmp(m->redop, s->redop) != 0) {
        NSIM_TRY(nsim_scenario_set_op(s, m->redop, src, err));
        note(notes, len, "reduction %s (measured)", m->redop);
    }
    if (m->gpus_per_thread > 0 &&
        (uint32_t)m->gpus_per_thread != s->gpus_per_thread) {
        s->gpus_per_thread = (uint32_t)m->gpus_per_thread;
        note(notes, len, "-g %d (measured)", m->gpus_per_thread);
    }
    for (size_t i = 0; i < m->nenv; i++) {
        const char *k = m->env[i].key, *v = m->env[i].value;
        int fixed = ((strcmp(k, "NCCL_ALGO") == 0) && s->algo_set) ||
                    ((strcmp(k, "NCCL_PROTO") == 0) && s->proto_set) ||
                    ((strstr(k, "NCHANNELS") || strstr(k, "NRINGS")) &&
                     strcmp(k, "NCCL_NVLS_NCHANNELS") != 0 &&
                     strcmp(k, "NCCL_NCHANNELS_PER_NET_PEER") != 0 &&
                     s->nchannels_given);
        for (uint32_t b = 0; b < 32 && nsim_scenario_env_names[b] != NULL;
             b++)
            if (strcmp(nsim_scenario_env_names[b], k) == 0 &&
                (s->env_set >> b & 1u))
                fixed = 1; /* the scenario's env or one of its fields */
        if (fixed) {
            note(notes, len, "%s=%s: the scenario fixes it", k, v);
            continue;
        }
        nsim_err e = {0};
        if (nsim_scenario_set_env(s, k, v, src, &e) != NSIM_OK) {
            note(notes, len, "%s=%s: not applied (%s)", k, v,
                 e.msg[0] == '\0' || strstr(e.msg, "not a variable")
                     ? "not modelled"
                     : e.msg);
            continue;
        }
        note(notes, len, "%s=%s (measured)", k, v);
    }
    s->channels_resolved = 0;
    nsim_scenario_resolve_channels(s);
    return NSIM_OK;
}

int nsim_compare_run(nsim_scenario *s, const nsim_measure_series *m,
                     const nsim_compare_opts *o, nsim_compare_row **rows,
                     size_t *nrows, nsim_err *err)
{
    nsim_compare_row *out = calloc(m->nrows ? m->nrows : 1, sizeof *out);
    if (out == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "compare: out of memory");
    size_t n = 0;
    nsim_run_opts ro = {0};
    for (size_t i = 0; i < m->nrows; i++) {
        const nsim_measure_row *r = &m->rows[i];
        int col = o && o->column >= 0 ? o->column
                  : r->col[NSIM_MEASURE_OOP].present ? NSIM_MEASURE_OOP
                                                     : NSIM_MEASURE_IP;
        const nsim_measure_col *mc = &r->col[col];
        if (!mc->present || !(mc->busbw > 0 || mc->time_us > 0))
            continue;
        if (o && o->max_size && r->size > o->max_size)
            continue;
        if (nsim_run_test_bytes(s, r->size) == 0)
            continue; /* below what the collective splits */
        nsim_run_row row;
        int rc = nsim_run_size(s, &ro, r->size, &row, NULL, NULL, err);
        if (rc != NSIM_OK) {
            free(out);
            return rc;
        }
        nsim_compare_row *c = &out[n++];
        c->size = r->size;
        c->col = col;
        c->line = r->line;
        c->sim_us = col == NSIM_MEASURE_IP ? row.time_ip_us : row.time_us;
        c->sim_busbw = col == NSIM_MEASURE_IP ? row.busbw_ip : row.busbw;
        double f = nsim_coll_busbw_factor(s->coll, nsim_topo_nranks(s->topo));
        c->meas_us = mc->time_us > 0 ? mc->time_us
                                     : (double)r->size / (mc->busbw / f * 1e3);
        c->meas_busbw = (double)r->size / (c->meas_us * 1e3) * f;
        c->err = c->meas_us / c->sim_us - 1;
        snprintf(c->algo, sizeof c->algo, "%s", row.algo ? row.algo : "");
        snprintf(c->proto, sizeof c->proto, "%s", row.proto ? row.proto : "");
        c->nchannels = row.nchannels;
        snprintf(c->fidelity, sizeof c->fidelity, "%s", row.fidelity);
        snprintf(c->nccl_algo, sizeof c->nccl_algo, "%s", r->algo);
        snprintf(c->nccl_proto, sizeof c->nccl_proto, "%s", r->proto);
    }
    if (n == 0) {
        free(out);
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: no measured size the "
                        "scenario can run (sizes below 16 B per rank, or "
                        "above the limit, are left out)", m->source,
                        m->line);
    }
    *rows = out;
    *nrows = n;
    return NSIM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nsim_compare_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void nsim_compare_summarize(const nsim_compare_row *rows, size_t n,
                            nsim_compare_summary *out)
{
    double *big = malloc((n + 1) * sizeof *big);
    double *small = malloc((n + 1) * sizeof *small);
    double *all = malloc((n + 1) * sizeof *all);
    memset(out, 0, sizeof *out);
    out->med_large = out->med_small = -1;
    if (big == NULL || small == NULL || all == NULL) {
        free(big);
        free(small);
        free(all);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double e = fabs(rows[i].err);
        if (rows[i].size >= NSIM_COMPARE_LARGE)
            big[out->n_large++] = e;
        else
            small[out->n_small++] = e;
        all[i] = rows[i].err;
    }
    if (out->n_large)
        out->med_large = nsim_compare_median(big, out->n_large);
    if (out->n_small)
        out->med_small = nsim_compare_median(small, out->n_small);
    out->bias = nsim_compare_median(all, n);
    free(big);
    free(small);
    free(all);
}
