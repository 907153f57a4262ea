/* SPDX-License-Identifier: MIT
 *
 * measure.h - hardware measurements in one schema ("ncclsim-measurement"
 * version 1, README "Measurements"), whatever tool produced them, so that
 * compare and calibrate read one thing.
 *
 * Owns: a set of series. A series is one table of one tool: nccl-tests
 * (one collective, its ranks, hosts, -g, data type, reduction, NCCL
 * version, NCCL_* environment and, from an NCCL_DEBUG=INFO log, the
 * channels and per size the algorithm and protocol NCCL ran), a vendor's
 * table of nccl-tests busbw, or perftest (ib_write_bw, ib_read_bw,
 * ib_send_bw, ib_write_lat, ...). Each row: the size in bytes and per
 * column (out-of-place, in-place) time, algbw, busbw and #wrong.
 * Readers (measure_nt.c: nccl-tests and INFO logs, measure_md.c: markdown
 * tables, measure_pt.c: raw perftest), the JSON reader and writer
 * (atomic) and the checks every series passes (sizes unique, times > 0).
 * Units: bytes, microseconds, GB/s (10^9 B/s).
 */
#ifndef NSIM_EXEC_MEASURE_H
#define NSIM_EXEC_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"

#define NSIM_MEASURE_FORMAT "ncclsim-measurement"
#define NSIM_MEASURE_VERSION 1

enum { NSIM_MEASURE_OOP = 0, NSIM_MEASURE_IP = 1 };

typedef struct nsim_measure_col {
    int present;
    double time_us;      /* <= 0: not measured (a busbw-only table) */
    double algbw, busbw; /* GB/s; < 0: unknown */
    int64_t wrong;       /* -1: unknown (N/A, an error column) */
} nsim_measure_col;

typedef struct nsim_measure_row {
    uint64_t size, count; /* count 0: unknown */
    nsim_measure_col col[2];
    char algo[16], proto[16]; /* what NCCL ran (INFO TUNING), "" */
    int line;                 /* in the source file, 0: unknown */
} nsim_measure_row;

typedef struct nsim_measure_env {
    char key[64], value[128];
} nsim_measure_env;

typedef struct nsim_measure_series {
    char tool[24];    /* "nccl-tests", "vendor-table", "perftest" */
    char test[48];    /* "all_reduce_perf", "ib_write_bw" */
    char label[96];   /* a column's name where a table holds several */
    char source[256]; /* the file */
    int line;         /* of the table's first row */
    char collective[24]; /* nsim_coll_name(): "allreduce", "" unknown */
    int32_t ranks, hosts, gpus_per_thread; /* -1: unknown */
    char dtype[16], redop[16];             /* "" unknown */
    int32_t root;                          /* -1 */
    char nccl_version[48];
    char log[256];        /* the INFO log the log fields came from */
    int32_t log_channels; /* -1 */
    int32_t qps;          /* perftest -q, -1 */
    int bidirectional;    /* perftest -b: 1, 0 no, -1 unknown */
    size_t nrows, nenv;
    nsim_measure_row *rows;
    nsim_measure_env *env;
} nsim_measure_series;

typedef struct nsim_measure nsim_measure;

/* What the user says about files that do not say it themselves. */
typedef struct nsim_measure_import_opts {
    const char *collective; /* "allreduce", "all_reduce_perf", NULL */
    int32_t ranks, hosts;   /* 0: from the file */
    int32_t gpus_per_thread; /* nccl-tests -g, 0: from the file */
    char *const *env;       /* "NCCL_X=V" the run had, nenv of them */
    size_t nenv;
    int partial;            /* drop rows cut short (with a warning)
                             * instead of failing */
    /* called for each warning when set (else they are dropped) */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
} nsim_measure_import_opts;

NSIM_NODISCARD int nsim_measure_create(nsim_measure **out, nsim_err *err);
void nsim_measure_destroy(nsim_measure *m); /* NULL-safe */

/* Reads FILES as a user has them (nccl-tests output with or without
 * launcher tags, INFO logs, vendor markdown tables, perftest output, or
 * an ncclsim-measurement file) into m. A file with an INFO log and no
 * table completes the series of the other files. Errors: "FILE:LINE:
 * what". On error m is unchanged. */
NSIM_NODISCARD int nsim_measure_import(nsim_measure *m, char *const *files,
                                       size_t nfiles,
                                       const nsim_measure_import_opts *o,
                                       nsim_err *err);

/* The same for one text in memory (source names it in messages; for
 * tests and fuzzing). */
NSIM_NODISCARD int nsim_measure_import_text(nsim_measure *m, const char *text,
                                            size_t len, const char *source,
                                            const nsim_measure_import_opts *o,
                                            nsim_err *err);

/* The schema's reader (checks everything) and writer. */
NSIM_NODISCARD int nsim_measure_load(const char *path, nsim_measure **out,
                                     nsim_err *err);
NSIM_NODISCARD int nsim_measure_parse(const char *text, size_t len,
                                      const char *source, nsim_measure **out,
                                      nsim_err *err);
NSIM_NODISCARD int nsim_measure_to_json(const nsim_measure *m, char **out,
                                        nsim_err *err);
NSIM_NODISCARD int nsim_measure_write(const nsim_measure *m,
                                      const char *path, nsim_err *err);

size_t nsim_measure_nseries(const nsim_measure *m);
const nsim_measure_series *nsim_measure_series_at(const nsim_measure *m,
                                                  size_t i);
/* The value of an NCCL_* variable of a series, NULL if not recorded. */
const char *nsim_measure_env_get(const nsim_measure_series *s,
                                 const char *key);

#endif
