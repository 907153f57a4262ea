/* SPDX-License-Identifier: MIT
 *
 * hdtype.c - data types and reductions on the CPU (see hdtype.h).
 */
#include "hdtype.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    nsim_hdt t;
} type_names[] = {
    {"int8", NSIM_HDT_INT8},       {"char", NSIM_HDT_INT8},
    {"uint8", NSIM_HDT_UINT8},     {"int32", NSIM_HDT_INT32},
    {"int", NSIM_HDT_INT32},       {"uint32", NSIM_HDT_UINT32},
    {"int64", NSIM_HDT_INT64},     {"uint64", NSIM_HDT_UINT64},
    {"half", NSIM_HDT_HALF},       {"float16", NSIM_HDT_HALF},
    {"bfloat16", NSIM_HDT_BF16},   {"float", NSIM_HDT_FLOAT},
    {"float32", NSIM_HDT_FLOAT},   {"double", NSIM_HDT_DOUBLE},
    {"float64", NSIM_HDT_DOUBLE},  {"f8e4m3", NSIM_HDT_F8E4M3},
    {"f8e5m2", NSIM_HDT_F8E5M2},
};

static const char *const canon[NSIM_HDT__COUNT] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "half",
    "bfloat16", "float", "double", "f8e4m3", "f8e5m2"};
static const uint32_t sizes[NSIM_HDT__COUNT] = {1, 1, 4, 4, 8, 8,
                                                2, 2, 4, 8, 1, 1};
static const char *const op_names[NSIM_HOP__COUNT] = {"sum", "prod", "max",
                                                      "min", "avg"};

int nsim_hdt_parse(const char *name, nsim_hdt *out)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (strcmp(name, type_names[i].name) == 0) {
            *out = type_names[i].t;
            return 0;
        }
    return -1;
}

int nsim_hop_parse(const char *name, nsim_hop *out)
{
    for (int i = 0; i < NSIM_HOP__COUNT; i++)
        if (strcmp(name, op_names[i]) == 0) {
            *out = (nsim_hop)i;
            return 0;
        }
    return -1;
}

const char *nsim_hdt_name(nsim_hdt t) { return canon[t]; }
const char *nsim_hop_name(nsim_hop o) { return op_names[o]; }
uint32_t nsim_hdt_size(nsim_hdt t) { return sizes[t]; }

/* ---- conversions: IEEE half, bfloat16, fp8 (OCP e4m3fn, e5m2) ------- */

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float nsim_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
             m = h & 0x3ff;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31)
        return u2f(sign | 0x7f800000u | (m << 13));
    return u2f(sign | ((e - 15 + 127) << 23) | (m << 13));
}

uint16_t nsim_float_to_half(float f)
{
    uint32_t b = f2u(f), sign = (b >> 16) & 0x8000, m = b & 0x7fffff;
    int32_t e = (int32_t)((b >> 23) & 0xff);
    if (e == 255)
        return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    e = e - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) { /* subnormal half (or zero) */
        if (e < -10)
            return (uint16_t)sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e), h = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++; /* a carry into the exponent rounds up to the next binade */
    return (uint16_t)(sign | h);
}

float nsim_bf16_to_float(uint16_t h) { return u2f((uint32_t)h << 16); }

uint16_t nsim_float_to_bf16(float f)
{
    uint32_t b = f2u(f);
    if ((b & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((b >> 16) | 0x40); /* quiet NaN */
    b += 0x7fff + ((b >> 16) & 1);
    return (uint16_t)(b >> 16);
}

/* e4m3fn: bias 7, no infinities, S.1111.111 is NaN, max 448; e5m2: bias
 * 15, IEEE-like (exponent 31: inf/NaN), max 57344. */
float nsim_fp8_to_float(uint8_t v, int e5m2)
{
    int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    int e = (v & 0x7f) >> mb, m = v & ((1 << mb) - 1);
    float s = (v & 0x80) ? -1.0f : 1.0f;
    if (e5m2 && e == 31)
        return m ? NAN : s * INFINITY;
    if (!e5m2 && (v & 0x7f) == 0x7f)
        return NAN;
    if (e == 0)
        return s * ldexpf((float)m, 1 - bias - mb);
    return s * ldexpf((float)((1 << mb) + m), e - bias - mb);
}

uint8_t nsim_float_to_fp8(float f, int e5m2)
{
    uint8_t maxc = e5m2 ? 0x7b : 0x7e; /* largest finite code */
    if (isnan(f))
        return 0x7f;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a >= nsim_fp8_to_float(maxc, e5m2))
        return sign | maxc; /* saturate, as CUDA's satfinite */
    uint8_t lo = 0, hi = maxc; /* decode(lo) <= a < decode(hi) */
    while (hi - lo > 1) {
        uint8_t mid = (uint8_t)((lo + hi) / 2);
        if (nsim_fp8_to_float(mid, e5m2) <= a)
            lo = mid;
        else
            hi = mid;
    }
    float dl = a - nsim_fp8_to_float(lo, e5m2);
    float dh = nsim_fp8_to_float(hi, e5m2) - a;
    uint8_t c = dl < dh ? lo : dh < dl ? hi : (lo & 1) ? hi : lo;
    return sign | c;
}

/* ---- element access through float / int64 --------------------------- */

static float getf(nsim_hdt t, const void *p, size_t i)
{
    const uint16_t *h = p;
    const uint8_t *b = p;
    switch (t) {
    case NSIM_HDT_HALF: return nsim_half_to_float(h[i]);
    case NSIM_HDT_BF16: return nsim_bf16_to_float(h[i]);
    case NSIM_HDT_F8E4M3: return nsim_fp8_to_float(b[i], 0);
    default: return nsim_fp8_to_float(b[i], 1);
    }
}

static void putf(nsim_hdt t, void *p, size_t i, float v)
{
    uint16_t *h = p;
    uint8_t *b = p;
    switch (t) {
    case NSIM_HDT_HALF: h[i] = nsim_float_to_half(v); break;
    case NSIM_HDT_BF16: h[i] = nsim_float_to_bf16(v); break;
    case NSIM_HDT_F8E4M3: b[i] = nsim_float_to_fp8(v, 0); break;
    default: b[i] = nsim_float_to_fp8(v, 1); break;
    }
}

/* Stores v (an integer value of the pattern or of a reduction) as t. */
static void put_value(nsim_hdt t, void *p, size_t i, double v)
{
    switch (t) {
    case NSIM_HDT_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(int64_t)v; break;
    case NSIM_HDT_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)v; break;
    case NSIM_HDT_INT32:
        ((int32_t *)p)[i] = (int32_t)(uint32_t)(int64_t)v;
        break;
    case NSIM_HDT_UINT32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)v; break;
    case NSIM_HDT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case NSIM_HDT_UINT64: ((uint64_t *)p)[i] = (uint64_t)(int64_t)v; break;
    case NSIM_HDT_FLOAT: ((float *)p)[i] = (float)v; break;
    case NSIM_HDT_DOUBLE: ((double *)p)[i] = v; break;
    default: putf(t, p, i, (float)v); break;
    }
}

/* ---- reductions ------------------------------------------------------ */

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Integers reduce in the unsigned type of their width (wrapping, as the
 * GPU does; no signed overflow in C). */
#define INT_LOOP(T, U, OP)                                                   \
    do {                                                                     \
        T *d = dst;                                                          \
        const T *x = a, *y = b;                                              \
        for (size_t i = 0; i < n; i++)                                       \
            d[i] = (T)OP((U)x[i], (U)y[i]);                                  \
    } while (0)
#define INT_MINMAX(T, OP)                                                    \
    do {                                                                     \
        T *d = dst;                                                          \
        const T *x = a, *y = b;                                              \
        for (size_t i = 0; i < n; i++)                                       \
            d[i] = OP(x[i], y[i]);                                           \
    } while (0)
#define INT_CASE(E, T, U)                                                    \
    case E:                                                                  \
        if (op == NSIM_HOP_SUM || op == NSIM_HOP_AVG)                        \
            INT_LOOP(T, U, ADD);                                             \
        else if (op == NSIM_HOP_PROD)                                        \
            INT_LOOP(T, U, MUL);                                             \
        else if (op == NSIM_HOP_MAX)                                         \
            INT_MINMAX(T, MAX);                                              \
        else                                                                 \
            INT_MINMAX(T, MIN);                                              \
        return;
#define FLT_CASE(E, T)                                                       \
    case E:                                                                  \
        if (op == NSIM_HOP_SUM || op == NSIM_HOP_AVG)                        \
            INT_MINMAX(T, ADD);                                              \
        else if (op == NSIM_HOP_PROD)                                        \
            INT_MINMAX(T, MUL);                                              \
        else if (op == NSIM_HOP_MAX)                                         \
            INT_MINMAX(T, fmax);                                             \
        else                                                                 \
            INT_MINMAX(T, fmin);                                             \
        return;

static float op_f(nsim_hop op, float x, float y)
{
    switch (op) {
    case NSIM_HOP_PROD: return x * y;
    case NSIM_HOP_MAX: return fmaxf(x, y);
    case NSIM_HOP_MIN: return fminf(x, y);
    default: return x + y;
    }
}

void nsim_hdt_reduce(nsim_hdt t, nsim_hop op, void *dst, const void *a,
                     const void *b, size_t n)
{
    switch (t) {
        INT_CASE(NSIM_HDT_INT8, int8_t, uint8_t)
        INT_CASE(NSIM_HDT_UINT8, uint8_t, uint8_t)
        INT_CASE(NSIM_HDT_INT32, int32_t, uint32_t)
        INT_CASE(NSIM_HDT_UINT32, uint32_t, uint32_t)
        INT_CASE(NSIM_HDT_INT64, int64_t, uint64_t)
        INT_CASE(NSIM_HDT_UINT64, uint64_t, uint64_t)
        FLT_CASE(NSIM_HDT_FLOAT, float)
        FLT_CASE(NSIM_HDT_DOUBLE, double)
    default: /* 16- and 8-bit floats: through float, rounded per step */
        for (size_t i = 0; i < n; i++)
            putf(t, dst, i, op_f(op, getf(t, a, i), getf(t, b, i)));
        return;
    }
}

void nsim_hdt_postdiv(nsim_hdt t, void *dst, const void *src, size_t n,
                      uint32_t nranks)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case NSIM_HDT_INT8: ((int8_t *)dst)[i] = (int8_t)(((const int8_t *)src)[i] / (int)nranks); break;
        case NSIM_HDT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)(((const uint8_t *)src)[i] / nranks); break;
        case NSIM_HDT_INT32: ((int32_t *)dst)[i] = ((const int32_t *)src)[i] / (int32_t)nranks; break;
        case NSIM_HDT_UINT32: ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i] / nranks; break;
        case NSIM_HDT_INT64: ((int64_t *)dst)[i] = ((const int64_t *)src)[i] / (int64_t)nranks; break;
        case NSIM_HDT_UINT64: ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i] / nranks; break;
        case NSIM_HDT_FLOAT: ((float *)dst)[i] = ((const float *)src)[i] / (float)nranks; break;
        case NSIM_HDT_DOUBLE: ((double *)dst)[i] = ((const double *)src)[i] / (double)nranks; break;
        default: putf(t, dst, i, getf(t, src, i) / (float)nranks); break;
        }
    }
}

/* ---- the pattern ----------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The largest integer magnitude t holds with every smaller one. */
static int64_t exact_limit(nsim_hdt t)
{
    switch (t) {
    case NSIM_HDT_INT8: return 127;
    case NSIM_HDT_UINT8: return 255;
    case NSIM_HDT_HALF: return 2048;
    case NSIM_HDT_BF16: return 256;
    case NSIM_HDT_F8E4M3: return 16;
    case NSIM_HDT_F8E5M2: return 8;
    default: return 1 << 20;
    }
}

static int is_unsigned(nsim_hdt t)
{
    return t == NSIM_HDT_UINT8 || t == NSIM_HDT_UINT32 || t == NSIM_HDT_UINT64;
}

/* Element i of rank r: sum/avg: |partial sums| stay within the exact
 * range; prod: 1 or (ranks 0-3 only) 2; max/min: the same small range. */
static int64_t pattern(nsim_hdt t, nsim_hop op, uint32_t nranks, uint32_t r,
                       uint64_t i)
{
    uint64_t h = mix(i * 0x100000001b3ull ^ mix(r + 1));
    if (op == NSIM_HOP_PROD)
        return (r < 4 && h % 4 == 0) ? 2 : 1;
    int64_t range = exact_limit(t) / (int64_t)nranks;
    range = range < 1 ? 1 : range > 64 ? 64 : range;
    int64_t v = (int64_t)(h % (uint64_t)(range + 1));
    return is_unsigned(t) ? v : v - range / 2;
}

void nsim_hdt_fill(nsim_hdt t, nsim_hop op, uint32_t nranks, uint32_t rank,
                   uint64_t first, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_value(t, buf, i, (double)pattern(t, op, nranks, rank, first + i));
}

uint64_t nsim_hdt_check(nsim_hdt t, nsim_hop op, uint32_t nranks,
                        int32_t rank, uint64_t first, const void *buf,
                        size_t n, uint64_t *first_bad)
{
    uint32_t sz = sizes[t];
    uint64_t wrong = 0;
    uint8_t want[8];
    *first_bad = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t idx = first + i;
        double v;
        if (rank >= 0) {
            v = (double)pattern(t, op, nranks, (uint32_t)rank, idx);
        } else {
            int64_t acc = pattern(t, op, nranks, 0, idx);
            for (uint32_t r = 1; r < nranks; r++) {
                int64_t x = pattern(t, op, nranks, r, idx);
                acc = op == NSIM_HOP_PROD  ? acc * x
                      : op == NSIM_HOP_MAX ? (x > acc ? x : acc)
                      : op == NSIM_HOP_MIN ? (x < acc ? x : acc)
                                           : acc + x;
            }
            v = (double)acc;
        }
        put_value(t, want, 0, v);
        if (rank < 0 && op == NSIM_HOP_AVG)
            nsim_hdt_postdiv(t, want, want, 1, nranks);
        if (memcmp(want, (const uint8_t *)buf + i * sz, sz) != 0) {
            if (wrong++ == 0)
                *first_bad = idx;
        }
    }
    return wrong;
}
