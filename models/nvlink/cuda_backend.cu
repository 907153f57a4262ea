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
