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
    cJSON_AddStringToObject(root, "format", "ncclsim-measurement");
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
