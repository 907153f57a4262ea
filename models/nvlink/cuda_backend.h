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

/* ---- the plan on GPUs --------------------------------------------------
 * Rank r runs on device r % devices; a rank's lanes are the blocks of one
 * kernel per op on the rank's stream (NCCL's one kernel per collective, a
 * block per channel). A connection's slots live on the receiver's GPU and
 * the sender's block stores into them (peer access between GPUs, the same
 * GPU otherwise); tail and head flags (NCCL's Simple protocol) live in
 * mapped pinned host memory, visible to every GPU. Waits are bounded by
 * clock64() cycles; a failed wait sets an error flag every block checks. */
typedef struct nsim_cudab_op {
    unsigned prim, pad;
    unsigned long long bytes;
    long long in_off, out_off; /* -1: not used */
} nsim_cudab_op;

typedef struct nsim_cudab_lane {
    unsigned rank, send_conn, recv_conn, nops; /* conn ~0u: none */
    const nsim_cudab_op *ops;
} nsim_cudab_lane;

typedef struct nsim_cudab_plan {
    unsigned nranks, nlanes, nconns, inflight;
    unsigned long long slice, in_bytes, out_bytes;
    const nsim_cudab_lane *lanes;
    const unsigned *conn_to; /* receiving rank of each connection */
    int dtype, op;           /* nsim_hdt / nsim_hop numbers (hdtype.h) */
    double timeout_s;
} nsim_cudab_plan;

int nsim_cudab_open(const nsim_cudab_plan *p, void **ctx, char *msg,
                    size_t len);
/* The device addresses of rank's send and receive buffers. */
void nsim_cudab_buffers(void *ctx, unsigned rank, void **in, void **out);
int nsim_cudab_copy(void *ctx, unsigned rank, void *dst, const void *src,
                    unsigned long long bytes, int to_device, char *msg,
                    size_t len);
/* iters ops on every rank, rank r reading ins[r] and writing outs[r];
 * *elapsed_s: the longest rank's time between CUDA events around them. */
int nsim_cudab_run(void *ctx, unsigned iters, void *const *ins,
                   void *const *outs, double *elapsed_s, char *msg,
                   size_t len);
void nsim_cudab_close(void *ctx);

#ifdef __cplusplus
}
#endif

#endif
