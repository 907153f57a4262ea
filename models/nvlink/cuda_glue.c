/* SPDX-License-Identifier: MIT
 *
 * cuda_glue.c - the cuda hardware backend (sim/exec/hwbackends.h) over
 * the nvcc-compiled part (cuda_backend.h) when the CUDA toolkit was found
 * at build time; otherwise the same entry points say it was not built.
 * The microbenchmark is written as a measurement file naming the GPU,
 * with the per-block rates the models take as constants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/nvlink/cuda_backend.h"
#include "sim/core/jread.h"
#include "sim/exec/hwbackends.h"

#ifndef NSIM_HAVE_CUDA

int nsim_cuda_check_device(nsim_err *err)
{
    return NSIM_ERR(err, NSIM_ENOTSUP,
                    "cuda backend: not built: no CUDA toolkit (nvcc) was "
                    "found when ncclsim was built");
}

int nsim_cuda_microbench(const char *out, nsim_err *err)
{
    (void)out;
    return nsim_cuda_check_device(err);
}

int nsim_cuda_measure(const nsim_plan *plan, nsim_hdt dt, nsim_hop op,
                      uint32_t warmup, uint32_t iters, int check,
                      double timeout_s, nsim_hwx_measure *m, nsim_err *err)
{
    (void)plan, (void)dt, (void)op, (void)warmup, (void)iters, (void)check;
    (void)timeout_s, (void)m;
    return nsim_cuda_check_device(err);
}

#else

int nsim_cuda_check_device(nsim_err *err)
{
    char msg[256] = "";
    int n = 0, rc = nsim_cudab_count(&n, msg, sizeof msg);
    if (rc != 0 || n == 0)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "cuda backend: no GPU: cudaGetDeviceCount returned "
                        "%d device(s): %s (CUDA error %d)", n,
                        rc ? msg : "no CUDA device", rc);
    return NSIM_OK;
}

/* The plan's lanes and ops as the GPU side takes them. */
static int gpu_plan(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                    double timeout_s, nsim_cudab_plan *gp,
                    nsim_cudab_lane **lanes, unsigned **conn_to,
                    nsim_err *err)
{
    uint64_t in_b, out_b;
    nsim_hwx_buffer_bytes(p, &in_b, &out_b);
    *lanes = calloc(p->nlanes + 1, sizeof **lanes);
    *conn_to = calloc(p->nconns + 1, sizeof **conn_to);
    if (*lanes == NULL || *conn_to == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    for (uint32_t c = 0; c < p->nconns; c++)
        (*conn_to)[c] = p->conns[c].to;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_lane *l = &p->lanes[i];
        nsim_cudab_op *ops = calloc(l->nops + 1, sizeof *ops);
        if (ops == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        for (uint32_t k = 0; k < l->nops; k++) {
            int64_t io, oo;
            const nsim_plan_op *po = nsim_plan_lane_op(l, k);
            (void)nsim_hwx_op_io(p, l->rank, po, &io, &oo);
            ops[k] = (nsim_cudab_op){po->prim, 0, po->bytes, io, oo};
        }
        (*lanes)[i] = (nsim_cudab_lane){l->rank, l->send_conn, l->recv_conn,
                                        l->nops, ops};
    }
    *gp = (nsim_cudab_plan){p->nranks, p->nlanes, p->nconns,
                            NSIM_NCCL_STEPS / p->slice_steps, p->slice_bytes,
                            in_b, out_b, *lanes, *conn_to, (int)dt, (int)op,
                            timeout_s};
    return NSIM_OK;
}

static int gpu_fail(int rc, const char *msg, nsim_err *err)
{
    return NSIM_ERR(err, NSIM_EIO, "cuda backend: %s (%d)", msg, rc);
}

/* One job: iters ops (or, with check, fill + one op + count wrong). */
static int gpu_job(void *g, const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                   uint32_t iters, int ip, int check, double *t,
                   int64_t *wrong, nsim_err *err)
{
    char msg[256] = "";
    uint32_t n = p->nranks;
    uint64_t in_b, out_b;
    nsim_hwx_buffer_bytes(p, &in_b, &out_b);
    void **ins = calloc(n, sizeof *ins), **outs = calloc(n, sizeof *outs);
    uint8_t *hin = check ? malloc(in_b + 1) : NULL;
    uint8_t *hout = check ? malloc(out_b + 1) : NULL;
    int rc = ins && outs && (!check || (hin && hout))
                 ? NSIM_OK
                 : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    for (uint32_t r = 0; rc == NSIM_OK && r < n; r++) {
        void *in, *out;
        uint8_t *pi, *po;
        nsim_cudab_buffers(g, r, &in, &out);
        nsim_hwx_place(p, r, ip, in, out, &pi, &po);
        ins[r] = pi;
        outs[r] = po;
        if (!check)
            continue;
        nsim_hwx_fill_host(p, dt, op, r, ip, hin, hout);
        int c = nsim_cudab_copy(g, r, in, hin, in_b, 1, msg, sizeof msg);
        if (c == 0)
            c = nsim_cudab_copy(g, r, out, hout, out_b, 1, msg, sizeof msg);
        if (c != 0)
            rc = gpu_fail(c, msg, err);
    }
    int c = rc == NSIM_OK ? nsim_cudab_run(g, iters, ins, outs, t, msg,
                                           sizeof msg)
                          : 0;
    if (c != 0)
        rc = gpu_fail(c, msg, err);
    if (check && wrong != NULL)
        *wrong = 0;
    for (uint32_t r = 0; check && rc == NSIM_OK && r < n; r++) {
        void *in, *out;
        nsim_cudab_buffers(g, r, &in, &out);
        c = nsim_cudab_copy(g, r, hin, in, in_b, 0, msg, sizeof msg);
        if (c == 0)
            c = nsim_cudab_copy(g, r, hout, out, out_b, 0, msg, sizeof msg);
        if (c != 0) {
            rc = gpu_fail(c, msg, err);
            break;
        }
        int64_t w = nsim_hwx_check_host(p, dt, op, r, ip, hin, hout);
        *wrong = w < 0 || *wrong < 0 ? -1 : *wrong + w;
    }
    free(ins);
    free(outs);
    free(hin);
    free(hout);
    return rc;
}

int nsim_cuda_measure(const nsim_plan *plan, nsim_hdt dt, nsim_hop op,
                      uint32_t warmup, uint32_t iters, int check,
                      double timeout_s, nsim_hwx_measure *m, nsim_err *err)
{
    nsim_cudab_plan gp;
    nsim_cudab_lane *lanes = NULL;
    unsigned *conn_to = NULL;
    void *g = NULL;
    char msg[256] = "";
    double t = 0;
    NSIM_TRY(nsim_cuda_check_device(err));
    NSIM_TRY(nsim_hwx_check_plan(plan, dt, err));
    int rc = gpu_plan(plan, dt, op, timeout_s, &gp, &lanes, &conn_to, err);
    int c = rc == NSIM_OK ? nsim_cudab_open(&gp, &g, msg, sizeof msg) : 0;
    if (c != 0)
        rc = gpu_fail(c, msg, err);
    m->wrong = m->wrong_ip = -1;
    if (rc == NSIM_OK && warmup > 0)
        rc = gpu_job(g, plan, dt, op, warmup, 0, 0, &t, NULL, err);
    for (int ip = 0; rc == NSIM_OK && ip < 2; ip++) {
        rc = gpu_job(g, plan, dt, op, iters, ip, 0, &t, NULL, err);
        *(ip ? &m->time_ip_us : &m->time_us) = t / iters * 1e6;
        if (rc == NSIM_OK && check)
            rc = gpu_job(g, plan, dt, op, 1, ip, 1, &t,
                         ip ? &m->wrong_ip : &m->wrong, err);
    }
    nsim_cudab_close(g);
    for (uint32_t i = 0; lanes != NULL && i < plan->nlanes; i++)
        free((void *)lanes[i].ops);
    free(lanes);
    free(conn_to);
    return rc;
}

int nsim_cuda_microbench(const char *out, nsim_err *err)
{
    nsim_cudab_result r;
    char msg[256] = "";
    if (out == NULL)
        return NSIM_ERR(err, NSIM_EINVAL, "--microbench needs -o FILE");
    NSIM_TRY(nsim_cuda_check_device(err));
    int rc = nsim_cudab_microbench(&r, msg, sizeof msg);
    if (rc != 0)
        return NSIM_ERR(err, NSIM_EIO, "cuda backend: %s (CUDA error %d)",
                        msg, rc);
    cJSON *root = cJSON_CreateObject(), *pts = cJSON_CreateArray();
    char sm[16];
    snprintf(sm, sizeof sm, "%d%d", r.sm_major, r.sm_minor);
    cJSON_AddStringToObject(root, "format", "ncclsim-gpu-microbench");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "source",
                            "ncclsim validate --backend cuda --microbench");
    cJSON_AddStringToObject(root, "gpu", r.name);
    cJSON_AddStringToObject(root, "sm", sm);
    cJSON_AddNumberToObject(root, "sms", r.sms);
    cJSON_AddNumberToObject(root, "buffer_bytes", r.bytes);
    for (int i = 0; i < r.npts; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "blocks", r.pts[i].blocks);
        cJSON_AddNumberToObject(p, "copy_GBps", r.pts[i].copy_Bps / 1e9);
        cJSON_AddNumberToObject(p, "copy_per_block_GBps",
                                r.pts[i].copy_Bps / 1e9 / r.pts[i].blocks);
        cJSON_AddNumberToObject(p, "reduce_GBps", r.pts[i].reduce_Bps / 1e9);
        cJSON_AddItemToArray(pts, p);
    }
    cJSON_AddItemToObject(root, "block_rates", pts);
    cJSON_AddNumberToObject(root, "launch_host_us", r.launch_us);
    cJSON_AddNumberToObject(root, "launch_gpu_us", r.launch_gpu_us);
    cJSON_AddNumberToObject(root, "h2d_pinned_GBps", r.h2d_Bps / 1e9);
    cJSON_AddNumberToObject(root, "d2h_pinned_GBps", r.d2h_Bps / 1e9);
    /* what the models take from it, as a params file (--params FILE):
     * the per-SM share of HBM is one block's copy rate, so the
     * generation's hbm_bw is that rate times the SM count
     * (nsim_params_sm_stream_bw); the launch cost is the GPU-side one */
    const char *hbm = r.sm_major == 9    ? "h100_hbm_bw"
                      : r.sm_major == 8  ? "a100_hbm_bw"
                      : r.sm_major == 10 ? "b200_hbm_bw"
                                         : "other_hbm_bw";
    char v[64], src[512];
    cJSON *params = cJSON_CreateObject(), *e = cJSON_CreateObject();
    snprintf(v, sizeof v, "%.4g GB/s", r.pts[0].copy_Bps * r.sms / 1e9);
    snprintf(src, sizeof src, "measured by ncclsim validate --backend cuda "
             "--microbench on %.200s: one 512-thread block copies at %.2f GB/s, "
             "x %d SMs", r.name, r.pts[0].copy_Bps / 1e9, r.sms);
    cJSON_AddStringToObject(e, "value", v);
    cJSON_AddStringToObject(e, "source", src);
    cJSON_AddItemToObject(params, hbm, e);
    e = cJSON_CreateObject();
    snprintf(v, sizeof v, "%.0f ns", r.launch_gpu_us * 1e3);
    snprintf(src, sizeof src, "measured by ncclsim validate --backend cuda "
             "--microbench on %.200s: 2000 empty kernels back to back, between "
             "CUDA events", r.name);
    cJSON_AddStringToObject(e, "value", v);
    cJSON_AddStringToObject(e, "source", src);
    cJSON_AddItemToObject(params, "kernel_launch_ps", e);
    cJSON_AddItemToObject(root, "params", params);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    int w = nsim_write_file_atomic(out, text, strlen(text), err);
    if (w == NSIM_OK)
        printf("%s\n", text);
    free(text);
    return w;
}

#endif
