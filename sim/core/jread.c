/* SPDX-License-Identifier: MIT
 *
 * jread.c - checked JSON reading and atomic file writing (see jread.h).
 */
#include "jread.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* Finds a key given twice in one object (the first would win silently);
 * writes its path ("devices[3].name") to where. Sorting keeps a large
 * object O(n log n). */
static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int find_duplicate(const cJSON *node, char *path, size_t cap,
                          size_t plen, int depth)
{
    if (depth > 512) /* cJSON's own nesting limit is lower */
        return 0;
    if (cJSON_IsObject(node)) {
        size_t n = 0, i = 0;
        for (const cJSON *it = node->child; it != NULL; it = it->next)
            n++;
        if (n > 1) {
            const char **keys = malloc(n * sizeof *keys);
            if (keys == NULL)
                return 0;
            for (const cJSON *it = node->child; it != NULL; it = it->next)
                keys[i++] = it->string;
            qsort(keys, n, sizeof *keys, cmp_key);
            for (i = 1; i < n; i++)
                if (strcmp(keys[i - 1], keys[i]) == 0) {
                    snprintf(path + plen, cap - plen, "%s%s",
                             plen ? "." : "", keys[i]);
                    free(keys);
                    return 1;
                }
            free(keys);
        }
    }
    size_t idx = 0;
    for (const cJSON *it = node->child; it != NULL; it = it->next, idx++) {
        if (!cJSON_IsObject(it) && !cJSON_IsArray(it))
            continue;
        int w = cJSON_IsObject(node)
                    ? snprintf(path + plen, cap - plen, "%s%s",
                               plen ? "." : "", it->string)
                    : snprintf(path + plen, cap - plen, "[%zu]", idx);
        size_t np = w < 0 || (size_t)w >= cap - plen ? cap - 1 : plen + (size_t)w;
        if (find_duplicate(it, path, cap, np, depth + 1))
            return 1;
        path[plen] = '\0';
    }
    return 0;
}

int nsim_json_parse(const char *text, size_t len, const char *source,
                    cJSON **root, nsim_err *err)
{
    const char *end = NULL;
    /* cJSON's "require null terminated" check wants the terminator inside
     * the length, so parse a terminated copy when the caller's is not. */
    char *copy = NULL;
    if (memchr(text, '\0', len) != NULL)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: contains a NUL byte", source);
    copy = malloc(len + 1);
    if (copy == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", source);
    memcpy(copy, text, len);
    copy[len] = '\0';
    cJSON *j = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
    if (end != NULL)
        end = text + (end - copy);
    free(copy);
    if (j == NULL) {
        size_t off = end != NULL && end >= text ? (size_t)(end - text) : 0;
        if (off > len)
            off = len;
        unsigned line = 1, col = 1;
        for (size_t i = 0; i < off; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: line %u, column %u: not valid JSON%s", source,
                        line, col,
                        off >= len ? " (truncated?)" : "");
    }
    char where[512] = "";
    if (find_duplicate(j, where, sizeof where, 0, 0)) {
        cJSON_Delete(j);
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: %s: duplicate key (given twice in one object)",
                        source, where);
    }
    *root = j;
    return NSIM_OK;
}

int nsim_json_load(const char *path, cJSON **root, nsim_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    NSIM_TRY(nsim_read_file(path, &buf, &len, err));
    int rc = nsim_json_parse(buf, len, path, root, err);
    free(buf);
    return rc;
}

int nsim_jfail(const nsim_jctx *c, const char *path, const char *key,
               const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (path[0] == '\0' && (key == NULL || key[0] == '\0'))
        path = "(top level)";
    return NSIM_ERR(c->err, NSIM_ECONFIG, "%s: %s%s%s: %s", c->file, path,
                    (path[0] && key && key[0]) ? "." : "", key ? key : "",
                    what);
}

static const cJSON *field(const nsim_jctx *c, const cJSON *obj,
                          const char *path, const char *key, int required,
                          int *rc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *rc = NSIM_OK;
    if (v == NULL && required)
        *rc = nsim_jfail(c, path, key, "missing (required)");
    return v;
}

int nsim_jget_string(const nsim_jctx *c, const cJSON *obj, const char *path,
                     const char *key, int required, const char **out)
{
    int rc;
    const cJSON *v = field(c, obj, path, key, required, &rc);
    if (v == NULL)
        return rc;
    if (!cJSON_IsString(v))
        return nsim_jfail(c, path, key, "expected a string");
    *out = v->valuestring;
    return NSIM_OK;
}

int nsim_jget_double(const nsim_jctx *c, const cJSON *obj, const char *path,
                     const char *key, int required, double min, double max,
                     double *out)
{
    int rc;
    const cJSON *v = field(c, obj, path, key, required, &rc);
    if (v == NULL)
        return rc;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return nsim_jfail(c, path, key, "expected a number");
    if (v->valuedouble < min || v->valuedouble > max)
        return nsim_jfail(c, path, key, "expected a number in [%g, %g], got %g",
                          min, max, v->valuedouble);
    *out = v->valuedouble;
    return NSIM_OK;
}

int nsim_jget_int(const nsim_jctx *c, const cJSON *obj, const char *path,
                  const char *key, int required, int64_t min, int64_t max,
                  int64_t *out)
{
    int rc;
    const cJSON *v = field(c, obj, path, key, required, &rc);
    if (v == NULL)
        return rc;
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || !isfinite(d) || d != floor(d))
        return nsim_jfail(c, path, key, "expected an integer");
    if (d < (double)min || d > (double)max)
        return nsim_jfail(c, path, key,
                          "expected an integer in [%lld, %lld], got %.17g",
                          (long long)min, (long long)max, d);
    *out = (int64_t)d;
    return NSIM_OK;
}

int nsim_jget_bool(const nsim_jctx *c, const cJSON *obj, const char *path,
                   const char *key, int required, int *out)
{
    int rc;
    const cJSON *v = field(c, obj, path, key, required, &rc);
    if (v == NULL)
        return rc;
    if (!cJSON_IsBool(v))
        return nsim_jfail(c, path, key, "expected true or false");
    *out = cJSON_IsTrue(v);
    return NSIM_OK;
}

int nsim_jget_bw(const nsim_jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, double *out)
{
    const char *s = NULL, *why = NULL;
    NSIM_TRY(nsim_jget_string(c, obj, path, key, required, &s));
    if (s == NULL)
        return NSIM_OK;
    if (nsim_units_parse_bw(s, out, &why) != NSIM_OK)
        return nsim_jfail(c, path, key,
                          "expected a bandwidth such as \"400 Gb/s\" or "
                          "\"50 GB/s\", got \"%s\" (%s)",
                          s, why);
    return NSIM_OK;
}

int nsim_jget_time(const nsim_jctx *c, const cJSON *obj, const char *path,
                   const char *key, int required, nsim_time *out)
{
    const char *s = NULL, *why = NULL;
    NSIM_TRY(nsim_jget_string(c, obj, path, key, required, &s));
    if (s == NULL)
        return NSIM_OK;
    if (nsim_units_parse_time(s, out, &why) != NSIM_OK)
        return nsim_jfail(c, path, key,
                          "expected a time such as \"130 ns\" or \"1.5 us\", "
                          "got \"%s\" (%s)",
                          s, why);
    return NSIM_OK;
}

int nsim_jget_size(const nsim_jctx *c, const cJSON *obj, const char *path,
                   const char *key, int required, uint64_t *out)
{
    int rc;
    const cJSON *v = field(c, obj, path, key, required, &rc);
    if (v == NULL)
        return rc;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!isfinite(d) || d < 0 || d != floor(d) || d > 9.2e18)
            return nsim_jfail(c, path, key,
                              "expected a whole number of bytes >= 0");
        *out = (uint64_t)d;
        return NSIM_OK;
    }
    const char *why = NULL;
    if (!cJSON_IsString(v) ||
        nsim_units_parse_size(v->valuestring, out, &why) != NSIM_OK)
        return nsim_jfail(c, path, key,
                          "expected a size such as 4096 or \"4 MiB\"");
    return NSIM_OK;
}

int nsim_jcheck_keys(const nsim_jctx *c, const cJSON *obj, const char *path,
                     const char *const *allowed)
{
    if (!cJSON_IsObject(obj))
        return nsim_jfail(c, path, "", "expected an object");
    for (const cJSON *it = obj->child; it != NULL; it = it->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a != NULL && !ok; a++)
            ok = strcmp(*a, it->string) == 0;
        if (!ok)
            return nsim_jfail(c, path, it->string, "unknown field");
    }
    return NSIM_OK;
}

int nsim_jcheck_header(const nsim_jctx *c, const cJSON *root,
                       const char *format, int64_t version,
                       const char *const *allowed)
{
    const char *fmt = NULL;
    int64_t ver = 0;
    if (!cJSON_IsObject(root))
        return nsim_jfail(c, "", "", "expected an object");
    NSIM_TRY(nsim_jget_string(c, root, "", "format", 1, &fmt));
    if (strcmp(fmt, format) != 0)
        return nsim_jfail(c, "", "format", "expected \"%s\", got \"%s\"",
                          format, fmt);
    NSIM_TRY(nsim_jcheck_keys(c, root, "", allowed));
    NSIM_TRY(nsim_jget_int(c, root, "", "version", 1, 0, 1 << 20, &ver));
    if (ver != version)
        return nsim_jfail(c, "", "version",
                          "this ncclsim reads version %lld, got %lld",
                          (long long)version, (long long)ver);
    return NSIM_OK;
}
