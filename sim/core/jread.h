/* SPDX-License-Identifier: MIT
 *
 * jread.h - checked reading of JSON input files (topologies, scenarios,
 * parameter files, fault plans).
 *
 * Owns: loading a file into a cJSON tree with the byte offset and line of
 * a syntax error, and typed field readers that report "FILE: PATH: what was
 * expected" (PATH like devices[3].speed). Objects are checked for unknown
 * keys so that a misspelt field is an error, not a silent default.
 */
#ifndef NSIM_CORE_JREAD_H
#define NSIM_CORE_JREAD_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "fileio.h" /* nsim_read_file, nsim_write_file_atomic */
#include "sim.h"

typedef struct nsim_jctx {
    const char *file; /* for messages */
    nsim_err *err;
} nsim_jctx;

/* Reads and parses a whole file; *root is owned by the caller
 * (cJSON_Delete). Messages name the file and the line of a syntax error. */
NSIM_NODISCARD int nsim_json_load(const char *path, cJSON **root,
                                  nsim_err *err);
NSIM_NODISCARD int nsim_json_parse(const char *text, size_t len,
                                   const char *source, cJSON **root,
                                   nsim_err *err);

/* Each reader: field absent -> *out untouched and NSIM_OK unless required;
 * wrong type or value -> NSIM_ECONFIG with "file: path.key: expected ...".
 * path is the object's own path ("devices[2]"), or "" at the top. */
NSIM_NODISCARD int nsim_jget_string(const nsim_jctx *c, const cJSON *obj,
                                    const char *path, const char *key,
                                    int required, const char **out);
NSIM_NODISCARD int nsim_jget_int(const nsim_jctx *c, const cJSON *obj,
                                 const char *path, const char *key,
                                 int required, int64_t min, int64_t max,
                                 int64_t *out);
NSIM_NODISCARD int nsim_jget_double(const nsim_jctx *c, const cJSON *obj,
                                    const char *path, const char *key,
                                    int required, double min, double max,
                                    double *out);
NSIM_NODISCARD int nsim_jget_bool(const nsim_jctx *c, const cJSON *obj,
                                  const char *path, const char *key,
                                  int required, int *out);
NSIM_NODISCARD int nsim_jget_bw(const nsim_jctx *c, const cJSON *obj,
                                const char *path, const char *key,
                                int required, double *out);
NSIM_NODISCARD int nsim_jget_time(const nsim_jctx *c, const cJSON *obj,
                                  const char *path, const char *key,
                                  int required, nsim_time *out);
/* A size: a whole number of bytes, or a string such as "4 MiB". */
NSIM_NODISCARD int nsim_jget_size(const nsim_jctx *c, const cJSON *obj,
                                  const char *path, const char *key,
                                  int required, uint64_t *out);
/* Fails on any key of obj not in the NULL-terminated list. */
NSIM_NODISCARD int nsim_jcheck_keys(const nsim_jctx *c, const cJSON *obj,
                                    const char *path,
                                    const char *const *allowed);
/* Checks a versioned file's top level: an object whose "format" is
 * `format` and "version" is `version`, with only the allowed keys. */
NSIM_NODISCARD int nsim_jcheck_header(const nsim_jctx *c, const cJSON *root,
                                      const char *format, int64_t version,
                                      const char *const *allowed);
/* Formats an error at path.key. */
int nsim_jfail(const nsim_jctx *c, const char *path, const char *key,
               const char *fmt, ...) NSIM_PRINTF(4, 5);

#endif
