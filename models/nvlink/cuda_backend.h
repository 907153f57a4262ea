/* SPDX-License-Identifier: MIT
 *
 * cuda_backend.h - the CUDA side of the cuda hardware backend, compiled
 * by nvcc when the toolkit is found (CMake check_language(CUDA)); a plain
 * C interface with no ncclsim types, so the CUDA object needs nothing from
 * the simulator library. models/nvlink/cuda_glue.c turns it into the
 * backend (sim/exec/hwbackends.h).
 */
#ifndef NSIM_MODELS_NVLINK_CUDA_BACKEND_H
#define NSIM_MODELS_NVLINK_CUDA_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NSIM_CUDAB_MAX_POINTS 16

typedef struct nsim_cudab_point {
    int blocks;                 /* thread blocks of 512 threads */
    double copy_Bps, reduce_Bps; /* bytes written per second, all blocks */
} nsim_cudab_point;

typedef struct nsim_cudab_result {
    char name[256];
    int sm_major, sm_minor, sms;
    double mem_clock_khz, mem_bus_bits;
    nsim_cudab_point pts[NSIM_CUDAB_MAX_POINTS];
    int npts;
    double launch_us;      /* host-side cost of one empty kernel launch */
    double launch_gpu_us;  /* launch-to-launch on the GPU (events) */
    double h2d_Bps, d2h_Bps; /* cudaMemcpyAsync, pinned host memory */
    double bytes;          /* buffer size used */
} nsim_cudab_result;

/* 0 and *n devices, or the CUDA error number with its string in msg. */
int nsim_cudab_count(int *n, char *msg, size_t len);
/* The microbenchmark on device 0; 0 or a CUDA error with msg. */
int nsim_cudab_microbench(nsim_cudab_result *r, char *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif
