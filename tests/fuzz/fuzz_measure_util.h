/* SPDX-License-Identifier: MIT
 *
 * fuzz_measure_util.h - what the measurement harnesses share: the bytes
 * as a file a user hands `ncclsim measure import` (the reader picks the
 * format: measurement JSON, nccl-tests output, INFO log, vendor markdown
 * table, perftest), with options picked by the input's length; on
 * success the schema writer runs and what it wrote must read back.
 */
#ifndef NSIM_FUZZ_MEASURE_UTIL_H
#define NSIM_FUZZ_MEASURE_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "sim/exec/measure.h"

static void fuzz_measure_import(const uint8_t *data, size_t size,
                                const char *name)
{
    nsim_err err = {0};
    nsim_measure *m = NULL;
    char *path = strdup(fuzz_write(name, data, size));
    char *files[] = {path};
    nsim_measure_import_opts o = {
        .collective = size & 2 ? "allreduce" : NULL,
        .ranks = size & 4 ? 8 : 0,
        .hosts = size & 4 ? 1 : 0,
        .partial = (int)(size & 1),
    };
    if (path == NULL || nsim_measure_create(&m, &err) != NSIM_OK)
        abort();
    if (nsim_measure_import(m, files, 1, &o, &err) == NSIM_OK) {
        volatile uint64_t sink = 0;
        for (size_t i = 0; i < nsim_measure_nseries(m); i++) {
            const nsim_measure_series *s = nsim_measure_series_at(m, i);
            for (size_t r = 0; r < s->nrows; r++)
                sink += s->rows[r].size;
            (void)nsim_measure_env_get(s, "NCCL_ALGO");
        }
        (void)sink;
        char *text = NULL;
        if (nsim_measure_nseries(m) > 0 &&
            nsim_measure_to_json(m, &text, &err) == NSIM_OK) {
            nsim_measure *back = NULL;
            /* what we write we must read */
            if (nsim_measure_parse(text, strlen(text), "written", &back,
                                   &err) != NSIM_OK)
                abort();
            nsim_measure_destroy(back);
            free(text);
        }
    }
    nsim_measure_destroy(m);
    free(path);
}

#endif
