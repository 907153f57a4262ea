/* SPDX-License-Identifier: MIT
 *
 * hwbackends.h - the optional hardware backends of `ncclsim validate`
 * beside the always-built host one (models/host/host_xport.h): each is
 * compiled when its library is found (the build prints enabled/disabled)
 * and otherwise answers with an error naming what is missing.
 *
 *   verbs  models/ib/verbs_xport.c    libibverbs: RC QPs, RDMA write with
 *          immediate per slice, CTS writes back, CQ polling; ranks are
 *          processes joined by the TCP bootstrap (sim/exec/bootstrap.h)
 *   cuda   models/nvlink/cuda_backend.cu  CUDA runtime: device check and the
 *          one-GPU microbenchmark of the model's constants
 *   nccl   models/nvlink/nccl_backend.c   libnccl through dlopen: the
 *          scenario's collective through real NCCL, its INFO log kept
 */
#ifndef NSIM_EXEC_HWBACKENDS_H
#define NSIM_EXEC_HWBACKENDS_H

#include <stdint.h>

#include "sim/exec/hwexec.h"
#include "sim/exec/scenario.h"

struct cJSON;

/* ---- verbs ---------------------------------------------------------- */
typedef struct nsim_verbs_opts {
    const char *hosts;  /* "h0:port,h1:port,...": rank i listens on entry i */
    const char *token;  /* shared secret of the bootstrap */
    int32_t rank;       /* this process's rank */
    double timeout_s;
} nsim_verbs_opts;

/* The RDMA device is there (ibv_get_device_list). */
NSIM_NODISCARD int nsim_verbs_check(const nsim_verbs_opts *o, nsim_err *err);
NSIM_NODISCARD int nsim_verbs_measure(const nsim_verbs_opts *o,
                                      const nsim_plan *plan, nsim_hdt dt,
                                      nsim_hop op, uint32_t warmup,
                                      uint32_t iters, int check,
                                      nsim_hwx_measure *m, nsim_err *err);

/* ---- cuda ------------------------------------------------------------ */
/* At least one CUDA device (cudaGetDeviceCount, its error named). */
NSIM_NODISCARD int nsim_cuda_check_device(nsim_err *err);
/* The plan on the GPUs present (rank r on GPU r mod GPUs): a kernel per
 * rank and op, a block per lane, slots on the receiver's GPU, flags for
 * tail and head, CUDA events around the iterations. */
NSIM_NODISCARD int nsim_cuda_measure(const nsim_plan *plan, nsim_hdt dt,
                                     nsim_hop op, uint32_t warmup,
                                     uint32_t iters, int check,
                                     double timeout_s, nsim_hwx_measure *m,
                                     nsim_err *err);
/* One GPU: a thread block's copy and reduce rate against the number of
 * blocks, kernel launch overhead, pinned host<->device rates; written
 * as a measurement file naming the GPU. */
NSIM_NODISCARD int nsim_cuda_microbench(const char *out, nsim_err *err);

/* ---- nccl ------------------------------------------------------------ */
typedef struct nsim_nccl_opts {
    const char *lib; /* libnccl.so path for dlopen (NULL: libnccl.so.2) */
    uint32_t warmup, iters;
    double timeout_s;
} nsim_nccl_opts;
typedef struct nsim_nccl nsim_nccl;
/* Loads NCCL and the CUDA runtime, finds the GPUs, sets the scenario's
 * NCCL_* knobs and NCCL_DEBUG=INFO into a log file, and makes one
 * communicator over the scenario's ranks (ncclCommInitAll). */
NSIM_NODISCARD int nsim_nccl_open(const nsim_scenario *s,
                                  const nsim_nccl_opts *o, nsim_nccl **out,
                                  nsim_err *err);
NSIM_NODISCARD int nsim_nccl_measure_size(nsim_nccl *n, uint64_t bytes,
                                          nsim_hwx_measure *m, nsim_err *err);
/* What NCCL's INFO log says it ran (channels, rings, algorithm and
 * protocol where logged), as JSON; NULL if nothing was logged. */
struct cJSON *nsim_nccl_info(nsim_nccl *n);
void nsim_nccl_close(nsim_nccl *n);

#endif
