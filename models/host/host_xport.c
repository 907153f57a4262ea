/* SPDX-License-Identifier: MIT
 *
 * host_xport.c - the host backend: shared-memory slots, threads or
 * processes (see host_xport.h).
 */
#include "host_xport.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE 64

/* One connection's counters, each on its own cache line. */
typedef struct conn_sync {
    _Atomic uint64_t tail; /* slices posted by the sender */
    char pad0[LINE - 8];
    _Atomic uint64_t head; /* slices consumed by the receiver */
    char pad1[LINE - 8];
} conn_sync;

typedef struct host_ctx {
    const nsim_plan *plan;
    conn_sync *sync;
    uint8_t *slots;
    uint64_t stride, slice;
    uint32_t inflight;
    double timeout_s;
    _Atomic int *abort;
} host_ctx;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static size_t align_up(size_t v) { return (v + LINE - 1) / LINE * LINE; }

static uint64_t slots_stride(const nsim_plan *p)
{
    return align_up((size_t)(NSIM_NCCL_STEPS / p->slice_steps) *
                    p->slice_bytes);
}

static size_t xport_size(const nsim_plan *p)
{
    return align_up(p->nconns * sizeof(conn_sync)) +
           (size_t)p->nconns * slots_stride(p);
}

static int wait_fail(host_ctx *c, uint32_t conn, uint64_t seq, int credit,
                     nsim_err *err)
{
    const nsim_plan_conn *pc = &c->plan->conns[conn];
    if (atomic_load(c->abort))
        return NSIM_ERR(err, NSIM_ESTATE, "stopped: another lane failed");
    return NSIM_ERR(err, NSIM_ESTATE,
                    "timed out after %.0f s waiting for %s slice %llu on "
                    "connection %u (channel %u, rank %u -> rank %u): %s",
                    c->timeout_s, credit ? "a free slot for" : "",
                    (unsigned long long)seq, conn, pc->channel, pc->from,
                    pc->to,
                    credit ? "the receiver never returned its slot"
                           : "the sender never posted it");
}

/* Spins until *v > want - 1 + bias... written out for both waits:
 * returns 0 when *v >= want. */
static int wait_counter(host_ctx *c, _Atomic uint64_t *v, uint64_t want)
{
    uint32_t spins = 0;
    int64_t deadline = 0;
    while (atomic_load_explicit(v, memory_order_acquire) < want) {
        nsim_hw_relax(&spins);
        if ((spins & 1023) != 0)
            continue;
        if (atomic_load_explicit(c->abort, memory_order_relaxed))
            return -1;
        int64_t t = now_ns();
        if (deadline == 0)
            deadline = t + (int64_t)(c->timeout_s * 1e9);
        else if (t > deadline)
            return -1;
    }
    return 0;
}

static void *host_send_buf(void *ctx, uint32_t conn, uint64_t seq)
{
    host_ctx *c = ctx;
    return c->slots + conn * c->stride + (seq % c->inflight) * c->slice;
}

static int host_wait_credit(void *ctx, uint32_t conn, uint64_t seq,
                            nsim_err *err)
{
    host_ctx *c = ctx;
    if (seq < c->inflight)
        return NSIM_OK;
    if (wait_counter(c, &c->sync[conn].head, seq - c->inflight + 1) != 0)
        return wait_fail(c, conn, seq, 1, err);
    return NSIM_OK;
}

static int host_post(void *ctx, uint32_t conn, uint64_t seq, uint64_t bytes,
                     nsim_err *err)
{
    host_ctx *c = ctx;
    (void)bytes;
    (void)err;
    atomic_store_explicit(&c->sync[conn].tail, seq + 1, memory_order_release);
    return NSIM_OK;
}

static int host_wait_arrived(void *ctx, uint32_t conn, uint64_t seq,
                             const void **data, nsim_err *err)
{
    host_ctx *c = ctx;
    if (wait_counter(c, &c->sync[conn].tail, seq + 1) != 0)
        return wait_fail(c, conn, seq, 0, err);
    *data = host_send_buf(ctx, conn, seq);
    return NSIM_OK;
}

static int host_consumed(void *ctx, uint32_t conn, uint64_t seq,
                         nsim_err *err)
{
    host_ctx *c = ctx;
    (void)err;
    atomic_store_explicit(&c->sync[conn].head, seq + 1, memory_order_release);
    return NSIM_OK;
}

const nsim_hw_xport_ops nsim_host_xport_ops = {
    .name = "host",
    .send_buf = host_send_buf,
    .wait_credit = host_wait_credit,
    .post = host_post,
    .wait_arrived = host_wait_arrived,
    .consumed = host_consumed,
};

/* ---- the rank processes ---------------------------------------------- */

typedef struct procs {
    pid_t *pid;
    uint32_t n;
    int *reaped;
} procs;

static int procs_alive(void *arg, nsim_err *err)
{
    procs *ps = arg;
    for (uint32_t r = 0; r < ps->n; r++) {
        int st;
        if (ps->reaped[r] || ps->pid[r] <= 0)
            continue;
        pid_t w = waitpid(ps->pid[r], &st, WNOHANG);
        if (w != ps->pid[r])
            continue;
        ps->reaped[r] = 1;
        if (WIFSIGNALED(st))
            return NSIM_ERR(err, NSIM_ESTATE,
                            "rank %u's process (pid %d) was lost mid-run: "
                            "killed by signal %d", r, (int)ps->pid[r],
                            WTERMSIG(st));
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u's process (pid %d) was lost mid-run: it "
                        "exited with status %d", r, (int)ps->pid[r],
                        WEXITSTATUS(st));
    }
    return NSIM_OK;
}

/* Waits (bounded) for the rank processes to end; kills what is left. */
static void procs_reap(procs *ps)
{
    int64_t deadline = now_ns() + 5000000000LL;
    for (uint32_t r = 0; r < ps->n; r++) {
        while (!ps->reaped[r] && ps->pid[r] > 0) {
            int st;
            pid_t w = waitpid(ps->pid[r], &st, WNOHANG);
            if (w == ps->pid[r] || (w < 0 && errno != EINTR)) {
                ps->reaped[r] = 1;
                break;
            }
            if (now_ns() > deadline) {
                kill(ps->pid[r], SIGKILL);
                (void)waitpid(ps->pid[r], &st, 0);
                ps->reaped[r] = 1;
                break;
            }
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

static void child_main(const nsim_hwx_cfg *hc, void *ctl, uint32_t rank)
{
    nsim_hwx_cfg c = *hc;
    nsim_hwx *x = NULL;
    nsim_err err = {0};
    c.only_rank = (int32_t)rank;
    if (nsim_hwx_create(&c, ctl, &x, &err) != NSIM_OK)
        _exit(1);
    if (nsim_hwx_start(x, &err) != NSIM_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "rank %u: %s", rank, err.msg);
        nsim_hwx_fail(x, msg);
    }
    nsim_hwx_join(x);
    nsim_hwx_destroy(x);
    _exit(0);
}

static int run_measure(nsim_hwx *x, const nsim_host_cfg *cfg, procs *ps,
                       nsim_hwx_measure *m, nsim_exec_result *spans,
                       nsim_err *err)
{
    int rc = nsim_hwx_measure_size(x, cfg->warmup, cfg->iters, cfg->check,
                                   cfg->record, ps ? procs_alive : NULL, ps, m,
                                   err);
    if (rc == NSIM_OK && cfg->record && spans != NULL)
        rc = nsim_hwx_spans(x, spans, err);
    if (rc == NSIM_OK)
        rc = nsim_hwx_run(x, NSIM_HWX_JOB_QUIT, 0, 0, 0, NULL, NULL, NULL, err);
    else
        nsim_hwx_fail(x, err->msg); /* every lane stops */
    return rc;
}

int nsim_host_measure(const nsim_host_cfg *cfg, nsim_hwx_measure *m,
                      nsim_exec_result *spans, nsim_err *err)
{
    const nsim_plan *p = cfg->plan;
    size_t ctl_bytes = align_up(nsim_hwx_ctl_size(p));
    size_t total = ctl_bytes + xport_size(p);
    void *shm = mmap(NULL, total, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
        return NSIM_ERR(err, NSIM_ENOMEM,
                        "host backend: cannot map %zu bytes of shared "
                        "memory: %s", total, strerror(errno));
    host_ctx hc = {p, (conn_sync *)((uint8_t *)shm + ctl_bytes), NULL,
                   slots_stride(p), p->slice_bytes,
                   NSIM_NCCL_STEPS / p->slice_steps, cfg->timeout_s, NULL};
    hc.slots = (uint8_t *)hc.sync + align_up(p->nconns * sizeof(conn_sync));
    nsim_hwx_cfg xc = {p, cfg->dtype, cfg->op, &nsim_host_xport_ops, &hc,
                       -1, cfg->timeout_s, cfg->die_rank,
                       cfg->die_rank >= 0 ? 2 : -1, NULL, NULL};
    nsim_hwx *x = NULL;
    int rc = nsim_hwx_create(&xc, shm, &x, err);
    if (rc != NSIM_OK) {
        munmap(shm, total);
        return rc;
    }
    hc.abort = nsim_hwx_abort_flag(x);
    if (!cfg->processes) {
        rc = nsim_hwx_start(x, err);
        if (rc == NSIM_OK)
            rc = run_measure(x, cfg, NULL, m, spans, err);
        else
            nsim_hwx_fail(x, err->msg);
        nsim_hwx_join(x);
    } else {
        procs ps = {calloc(p->nranks, sizeof(pid_t)), p->nranks,
                    calloc(p->nranks, sizeof(int))};
        if (ps.pid == NULL || ps.reaped == NULL)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "host backend: out of memory");
        fflush(NULL); /* nothing buffered is written twice */
        for (uint32_t r = 0; rc == NSIM_OK && r < p->nranks; r++) {
            ps.pid[r] = fork();
            if (ps.pid[r] == 0)
                child_main(&xc, shm, r);
            if (ps.pid[r] < 0)
                rc = NSIM_ERR(err, NSIM_EIO, "host backend: fork of rank %u: "
                              "%s", r, strerror(errno));
        }
        if (rc == NSIM_OK)
            rc = run_measure(x, cfg, &ps, m, spans, err);
        else
            nsim_hwx_fail(x, err->msg);
        if (ps.pid != NULL && ps.reaped != NULL)
            procs_reap(&ps);
        free(ps.pid);
        free(ps.reaped);
    }
    nsim_hwx_destroy(x);
    munmap(shm, total);
    return rc;
}

typedef struct bw_job {
    uint64_t bytes;
    uint32_t reps;
    double bw;
} bw_job;

static void *bw_thread(void *arg)
{
    bw_job *j = arg;
    j->bw = nsim_host_memcpy_bw(j->bytes, j->reps);
    return NULL;
}

double nsim_host_memcpy_bw_all(uint32_t threads, uint64_t bytes,
                               uint32_t reps)
{
    pthread_t *t = calloc(threads, sizeof *t);
    bw_job *j = calloc(threads, sizeof *j);
    double sum = 0;
    uint32_t started = 0;
    for (uint32_t i = 0; t && j && i < threads; i++) {
        j[i] = (bw_job){bytes, reps, 0};
        if (pthread_create(&t[i], NULL, bw_thread, &j[i]) != 0)
            break;
        started++;
    }
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(t[i], NULL);
        sum += j[i].bw;
    }
    free(t);
    free(j);
    return sum;
}

double nsim_host_memcpy_bw(uint64_t bytes, uint32_t reps)
{
    uint8_t *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (uint32_t i = 0; i < reps; i++) {
        int64_t t0 = now_ns();
        memcpy(i & 1 ? a : b, i & 1 ? b : a, bytes);
        int64_t t1 = now_ns();
        double bw = (double)bytes / ((double)(t1 - t0) / 1e9);
        best = bw > best ? bw : best;
    }
    /* keep the copies observable */
    volatile uint8_t sink = a[bytes / 2] ^ b[bytes / 3];
    (void)sink;
    free(a);
    free(b);
    return best;
}
