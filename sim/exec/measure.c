/* SPDX-License-Identifier: MIT
 *
 * measure.c - the measurement set (see measure.h): building series, the
 * checks, the ncclsim-measurement JSON reader and writer, and import,
 * which hands each file to the reader that recognises it.
 */
#include "measure.h"
#include "measure_int.h"
#include "sim/core/jread.h"
#include "sim/plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    nsim_measure_series s;
    size_t rows_cap, env_cap;
} slot;

struct nsim_measure {
    slot *v;
    size_t n, cap;
};

int nsim_measure_create(nsim_measure **out, nsim_err *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? NSIM_OK
                : NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
}

static void slot_free(slot *s)
{
    free(s->s.rows);
    free(s->s.env);
}

void nsim_measure__truncate(nsim_measure *m, size_t n)
{
    while (m->n > n)
        slot_free(&m->v[--m->n]);
}

void nsim_measure_destroy(nsim_measure *m)
{
    if (m == NULL)
        return;
    nsim_measure__truncate(m, 0);
    free(m->v);
    free(m);
}

size_t nsim_measure_nseries(const nsim_measure *m) { return m->n; }

const nsim_measure_series *nsim_measure_series_at(const nsim_measure *m,
                                                  size_t i)
{
    return i < m->n ? &m->v[i].s : NULL;
}

nsim_measure_series *nsim_measure__series_mut(nsim_measure *m, size_t i)
{
    return i < m->n ? &m->v[i].s : NULL;
}

nsim_measure_series *nsim_measure__series_new(nsim_measure *m,
                                              const char *source)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        slot *v = realloc(m->v, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        m->v = v;
        m->cap = cap;
    }
    slot *s = &m->v[m->n++];
    memset(s, 0, sizeof *s);
    s->s.ranks = s->s.hosts = s->s.gpus_per_thread = -1;
    s->s.root = -1;
    s->s.log_channels = -1;
    s->s.qps = -1;
    s->s.bidirectional = -1;
    snprintf(s->s.source, sizeof s->s.source, "%s", source ? source : "");
    return &s->s;
}

nsim_measure_row *nsim_measure__row_new(nsim_measure_series *s)
{
    slot *sl = (slot *)s;
    if (s->nrows == sl->rows_cap) {
        size_t cap = sl->rows_cap ? sl->rows_cap * 2 : 32;
        nsim_measure_row *r = realloc(s->rows, cap * sizeof *r);
        if (r == NULL)
            return NULL;
        s->rows = r;
        sl->rows_cap = cap;
    }
    nsim_measure_row *r = &s->rows[s->nrows++];
    memset(r, 0, sizeof *r);
    r->col[0].wrong = r->col[1].wrong = -1;
    r->col[0].algbw = r->col[0].busbw = -1;
    r->col[1].algbw = r->col[1].busbw = -1;
    return r;
}

int nsim_measure__env_set(nsim_measure_series *s, const char *key,
                          const char *value)
{
    for (size_t i = 0; i < s->nenv; i++)
        if (strcmp(s->env[i].key, key) == 0) {
            snprintf(s->env[i].value, sizeof s->env[i].value, "%s", value);
            return 0;
        }
    slot *sl = (slot *)s;
    if (s->nenv == sl->env_cap) {
        size_t cap = sl->env_cap ? sl->env_cap * 2 : 8;
        nsim_measure_env *e = realloc(s->env, cap * sizeof *e);
        if (e == NULL)
            return -1;
        s->env = e;
        sl->env_cap = cap;
    }
    nsim_measure_env *e = &s->env[s->nenv++];
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->value, sizeof e->value, "%s", value);
    return 0;
}

const char *nsim_measure_env_get(const nsim_measure_series *s,
                                 const char *key)
{
    for (size_t i = 0; i < s->nenv; i++)
        if (strcmp(s->env[i].key, key) == 0)
            return s->env[i].value;
    return NULL;
}

int nsim_measure__move(nsim_measure *dst, nsim_measure *src)
{
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->n + src->n;
        slot *v = realloc(dst->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        dst->v = v;
        dst->cap = cap;
    }
    memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    src->n = 0;
    return 0;
}

int nsim_measure__next_line(const char *text, size_t len, size_t *pos,
                            char *buf, size_t buflen)
{
    size_t i = *pos;
    if (i >= len)
        return 0;
    size_t n = 0;
    while (i + n < len && text[i + n] != '\n')
        n++;
    size_t keep = n < buflen - 1 ? n : buflen - 1;
    memcpy(buf, text + i, keep);
    buf[keep] = '\0';
    for (size_t k = 0; k < keep; k++)
        if (buf[k] == '\0' || buf[k] == '\r')
            buf[k] = ' ';
    *pos = i + n + 1;
    return 1;
}

/* ---- derived values and checks ----------------------------------------- */

/* Completes algbw / busbw / time from each other where the collective and
 * the rank count give nccl-tests' factor. */
static void complete_series(nsim_measure_series *s)
{
    nsim_coll c;
    double f = -1;
    if (s->collective[0] && nsim_coll_parse(s->collective, &c) == 0 &&
        s->ranks > 0)
        f = nsim_coll_busbw_factor(c, (uint32_t)s->ranks);
    if (strcmp(s->tool, "perftest") == 0)
        f = 1;
    for (size_t i = 0; i < s->nrows; i++)
        for (int k = 0; k < 2; k++) {
            nsim_measure_col *col = &s->rows[i].col[k];
            double size = (double)s->rows[i].size;
            if (!col->present)
                continue;
            if (col->algbw < 0 && col->busbw >= 0 && f > 0)
                col->algbw = col->busbw / f;
            if (col->algbw < 0 && col->time_us > 0)
                col->algbw = size / (col->time_us * 1e3);
            if (col->busbw < 0 && col->algbw >= 0 && f > 0)
                col->busbw = col->algbw * f;
            if (col->time_us <= 0 && col->algbw > 0)
                col->time_us = size / (col->algbw * 1e3);
        }
}

static int check_series(const nsim_measure_series *s, nsim_err *err)
{
    const char *src = s->source[0] ? s->source : "measurement";
    if (s->nrows == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s:%d: the %s table has no complete row", src,
                        s->line, s->test[0] ? s->test : s->tool);
    for (size_t i = 0; i < s->nrows; i++) {
        const nsim_measure_row *r = &s->rows[i];
        if (r->size == 0)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: size 0: expected a "
                            "size of at least 1 byte", src, r->line);
        if (!r->col[0].present && !r->col[1].present)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: size %llu has no "
                            "value", src, r->line,
                            (unsigned long long)r->size);
        for (int k = 0; k < 2; k++) {
            const nsim_measure_col *c = &r->col[k];
            if (c->present && !(c->time_us > 0) && !(c->busbw > 0) &&
                !(c->algbw > 0))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "%s:%d: size %llu: time %g us: expected a "
                                "time > 0 (or a bandwidth > 0)", src,
                                r->line, (unsigned long long)r->size,
                                c->time_us);
            /* the schema's ranges (read_col), so that what an import
             * writes reads back: a reader's number or one derived from
             * it (size / time) can be absurd */
            if (c->present && (!(c->time_us <= 1e12) ||
                               !(c->algbw <= 1e9) || !(c->busbw <= 1e9)))
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "%s:%d: size %llu: time %g us, algbw %g, "
                                "busbw %g GB/s: expected a time up to 1e12 "
                                "us and bandwidths up to 1e9 GB/s", src,
                                r->line, (unsigned long long)r->size,
                                c->time_us, c->algbw, c->busbw);
        }
        for (size_t j = 0; j < i; j++)
            if (s->rows[j].size == r->size)
                return NSIM_ERR(err, NSIM_ECONFIG,
                                "%s:%d: size %llu appears twice in one "
                                "table (also at line %d)", src, r->line,
                                (unsigned long long)r->size,
                                s->rows[j].line);
    }
    return NSIM_OK;
}

/* ---- JSON writer -------------------------------------------------------- */

static cJSON *col_json(const nsim_measure_col *c)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    int ok = 1;
    if (c->time_us > 0)
        ok &= cJSON_AddNumberToObject(o, "time_us", c->time_us) != NULL;
    if (c->algbw >= 0)
        ok &= cJSON_AddNumberToObject(o, "algbw", c->algbw) != NULL;
    if (c->busbw >= 0)
        ok &= cJSON_AddNumberToObject(o, "busbw", c->busbw) != NULL;
    if (c->wrong >= 0)
        ok &= cJSON_AddNumberToObject(o, "wrong", (double)c->wrong) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

#define ADD_STR(o, k, v)                                                     \
    ((v)[0] == '\0' || cJSON_AddStringToObject((o), (k), (v)) != NULL)
#define ADD_INT(o, k, v)                                                     \
    ((v) < 0 || cJSON_AddNumberToObject((o), (k), (double)(v)) != NULL)

static cJSON *series_json(const nsim_measure_series *s)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    int ok = ADD_STR(o, "tool", s->tool) && ADD_STR(o, "test", s->test) &&
             ADD_STR(o, "label", s->label) &&
             ADD_STR(o, "source", s->source) && ADD_INT(o, "line", s->line) &&
             ADD_STR(o, "collective", s->collective) &&
             ADD_INT(o, "ranks", s->ranks) && ADD_INT(o, "hosts", s->hosts) &&
             ADD_INT(o, "gpus_per_thread", s->gpus_per_thread) &&
             ADD_STR(o, "datatype", s->dtype) &&
             ADD_STR(o, "redop", s->redop) && ADD_INT(o, "root", s->root) &&
             ADD_STR(o, "nccl_version", s->nccl_version) &&
             ADD_STR(o, "log", s->log) &&
             ADD_INT(o, "log_channels", s->log_channels) &&
             ADD_INT(o, "qps", s->qps) &&
             (s->bidirectional < 0 ||
              cJSON_AddBoolToObject(o, "bidirectional", s->bidirectional));
    cJSON *env = ok && s->nenv ? cJSON_AddObjectToObject(o, "env") : NULL;
    for (size_t i = 0; ok && env && i < s->nenv; i++)
        ok = cJSON_AddStringToObject(env, s->env[i].key, s->env[i].value) !=
             NULL;
    cJSON *rows = ok ? cJSON_AddArrayToObject(o, "rows") : NULL;
    ok = ok && rows;
    for (size_t i = 0; ok && i < s->nrows; i++) {
        const nsim_measure_row *r = &s->rows[i];
        cJSON *ro = cJSON_CreateObject();
        ok = ro != NULL && cJSON_AddItemToArray(rows, ro);
        ok = ok && cJSON_AddNumberToObject(ro, "size", (double)r->size);
        ok = ok && (r->count == 0 ||
                    cJSON_AddNumberToObject(ro, "count", (double)r->count));
        ok = ok && ADD_INT(ro, "line", r->line);
        static const char *const names[2] = {"out_of_place", "in_place"};
        for (int k = 0; ok && k < 2; k++) {
            if (!r->col[k].present)
                continue;
            cJSON *c = col_json(&r->col[k]);
            ok = c != NULL && cJSON_AddItemToObject(ro, names[k], c);
        }
        ok = ok && ADD_STR(ro, "nccl_algorithm", r->algo) &&
             ADD_STR(ro, "nccl_protocol", r->proto);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int nsim_measure_to_json(const nsim_measure *m, char **out, nsim_err *err)
{
    cJSON *root = cJSON_CreateObject();
    int ok = root != NULL &&
             cJSON_AddStringToObject(root, "format", NSIM_MEASURE_FORMAT) &&
             cJSON_AddNumberToObject(root, "version", NSIM_MEASURE_VERSION);
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "series") : NULL;
    ok = ok && arr;
    for (size_t i = 0; ok && i < m->n; i++) {
        cJSON *s = series_json(&m->v[i].s);
        ok = s != NULL && cJSON_AddItemToArray(arr, s);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
    size_t n = strlen(text);
    char *t = realloc(text, n + 2);
    if (t == NULL) {
        free(text);
        return NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    *out = t;
    return NSIM_OK;
}

int nsim_measure_write(const nsim_measure *m, const char *path,
                       nsim_err *err)
{
    char *text = NULL;
    NSIM_TRY(nsim_measure_to_json(m, &text, err));
    int rc = nsim_write_file_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

/* ---- JSON reader -------------------------------------------------------- */

static int get_str(const nsim_jctx *c, const cJSON *o, const char *path,
                   const char *key, char *dst, size_t len)
{
    const char *v = NULL;
    NSIM_TRY(nsim_jget_string(c, o, path, key, 0, &v));
    if (v == NULL)
        return NSIM_OK;
    if (strlen(v) >= len)
        return nsim_jfail(c, path, key, "expected at most %zu characters",
                          len - 1);
    memcpy(dst, v, strlen(v) + 1);
    return NSIM_OK;
}

static int get_i32(const nsim_jctx *c, const cJSON *o, const char *path,
                   const char *key, int64_t min, int32_t *dst)
{
    int64_t v = *dst;
    NSIM_TRY(nsim_jget_int(c, o, path, key, 0, min, INT32_MAX, &v));
    *dst = (int32_t)v;
    return NSIM_OK;
}

static int read_col(const nsim_jctx *c, const cJSON *o, const char *path,
                    nsim_measure_col *col)
{
    static const char *const keys[] = {"time_us", "algbw", "busbw", "wrong",
                                       NULL};
    if (!cJSON_IsObject(o))
        return nsim_jfail(c, path, "", "expected an object");
    NSIM_TRY(nsim_jcheck_keys(c, o, path, keys));
    col->present = 1;
    col->time_us = 0;
    col->algbw = col->busbw = -1;
    col->wrong = -1;
    if (cJSON_GetObjectItemCaseSensitive(o, "time_us")) {
        NSIM_TRY(nsim_jget_double(c, o, path, "time_us", 0, 0, 1e12,
                                  &col->time_us));
        if (!(col->time_us > 0))
            return nsim_jfail(c, path, "time_us", "expected a time > 0 us");
    }
    NSIM_TRY(nsim_jget_double(c, o, path, "algbw", 0, 0, 1e9, &col->algbw));
    NSIM_TRY(nsim_jget_double(c, o, path, "busbw", 0, 0, 1e9, &col->busbw));
    NSIM_TRY(nsim_jget_int(c, o, path, "wrong", 0, 0, INT64_MAX,
                           &col->wrong));
    return NSIM_OK;
}

static int read_series(const nsim_jctx *c, const cJSON *o, const char *path,
                       nsim_measure_series *s)
{
    static const char *const keys[] = {
        "tool", "test", "label", "source", "line", "collective", "ranks",
        "hosts", "gpus_per_thread", "datatype", "redop", "root",
        "nccl_version", "log", "log_channels", "qps", "bidirectional", "env",
        "rows", NULL};
    if (!cJSON_IsObject(o))
        return nsim_jfail(c, path, "", "expected an object");
    NSIM_TRY(nsim_jcheck_keys(c, o, path, keys));
    NSIM_TRY(get_str(c, o, path, "tool", s->tool, sizeof s->tool));
    if (s->tool[0] == '\0')
        return nsim_jfail(c, path, "tool", "expected the tool's name");
    NSIM_TRY(get_str(c, o, path, "test", s->test, sizeof s->test));
    NSIM_TRY(get_str(c, o, path, "label", s->label, sizeof s->label));
    NSIM_TRY(get_str(c, o, path, "source", s->source, sizeof s->source));
    NSIM_TRY(get_i32(c, o, path, "line", 0, &s->line));
    NSIM_TRY(get_str(c, o, path, "collective", s->collective,
                     sizeof s->collective));
    nsim_coll coll;
    if (s->collective[0] && nsim_coll_parse(s->collective, &coll) != 0)
        return nsim_jfail(c, path, "collective", "unknown collective \"%s\"",
                          s->collective);
    if (s->collective[0])
        snprintf(s->collective, sizeof s->collective, "%s",
                 nsim_coll_name(coll));
    NSIM_TRY(get_i32(c, o, path, "ranks", 1, &s->ranks));
    NSIM_TRY(get_i32(c, o, path, "hosts", 1, &s->hosts));
    NSIM_TRY(get_i32(c, o, path, "gpus_per_thread", 1, &s->gpus_per_thread));
    NSIM_TRY(get_str(c, o, path, "datatype", s->dtype, sizeof s->dtype));
    NSIM_TRY(get_str(c, o, path, "redop", s->redop, sizeof s->redop));
    NSIM_TRY(get_i32(c, o, path, "root", -1, &s->root));
    NSIM_TRY(get_str(c, o, path, "nccl_version", s->nccl_version,
                     sizeof s->nccl_version));
    NSIM_TRY(get_str(c, o, path, "log", s->log, sizeof s->log));
    NSIM_TRY(get_i32(c, o, path, "log_channels", 1, &s->log_channels));
    NSIM_TRY(get_i32(c, o, path, "qps", 1, &s->qps));
    if (cJSON_GetObjectItemCaseSensitive(o, "bidirectional"))
        NSIM_TRY(nsim_jget_bool(c, o, path, "bidirectional", 0,
                                &s->bidirectional));
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(o, "env");
    char p[128];
    if (env != NULL) {
        if (!cJSON_IsObject(env))
            return nsim_jfail(c, path, "env", "expected an object of strings");
        const cJSON *e;
        cJSON_ArrayForEach(e, env)
        {
            if (!cJSON_IsString(e) || strlen(e->string) >= 64 ||
                strlen(e->valuestring) >= 128)
                return nsim_jfail(c, path, "env", "%s: expected a string "
                                  "(name < 64, value < 128 characters)",
                                  e->string);
            if (nsim_measure__env_set(s, e->string, e->valuestring) < 0)
                return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
        }
    }
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    if (!cJSON_IsArray(rows))
        return nsim_jfail(c, path, "rows", "expected an array of rows");
    size_t k = 0;
    const cJSON *ro;
    cJSON_ArrayForEach(ro, rows)
    {
        static const char *const rkeys[] = {
            "size", "count", "line", "out_of_place", "in_place",
            "nccl_algorithm", "nccl_protocol", NULL};
        snprintf(p, sizeof p, "%s.rows[%zu]", path, k++);
        if (!cJSON_IsObject(ro))
            return nsim_jfail(c, p, "", "expected an object");
        NSIM_TRY(nsim_jcheck_keys(c, ro, p, rkeys));
        nsim_measure_row *r = nsim_measure__row_new(s);
        if (r == NULL)
            return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
        NSIM_TRY(nsim_jget_size(c, ro, p, "size", 1, &r->size));
        int64_t v = 0;
        NSIM_TRY(nsim_jget_int(c, ro, p, "count", 0, 0, INT64_MAX, &v));
        r->count = (uint64_t)v;
        v = 0;
        NSIM_TRY(nsim_jget_int(c, ro, p, "line", 0, 0, INT32_MAX, &v));
        r->line = (int)v;
        static const char *const names[2] = {"out_of_place", "in_place"};
        for (int j = 0; j < 2; j++) {
            const cJSON *co = cJSON_GetObjectItemCaseSensitive(ro, names[j]);
            char cp[160];
            snprintf(cp, sizeof cp, "%s.%s", p, names[j]);
            if (co != NULL)
                NSIM_TRY(read_col(c, co, cp, &r->col[j]));
        }
        NSIM_TRY(get_str(c, ro, p, "nccl_algorithm", r->algo, sizeof r->algo));
        NSIM_TRY(get_str(c, ro, p, "nccl_protocol", r->proto,
                         sizeof r->proto));
        if (!r->col[0].present && !r->col[1].present)
            return nsim_jfail(c, p, "", "expected \"out_of_place\" or "
                              "\"in_place\"");
    }
    return NSIM_OK;
}

static int parse_into(nsim_measure *m, const char *text, size_t len,
                      const char *source, nsim_err *err)
{
    cJSON *root = NULL;
    NSIM_TRY(nsim_json_parse(text, len, source, &root, err));
    static const char *const keys[] = {"format", "version", "series", NULL};
    nsim_jctx c = {source, err};
    int rc = nsim_jcheck_header(&c, root, NSIM_MEASURE_FORMAT,
                                NSIM_MEASURE_VERSION, keys);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "series");
    if (rc == NSIM_OK && !cJSON_IsArray(arr))
        rc = nsim_jfail(&c, "", "series", "expected an array of series");
    size_t k = 0;
    const cJSON *so;
    if (rc == NSIM_OK)
        cJSON_ArrayForEach(so, arr)
        {
            char p[48];
            snprintf(p, sizeof p, "series[%zu]", k++);
            nsim_measure_series *s = nsim_measure__series_new(m, "");
            if (s == NULL) {
                rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
                break;
            }
            rc = read_series(&c, so, p, s);
            if (rc == NSIM_OK) {
                complete_series(s);
                rc = check_series(s, err);
            }
            if (rc != NSIM_OK)
                break;
        }
    if (rc == NSIM_OK && m->n == 0)
        rc = nsim_jfail(&c, "", "series", "expected at least one series");
    cJSON_Delete(root);
    return rc;
}

int nsim_measure_parse(const char *text, size_t len, const char *source,
                       nsim_measure **out, nsim_err *err)
{
    nsim_measure *m = NULL;
    NSIM_TRY(nsim_measure_create(&m, err));
    int rc = parse_into(m, text, len, source, err);
    if (rc != NSIM_OK) {
        nsim_measure_destroy(m);
        return rc;
    }
    *out = m;
    return NSIM_OK;
}

int nsim_measure_load(const char *path, nsim_measure **out, nsim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    NSIM_TRY(nsim_read_file(path, &text, &len, err));
    int rc = nsim_measure_parse(text, len, path, out, err);
    free(text);
    return rc;
}

/* ---- import ------------------------------------------------------------- */

static int is_measurement_json(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' ||
                       text[i] == '\r'))
        i++;
    return i < len && text[i] == '{' &&
           strstr(text, "\"" NSIM_MEASURE_FORMAT "\"") != NULL;
}

/* One file into tmp: its series, or (INFO log only) its facts. */
static int import_file(nsim_measure *tmp, const char *path,
                       const char *given, size_t given_len,
                       const nsim_measure_import_opts *o,
                       nsim_measure_logfacts *facts, int *log_only,
                       nsim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    if (given != NULL) { /* a NUL-terminated copy, as the file reader's */
        text = malloc(given_len + 1);
        if (text == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
        memcpy(text, given, given_len);
        text[given_len] = '\0';
        len = given_len;
    } else {
        NSIM_TRY(nsim_read_file(path, &text, &len, err));
    }
    size_t before = nsim_measure_nseries(tmp);
    int rc = NSIM_OK;
    *log_only = 0;
    if (is_measurement_json(text, len)) {
        rc = parse_into(tmp, text, len, path, err);
        free(text);
        return rc;
    }
    int got = nsim_measure__read_perftest(tmp, text, len, path, o, err);
    if (got == 0)
        got = nsim_measure__read_nccl_tests(tmp, text, len, path, o, err);
    if (got >= 0) {
        int md = nsim_measure__read_markdown(tmp, text, len, path, o, err);
        got = md < 0 ? md : got || md;
    }
    if (got < 0) {
        free(text);
        return got;
    }
    rc = nsim_measure__log_facts(text, len, path, facts, err);
    free(text);
    if (rc != NSIM_OK)
        return rc;
    if (nsim_measure_nseries(tmp) == before) {
        if (!facts->any)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: no measurement found: expected nccl-tests "
                            "output (rows of size count type redop root "
                            "time algbw busbw #wrong), a markdown table "
                            "of sizes and bandwidths, perftest output or "
                            "an NCCL_DEBUG=INFO log", path);
        *log_only = 1;
        return NSIM_OK;
    }
    for (size_t i = before; i < nsim_measure_nseries(tmp); i++)
        if (nsim_measure__apply_facts(nsim_measure__series_mut(tmp, i),
                                      facts) < 0)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    return NSIM_OK;
}

static int apply_user(nsim_measure_series *s,
                      const nsim_measure_import_opts *o, nsim_err *err)
{
    if (o == NULL)
        return NSIM_OK;
    if (o->collective != NULL && strcmp(s->tool, "perftest") != 0) {
        nsim_coll c;
        if (nsim_coll_parse(o->collective, &c) != 0)
            return NSIM_ERR(err, NSIM_EINVAL, "--collective: unknown "
                            "collective \"%s\"", o->collective);
        if (s->collective[0] && strcmp(s->collective, nsim_coll_name(c)))
            return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: the table is %s, "
                            "--collective says %s", s->source, s->line,
                            s->collective, nsim_coll_name(c));
        snprintf(s->collective, sizeof s->collective, "%s",
                 nsim_coll_name(c));
    }
    if (o->ranks > 0) {
        if (s->ranks > 0 && s->ranks != o->ranks)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: the file says %d ranks, "
                            "--ranks says %d", s->source, s->ranks,
                            o->ranks);
        s->ranks = o->ranks;
    }
    if (o->gpus_per_thread > 0) {
        if (s->gpus_per_thread > 0 && s->gpus_per_thread != o->gpus_per_thread)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: the file says -g %d, "
                            "--gpus-per-thread says %d", s->source,
                            s->gpus_per_thread, o->gpus_per_thread);
        s->gpus_per_thread = o->gpus_per_thread;
    }
    for (size_t i = 0; i < o->nenv && strcmp(s->tool, "perftest") != 0;
         i++) {
        const char *kv = o->env[i], *eq = strchr(kv, '=');
        char key[64];
        if (eq == NULL || eq == kv || (size_t)(eq - kv) >= sizeof key ||
            strncmp(kv, "NCCL_", 5) != 0 || strlen(eq + 1) >= 128)
            return NSIM_ERR(err, NSIM_EINVAL, "--env %s: expected "
                            "NCCL_NAME=VALUE", kv);
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        const char *have = nsim_measure_env_get(s, key);
        if (have != NULL && strcmp(have, eq + 1) != 0)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: the file says %s=%s, "
                            "--env says %s", s->source, key, have, eq + 1);
        if (nsim_measure__env_set(s, key, eq + 1) < 0)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    if (o->hosts > 0) {
        if (s->hosts > 0 && s->hosts != o->hosts)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: the file says %d hosts, "
                            "--hosts says %d", s->source, s->hosts,
                            o->hosts);
        s->hosts = o->hosts;
    }
    return NSIM_OK;
}

static int import_many(nsim_measure *m, char *const *files, size_t nfiles,
                       const char *text, size_t len,
                       const nsim_measure_import_opts *o, nsim_err *err);

int nsim_measure_import(nsim_measure *m, char *const *files, size_t nfiles,
                        const nsim_measure_import_opts *o, nsim_err *err)
{
    return import_many(m, files, nfiles, NULL, 0, o, err);
}

int nsim_measure_import_text(nsim_measure *m, const char *text, size_t len,
                             const char *source,
                             const nsim_measure_import_opts *o,
                             nsim_err *err)
{
    char *names[1] = {(char *)(source ? source : "input")};
    return import_many(m, names, 1, text, len, o, err);
}

static int import_many(nsim_measure *m, char *const *files, size_t nfiles,
                       const char *text, size_t len,
                       const nsim_measure_import_opts *o, nsim_err *err)
{
    nsim_measure *tmp = NULL;
    NSIM_TRY(nsim_measure_create(&tmp, err));
    nsim_measure_logfacts *facts = calloc(nfiles ? nfiles : 1, sizeof *facts);
    int *log_only = calloc(nfiles ? nfiles : 1, sizeof *log_only);
    int rc = facts && log_only
                 ? NSIM_OK
                 : NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
    for (size_t i = 0; rc == NSIM_OK && i < nfiles; i++)
        rc = import_file(tmp, files[i], text, len, o, &facts[i],
                         &log_only[i], err);
    /* logs without a table complete every series of the import */
    for (size_t i = 0; rc == NSIM_OK && i < nfiles; i++) {
        if (!log_only[i])
            continue;
        if (nsim_measure_nseries(tmp) == 0) {
            rc = NSIM_ERR(err, NSIM_ECONFIG, "%s: an NCCL_DEBUG=INFO log "
                          "without a table: give the nccl-tests output of "
                          "the same run with it", files[i]);
            break;
        }
        for (size_t k = 0; rc == NSIM_OK && k < nsim_measure_nseries(tmp);
             k++)
            if (nsim_measure__apply_facts(nsim_measure__series_mut(tmp, k),
                                          &facts[i]) < 0)
                rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    for (size_t k = 0; rc == NSIM_OK && k < nsim_measure_nseries(tmp); k++) {
        nsim_measure_series *s = nsim_measure__series_mut(tmp, k);
        rc = apply_user(s, o, err);
        if (rc == NSIM_OK) {
            complete_series(s);
            rc = check_series(s, err);
        }
    }
    if (rc == NSIM_OK && nsim_measure__move(m, tmp) < 0)
        rc = NSIM_ERR(err, NSIM_ENOMEM, "measurement: out of memory");
    for (size_t i = 0; facts && i < nfiles; i++)
        nsim_measure__log_facts_free(&facts[i]);
    free(facts);
    free(log_only);
    nsim_measure_destroy(tmp);
    return rc;
}
