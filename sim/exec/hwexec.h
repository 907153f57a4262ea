/* SPDX-License-Identifier: MIT
 *
 * hwexec.h - the executor on real hardware: plays a plan's lanes (per
 * rank and channel, the ordered send / recv / recvReduceSend / ... ops of
 * exec.h) as threads that move and reduce real data through a hardware
 * transport (models/hw_transport.h), nccl-tests style: jobs of warm-up or
 * timed iterations back to back (a rank's lanes start iteration k+1 when
 * all of them have finished k, as kernels on one stream), and check jobs
 * that fill the pattern, run once and count wrong elements.
 *
 * Owns: the lanes' threads, the ranks' buffers (in the process that runs
 * the rank), the job protocol. The control block (jobs, per-lane
 * counters, the error, the #wrong counts, the op spans) lives in memory
 * the caller provides, so ranks may be threads of one process or
 * processes sharing it (fork + MAP_SHARED), or one process per rank.
 *
 * Plays: Ring plans of AllReduce, AllGather, ReduceScatter, Broadcast and
 * Reduce, and the point-to-point plans (SendRecv, AllToAll); refuses
 * trees, NVLS and PAT by name.
 */
#ifndef NSIM_EXEC_HWEXEC_H
#define NSIM_EXEC_HWEXEC_H

#include <stddef.h>
#include <stdint.h>

#include "models/host/hdtype.h"
#include "models/hw_transport.h"
#include "sim/exec/exec.h"
#include "sim/plan/plan.h"

typedef struct nsim_hwx nsim_hwx;

typedef enum nsim_hwx_job {
    NSIM_HWX_JOB_TIMED, /* iters ops back to back */
    NSIM_HWX_JOB_CHECK, /* fill, one op, count wrong elements */
    NSIM_HWX_JOB_QUIT,
} nsim_hwx_job;

typedef struct nsim_hwx_cfg {
    const nsim_plan *plan;
    nsim_hdt dtype;
    nsim_hop op;
    const nsim_hw_xport_ops *xp;
    void *xp_ctx;
    int32_t only_rank;  /* -1: every rank's lanes in this process */
    double timeout_s;   /* the controller's wait for a job, per iteration */
    /* tests of the lost-peer path: rank die_rank raises SIGKILL on itself
     * at the start of its die_job-th job (-1: never) */
    int32_t die_rank, die_job;
    /* ranks in several processes with a private control block each (the
     * verbs backend): a barrier before every job, and after it the
     * maximum of *max_v (the elapsed time) and the sum of *sum_v (wrong
     * elements, < 0 where undefined) over the processes; NULL: one
     * controller sees every rank */
    int (*sync)(void *arg, double *max_v, double *sum_v, nsim_err *err);
    void *sync_arg;
} nsim_hwx_cfg;

/* Bytes of the control block for the plan (zeroed by the caller; shared
 * between processes when ranks are processes). */
size_t nsim_hwx_ctl_size(const nsim_plan *p);

/* Checks that the plan can be played (names what cannot), lays out the
 * control block in ctl, and allocates the executor (not yet the lanes). */
NSIM_NODISCARD int nsim_hwx_create(const nsim_hwx_cfg *cfg, void *ctl,
                                   nsim_hwx **out, nsim_err *err);
/* The abort flag the transports' waits watch. */
_Atomic int *nsim_hwx_abort_flag(nsim_hwx *x);
/* Starts the lanes of cfg->only_rank (or of every rank): threads, and
 * their ranks' buffers. */
NSIM_NODISCARD int nsim_hwx_start(nsim_hwx *x, nsim_err *err);
/* Joins this process's lane threads (after a QUIT job or an abort). */
void nsim_hwx_join(nsim_hwx *x);
/* Controller: runs one job on every lane of every rank and waits for it
 * (bounded; alive(arg) is polled and may report a lost rank as an
 * error). *elapsed_s: from the job's start to the last lane's end.
 * record: keep every op's span (the first iteration of a timed job). */
typedef int (*nsim_hwx_alive_fn)(void *arg, nsim_err *err);
NSIM_NODISCARD int nsim_hwx_run(nsim_hwx *x, nsim_hwx_job job, uint32_t iters,
                                int in_place, int record,
                                nsim_hwx_alive_fn alive, void *alive_arg,
                                double *elapsed_s, nsim_err *err);
/* After a check job: wrong elements over all ranks (nccl-tests #wrong);
 * -1 where the collective's in-place form has no defined result. */
int64_t nsim_hwx_wrong(const nsim_hwx *x);
/* The spans of the last recorded job as an exec result (spans only;
 * free with nsim_exec_result_free). */
NSIM_NODISCARD int nsim_hwx_spans(const nsim_hwx *x, nsim_exec_result *res,
                                  nsim_err *err);
/* Marks the run failed with a message (first one wins); lanes stop. */
void nsim_hwx_fail(nsim_hwx *x, const char *msg);
void nsim_hwx_destroy(nsim_hwx *x);

/* One size measured as nccl-tests does: warm-up iterations, then out of
 * place: timed iterations (time per op) and, with check, a check job;
 * then the same in place. The first timed out-of-place iteration is
 * recorded (spans) when record is set. */
typedef struct nsim_hwx_measure {
    double time_us, time_ip_us;
    int64_t wrong, wrong_ip; /* -1: not checked / not defined */
} nsim_hwx_measure;
NSIM_NODISCARD int nsim_hwx_measure_size(nsim_hwx *x, uint32_t warmup,
                                         uint32_t iters, int check,
                                         int record, nsim_hwx_alive_fn alive,
                                         void *alive_arg,
                                         nsim_hwx_measure *m, nsim_err *err);

/* For backends with buffers of their own (cuda): an op's byte offsets
 * in the rank's send and receive buffers (-1: not used; the call returns
 * -1 for a plan that points outside), the plan check, the in-place
 * pointers, and the fill and check of nccl-tests on host copies of a
 * rank's buffers (in: the send buffer, out: the receive buffer). */
int nsim_hwx_op_io(const nsim_plan *p, uint32_t rank, const nsim_plan_op *op,
                   int64_t *in_off, int64_t *out_off);
NSIM_NODISCARD int nsim_hwx_check_plan(const nsim_plan *p, nsim_hdt dt,
                                       nsim_err *err);
void nsim_hwx_place(const nsim_plan *p, uint32_t rank, int in_place,
                    uint8_t *in, uint8_t *out, uint8_t **pin, uint8_t **pout);
int nsim_hwx_fill_host(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                       uint32_t rank, int in_place, uint8_t *in, uint8_t *out);
int64_t nsim_hwx_check_host(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                            uint32_t rank, int in_place, uint8_t *in,
                            uint8_t *out);

/* Per-rank buffer sizes of the plan's collective (nccl-tests' send and
 * receive buffers). */
void nsim_hwx_buffer_bytes(const nsim_plan *p, uint64_t *in, uint64_t *out);

#endif
