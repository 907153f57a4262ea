/* SPDX-License-Identifier: MIT
 *
 * sweep.c - axes, points, knob application and sweep results (sweep.h).
 */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/core/strbuf.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"

typedef struct sweep_axis {
    char name[64];
    char **values;
    size_t n;
} sweep_axis;

struct nsim_sweep {
    sweep_axis axes[NSIM_SWEEP_MAX_AXES];
    size_t naxes;
};

int nsim_sweep_create(nsim_sweep **out, nsim_err *err)
{
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    return NSIM_OK;
}

void nsim_sweep_destroy(nsim_sweep *sw)
{
    if (sw == NULL)
        return;
    for (size_t a = 0; a < sw->naxes; a++) {
        for (size_t i = 0; i < sw->axes[a].n; i++)
            free(sw->axes[a].values[i]);
        free(sw->axes[a].values);
    }
    free(sw);
}

static int push_value(sweep_axis *ax, const char *v, size_t len,
                      nsim_err *err)
{
    if (ax->n == NSIM_SWEEP_MAX_VALUES)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set %s: more than %d values", ax->name,
                        NSIM_SWEEP_MAX_VALUES);
    if (len == 0)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set %s: an empty value in the list", ax->name);
    char **g = realloc(ax->values, (ax->n + 1) * sizeof *g);
    if (g == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    ax->values = g;
    if ((g[ax->n] = malloc(len + 1)) == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    memcpy(g[ax->n], v, len);
    g[ax->n][len] = '\0';
    ax->n++;
    return NSIM_OK;
}

/* "A:B:xK" or "A:B:+K". */
static int parse_range(sweep_axis *ax, const char *spec, nsim_err *err)
{
    char a[64], b[64], st[64];
    const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    const char *why = "";
    uint64_t lo, hi, k;
    char *end;
    if (c2 == NULL || strchr(c2 + 1, ':') != NULL ||
        (size_t)(c1 - spec) >= sizeof a || (size_t)(c2 - c1 - 1) >= sizeof b ||
        strlen(c2 + 1) >= sizeof st)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set %s: range '%s': expected START:END:xFACTOR or "
                        "START:END:+STEP", ax->name, spec);
    snprintf(a, sizeof a, "%.*s", (int)(c1 - spec), spec);
    snprintf(b, sizeof b, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    snprintf(st, sizeof st, "%s", c2 + 1);
    if (nsim_units_parse_size(a, &lo, &why) != NSIM_OK ||
        nsim_units_parse_size(b, &hi, &why) != NSIM_OK)
        return NSIM_ERR(err, NSIM_EINVAL, "--set %s: range '%s': %s",
                        ax->name, spec, why);
    int mul = st[0] == 'x' || st[0] == '*';
    errno = 0;
    k = 0;
    if (mul) {
        k = strtoull(st + 1, &end, 10);
        if (errno || *end != '\0')
            k = 0;
    } else if (st[0] == '+' && nsim_units_parse_size(st + 1, &k, &why) !=
                                   NSIM_OK) {
        k = 0;
    }
    if (k == 0 || (mul && k < 2) || lo > hi ||
        (mul && lo == 0))
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set %s: range '%s': expected START <= END and a "
                        "step xFACTOR (FACTOR >= 2, START > 0) or +STEP "
                        "(STEP >= 1)", ax->name, spec);
    for (uint64_t v = lo; v <= hi;) {
        char num[32];
        int len = snprintf(num, sizeof num, "%llu", (unsigned long long)v);
        NSIM_TRY(push_value(ax, num, (size_t)len, err));
        uint64_t next = mul ? v * k : v + k;
        if (next <= v || (mul && next / k != v))
            break; /* overflow */
        v = next;
    }
    return NSIM_OK;
}

int nsim_sweep_add_axis(nsim_sweep *sw, const char *spec, nsim_err *err)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL || eq == spec || eq[1] == '\0')
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set '%s': expected KNOB=VALUES (a list 1,2,4 or a "
                        "range 2:32:x2 or 1:8:+1)", spec);
    if ((size_t)(eq - spec) >= sizeof sw->axes[0].name)
        return NSIM_ERR(err, NSIM_EINVAL, "--set: knob name too long: '%.*s'",
                        (int)(eq - spec), spec);
    if (sw->naxes == NSIM_SWEEP_MAX_AXES)
        return NSIM_ERR(err, NSIM_EINVAL, "--set: at most %d knobs",
                        NSIM_SWEEP_MAX_AXES);
    sweep_axis *ax = &sw->axes[sw->naxes];
    snprintf(ax->name, sizeof ax->name, "%.*s", (int)(eq - spec), spec);
    for (size_t a = 0; a < sw->naxes; a++)
        if (strcmp(sw->axes[a].name, ax->name) == 0)
            return NSIM_ERR(err, NSIM_EINVAL, "--set %s: given twice",
                            ax->name);
    for (const char *p = ax->name; *p; p++)
        if (!isalnum((unsigned char)*p) && strchr("_.[]", *p) == NULL)
            return NSIM_ERR(err, NSIM_EINVAL,
                            "--set '%s': a knob name is letters, digits, '_', "
                            "'.' and '[]' (faults[0].at)",
                            ax->name);
    sw->naxes++; /* owned from here, freed by destroy */
    const char *v = eq + 1;
    if (strchr(v, ':') != NULL && strchr(v, ',') == NULL)
        NSIM_TRY(parse_range(ax, v, err));
    else
        for (;;) {
            const char *comma = strchr(v, ',');
            size_t len = comma ? (size_t)(comma - v) : strlen(v);
            for (size_t i = 0; i < len; i++)
                if (v[i] == '"' || v[i] == '\\' || iscntrl((unsigned char)v[i]))
                    return NSIM_ERR(err, NSIM_EINVAL,
                                    "--set %s: quotes, backslashes and "
                                    "control characters are not allowed in "
                                    "values", ax->name);
            NSIM_TRY(push_value(ax, v, len, err));
            if (comma == NULL)
                break;
            v = comma + 1;
        }
    size_t np = nsim_sweep_npoints(sw);
    if (np > NSIM_SWEEP_MAX_POINTS)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--set %s: the sweep would have more than %d points",
                        ax->name, NSIM_SWEEP_MAX_POINTS);
    return NSIM_OK;
}

int nsim_sweep_check(const nsim_sweep *sw, nsim_scenario *scratch,
                     nsim_err *err)
{
    for (size_t a = 0; a < sw->naxes; a++)
        for (size_t i = 0; i < sw->axes[a].n; i++)
            NSIM_TRY(nsim_scenario_set_knob(scratch, sw->axes[a].name,
                                            sw->axes[a].values[i], "--set",
                                            err));
    return NSIM_OK;
}

size_t nsim_sweep_naxes(const nsim_sweep *sw) { return sw->naxes; }

const char *nsim_sweep_axis_name(const nsim_sweep *sw, size_t axis)
{
    return sw->axes[axis].name;
}

size_t nsim_sweep_axis_nvalues(const nsim_sweep *sw, size_t axis)
{
    return sw->axes[axis].n;
}

size_t nsim_sweep_npoints(const nsim_sweep *sw)
{
    size_t n = 1;
    for (size_t a = 0; a < sw->naxes; a++) {
        if (sw->axes[a].n == 0)
            return 0;
        if (n > (size_t)NSIM_SWEEP_MAX_POINTS * 2)
            return n; /* already too many; avoid overflow */
        n *= sw->axes[a].n;
    }
    return n;
}

const char *nsim_sweep_value(const nsim_sweep *sw, size_t point, size_t axis)
{
    size_t stride = 1;
    for (size_t a = sw->naxes; a-- > axis + 1;)
        stride *= sw->axes[a].n;
    return sw->axes[axis].values[(point / stride) % sw->axes[axis].n];
}

int nsim_sweep_apply(const nsim_sweep *sw, size_t point, nsim_scenario *s,
                     nsim_err *err)
{
    for (size_t a = 0; a < sw->naxes; a++)
        NSIM_TRY(nsim_scenario_set_knob(s, sw->axes[a].name,
                                        nsim_sweep_value(sw, point, a),
                                        "--set", err));
    nsim_fault_plan fp;
    return nsim_scenario_fault_plan(s, s->nchannels, &fp, err);
}

int nsim_sweep_run_point(nsim_scenario *s, int analytic, uint32_t point,
                         nsim_sweep_row **rows, size_t *n, nsim_err *err)
{
    uint64_t *sizes = NULL;
    size_t ns = 0;
    nsim_run_opts o = {analytic, 0, 0};
    *rows = NULL;
    *n = 0;
    NSIM_TRY(nsim_run_sizes(s, &sizes, &ns, err));
    nsim_sweep_row *v = calloc(ns ? ns : 1, sizeof *v);
    if (v == NULL) {
        free(sizes);
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ns; i++) {
        nsim_run_row r;
        int rc = nsim_run_size(s, &o, sizes[i], &r, NULL, NULL, err);
        if (rc != NSIM_OK) { /* the sizes before it are kept */
            free(sizes);
            *rows = v;
            *n = i;
            return rc;
        }
        nsim_sweep_row *w = &v[i];
        w->point = point;
        w->nchannels = r.nchannels;
        w->size = r.size;
        w->count = r.count;
        w->events = r.events;
        w->time_us = r.time_us;
        w->algbw = r.algbw;
        w->busbw = r.busbw;
        snprintf(w->algo, sizeof w->algo, "%s", r.algo ? r.algo : "-");
        snprintf(w->proto, sizeof w->proto, "%s", r.proto ? r.proto : "-");
        snprintf(w->dtype, sizeof w->dtype, "%s", s->dtype);
        snprintf(w->redop, sizeof w->redop, "%s",
                 nsim_coll_has_op(s->coll) ? s->redop : "none");
        snprintf(w->fidelity, sizeof w->fidelity, "%s", r.fidelity);
    }
    free(sizes);
    *rows = v;
    *n = ns;
    return NSIM_OK;
}

static int row_cmp(const void *a, const void *b)
{
    const nsim_sweep_row *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

void nsim_sweep_sort_rows(nsim_sweep_row *rows, size_t n)
{
    if (n > 1) /* qsort wants a non-NULL array even for none */
        qsort(rows, n, sizeof *rows, row_cmp);
}

/* --- text --- */

typedef nsim_strbuf tbuf;

static void tb_printf(tbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);

static void tb_printf(tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nsim_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* Names and values are checked at add_axis (no quotes or controls); the
 * scenario name may hold anything. */
static void tb_json_str(tbuf *b, const char *s)
{
    tb_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            tb_printf(b, "\\%c", c);
        else if (c < 0x20)
            tb_printf(b, "\\u%04x", c);
        else
            tb_printf(b, "%c", c);
    }
    tb_printf(b, "\"");
}

int nsim_sweep_format(const nsim_sweep *sw, const char *scenario_name,
                      int json, const nsim_sweep_row *rows, size_t n,
                      char **out, nsim_err *err)
{
    tbuf b = {0};
    if (json) {
        tb_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n"
                      "  \"scenario\": ", NSIM_SWEEP_FORMAT, NSIM_SWEEP_VERSION);
        tb_json_str(&b, scenario_name);
        tb_printf(&b, ",\n  \"knobs\": [");
        for (size_t a = 0; a < sw->naxes; a++)
            tb_printf(&b, "%s\"%s\"", a ? ", " : "", sw->axes[a].name);
        tb_printf(&b, "],\n  \"rows\": [");
    } else {
        tb_printf(&b, "point");
        for (size_t a = 0; a < sw->naxes; a++)
            tb_printf(&b, ",%s", sw->axes[a].name);
        tb_printf(&b, ",size,count,type,redop,algo,proto,channels_used,time_us,"
                      "algbw_GBps,busbw_GBps,events,fidelity\n");
    }
    for (size_t i = 0; i < n; i++) {
        const nsim_sweep_row *r = &rows[i];
        if (json) {
            tb_printf(&b, "%s\n    {\"point\": %u, \"knobs\": {", i ? "," : "",
                      r->point);
            for (size_t a = 0; a < sw->naxes; a++)
                tb_printf(&b, "%s\"%s\": \"%s\"", a ? ", " : "",
                          sw->axes[a].name, nsim_sweep_value(sw, r->point, a));
            tb_printf(&b, "}, \"size\": %llu, \"count\": %llu, \"type\": "
                          "\"%s\", \"redop\": \"%s\", \"algo\": \"%s\", "
                          "\"proto\": \"%s\", \"channels_used\": %u, \"time_us\": "
                          "%.3f, \"algbw_GBps\": %.4f, \"busbw_GBps\": %.4f, "
                          "\"events\": %llu, \"fidelity\": \"%s\"}",
                      (unsigned long long)r->size, (unsigned long long)r->count,
                      r->dtype, r->redop, r->algo, r->proto, r->nchannels,
                      r->time_us, r->algbw, r->busbw,
                      (unsigned long long)r->events, r->fidelity);
        } else {
            tb_printf(&b, "%u", r->point);
            for (size_t a = 0; a < sw->naxes; a++)
                tb_printf(&b, ",%s", nsim_sweep_value(sw, r->point, a));
            tb_printf(&b, ",%llu,%llu,%s,%s,%s,%s,%u,%.3f,%.4f,%.4f,%llu,%s\n",
                      (unsigned long long)r->size, (unsigned long long)r->count,
                      r->dtype, r->redop, r->algo, r->proto, r->nchannels,
                      r->time_us, r->algbw, r->busbw,
                      (unsigned long long)r->events, r->fidelity);
        }
    }
    if (json)
        tb_printf(&b, "\n  ]\n}\n");
    if (b.oom) {
        free(b.s);
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    *out = b.s ? b.s : calloc(1, 1);
    return *out ? NSIM_OK : NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
}

/* --- reading back (--resume) --- */

static int push_row(nsim_sweep_row **v, size_t *n, size_t *cap,
                    const nsim_sweep_row *r, nsim_err *err)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        nsim_sweep_row *g = realloc(*v, c * sizeof *g);
        if (g == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = *r;
    return NSIM_OK;
}

static int check_point_value(const nsim_sweep *sw, const char *path,
                             size_t line, uint32_t point, size_t a,
                             const char *v, nsim_err *err)
{
    if (point >= nsim_sweep_npoints(sw))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: row %zu: point %u, but the sweep has %zu points "
                        "(--resume needs the same --set options)",
                        path, line, point, nsim_sweep_npoints(sw));
    if (strcmp(v, nsim_sweep_value(sw, point, a)) != 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: row %zu: point %u has %s=%s, the sweep has %s "
                        "(--resume needs the same --set options)",
                        path, line, point, sw->axes[a].name, v,
                        nsim_sweep_value(sw, point, a));
    return NSIM_OK;
}

static void copy_field(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
}

static int read_csv(const nsim_sweep *sw, const char *path, char *text,
                    nsim_sweep_row **rows, size_t *n, nsim_err *err)
{
    size_t cap = 0, line = 1, nf = sw->naxes + 13;
    char *save = NULL, *ln = strtok_r(text, "\n", &save);
    char want[2048];
    tbuf h = {0};
    tb_printf(&h, "point");
    for (size_t a = 0; a < sw->naxes; a++)
        tb_printf(&h, ",%s", sw->axes[a].name);
    tb_printf(&h, ",size,count,type,redop,algo,proto,channels_used,time_us,"
                  "algbw_GBps,busbw_GBps,events,fidelity");
    snprintf(want, sizeof want, "%s", h.s ? h.s : "");
    free(h.s);
    /* a sweep written before rows named their fidelity (2026-12-07) ran
     * packet, the default then */
    size_t old = strlen(want) - strlen(",fidelity");
    if (ln != NULL && strlen(ln) == old && strncmp(ln, want, old) == 0)
        nf--;
    else if (ln == NULL || strcmp(ln, want) != 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: line 1: expected the header \"%s\" (--resume "
                        "needs the same --set options, in the same order)",
                        path, want);
    while ((ln = strtok_r(NULL, "\n", &save)) != NULL) {
        char *f[NSIM_SWEEP_MAX_AXES + 16], *fs = NULL, *p;
        size_t k = 0;
        line++;
        for (p = strtok_r(ln, ",", &fs); p && k < nf + 1;
             p = strtok_r(NULL, ",", &fs))
            f[k++] = p;
        if (k != nf)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: line %zu: expected %zu fields, got %zu", path,
                            line, nf, k);
        nsim_sweep_row r = {0};
        char *end;
        r.point = (uint32_t)strtoul(f[0], &end, 10);
        if (*end != '\0')
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: line %zu: point: "
                            "expected a number", path, line);
        for (size_t a = 0; a < sw->naxes; a++)
            NSIM_TRY(check_point_value(sw, path, line, r.point, a, f[1 + a],
                                       err));
        char **g = &f[1 + sw->naxes];
        r.size = strtoull(g[0], NULL, 10);
        r.count = strtoull(g[1], NULL, 10);
        copy_field(r.dtype, sizeof r.dtype, g[2]);
        copy_field(r.redop, sizeof r.redop, g[3]);
        copy_field(r.algo, sizeof r.algo, g[4]);
        copy_field(r.proto, sizeof r.proto, g[5]);
        r.nchannels = (uint32_t)strtoul(g[6], NULL, 10);
        r.time_us = strtod(g[7], NULL);
        r.algbw = strtod(g[8], NULL);
        r.busbw = strtod(g[9], NULL);
        r.events = strtoull(g[10], NULL, 10);
        copy_field(r.fidelity, sizeof r.fidelity,
                   nf > sw->naxes + 12 ? g[11] : "packet");
        NSIM_TRY(push_row(rows, n, &cap, &r, err));
    }
    return NSIM_OK;
}

static int jnum(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it))
        return -1;
    *v = it->valuedouble;
    return 0;
}

static int jtext(const cJSON *o, const char *k, char *dst, size_t len)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(it))
        return -1;
    snprintf(dst, len, "%s", it->valuestring);
    return 0;
}

static int read_json_row(const nsim_sweep *sw, const char *path, size_t i,
                         const cJSON *o, nsim_sweep_row *r, nsim_err *err)
{
    double pt, sz, cnt, nch, ev;
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(o, "knobs");
    if (jnum(o, "point", &pt) || jnum(o, "size", &sz) ||
        jnum(o, "count", &cnt) || jnum(o, "channels_used", &nch) ||
        jnum(o, "events", &ev) || jnum(o, "time_us", &r->time_us) ||
        jnum(o, "algbw_GBps", &r->algbw) || jnum(o, "busbw_GBps", &r->busbw) ||
        jtext(o, "type", r->dtype, sizeof r->dtype) ||
        jtext(o, "redop", r->redop, sizeof r->redop) ||
        jtext(o, "algo", r->algo, sizeof r->algo) ||
        jtext(o, "proto", r->proto, sizeof r->proto) || !cJSON_IsObject(kn) ||
        pt < 0 || pt > NSIM_SWEEP_MAX_POINTS)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: rows[%zu]: expected point, knobs, size, count, "
                        "type, redop, algo, proto, channels_used, time_us, "
                        "algbw_GBps, busbw_GBps, events", path, i);
    if (jtext(o, "fidelity", r->fidelity, sizeof r->fidelity))
        snprintf(r->fidelity, sizeof r->fidelity, "packet"); /* before
                                                                * 2026-12-07 */
    r->point = (uint32_t)pt;
    r->size = (uint64_t)sz;
    r->count = (uint64_t)cnt;
    r->nchannels = (uint32_t)nch;
    r->events = (uint64_t)ev;
    for (size_t a = 0; a < sw->naxes; a++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(kn, sw->axes[a].name);
        if (!cJSON_IsString(v))
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: rows[%zu].knobs.%s: "
                            "missing", path, i, sw->axes[a].name);
        NSIM_TRY(check_point_value(sw, path, i, r->point, a, v->valuestring,
                                   err));
    }
    return NSIM_OK;
}

static int read_json(const nsim_sweep *sw, const char *path, const char *text,
                     size_t len, nsim_sweep_row **rows, size_t *n,
                     nsim_err *err)
{
    cJSON *root = NULL;
    size_t cap = 0, i = 0;
    int rc = nsim_json_parse(text, len, path, &root, err);
    if (rc != NSIM_OK)
        return rc;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(root, "knobs");
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rows"), *it;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, NSIM_SWEEP_FORMAT) ||
        !cJSON_IsArray(kn) || !cJSON_IsArray(rs))
        rc = NSIM_ERR(err, NSIM_ECONFIG,
                      "%s: expected an \"%s\" document with knobs and rows",
                      path, NSIM_SWEEP_FORMAT);
    if (rc == NSIM_OK && (size_t)cJSON_GetArraySize(kn) != sw->naxes)
        rc = NSIM_ERR(err, NSIM_ECONFIG, "%s: knobs: %d, the sweep has %zu "
                      "(--resume needs the same --set options)", path,
                      cJSON_GetArraySize(kn), sw->naxes);
    for (size_t a = 0; rc == NSIM_OK && a < sw->naxes; a++) {
        const cJSON *k = cJSON_GetArrayItem(kn, (int)a);
        if (!cJSON_IsString(k) || strcmp(k->valuestring, sw->axes[a].name))
            rc = NSIM_ERR(err, NSIM_ECONFIG, "%s: knobs[%zu]: expected \"%s\" "
                          "(--resume needs the same --set options, in the "
                          "same order)", path, a, sw->axes[a].name);
    }
    if (rc == NSIM_OK)
        cJSON_ArrayForEach(it, rs)
        {
            nsim_sweep_row r = {0};
            if ((rc = read_json_row(sw, path, i++, it, &r, err)) != NSIM_OK ||
                (rc = push_row(rows, n, &cap, &r, err)) != NSIM_OK)
                break;
        }
    cJSON_Delete(root);
    return rc;
}

int nsim_sweep_read(const nsim_sweep *sw, const char *path,
                    nsim_sweep_row **rows, size_t *n, nsim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *rows = NULL;
    *n = 0;
    NSIM_TRY(nsim_read_file(path, &text, &len, err));
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    int rc = *p == '{' ? read_json(sw, path, text, len, rows, n, err)
                       : read_csv(sw, path, text, rows, n, err);
    free(text);
    if (rc != NSIM_OK) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}
