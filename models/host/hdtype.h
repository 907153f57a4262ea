/* SPDX-License-Identifier: MIT
 *
 * hdtype.h - NCCL's data types and reductions on the CPU, for the host
 * hardware backend and the checks of every backend: element-wise
 * sum/prod/max/min (avg: a sum, divided by the rank count once, where the
 * reduction completes, as NCCL's SumPostDiv), half / bfloat16 / fp8 through
 * float with round-to-nearest-even, and the deterministic input pattern
 * with its expected results (nccl-tests' #wrong).
 *
 * The pattern: element i of rank r is a small integer from a hash of
 * (i, r), inside the range where the type holds every partial sum or
 * product of nranks such values exactly, so the result does not depend on
 * the order of the reduction (rings and channels reduce in different
 * orders) and a check can demand bit equality.
 */
#ifndef NSIM_MODELS_HOST_HDTYPE_H
#define NSIM_MODELS_HOST_HDTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum nsim_hdt {
    NSIM_HDT_INT8,
    NSIM_HDT_UINT8,
    NSIM_HDT_INT32,
    NSIM_HDT_UINT32,
    NSIM_HDT_INT64,
    NSIM_HDT_UINT64,
    NSIM_HDT_HALF,
    NSIM_HDT_BF16,
    NSIM_HDT_FLOAT,
    NSIM_HDT_DOUBLE,
    NSIM_HDT_F8E4M3,
    NSIM_HDT_F8E5M2,
    NSIM_HDT__COUNT
} nsim_hdt;

typedef enum nsim_hop {
    NSIM_HOP_SUM,
    NSIM_HOP_PROD,
    NSIM_HOP_MAX,
    NSIM_HOP_MIN,
    NSIM_HOP_AVG,
    NSIM_HOP__COUNT
} nsim_hop;

/* nccl-tests' names (int8, char, uint8, int32, int, ..., half, float16,
 * bfloat16, float, float32, double, float64, f8e4m3, f8e5m2); 0 or -1. */
int nsim_hdt_parse(const char *name, nsim_hdt *out);
int nsim_hop_parse(const char *name, nsim_hop *out);
const char *nsim_hdt_name(nsim_hdt t);
const char *nsim_hop_name(nsim_hop o);
uint32_t nsim_hdt_size(nsim_hdt t);

/* dst[i] = a[i] OP b[i] for n elements (avg reduces as sum); dst may be
 * a or b. */
void nsim_hdt_reduce(nsim_hdt t, nsim_hop op, void *dst, const void *a,
                     const void *b, size_t n);
/* avg's one division: dst[i] = src[i] / nranks (dst may be src). */
void nsim_hdt_postdiv(nsim_hdt t, void *dst, const void *src, size_t n,
                      uint32_t nranks);

/* Rank r's input elements first .. first+n-1 of the pattern. */
void nsim_hdt_fill(nsim_hdt t, nsim_hop op, uint32_t nranks, uint32_t rank,
                   uint64_t first, void *buf, size_t n);
/* Elements of buf that differ from rank r's pattern (rank >= 0) or from
 * the reduction of every rank's (rank < 0; avg divided); the first bad
 * index in *first_bad (UINT64_MAX: none). */
uint64_t nsim_hdt_check(nsim_hdt t, nsim_hop op, uint32_t nranks,
                        int32_t rank, uint64_t first, const void *buf,
                        size_t n, uint64_t *first_bad);

/* Conversions (exposed for tests). */
float nsim_half_to_float(uint16_t h);
uint16_t nsim_float_to_half(float f);
float nsim_bf16_to_float(uint16_t h);
uint16_t nsim_float_to_bf16(float f);
float nsim_fp8_to_float(uint8_t v, int e5m2);
uint8_t nsim_float_to_fp8(float f, int e5m2);

#endif
