/* SPDX-License-Identifier: MIT
 *
 * calibrate.c - model constants fitted to measurements (see calibrate.h).
 */
#include "calibrate.h"
#include "models/params.h"
#include "sim/core/jread.h"
#include "sim/exec/compare.h"
#include "sim/exec/run.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>

/* A constant calibration may move: physical bounds (base units: ps, B/s,
 * bytes, counts) and the measurement that pins it. */
typedef struct candidate {
    const char *name;
    double lo, hi;
    const char *pins;
    int explicit_only; /* fitted only when --fit names it */
} candidate;

static const candidate candidates[] = {
    {"kernel_launch_ps", 0.5e6, 50e6,
     "the latency floor: sizes below 64 KiB of any collective"},
    {"p2p_step_sync_ps", 0.1e6, 20e6,
     "Simple steps inside a node: 64 KiB - 8 MiB with NCCL_PROTO=Simple"},
    {"ll_step_sync_ps", 10e3, 5e6,
     "LL steps: sizes below 64 KiB (or NCCL_PROTO=LL)"},
    {"ll128_step_sync_ps", 50e3, 10e6,
     "LL128 steps: 64 KiB - 4 MiB where NCCL picks LL128 (or "
     "NCCL_PROTO=LL128)"},
    {"proxy_action_ps", 20e3, 20e6,
     "the proxy's per-step cost: multi-host sizes of 64 KiB - 16 MiB"},
    {"gpu_memory_latency_ps", 50e3, 10e6,
     "the tail poll over NET: multi-host Simple sizes of 64 KiB - 16 MiB"},
    {"hca_wqe_fetch_ps", 50e3, 10e6,
     "per-WQE cost: multi-host small sizes, or perftest ib_write_lat"},
    {"hca_doorbell_ps", 10e3, 5e6,
     "per-post cost: multi-host small sizes, or perftest ib_write_lat"},
    {"hca_cqe_write_ps", 10e3, 5e6,
     "per-completion cost: multi-host small sizes"},
    {"h100_hbm_bw", 300e9, 4000e9,
     "the per-thread-block copy rate: large sizes on H100 with few "
     "channels (NCCL_MAX_NCHANNELS)"},
    {"a100_hbm_bw", 300e9, 2500e9,
     "the per-thread-block copy rate: large sizes on A100 with few "
     "channels"},
    {"nvls_multimem_pct_sm90", 40, 100,
     "NVLS efficiency: large AllReduce on one H100 node (NVLS)"},
    {"nvlink_efficiency_pct", 30, 100,
     "NVLink efficiency: large NVLink-bound sizes (one host, the ring "
     "forced)"},
    {"pcie_efficiency_pct", 30, 100,
     "PCIe efficiency: large PCIe-bound sizes (SHM without P2P, GPUs "
     "behind PCIe switches)"},
    {"net_efficiency_pct", 30, 100,
     "network efficiency: large multi-host sizes (NIC- or fabric-bound)"},
    {"nvlink_response_bytes", 0, 64,
     "NVLink responses on the reverse direction: large NVLink-bound sizes "
     "with the ring forced"},
    {"pcie_read_completion_bytes", 32, 512,
     "PCIe read efficiency: large host-staged sizes (no GPUDirect RDMA) "
     "or SHM without P2P"},
    {"host_mem_bw", 5e9, 2000e9,
     "the host-memory staging rate: large host-staged sizes (no GPUDirect "
     "RDMA, or SHM without P2P)"},
    {"hca_dma_read_outstanding", 1, 64,
     "HCA read efficiency: large multi-host sizes"},
    {"cts_entry_bytes", 8, 4096,
     "CTS cost: multi-host SendRecv of 64 KiB - 4 MiB"},
    /* validate (issue 11): the host backend's cores as ranks */
    {"host_core_copy_bw", 0.1e9, 200e9,
     "one core's copy rate: large sizes of `ncclsim validate --backend "
     "host` on a --describe-host topology", 1},
};
#define NCAND (sizeof candidates / sizeof *candidates)

static const nsim_param_info *param_info(const char *name)
{
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++)
        if (strcmp(pi->name, name) == 0)
            return pi;
    return NULL;
}

static const candidate *cand_of(const char *name)
{
    for (size_t i = 0; i < NCAND; i++)
        if (strcmp(candidates[i].name, name) == 0)
            return &candidates[i];
    return NULL;
}

static double pget(const nsim_params *p, const nsim_param_info *pi)
{
    const char *b = (const char *)p + pi->offset;
    switch (pi->kind) {
    case NSIM_PK_BW: return *(const double *)b;
    case NSIM_PK_TIME: return (double)*(const nsim_time *)b;
    default: return (double)*(const uint64_t *)b;
    }
}

/* Sets the value as the model stores it (ps and counts are whole). */
static double pset(nsim_params *p, const nsim_param_info *pi, double v)
{
    char *b = (char *)p + pi->offset;
    switch (pi->kind) {
    case NSIM_PK_BW: *(double *)b = v; return v;
    case NSIM_PK_TIME:
        *(nsim_time *)b = (nsim_time)llround(v);
        return (double)*(nsim_time *)b;
    default:
        *(uint64_t *)b = (uint64_t)llround(v);
        return (double)*(uint64_t *)b;
    }
}

void nsim_calib_format(int kind, double v, char *buf, size_t len)
{
    switch (kind) {
    case NSIM_PK_BW: snprintf(buf, len, "%.2f GB/s", v / 1e9); break;
    case NSIM_PK_TIME: snprintf(buf, len, "%.3f ns", v / 1e3); break;
    default: snprintf(buf, len, "%.0f", v); break;
    }
}

/* ---- the problem ---------------------------------------------------- */

typedef struct point {
    size_t series;
    uint64_t size;
    double meas_us;
} point;

typedef struct cache_entry {
    double vals[NSIM_CALIB_MAX_PARAMS];
    size_t point;
    double sim_us;
} cache_entry;

typedef struct problem {
    nsim_scenario **scen;
    size_t nscen;
    size_t np;
    const nsim_param_info *pi[NSIM_CALIB_MAX_PARAMS];
    const candidate *c[NSIM_CALIB_MAX_PARAMS];
    point *pts;
    size_t npts;
    cache_entry *cache;
    size_t ncache, capcache;
    size_t runs, hits;
    nsim_err *err;
    int failed; /* a run failed: err is set */
} problem;

static double to_value(const candidate *c, double x)
{
    return c->lo + (c->hi - c->lo) / (1 + exp(-x));
}

/* The transformed value where a fit starts from v. A value on a bound
 * (an efficiency of 100 %) starts 2 % of the range inside it, where the
 * logistic still has a slope: on the bound the fit has no step to take. */
static double to_x(const candidate *c, double v)
{
    double f = (v - c->lo) / (c->hi - c->lo);
    if (f < 1e-6)
        f = 0.02;
    if (f > 1 - 1e-6)
        f = 0.98;
    return log(f / (1 - f));
}

/* The simulated time of point k with the values vals (as stored). */
static int sim_time(problem *pb, const double *vals, size_t k, double *us)
{
    for (size_t i = 0; i < pb->ncache; i++) {
        cache_entry *e = &pb->cache[i];
        if (e->point == k &&
            memcmp(e->vals, vals, pb->np * sizeof *vals) == 0) {
            pb->hits++;
            *us = e->sim_us;
            return NSIM_OK;
        }
    }
    const point *p = &pb->pts[k];
    nsim_scenario *s = pb->scen[p->series];
    for (size_t j = 0; j < pb->np; j++)
        pset(&s->params, pb->pi[j], vals[j]);
    nsim_run_opts ro = {0};
    nsim_run_row row;
    NSIM_TRY(nsim_run_size(s, &ro, p->size, &row, NULL, NULL, pb->err));
    pb->runs++;
    if (pb->ncache == pb->capcache) {
        size_t cap = pb->capcache ? pb->capcache * 2 : 256;
        cache_entry *c = realloc(pb->cache, cap * sizeof *c);
        if (c == NULL)
            return NSIM_ERR(pb->err, NSIM_ENOMEM, "calibrate: out of memory");
        pb->cache = c;
        pb->capcache = cap;
    }
    cache_entry *e = &pb->cache[pb->ncache++];
    memset(e, 0, sizeof *e);
    memcpy(e->vals, vals, pb->np * sizeof *vals);
    e->point = k;
    e->sim_us = row.time_us;
    *us = row.time_us;
    return NSIM_OK;
}

/* Stored values of a transformed vector. */
static void values_of(const problem *pb, const double *x, double *vals)
{
    nsim_params tmp = pb->scen[0]->params;
    memset(vals, 0, NSIM_CALIB_MAX_PARAMS * sizeof *vals);
    for (size_t j = 0; j < pb->np; j++)
        vals[j] = pset(&tmp, pb->pi[j], to_value(pb->c[j], x[j]));
}

static int residuals_at(problem *pb, const double *vals, double *r)
{
    for (size_t k = 0; k < pb->npts; k++) {
        double us = 0;
        NSIM_TRY(sim_time(pb, vals, k, &us));
        r[k] = log(us / pb->pts[k].meas_us);
    }
    return NSIM_OK;
}

static int f_cb(const gsl_vector *x, void *params, gsl_vector *f)
{
    problem *pb = params;
    double xv[NSIM_CALIB_MAX_PARAMS], vals[NSIM_CALIB_MAX_PARAMS];
    for (size_t j = 0; j < pb->np; j++)
        xv[j] = gsl_vector_get(x, j);
    values_of(pb, xv, vals);
    if (residuals_at(pb, vals, f->data) != NSIM_OK) {
        pb->failed = 1;
        return GSL_EBADFUNC;
    }
    return GSL_SUCCESS;
}

/* Forward differences with a step that moves every stored value (whole
 * picoseconds and counts). */
static int jac_at(problem *pb, const double *x, const double *r0,
                  gsl_matrix *J)
{
    double vals[NSIM_CALIB_MAX_PARAMS], v2[NSIM_CALIB_MAX_PARAMS];
    double *r = malloc(pb->npts * sizeof *r);
    if (r == NULL)
        return NSIM_ERR(pb->err, NSIM_ENOMEM, "calibrate: out of memory");
    values_of(pb, x, vals);
    for (size_t j = 0; j < pb->np; j++) {
        double xs[NSIM_CALIB_MAX_PARAMS];
        memcpy(xs, x, pb->np * sizeof *x);
        double h = x[j] > 0 ? -0.1 : 0.1; /* towards the middle */
        for (int tries = 0; tries < 6; tries++) {
            xs[j] = x[j] + h;
            values_of(pb, xs, v2);
            if (v2[j] != vals[j])
                break;
            h *= 2;
        }
        int rc = residuals_at(pb, v2, r);
        if (rc != NSIM_OK) {
            free(r);
            return rc;
        }
        for (size_t k = 0; k < pb->npts; k++)
            gsl_matrix_set(J, k, j, (r[k] - r0[k]) / h);
    }
    free(r);
    return NSIM_OK;
}

static int df_cb(const gsl_vector *x, void *params, gsl_matrix *J)
{
    problem *pb = params;
    double xv[NSIM_CALIB_MAX_PARAMS], vals[NSIM_CALIB_MAX_PARAMS];
    for (size_t j = 0; j < pb->np; j++)
        xv[j] = gsl_vector_get(x, j);
    values_of(pb, xv, vals);
    double *r0 = malloc(pb->npts * sizeof *r0);
    int rc = r0 ? residuals_at(pb, vals, r0) : NSIM_ENOMEM;
    if (rc == NSIM_OK)
        rc = jac_at(pb, xv, r0, J);
    free(r0);
    if (rc != NSIM_OK) {
        if (rc == NSIM_ENOMEM && pb->err->msg[0] == '\0')
            NSIM_ERR(pb->err, rc, "calibrate: out of memory");
        pb->failed = 1;
        return GSL_EBADFUNC;
    }
    return GSL_SUCCESS;
}

/* ---- choosing points --------------------------------------------------- */

static int pick_points(problem *pb, const nsim_measure_series *const *series,
                       size_t n, const nsim_calib_opts *o, nsim_err *err)
{
    size_t per = o->sizes_per_series ? o->sizes_per_series : 6;
    uint64_t max = o->max_size ? o->max_size : (1ull << 30);
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += series[k]->nrows;
    pb->pts = calloc(total + 1, sizeof *pb->pts);
    if (pb->pts == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
    for (size_t k = 0; k < n; k++) {
        const nsim_measure_series *m = series[k];
        nsim_scenario *s = pb->scen[k];
        size_t *ok = calloc(m->nrows + 1, sizeof *ok);
        size_t nok = 0;
        if (ok == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
        for (int pass = 0; pass < 2 && nok == 0; pass++)
            for (size_t i = 0; i < m->nrows; i++) {
                const nsim_measure_row *r = &m->rows[i];
                int col = o->column >= 0 ? o->column
                          : r->col[0].present ? 0 : 1;
                if (!r->col[col].present || !(r->col[col].time_us > 0) ||
                    nsim_run_test_bytes(s, r->size) == 0)
                    continue;
                if (pass == 0 && (r->size > max || r->size < o->min_size))
                    continue;
                ok[nok++] = i;
            }
        /* none within the limits: the smallest size above the limit, or
         * the largest below the floor */
        if (nok > 0 && m->rows[ok[0]].size > max)
            nok = 1;
        else if (nok > 0 && m->rows[ok[nok - 1]].size < o->min_size) {
            ok[0] = ok[nok - 1];
            nok = 1;
        }
        size_t take = nok < per ? nok : per;
        for (size_t t = 0; t < take; t++) {
            size_t idx = take == 1 ? 0 : t * (nok - 1) / (take - 1);
            const nsim_measure_row *r = &m->rows[ok[idx]];
            int col = o->column >= 0 ? o->column : r->col[0].present ? 0 : 1;
            pb->pts[pb->npts++] =
                (point){k, r->size, r->col[col].time_us};
        }
        free(ok);
    }
    return NSIM_OK;
}

/* ---- identifiability ------------------------------------------------- */

static void note(nsim_calib_result *res, const char *fmt, ...)
    NSIM_PRINTF(2, 3);
static void note(nsim_calib_result *res, const char *fmt, ...)
{
    size_t used = strlen(res->notes);
    if (used + 2 >= sizeof res->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->notes + used, sizeof res->notes - used, fmt, ap);
    va_end(ap);
    used = strlen(res->notes);
    if (used + 1 < sizeof res->notes) {
        res->notes[used] = '\n';
        res->notes[used + 1] = '\0';
    }
}

/* Columns of J kept: not ~0, not collinear with a stronger one. Sets
 * keep[j]; returns the index of a refused column (first) or -1. */
static void screen_columns(const gsl_matrix *J, const problem *pb, int *keep,
                           int *why, size_t *with)
{
    size_t n = J->size1, p = J->size2;
    double norm[NSIM_CALIB_MAX_PARAMS];
    size_t order[NSIM_CALIB_MAX_PARAMS];
    for (size_t j = 0; j < p; j++) {
        gsl_vector_const_view c = gsl_matrix_const_column(J, j);
        norm[j] = gsl_blas_dnrm2(&c.vector);
        order[j] = j;
        keep[j] = 0;
        why[j] = 0;
        with[j] = 0;
    }
    for (size_t a = 0; a < p; a++) /* by decreasing norm */
        for (size_t b = a + 1; b < p; b++)
            if (norm[order[b]] > norm[order[a]]) {
                size_t t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    gsl_matrix *q = gsl_matrix_alloc(n, p);
    size_t nq = 0;
    for (size_t a = 0; a < p; a++) {
        size_t j = order[a];
        /* a sweep of x over [-4, 4] (96 % of the bounds) moves the
         * times by < 0.5 % (rms) */
        if (norm[j] < 5e-3 * sqrt((double)n) / 8) {
            why[j] = 1;
            continue;
        }
        gsl_vector *v = gsl_vector_alloc(n);
        gsl_vector_const_view c = gsl_matrix_const_column(J, j);
        gsl_vector_memcpy(v, &c.vector);
        gsl_vector_scale(v, 1 / norm[j]);
        double best = 0;
        size_t bj = 0;
        for (size_t k = 0; k < nq; k++) {
            gsl_vector_view qk = gsl_matrix_column(q, k);
            double d;
            gsl_blas_ddot(v, &qk.vector, &d);
            if (fabs(d) > best) {
                best = fabs(d);
                bj = k;
            }
            gsl_blas_daxpy(-d, &qk.vector, v);
        }
        double rest = gsl_blas_dnrm2(v);
        if (rest < 0.1) {
            why[j] = 2;
            with[j] = bj; /* index into q: mapped below */
        } else {
            gsl_vector_scale(v, 1 / rest);
            gsl_vector_view qn = gsl_matrix_column(q, nq);
            gsl_vector_memcpy(&qn.vector, v);
            keep[j] = (int)(nq + 1); /* 1-based q index */
            nq++;
        }
        gsl_vector_free(v);
    }
    /* map collinear partners from q index to parameter */
    for (size_t j = 0; j < p; j++)
        if (why[j] == 2)
            for (size_t k = 0; k < p; k++)
                if (keep[k] == (int)with[j] + 1)
                    with[j] = k;
    for (size_t j = 0; j < p; j++)
        keep[j] = keep[j] > 0;
    gsl_matrix_free(q);
    (void)pb;
}

static double med_abs_busbw_err(const problem *pb, const double *r)
{
    double *e = malloc((pb->npts + 1) * sizeof *e);
    if (e == NULL)
        return -1;
    for (size_t k = 0; k < pb->npts; k++)
        e[k] = fabs(exp(-r[k]) - 1); /* busbw ratio - 1 = meas/sim - 1 */
    double m = nsim_compare_median(e, pb->npts);
    free(e);
    return m;
}

static double rms(const double *r, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += r[k] * r[k];
    return n ? sqrt(s / (double)n) : 0;
}

/* ---- the fit ------------------------------------------------------------ */

static int run_fit(problem *pb, const nsim_calib_opts *o, double *x,
                   nsim_calib_result *res, gsl_matrix **covar_out,
                   double *sigma2, nsim_err *err)
{
    size_t n = pb->npts, p = pb->np;
    gsl_multifit_nlinear_fdf fdf = {f_cb, df_cb, NULL, n, p, pb, 0, 0, 0};
    gsl_multifit_nlinear_parameters par =
        gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, p);
    if (w == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
    gsl_vector_view xv = gsl_vector_view_array(x, p);
    int info = 0;
    int st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver((size_t)(o->max_iter ? o->max_iter
                                                              : 40),
                                         1e-4, 1e-6, 1e-6, NULL, NULL,
                                         &info, w);
    if (pb->failed) {
        gsl_multifit_nlinear_free(w);
        return err->code ? err->code : NSIM_ESIM;
    }
    res->iterations = (int)gsl_multifit_nlinear_niter(w);
    if (st != GSL_SUCCESS) {
        double r = rms(gsl_multifit_nlinear_residual(w)->data, n);
        gsl_multifit_nlinear_free(w);
        return NSIM_ERR(err, NSIM_ESIM, "calibrate: the fit did not "
                        "converge after %d iterations (%s; rms log error "
                        "%.3f): fit fewer constants (--fit) or raise "
                        "--max-iter", res->iterations, gsl_strerror(st), r);
    }
    gsl_vector *pos = gsl_multifit_nlinear_position(w);
    for (size_t j = 0; j < p; j++)
        x[j] = gsl_vector_get(pos, j);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    double chi2 = 0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w),
                  gsl_multifit_nlinear_residual(w), &chi2);
    *sigma2 = chi2 / (double)(n - p);
    *covar_out = cov;
    gsl_multifit_nlinear_free(w);
    return NSIM_OK;
}

/* "name (why), ..." for the one-line error when nothing is left. */
static void add_brief(char *b, size_t len, const char *name, const char *why)
{
    size_t u = strlen(b);
    if (u + 1 < len)
        snprintf(b + u, len - u, "%s%s (%s)", u ? ", " : "", name, why);
}

int nsim_calibrate(nsim_scenario **scen,
                   const nsim_measure_series *const *series, size_t n,
                   const nsim_calib_opts *o, nsim_calib_result *res,
                   nsim_err *err)
{
    memset(res, 0, sizeof *res);
    gsl_set_error_handler_off();
    char brief[400] = "";
    problem pb = {0};
    pb.scen = scen;
    pb.nscen = n;
    pb.err = err;
    /* the constants */
    const char *names[NSIM_CALIB_MAX_PARAMS];
    size_t nn = 0;
    int explicit_fit = o->fit != NULL && o->nfit > 0 && !o->try_only;
    if (o->fit != NULL && o->nfit > 0) {
        if (o->nfit > NSIM_CALIB_MAX_PARAMS)
            return NSIM_ERR(err, NSIM_EINVAL, "--fit: at most %d constants",
                            NSIM_CALIB_MAX_PARAMS);
        for (size_t i = 0; i < o->nfit; i++) {
            if (cand_of(o->fit[i]) == NULL)
                return NSIM_ERR(err, NSIM_EINVAL,
                                "--fit %s: not a constant calibrate fits "
                                "(%s%s)", o->fit[i],
                                param_info(o->fit[i]) ? "it has no bounds "
                                "here; fitted: " : "unknown; fitted: ",
                                "kernel_launch_ps, p2p_step_sync_ps, "
                                "ll_step_sync_ps, ll128_step_sync_ps, "
                                "proxy_action_ps, gpu_memory_latency_ps, "
                                "hca_*_ps, h100_hbm_bw, a100_hbm_bw, "
                                "nvls_multimem_pct_sm90, "
                                "nvlink_response_bytes, "
                                "pcie_read_completion_bytes, "
                                "hca_dma_read_outstanding, cts_entry_bytes, "
                                "host_core_copy_bw");
            names[nn++] = o->fit[i];
        }
    } else {
        for (size_t i = 0; i < NCAND && nn < NSIM_CALIB_MAX_PARAMS; i++)
            if (!candidates[i].explicit_only)
                names[nn++] = candidates[i].name;
    }
    for (size_t j = 0; j < nn; j++) {
        pb.c[j] = cand_of(names[j]);
        pb.pi[j] = param_info(names[j]);
        if (pb.pi[j] == NULL)
            return NSIM_ERR(err, NSIM_EINVAL, "calibrate: %s is not in "
                            "models/params.c", names[j]);
    }
    pb.np = nn;
    int rc = pick_points(&pb, series, n, o, err);
    double x[NSIM_CALIB_MAX_PARAMS], vals[NSIM_CALIB_MAX_PARAMS];
    double *r0 = NULL;
    gsl_matrix *J = NULL, *cov = NULL;
    if (rc == NSIM_OK && pb.npts == 0)
        rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: no measured size the "
                      "scenarios can run");
    if (rc == NSIM_OK) {
        r0 = malloc(pb.npts * sizeof *r0);
        J = gsl_matrix_alloc(pb.npts, NSIM_CALIB_MAX_PARAMS);
        if (r0 == NULL || J == NULL)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
    }
    res->npoints = pb.npts;
    /* defaults (clamped into the bounds) and the error before */
    double before[NSIM_CALIB_MAX_PARAMS];
    for (size_t j = 0; rc == NSIM_OK && j < pb.np; j++) {
        before[j] = pget(&scen[0]->params, pb.pi[j]);
        x[j] = to_x(pb.c[j], before[j]);
    }
    if (rc == NSIM_OK) {
        for (size_t j = 0; j < pb.np; j++)
            vals[j] = before[j];
        rc = residuals_at(&pb, vals, r0);
    }
    if (rc == NSIM_OK) {
        res->rms_before = rms(r0, pb.npts);
        res->med_before = med_abs_busbw_err(&pb, r0);
    }
    /* screen the columns at the defaults */
    if (rc == NSIM_OK) {
        /* the Jacobian is taken where the defaults are: x of before */
        gsl_matrix_view Jv = gsl_matrix_submatrix(J, 0, 0, pb.npts, pb.np);
        double xb[NSIM_CALIB_MAX_PARAMS];
        for (size_t j = 0; j < pb.np; j++)
            xb[j] = to_x(pb.c[j], before[j]);
        /* jac_at perturbs from values_of(xb): the defaults, or where a
         * default on a bound starts from */
        double vb[NSIM_CALIB_MAX_PARAMS];
        values_of(&pb, xb, vb);
        double *rb = r0, *rs = NULL;
        if (memcmp(vb, before, pb.np * sizeof *vb) != 0) {
            rs = malloc(pb.npts * sizeof *rs);
            rc = rs == NULL ? NSIM_ERR(err, NSIM_ENOMEM,
                                       "calibrate: out of memory")
                            : residuals_at(&pb, vb, rs);
            rb = rs;
        }
        if (rc == NSIM_OK)
            rc = jac_at(&pb, xb, rb, &Jv.matrix);
        free(rs);
        int keep[NSIM_CALIB_MAX_PARAMS], why[NSIM_CALIB_MAX_PARAMS];
        size_t with[NSIM_CALIB_MAX_PARAMS];
        if (rc == NSIM_OK)
            screen_columns(&Jv.matrix, &pb, keep, why, with);
        /* without --fit: at most one constant fewer than the sizes, the
         * ones the data move most */
        size_t nkeep = 0;
        for (size_t j = 0; rc == NSIM_OK && j < pb.np; j++)
            nkeep += keep[j] != 0;
        while (rc == NSIM_OK && !explicit_fit && nkeep >= pb.npts &&
               nkeep > 0) {
            size_t weak = pb.np;
            double wn = 0;
            for (size_t j = 0; j < pb.np; j++) {
                if (!keep[j])
                    continue;
                gsl_vector_const_view c =
                    gsl_matrix_const_column(&Jv.matrix, j);
                double nj = gsl_blas_dnrm2(&c.vector);
                if (weak == pb.np || nj < wn) {
                    weak = j;
                    wn = nj;
                }
            }
            keep[weak] = 0;
            why[weak] = 3;
            nkeep--;
        }
        size_t w = 0;
        for (size_t j = 0; rc == NSIM_OK && j < pb.np; j++) {
            if (keep[j]) {
                pb.c[w] = pb.c[j];
                pb.pi[w] = pb.pi[j];
                before[w] = before[j];
                x[w] = x[j];
                w++;
                continue;
            }
            char msg[512];
            if (why[j] == 1)
                snprintf(msg, sizeof msg, "%s: the measurements do not "
                         "move with it (Jacobian column ~0); a measurement "
                         "of %s would pin it", pb.c[j]->name, pb.c[j]->pins);
            else if (why[j] == 3)
                snprintf(msg, sizeof msg, "%s: fewer measured sizes (%zu) "
                         "than constants the data move; it moves them the "
                         "least; more sizes (--sizes, or a measurement of "
                         "%s) would pin it", pb.c[j]->name, pb.npts,
                         pb.c[j]->pins);
            else
                snprintf(msg, sizeof msg, "%s: collinear with %s (the "
                         "measurements cannot tell them apart); a "
                         "measurement of %s would pin it", pb.c[j]->name,
                         pb.c[with[j]]->name, pb.c[j]->pins);
            if (explicit_fit)
                rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: refused: %s",
                              msg);
            else
                note(res, "not fitted: %s", msg);
            add_brief(brief, sizeof brief, pb.c[j]->name,
                      why[j] == 1   ? "no effect"
                      : why[j] == 3 ? "fewer sizes than constants"
                                    : "collinear");
            for (size_t k = 0; k < n; k++) /* back to its default */
                pset(&scen[k]->params, pb.pi[j], before[j]);
        }
        pb.np = rc == NSIM_OK ? w : pb.np;
        pb.ncache = 0; /* keyed by the fitted set, which changed */
    }
    if (rc == NSIM_OK && pb.np == 0)
        rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: the measurements pin "
                      "none of the constants tried: %s", brief);
    if (rc == NSIM_OK && pb.npts <= pb.np)
        rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: %zu measured sizes "
                      "cannot pin %zu constants: give more sizes "
                      "(--sizes) or fewer constants (--fit)", pb.npts, pb.np);
    /* fit; drop constants whose interval covers their bounds; refit */
    double sigma2 = 0;
    while (rc == NSIM_OK) {
        rc = run_fit(&pb, o, x, res, &cov, &sigma2, err);
        if (rc != NSIM_OK)
            break;
        double t = gsl_cdf_tdist_Pinv(0.975, (double)(pb.npts - pb.np));
        size_t drop = pb.np;
        for (size_t j = 0; j < pb.np; j++) {
            double d = t * sqrt(gsl_matrix_get(cov, j, j) * sigma2);
            double lo = to_value(pb.c[j], x[j] - d);
            double hi = to_value(pb.c[j], x[j] + d);
            double range = pb.c[j]->hi - pb.c[j]->lo;
            nsim_calib_fit *f = &res->fit[j];
            snprintf(f->name, sizeof f->name, "%s", pb.c[j]->name);
            f->before = before[j];
            nsim_params tmp = scen[0]->params;
            f->value = pset(&tmp, pb.pi[j], to_value(pb.c[j], x[j]));
            f->lo95 = lo;
            f->hi95 = hi;
            f->lo = pb.c[j]->lo;
            f->hi = pb.c[j]->hi;
            f->kind = pb.pi[j]->kind;
            if (!(d == d) || hi - lo > 0.9 * range)
                drop = j;
        }
        gsl_matrix_free(cov);
        cov = NULL;
        if (drop == pb.np)
            break;
        char msg[512];
        snprintf(msg, sizeof msg, "%s: its 95%% interval covers its bounds "
                 "(the measurements barely constrain it); a measurement of "
                 "%s would pin it", pb.c[drop]->name, pb.c[drop]->pins);
        if (explicit_fit) {
            rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: refused: %s", msg);
            break;
        }
        note(res, "not fitted: %s", msg);
        add_brief(brief, sizeof brief, pb.c[drop]->name,
                  "95% interval covers its bounds");
        /* the dropped constant goes back to its default everywhere */
        for (size_t k = 0; k < n; k++)
            pset(&scen[k]->params, pb.pi[drop], before[drop]);
        for (size_t j = drop; j + 1 < pb.np; j++) {
            pb.c[j] = pb.c[j + 1];
            pb.pi[j] = pb.pi[j + 1];
            before[j] = before[j + 1];
            x[j] = x[j + 1];
        }
        pb.np--;
        pb.ncache = 0; /* keyed by the fitted set, which changed */
        if (pb.np == 0)
            rc = NSIM_ERR(err, NSIM_ECONFIG, "calibrate: the measurements "
                          "pin none of the constants tried: %s (more "
                          "sizes, or measurements of other sizes, would)",
                          brief);
    }
    if (rc == NSIM_OK) {
        res->nfit = pb.np;
        values_of(&pb, x, vals);
        rc = residuals_at(&pb, vals, r0);
    }
    if (rc == NSIM_OK) {
        res->rms_after = rms(r0, pb.npts);
        res->med_after = med_abs_busbw_err(&pb, r0);
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < pb.np; j++)
                pset(&scen[k]->params, pb.pi[j], vals[j]);
    }
    res->runs = pb.runs;
    res->cached = pb.hits;
    gsl_matrix_free(J);
    free(r0);
    free(pb.pts);
    free(pb.cache);
    return rc;
}

int nsim_calibrate_write(const nsim_calib_result *r, char *const *files,
                         size_t nfiles, const char *path, nsim_err *err)
{
    char on[2048] = "";
    for (size_t i = 0; i < nfiles; i++) {
        size_t u = strlen(on);
        snprintf(on + u, sizeof on - u, "%s%s", i ? ", " : "", files[i]);
    }
    cJSON *root = cJSON_CreateObject();
    cJSON *cal = cJSON_AddObjectToObject(root, "calibration");
    cJSON *fl = cal ? cJSON_AddArrayToObject(cal, "measurements") : NULL;
    for (size_t i = 0; fl && i < nfiles; i++)
        cJSON_AddItemToArray(fl, cJSON_CreateString(files[i]));
    if (cal) {
        cJSON_AddNumberToObject(cal, "points", (double)r->npoints);
        cJSON_AddNumberToObject(cal, "rms_log_error_before", r->rms_before);
        cJSON_AddNumberToObject(cal, "rms_log_error_after", r->rms_after);
        cJSON_AddNumberToObject(cal, "median_abs_error_before",
                                r->med_before);
        cJSON_AddNumberToObject(cal, "median_abs_error_after", r->med_after);
    }
    cJSON *ps = cJSON_AddObjectToObject(root, "params");
    int ok = root && cal && fl && ps;
    for (size_t j = 0; ok && j < r->nfit; j++) {
        const nsim_calib_fit *f = &r->fit[j];
        char v[48], lo[48], hi[48], b[48], src[3000];
        nsim_calib_format(f->kind, f->value, v, sizeof v);
        nsim_calib_format(f->kind, f->lo95, lo, sizeof lo);
        nsim_calib_format(f->kind, f->hi95, hi, sizeof hi);
        nsim_calib_format(f->kind, f->before, b, sizeof b);
        snprintf(src, sizeof src, "calibrated by ncclsim calibrate on %s: "
                 "95%% interval %s - %s; replaces %s", on, lo, hi, b);
        cJSON *e = cJSON_AddObjectToObject(ps, f->name);
        ok = e && cJSON_AddStringToObject(e, "value", v) &&
             cJSON_AddStringToObject(e, "source", src);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
    size_t len = strlen(text);
    char *t2 = realloc(text, len + 2);
    if (t2 == NULL) {
        free(text);
        return NSIM_ERR(err, NSIM_ENOMEM, "calibrate: out of memory");
    }
    t2[len] = '\n';
    t2[len + 1] = '\0';
    int rc = nsim_write_file_atomic(path, t2, len + 1, err);
    free(t2);
    return rc;
}
