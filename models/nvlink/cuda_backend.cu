/* SPDX-License-Identifier: MIT
 *
 * cuda_backend.cu - the one-GPU microbenchmark of what the models take as
 * constants (models/params.c: the per-SM share of HBM a channel's thread
 * block streams at, the kernel launch cost, host<->device PCIe rates):
 * a copy and a reduce (float sum, dst = a + b) kernel of 512 threads per
 * block over a 256 MiB buffer for 1 .. all-SM blocks, timed with CUDA
 * events; empty-kernel launches timed on the host and between events;
 * pinned cudaMemcpyAsync both ways. See cuda_backend.h.
 */
#include "cuda_backend.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#define TRY(call)                                                            \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            snprintf(msg, len, "%s: %s", #call, cudaGetErrorString(e_));     \
            return (int)e_;                                                  \
        }                                                                    \
    } while (0)

extern "C" int nsim_cudab_count(int *n, char *msg, size_t len)
{
    *n = 0;
    cudaError_t e = cudaGetDeviceCount(n);
    if (e != cudaSuccess) {
        snprintf(msg, len, "%s", cudaGetErrorString(e));
        *n = 0;
        return (int)e;
    }
    return 0;
}

__global__ void copy_kernel(float4 *dst, const float4 *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void reduce_kernel(float4 *dst, const float4 *a, const float4 *b,
                              size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 x = a[i], y = b[i];
        dst[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

__global__ void empty_kernel(void) {}

static double host_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

extern "C" int nsim_cudab_microbench(nsim_cudab_result *r, char *msg,
                                     size_t len)
{
    const size_t bytes = 256u << 20, n4 = bytes / sizeof(float4);
    cudaDeviceProp prop;
    float4 *a = NULL, *b = NULL, *c = NULL;
    void *host = NULL;
    cudaEvent_t e0, e1;
    cudaStream_t st;
    float ms = 0;
    memset(r, 0, sizeof *r);
    TRY(cudaSetDevice(0));
    TRY(cudaGetDeviceProperties(&prop, 0));
    snprintf(r->name, sizeof r->name, "%s", prop.name);
    r->sm_major = prop.major;
    r->sm_minor = prop.minor;
    r->sms = prop.multiProcessorCount;
    r->mem_bus_bits = prop.memoryBusWidth;
    r->bytes = (double)bytes;
    TRY(cudaMalloc(&a, bytes));
    TRY(cudaMalloc(&b, bytes));
    TRY(cudaMalloc(&c, bytes));
    TRY(cudaMemset(a, 0, bytes));
    TRY(cudaMemset(b, 0, bytes));
    TRY(cudaEventCreate(&e0));
    TRY(cudaEventCreate(&e1));
    TRY(cudaStreamCreate(&st));
    for (int blocks = 1; r->npts < NSIM_CUDAB_MAX_POINTS; blocks *= 2) {
        int nb = blocks < r->sms ? blocks : r->sms;
        nsim_cudab_point *p = &r->pts[r->npts++];
        p->blocks = nb;
        copy_kernel<<<nb, 512, 0, st>>>(c, a, n4); /* warm-up */
        TRY(cudaEventRecord(e0, st));
        copy_kernel<<<nb, 512, 0, st>>>(c, a, n4);
        TRY(cudaEventRecord(e1, st));
        TRY(cudaEventSynchronize(e1));
        TRY(cudaEventElapsedTime(&ms, e0, e1));
        p->copy_Bps = (double)bytes / (ms / 1e3);
        TRY(cudaEventRecord(e0, st));
        reduce_kernel<<<nb, 512, 0, st>>>(c, a, b, n4);
        TRY(cudaEventRecord(e1, st));
        TRY(cudaEventSynchronize(e1));
        TRY(cudaEventElapsedTime(&ms, e0, e1));
        p->reduce_Bps = (double)bytes / (ms / 1e3);
        if (nb == r->sms)
            break;
    }
    TRY(cudaGetLastError());
    const int launches = 2000;
    TRY(cudaStreamSynchronize(st));
    double t0 = host_now();
    TRY(cudaEventRecord(e0, st));
    for (int i = 0; i < launches; i++)
        empty_kernel<<<1, 32, 0, st>>>();
    TRY(cudaEventRecord(e1, st));
    double t1 = host_now();
    TRY(cudaEventSynchronize(e1));
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    r->launch_us = (t1 - t0) / launches * 1e6;
    r->launch_gpu_us = ms * 1e3 / launches;
    TRY(cudaMallocHost(&host, bytes));
    memset(host, 1, bytes);
    TRY(cudaEventRecord(e0, st));
    TRY(cudaMemcpyAsync(a, host, bytes, cudaMemcpyHostToDevice, st));
    TRY(cudaEventRecord(e1, st));
    TRY(cudaEventSynchronize(e1));
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    r->h2d_Bps = (double)bytes / (ms / 1e3);
    TRY(cudaEventRecord(e0, st));
    TRY(cudaMemcpyAsync(host, a, bytes, cudaMemcpyDeviceToHost, st));
    TRY(cudaEventRecord(e1, st));
    TRY(cudaEventSynchronize(e1));
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    r->d2h_Bps = (double)bytes / (ms / 1e3);
    cudaFreeHost(host);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(st);
    return 0;
}

/* ==== the plan on GPUs (see cuda_backend.h) ============================ */

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdlib.h>

/* nsim_hdt and nsim_hop numbers (models/host/hdtype.h) */
enum { T_INT8, T_UINT8, T_INT32, T_UINT32, T_INT64, T_UINT64, T_HALF, T_BF16,
       T_FLOAT, T_DOUBLE };
enum { O_SUM, O_PROD, O_MAX, O_MIN, O_AVG };
#define P_RECV 1u
#define P_SEND 2u
#define P_REDUCE 4u
#define P_COPY 8u

typedef struct dlane {
    const nsim_cudab_op *ops;
    unsigned nops;
    unsigned char *sslots, *rslots;           /* peer's / own slots */
    volatile unsigned long long *stail, *shead; /* send connection */
    volatile unsigned long long *rtail, *rhead; /* receive connection */
    unsigned long long *seq;                    /* [send, recv] kept */
} dlane;

template <typename T, typename U>
__device__ void red_int(T *d, const T *a, const T *b, size_t n, int op)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        T x = a[i], y = b[i];
        d[i] = op == O_PROD  ? (T)((U)x * (U)y)
               : op == O_MAX ? (x > y ? x : y)
               : op == O_MIN ? (x < y ? x : y)
                             : (T)((U)x + (U)y);
    }
}

__device__ float fop(float x, float y, int op)
{
    return op == O_PROD ? x * y : op == O_MAX ? fmaxf(x, y)
                        : op == O_MIN ? fminf(x, y) : x + y;
}

template <typename T>
__device__ void red_flt(T *d, const T *a, const T *b, size_t n, int op)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        T x = a[i], y = b[i];
        d[i] = op == O_PROD  ? x * y
               : op == O_MAX ? (T)fmax((double)x, (double)y)
               : op == O_MIN ? (T)fmin((double)x, (double)y)
                             : x + y;
    }
}

__device__ void reduce(int t, int op, void *d, const void *a, const void *b,
                       size_t n)
{
    switch (t) {
    case T_INT8: red_int<signed char, unsigned char>((signed char *)d, (const signed char *)a, (const signed char *)b, n, op); break;
    case T_UINT8: red_int<unsigned char, unsigned char>((unsigned char *)d, (const unsigned char *)a, (const unsigned char *)b, n, op); break;
    case T_INT32: red_int<int, unsigned>((int *)d, (const int *)a, (const int *)b, n, op); break;
    case T_UINT32: red_int<unsigned, unsigned>((unsigned *)d, (const unsigned *)a, (const unsigned *)b, n, op); break;
    case T_INT64: red_int<long long, unsigned long long>((long long *)d, (const long long *)a, (const long long *)b, n, op); break;
    case T_UINT64: red_int<unsigned long long, unsigned long long>((unsigned long long *)d, (const unsigned long long *)a, (const unsigned long long *)b, n, op); break;
    case T_FLOAT: red_flt<float>((float *)d, (const float *)a, (const float *)b, n, op); break;
    case T_DOUBLE: red_flt<double>((double *)d, (const double *)a, (const double *)b, n, op); break;
    case T_HALF:
        for (size_t i = threadIdx.x; i < n; i += blockDim.x)
            ((__half *)d)[i] = __float2half_rn(fop(__half2float(((const __half *)a)[i]), __half2float(((const __half *)b)[i]), op));
        break;
    default: /* T_BF16 */
        for (size_t i = threadIdx.x; i < n; i += blockDim.x)
            ((__nv_bfloat16 *)d)[i] = __float2bfloat16_rn(fop(__bfloat162float(((const __nv_bfloat16 *)a)[i]), __bfloat162float(((const __nv_bfloat16 *)b)[i]), op));
        break;
    }
}

__device__ void postdiv(int t, void *d, size_t n, unsigned nr)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        switch (t) {
        case T_INT8: ((signed char *)d)[i] = (signed char)(((signed char *)d)[i] / (int)nr); break;
        case T_UINT8: ((unsigned char *)d)[i] = (unsigned char)(((unsigned char *)d)[i] / nr); break;
        case T_INT32: ((int *)d)[i] /= (int)nr; break;
        case T_UINT32: ((unsigned *)d)[i] /= nr; break;
        case T_INT64: ((long long *)d)[i] /= (long long)nr; break;
        case T_UINT64: ((unsigned long long *)d)[i] /= nr; break;
        case T_FLOAT: ((float *)d)[i] /= (float)nr; break;
        case T_DOUBLE: ((double *)d)[i] /= (double)nr; break;
        case T_HALF: ((__half *)d)[i] = __float2half_rn(__half2float(((__half *)d)[i]) / (float)nr); break;
        default: ((__nv_bfloat16 *)d)[i] = __float2bfloat16_rn(__bfloat162float(((__nv_bfloat16 *)d)[i]) / (float)nr); break;
        }
    }
}

__device__ void copy(unsigned char *d, const unsigned char *s, size_t n)
{
    if ((((size_t)d | (size_t)s | n) & 15) == 0) {
        for (size_t i = threadIdx.x; i < n / 16; i += blockDim.x)
            ((uint4 *)d)[i] = ((const uint4 *)s)[i];
        return;
    }
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        d[i] = s[i];
}

__global__ void rank_kernel(const dlane *lanes, unsigned char *in,
                            unsigned char *out, int t, int op, unsigned nr,
                            unsigned ts, unsigned inflight,
                            unsigned long long slice, long long timeout,
                            volatile int *error)
{
    const dlane *l = &lanes[blockIdx.x];
    __shared__ unsigned long long sseq, rseq;
    __shared__ int bad;
    if (threadIdx.x == 0) {
        sseq = l->seq[0];
        rseq = l->seq[1];
        bad = 0;
    }
    __syncthreads();
    for (unsigned k = 0; k < l->nops; k++) {
        nsim_cudab_op o = l->ops[k];
        if (threadIdx.x == 0) {
            long long t0 = clock64();
            while ((o.prim & P_RECV) && *l->rtail <= rseq && !bad)
                bad = *error || clock64() - t0 > timeout;
            while ((o.prim & P_SEND) && sseq >= inflight &&
                   *l->shead + inflight <= sseq && !bad)
                bad = *error || clock64() - t0 > timeout;
            __threadfence_system();
        }
        __syncthreads();
        if (bad)
            break;
        size_t nb = o.bytes, ne = nb / ts;
        const unsigned char *slot =
            (o.prim & P_RECV) ? l->rslots + (rseq % inflight) * slice : NULL;
        unsigned char *ds =
            (o.prim & P_SEND) ? l->sslots + (sseq % inflight) * slice : NULL;
        unsigned char *ip = o.in_off >= 0 ? in + o.in_off : NULL;
        unsigned char *opp = o.out_off >= 0 ? out + o.out_off : NULL;
        if (nb == 0) {
        } else if ((o.prim & P_RECV) && (o.prim & P_REDUCE)) {
            unsigned char *d = ds != NULL ? ds : opp;
            reduce(t, op, d, slot, ip, ne);
            if ((o.prim & P_COPY) && op == O_AVG) {
                __syncthreads();
                postdiv(t, d, ne, nr);
            }
            __syncthreads();
            if (ds != NULL && opp != NULL)
                copy(opp, d, nb);
        } else if (o.prim & P_RECV) {
            if (opp != NULL)
                copy(opp, slot, nb);
            if (ds != NULL)
                copy(ds, slot, nb);
        } else if (o.prim & P_SEND) {
            copy(ds, ip, nb);
            if (opp != NULL && opp != ip)
                copy(opp, ip, nb);
        } else if (opp != NULL && ip != NULL && opp != ip) {
            copy(opp, ip, nb);
        }
        __threadfence_system(); /* the slice before its tail */
        __syncthreads();
        if (threadIdx.x == 0) {
            if (o.prim & P_SEND)
                *l->stail = ++sseq;
            if (o.prim & P_RECV)
                *l->rhead = ++rseq;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        l->seq[0] = sseq;
        l->seq[1] = rseq;
        if (bad)
            *error = 1;
    }
}

typedef struct gctx {
    nsim_cudab_plan p;
    int ndev;
    unsigned ts;
    unsigned char **in, **out, **slots; /* per rank; per connection */
    unsigned long long *flags;          /* mapped: tail, head per conn */
    unsigned long long *dflags;
    int *error, *derror;
    dlane **dl;                         /* per rank: device lane array */
    unsigned *nl;                       /* lanes per rank */
    nsim_cudab_op **dops;               /* per lane: device ops */
    unsigned long long **seq;           /* per lane: device [send, recv] */
    cudaStream_t *st;
    cudaEvent_t *e0, *e1;
    long long timeout_cycles;
} gctx;

static const unsigned type_size[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};

#define GTRY(call)                                                           \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            snprintf(msg, len, "%s: %s", #call, cudaGetErrorString(e_));     \
            nsim_cudab_close(g);                                             \
            return (int)e_;                                                  \
        }                                                                    \
    } while (0)

static int dev_of(const gctx *g, unsigned rank) { return (int)(rank % g->ndev); }

extern "C" int nsim_cudab_open(const nsim_cudab_plan *p, void **out,
                               char *msg, size_t len)
{
    gctx *g = (gctx *)calloc(1, sizeof *g);
    if (g == NULL) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    g->p = *p;
    if (p->dtype < 0 || p->dtype > T_DOUBLE) {
        snprintf(msg, len, "the GPU reductions take int8 .. double, not fp8");
        free(g);
        return -1;
    }
    g->ts = type_size[p->dtype];
    GTRY(cudaGetDeviceCount(&g->ndev));
    unsigned nr = p->nranks;
    g->in = (unsigned char **)calloc(nr, sizeof *g->in);
    g->out = (unsigned char **)calloc(nr, sizeof *g->out);
    g->dl = (dlane **)calloc(nr, sizeof *g->dl);
    g->nl = (unsigned *)calloc(nr, sizeof *g->nl);
    g->st = (cudaStream_t *)calloc(nr, sizeof *g->st);
    g->e0 = (cudaEvent_t *)calloc(nr, sizeof *g->e0);
    g->e1 = (cudaEvent_t *)calloc(nr, sizeof *g->e1);
    g->slots = (unsigned char **)calloc(p->nconns + 1, sizeof *g->slots);
    g->dops = (nsim_cudab_op **)calloc(p->nlanes + 1, sizeof *g->dops);
    g->seq = (unsigned long long **)calloc(p->nlanes + 1, sizeof *g->seq);
    if (!g->in || !g->out || !g->dl || !g->nl || !g->st || !g->e0 || !g->e1 ||
        !g->slots || !g->dops || !g->seq) {
        snprintf(msg, len, "out of memory");
        nsim_cudab_close(g);
        return -1;
    }
    /* peer access between every pair of GPUs used */
    int used = g->ndev < (int)nr ? g->ndev : (int)nr;
    for (int a = 0; a < used; a++)
        for (int b = 0; b < used; b++) {
            int ok = 0;
            if (a == b)
                continue;
            GTRY(cudaDeviceCanAccessPeer(&ok, a, b));
            if (!ok) {
                snprintf(msg, len, "GPU %d cannot access GPU %d (no peer "
                         "access over NVLink or PCIe): the cuda backend "
                         "stores into the peer's slots", a, b);
                nsim_cudab_close(g);
                return -1;
            }
            GTRY(cudaSetDevice(a));
            cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                GTRY(e);
            (void)cudaGetLastError();
        }
    GTRY(cudaHostAlloc((void **)&g->flags, (2 * p->nconns + 1) * 128,
                       cudaHostAllocMapped | cudaHostAllocPortable));
    memset(g->flags, 0, (2 * p->nconns + 1) * 128);
    GTRY(cudaHostGetDevicePointer((void **)&g->dflags, g->flags, 0));
    GTRY(cudaHostAlloc((void **)&g->error, 128,
                       cudaHostAllocMapped | cudaHostAllocPortable));
    *g->error = 0;
    GTRY(cudaHostGetDevicePointer((void **)&g->derror, g->error, 0));
    for (unsigned c = 0; c < p->nconns; c++) {
        GTRY(cudaSetDevice(dev_of(g, p->conn_to[c])));
        GTRY(cudaMalloc(&g->slots[c], (size_t)p->inflight * p->slice + 16));
    }
    for (unsigned r = 0; r < nr; r++) {
        GTRY(cudaSetDevice(dev_of(g, r)));
        GTRY(cudaMalloc(&g->in[r], p->in_bytes + 16));
        GTRY(cudaMalloc(&g->out[r], p->out_bytes + 16));
        GTRY(cudaStreamCreateWithFlags(&g->st[r], cudaStreamNonBlocking));
        GTRY(cudaEventCreate(&g->e0[r]));
        GTRY(cudaEventCreate(&g->e1[r]));
    }
    /* per rank, its lanes as device descriptors */
    dlane *hl = (dlane *)calloc(p->nlanes + 1, sizeof *hl);
    if (hl == NULL) {
        snprintf(msg, len, "out of memory");
        nsim_cudab_close(g);
        return -1;
    }
    for (unsigned r = 0; r < nr; r++) {
        unsigned n = 0;
        GTRY(cudaSetDevice(dev_of(g, r)));
        for (unsigned i = 0; i < p->nlanes; i++) {
            const nsim_cudab_lane *l = &p->lanes[i];
            if (l->rank != r)
                continue;
            dlane *d = &hl[n++];
            memset(d, 0, sizeof *d);
            GTRY(cudaMalloc(&g->dops[i], (l->nops + 1) * sizeof(nsim_cudab_op)));
            GTRY(cudaMemcpy(g->dops[i], l->ops, l->nops * sizeof(nsim_cudab_op),
                            cudaMemcpyHostToDevice));
            GTRY(cudaMalloc(&g->seq[i], 2 * sizeof(unsigned long long)));
            GTRY(cudaMemset(g->seq[i], 0, 2 * sizeof(unsigned long long)));
            d->ops = g->dops[i];
            d->nops = l->nops;
            d->seq = g->seq[i];
            if (l->send_conn != ~0u) {
                d->sslots = g->slots[l->send_conn];
                d->stail = g->dflags + 16 * (2 * l->send_conn);
                d->shead = g->dflags + 16 * (2 * l->send_conn + 1);
            }
            if (l->recv_conn != ~0u) {
                d->rslots = g->slots[l->recv_conn];
                d->rtail = g->dflags + 16 * (2 * l->recv_conn);
                d->rhead = g->dflags + 16 * (2 * l->recv_conn + 1);
            }
        }
        g->nl[r] = n;
        if (n > 0) {
            GTRY(cudaMalloc(&g->dl[r], n * sizeof(dlane)));
            GTRY(cudaMemcpy(g->dl[r], hl, n * sizeof(dlane),
                            cudaMemcpyHostToDevice));
        }
    }
    free(hl);
    int clk = 0;
    GTRY(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0)); /* kHz */
    g->timeout_cycles = (long long)(p->timeout_s * clk * 1e3);
    *out = g;
    return 0;
}

extern "C" void nsim_cudab_buffers(void *ctx, unsigned rank, void **in,
                                   void **out)
{
    gctx *g = (gctx *)ctx;
    *in = g->in[rank];
    *out = g->out[rank];
}

extern "C" int nsim_cudab_copy(void *ctx, unsigned rank, void *dst,
                               const void *src, unsigned long long bytes,
                               int to_device, char *msg, size_t len)
{
    gctx *g = (gctx *)ctx;
    cudaError_t e = cudaSetDevice(dev_of(g, rank));
    if (e == cudaSuccess)
        e = cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice
                                                  : cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        snprintf(msg, len, "cudaMemcpy: %s", cudaGetErrorString(e));
        return (int)e;
    }
    return 0;
}

#define RTRY(call)                                                           \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            snprintf(msg, len, "%s: %s", #call, cudaGetErrorString(e_));     \
            return (int)e_;                                                  \
        }                                                                    \
    } while (0)

extern "C" int nsim_cudab_run(void *ctx, unsigned iters, void *const *ins,
                              void *const *outs, double *elapsed_s, char *msg,
                              size_t len)
{
    gctx *g = (gctx *)ctx;
    const nsim_cudab_plan *p = &g->p;
    for (unsigned r = 0; r < p->nranks; r++) {
        RTRY(cudaSetDevice(dev_of(g, r)));
        RTRY(cudaEventRecord(g->e0[r], g->st[r]));
        for (unsigned i = 0; i < iters && g->nl[r] > 0; i++)
            rank_kernel<<<g->nl[r], 512, 0, g->st[r]>>>(
                g->dl[r], (unsigned char *)ins[r], (unsigned char *)outs[r],
                p->dtype, p->op, p->nranks, g->ts, p->inflight, p->slice,
                g->timeout_cycles, g->derror);
        RTRY(cudaGetLastError());
        RTRY(cudaEventRecord(g->e1[r], g->st[r]));
    }
    double worst = 0;
    for (unsigned r = 0; r < p->nranks; r++) {
        float ms = 0;
        RTRY(cudaSetDevice(dev_of(g, r)));
        RTRY(cudaEventSynchronize(g->e1[r]));
        RTRY(cudaEventElapsedTime(&ms, g->e0[r], g->e1[r]));
        worst = ms / 1e3 > worst ? ms / 1e3 : worst;
    }
    if (*(volatile int *)g->error) {
        snprintf(msg, len, "a thread block timed out after %.0f s waiting "
                 "for a slice or a credit (a lost peer or a deadlock)",
                 p->timeout_s);
        return -1;
    }
    *elapsed_s = worst;
    return 0;
}

extern "C" void nsim_cudab_close(void *ctx)
{
    gctx *g = (gctx *)ctx;
    if (g == NULL)
        return;
    for (unsigned r = 0; g->in && r < g->p.nranks; r++) {
        cudaSetDevice(dev_of(g, r));
        cudaFree(g->in[r]);
        cudaFree(g->out[r]);
        if (g->dl)
            cudaFree(g->dl[r]);
        if (g->st && g->st[r])
            cudaStreamDestroy(g->st[r]);
        if (g->e0 && g->e0[r])
            cudaEventDestroy(g->e0[r]);
        if (g->e1 && g->e1[r])
            cudaEventDestroy(g->e1[r]);
    }
    for (unsigned c = 0; g->slots && c < g->p.nconns; c++)
        cudaFree(g->slots[c]);
    for (unsigned i = 0; g->dops && i < g->p.nlanes; i++) {
        cudaFree(g->dops[i]);
        cudaFree(g->seq[i]);
    }
    if (g->flags)
        cudaFreeHost(g->flags);
    if (g->error)
        cudaFreeHost(g->error);
    free(g->in);
    free(g->out);
    free(g->dl);
    free(g->nl);
    free(g->st);
    free(g->e0);
    free(g->e1);
    free(g->slots);
    free(g->dops);
    free(g->seq);
    free(g);
}
