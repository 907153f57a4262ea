/* SPDX-License-Identifier: MIT
 *
 * measure_int.h - what the measurement readers (measure_nt.c, measure_md.c,
 * measure_pt.c) share with measure.c: building series, and the line
 * helpers of the text formats. Not for use outside sim/exec/measure*.
 */
#ifndef NSIM_EXEC_MEASURE_INT_H
#define NSIM_EXEC_MEASURE_INT_H

#include <stddef.h>

#include "measure.h"

/* A new series at the end of m with every field unknown; NULL: no memory. */
nsim_measure_series *nsim_measure__series_new(nsim_measure *m,
                                              const char *source);
/* A new zeroed row (columns absent, wrong -1); NULL: no memory. */
nsim_measure_row *nsim_measure__row_new(nsim_measure_series *s);
/* Sets (or replaces) an environment variable; <0 on no memory. */
int nsim_measure__env_set(nsim_measure_series *s, const char *key,
                          const char *value);
/* Moves every series of src to the end of dst (src is left empty). */
int nsim_measure__move(nsim_measure *dst, nsim_measure *src);
/* Drops the series from index n on. */
void nsim_measure__truncate(nsim_measure *m, size_t n);
nsim_measure_series *nsim_measure__series_mut(nsim_measure *m, size_t i);

/* The lines of a text: next line into buf (NUL-terminated, cut at len-1),
 * *pos advanced; 0 at the end. */
int nsim_measure__next_line(const char *text, size_t len, size_t *pos,
                            char *buf, size_t buflen);

/* The readers. Each returns 1 if it recognised the text (series added to
 * m, or err set and < 0 returned), 0 if the text is not its format. */
int nsim_measure__read_nccl_tests(nsim_measure *m, const char *text,
                                  size_t len, const char *source,
                                  const nsim_measure_import_opts *o,
                                  nsim_err *err);
int nsim_measure__read_markdown(nsim_measure *m, const char *text,
                                size_t len, const char *source,
                                const nsim_measure_import_opts *o,
                                nsim_err *err);
int nsim_measure__read_perftest(nsim_measure *m, const char *text,
                                size_t len, const char *source,
                                const nsim_measure_import_opts *o,
                                nsim_err *err);

/* The INFO-log facts of one file, to complete series. */
typedef struct nsim_measure_logfacts {
    char source[256];
    char version[48];
    int32_t ranks, hosts, channels;
    size_t nenv;
    nsim_measure_env *env;
    size_t nalgo;
    struct nsim_measure_algo {
        uint64_t bytes;
        char algo[16], proto[16];
    } *algo;
    int any; /* an INFO line was seen */
} nsim_measure_logfacts;

NSIM_NODISCARD int nsim_measure__log_facts(const char *text, size_t len,
                                           const char *source,
                                           nsim_measure_logfacts *f,
                                           nsim_err *err);
void nsim_measure__log_facts_free(nsim_measure_logfacts *f);
/* Fills what s does not know from f (env: f's values are added where s
 * lacks the key; per-size algorithms by size). */
int nsim_measure__apply_facts(nsim_measure_series *s,
                              const nsim_measure_logfacts *f);
/* Reads the NCCL_DEBUG=INFO log at path (one the nccl backend captured)
 * into s as nsim_measure__apply_facts does: per size, the algorithm and
 * protocol of NCCL's TUNING lines, and the env NCCL reports. A log with no
 * INFO line changes nothing. */
NSIM_NODISCARD int nsim_measure__attach_log(nsim_measure_series *s,
                                            const char *path, nsim_err *err);

#endif
