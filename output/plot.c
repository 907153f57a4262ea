/* SPDX-License-Identifier: MIT
 *
 * plot.c - gnuplot pictures of sweep and compare results (see plot.h).
 */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sim/core/strbuf.h"
#include "sim/core/jread.h"
#include "sim/core/units.h"

#define MAX_KNOBS 16

typedef struct prow {
    uint32_t point;
    uint32_t file;
    const char *knob[MAX_KNOBS]; /* into the table's strings */
    uint64_t size;
    double busbw, algbw, time_us;
    double meas_busbw, err_pct; /* compare */
} prow;

typedef struct ptable {
    char *knobs[MAX_KNOBS];
    size_t nk;
    prow *rows;
    size_t n, cap;
    char **strs; /* owned strings */
    size_t nstrs, capstrs;
    char names[8][128]; /* per input file: a label */
    size_t nfiles;
} ptable;

static void table_free(ptable *t)
{
    for (size_t i = 0; i < t->nk; i++)
        free(t->knobs[i]);
    for (size_t i = 0; i < t->nstrs; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->rows);
    *t = (ptable){0};
}

static const char *keep(ptable *t, const char *s)
{
    if (t->nstrs == t->capstrs) {
        size_t c = t->capstrs ? t->capstrs * 2 : 256;
        char **g = realloc(t->strs, c * sizeof *g);
        if (g == NULL)
            return NULL;
        t->strs = g;
        t->capstrs = c;
    }
    char *d = strdup(s);
    if (d != NULL)
        t->strs[t->nstrs++] = d;
    return d;
}

static int push(ptable *t, const prow *r, nsim_err *err)
{
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 256;
        prow *g = realloc(t->rows, c * sizeof *g);
        if (g == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        t->rows = g;
        t->cap = c;
    }
    t->rows[t->n++] = *r;
    return NSIM_OK;
}

/* The knob names of one file; a second file must have the same ones. */
static int set_knobs(ptable *t, const char *path, char **names, size_t n,
                     nsim_err *err)
{
    if (n > MAX_KNOBS)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: more than %d knobs", path,
                        MAX_KNOBS);
    if (t->nfiles > 1) {
        int same = n == t->nk;
        for (size_t i = 0; same && i < n; i++)
            same = strcmp(names[i], t->knobs[i]) == 0;
        if (!same)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: its knobs differ from the first file's (files "
                            "overlaid must sweep the same knobs)", path);
        return NSIM_OK;
    }
    for (size_t i = 0; i < n; i++)
        if ((t->knobs[i] = strdup(names[i])) == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    t->nk = n;
    return NSIM_OK;
}

static int col(char **f, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i], name) == 0)
            return (int)i;
    return -1;
}

static size_t split(char *line, char **f, size_t max)
{
    size_t k = 0;
    char *save = NULL;
    for (char *p = strtok_r(line, ",\r", &save); p && k < max;
         p = strtok_r(NULL, ",\r", &save))
        f[k++] = p;
    return k;
}

static int read_sweep_csv(ptable *t, const char *path, char *text,
                          nsim_err *err)
{
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    char *h[64];
    size_t nh = line ? split(line, h, 64) : 0;
    int csize = col(h, nh, "size"), cb = col(h, nh, "busbw_GBps"),
        ca = col(h, nh, "algbw_GBps"), ct = col(h, nh, "time_us");
    if (nh == 0 || strcmp(h[0], "point") != 0 || csize < 1 || cb < 0 ||
        ca < 0 || ct < 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: line 1: expected a sweep's CSV header (point, "
                        "the knobs, size, ..., time_us, algbw_GBps, "
                        "busbw_GBps)", path);
    NSIM_TRY(set_knobs(t, path, h + 1, (size_t)csize - 1, err));
    size_t ln = 1;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *f[64];
        ln++;
        size_t k = split(line, f, 64);
        if (k != nh)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: line %zu: expected %zu fields, got %zu", path,
                            ln, nh, k);
        prow r = {0};
        char *end;
        r.point = (uint32_t)strtoul(f[0], &end, 10);
        r.file = (uint32_t)(t->nfiles - 1);
        r.size = strtoull(f[csize], NULL, 10);
        r.busbw = strtod(f[cb], &end);
        if (*end != '\0' || r.size == 0)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: line %zu: size and busbw_GBps: expected "
                            "numbers", path, ln);
        r.algbw = strtod(f[ca], NULL);
        r.time_us = strtod(f[ct], NULL);
        for (int i = 1; i < csize; i++)
            if ((r.knob[i - 1] = keep(t, f[i])) == NULL)
                return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        NSIM_TRY(push(t, &r, err));
    }
    return NSIM_OK;
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int read_sweep_json(ptable *t, const char *path, const cJSON *root,
                           nsim_err *err)
{
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(root, "knobs");
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rows"), *it;
    char *names[MAX_KNOBS];
    size_t nk = 0, i = 0;
    if (!cJSON_IsArray(kn) || !cJSON_IsArray(rs))
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: expected knobs and rows", path);
    cJSON_ArrayForEach(it, kn)
    {
        if (!cJSON_IsString(it) || nk == MAX_KNOBS)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: knobs: expected at most "
                            "%d names", path, MAX_KNOBS);
        names[nk++] = it->valuestring;
    }
    NSIM_TRY(set_knobs(t, path, names, nk, err));
    cJSON_ArrayForEach(it, rs)
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "knobs");
        prow r = {0};
        r.point = (uint32_t)jnum(it, "point", 0);
        r.file = (uint32_t)(t->nfiles - 1);
        r.size = (uint64_t)jnum(it, "size", 0);
        r.busbw = jnum(it, "busbw_GBps", NAN);
        r.algbw = jnum(it, "algbw_GBps", NAN);
        r.time_us = jnum(it, "time_us", NAN);
        if (r.size == 0 || isnan(r.busbw) || !cJSON_IsObject(k))
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: rows[%zu]: expected knobs, "
                            "size and busbw_GBps", path, i);
        for (size_t a = 0; a < nk; a++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, names[a]);
            if (!cJSON_IsString(v))
                return NSIM_ERR(err, NSIM_ECONFIG, "%s: rows[%zu].knobs.%s: "
                                "missing", path, i, names[a]);
            if ((r.knob[a] = keep(t, v->valuestring)) == NULL)
                return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        }
        NSIM_TRY(push(t, &r, err));
        i++;
    }
    return NSIM_OK;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A busbw of a compare row: "<who>_busbw_GBps" / "<who>_busbw", or an
 * object "<who>" with "busbw_GBps" / "busbw". */
static double side_busbw(const cJSON *row, const char *const *who)
{
    static const char *const sfx[] = {"_busbw_GBps", "_busbw", NULL};
    /* (flat keys first: "simulated_busbw", "sim_busbw_GBps") */
    char key[64];
    for (const char *const *w = who; *w; w++) {
        for (const char *const *s = sfx; *s; s++) {
            snprintf(key, sizeof key, "%s%s", *w, *s);
            double v = jnum(row, key, NAN);
            if (!isnan(v))
                return v;
        }
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(row, *w);
        if (cJSON_IsObject(o)) {
            double v = jnum(o, "busbw_GBps", NAN);
            return isnan(v) ? jnum(o, "busbw", NAN) : v;
        }
    }
    return NAN;
}

/* The rows of one comparison: "size" (or "bytes"), the simulated busbw
 * (simulated_busbw, sim_busbw_GBps, or an object "sim"/"simulated" with
 * busbw_GBps), the measured one (measured_busbw, meas_busbw_GBps, or an
 * object "measured"), and the error: "error" (simulated / measured - 1,
 * as ncclsim compare writes it), err_pct, or computed. Rows of a second
 * column (in-place next to out-of-place) are left out. */
static int read_compare_rows(ptable *t, const char *path, const cJSON *rs,
                             const char *where, nsim_err *err)
{
    static const char *const sim[] = {"simulated", "sim", NULL};
    static const char *const meas[] = {"measured", "meas", NULL};
    const cJSON *it;
    const char *column = NULL;
    size_t i = 0;
    cJSON_ArrayForEach(it, rs)
    {
        prow r = {0};
        const cJSON *colv = cJSON_GetObjectItemCaseSensitive(it, "column");
        if (cJSON_IsString(colv)) {
            if (column == NULL)
                column = colv->valuestring;
            else if (strcmp(column, colv->valuestring) != 0) {
                i++;
                continue;
            }
        }
        r.file = (uint32_t)(t->nfiles - 1);
        r.size = (uint64_t)jnum(it, "size", jnum(it, "bytes", 0));
        r.busbw = side_busbw(it, sim);
        r.meas_busbw = side_busbw(it, meas);
        double e = jnum(it, "error", NAN);
        r.err_pct = !isnan(e) ? 100 * e
                              : jnum(it, "err_pct", jnum(it, "error_pct", NAN));
        if (isnan(r.err_pct) && r.meas_busbw > 0)
            r.err_pct = 100 * (r.busbw - r.meas_busbw) / r.meas_busbw;
        if (r.size == 0 || isnan(r.busbw) || isnan(r.meas_busbw))
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: %srows[%zu]: expected size, simulated_busbw "
                            "and measured_busbw", path, where, i);
        NSIM_TRY(push(t, &r, err));
        i++;
    }
    return NSIM_OK;
}

/* `ncclsim compare --json` ("ncclsim-compare": "comparisons", each with
 * its "source" and "rows"; one series per comparison), or an object with
 * the rows at the top ("rows" or "sizes"). */
static int read_compare(ptable *t, const char *path, const cJSON *root,
                        nsim_err *err)
{
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(root, "comparisons");
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rows"), *c;
    if (cJSON_IsArray(cs)) {
        size_t k = 0;
        cJSON_ArrayForEach(c, cs)
        {
            char where[48], dup[512];
            const char *src = str_of(c, "source");
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "rows");
            if (k > 0) {
                if (t->nfiles == 8)
                    return NSIM_ERR(err, NSIM_EINVAL, "%s: at most 8 series",
                                    path);
                t->nfiles++;
            }
            if (src != NULL) {
                snprintf(dup, sizeof dup, "%s", src);
                snprintf(t->names[t->nfiles - 1], sizeof t->names[0], "%s",
                         basename(dup));
            }
            snprintf(where, sizeof where, "comparisons[%zu].", k);
            if (!cJSON_IsArray(r))
                return NSIM_ERR(err, NSIM_ECONFIG, "%s: %srows: expected an "
                                "array", path, where);
            NSIM_TRY(read_compare_rows(t, path, r, where, err));
            k++;
        }
        if (k == 0)
            return NSIM_ERR(err, NSIM_ECONFIG, "%s: comparisons: empty", path);
        return NSIM_OK;
    }
    if (!cJSON_IsArray(rs))
        rs = cJSON_GetObjectItemCaseSensitive(root, "sizes");
    if (!cJSON_IsArray(rs))
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: expected the JSON of ncclsim "
                        "compare --json (\"comparisons\" with \"rows\")",
                        path);
    return read_compare_rows(t, path, rs, "", err);
}

static int read_input(ptable *t, const char *path, int compare, nsim_err *err)
{
    char *text = NULL, dup[512];
    size_t len = 0;
    if (t->nfiles == 8)
        return NSIM_ERR(err, NSIM_EINVAL, "at most 8 input files");
    NSIM_TRY(nsim_read_file(path, &text, &len, err));
    snprintf(dup, sizeof dup, "%s", path);
    snprintf(t->names[t->nfiles++], sizeof t->names[0], "%s", basename(dup));
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    int rc;
    if (*p == '{') {
        cJSON *root = NULL;
        rc = nsim_json_parse(text, len, path, &root, err);
        if (rc == NSIM_OK) {
            const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
            int sweep = cJSON_IsString(fmt) &&
                        strcmp(fmt->valuestring, "ncclsim-sweep") == 0;
            if (compare)
                rc = read_compare(t, path, root, err);
            else if (sweep)
                rc = read_sweep_json(t, path, root, err);
            else
                rc = NSIM_ERR(err, NSIM_ECONFIG, "%s: format: expected "
                              "\"ncclsim-sweep\" (the JSON of ncclsim sweep; "
                              "--kind compare reads ncclsim compare --json)",
                              path);
        }
        cJSON_Delete(root);
    } else if (compare) {
        rc = NSIM_ERR(err, NSIM_ECONFIG, "%s: --kind compare reads the JSON of "
                      "ncclsim compare --json", path);
    } else {
        rc = read_sweep_csv(t, path, text, err);
    }
    free(text);
    return rc;
}

/* --where KNOB=VALUE: keep the rows that match all of them. */
static int apply_where(ptable *t, const nsim_plot_opts *o, nsim_err *err)
{
    for (size_t w = 0; w < o->nwhere; w++) {
        const char *eq = strchr(o->where[w], '=');
        size_t nl = eq ? (size_t)(eq - o->where[w]) : 0;
        int k = -1;
        for (size_t i = 0; eq && i < t->nk; i++)
            if (strlen(t->knobs[i]) == nl &&
                strncmp(t->knobs[i], o->where[w], nl) == 0)
                k = (int)i;
        if (k < 0)
            return NSIM_ERR(err, NSIM_EINVAL,
                            "--where '%s': expected KNOB=VALUE with a knob of "
                            "the results", o->where[w]);
        size_t m = 0;
        for (size_t i = 0; i < t->n; i++)
            if (strcmp(t->rows[i].knob[k], eq + 1) == 0)
                t->rows[m++] = t->rows[i];
        t->n = m;
    }
    if (t->n == 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "no rows to plot%s",
                        o->nwhere ? " (after --where)" : "");
    return NSIM_OK;
}

/* --- script text --- */

typedef nsim_strbuf gbuf;

static void gp(gbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);

static void gp(gbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nsim_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* A gnuplot single-quoted string ('' is a quote). */
static void gq(gbuf *b, const char *s)
{
    gp(b, "'");
    for (; *s; s++)
        if (*s == '\'')
            gp(b, "''");
        else if ((unsigned char)*s >= 0x20)
            gp(b, "%c", *s);
    gp(b, "'");
}

static int is_svg(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcmp(path + n - 4, ".svg") == 0;
}

static void terminal(gbuf *b, const nsim_plot_opts *o, const char *to,
                     unsigned w, unsigned h)
{
    w = o->width ? o->width : w;
    h = o->height ? o->height : h;
    if (is_svg(o->out))
        gp(b, "set terminal svg noenhanced size %u,%u dynamic background "
              "rgb 'white' font 'sans,11'\n", w, h);
    else
        gp(b, "set terminal pngcairo noenhanced size %u,%u font 'sans,10'\n",
           w, h);
    gp(b, "set output ");
    gq(b, to);
    gp(b, "\nset grid lc rgb '#d0d0d0'\nset border lc rgb '#404040'\n");
    /* colours that read on white (tableau 10) */
    static const char *const lc[8] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                      "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf"};
    for (int i = 0; i < 8; i++)
        gp(b, "set linetype %d lc rgb '%s'\n", i + 1, lc[i]);
}

static const char *metric_col(nsim_plot_metric m)
{
    return m == NSIM_METRIC_ALGBW ? "algbw (GB/s)"
           : m == NSIM_METRIC_TIME ? "time (us)"
                                   : "busbw (GB/s)";
}

static double metric(const prow *r, nsim_plot_metric m)
{
    return m == NSIM_METRIC_ALGBW ? r->algbw
           : m == NSIM_METRIC_TIME ? r->time_us
                                   : r->busbw;
}

static void size_axis(gbuf *b)
{
    gp(b, "set logscale x 2\nset format x '%%.0b %%BB'\n"
          "set xtics scale 0.5 font ',9'\nset xlabel 'message size'\n");
}

/* Knobs whose value differs between the rows. */
static size_t varying(const ptable *t, int *idx)
{
    size_t n = 0;
    for (size_t k = 0; k < t->nk; k++)
        for (size_t i = 1; i < t->n; i++)
            if (strcmp(t->rows[i].knob[k], t->rows[0].knob[k]) != 0) {
                idx[n++] = (int)k;
                break;
            }
    return n;
}

/* Short names for labels: the NCCL_IB_ / NCCL_ prefix goes. */
static const char *short_name(const char *k)
{
    if (strcmp(k, "NCCL_IB_QPS_PER_CONNECTION") == 0 ||
        strcmp(k, "qps_per_connection") == 0)
        return "QPs";
    if (strcmp(k, "nchannels") == 0)
        return "channels";
    if (strcmp(k, "channel_mode") == 0)
        return "mode";
    if (strncmp(k, "NCCL_IB_", 8) == 0)
        return k + 8;
    if (strncmp(k, "NCCL_", 5) == 0)
        return k + 5;
    return k;
}

static size_t value_index(const ptable *t, int k, const char *v,
                          const char **seen, size_t *nseen)
{
    (void)t;
    (void)k;
    for (size_t i = 0; i < *nseen; i++)
        if (strcmp(seen[i], v) == 0)
            return i;
    seen[*nseen] = v;
    return (*nseen)++;
}

static void title_of(gbuf *b, const ptable *t, const nsim_plot_opts *o,
                     const char *what, const int *var, size_t nv)
{
    gp(b, "set title ");
    if (o->title != NULL) {
        gq(b, o->title);
    } else {
        gbuf tt = {0};
        gp(&tt, "%s", what);
        size_t fixed = 0;
        for (size_t k = 0; k < t->nk; k++) {
            int v = 0;
            for (size_t i = 0; i < nv; i++)
                v |= var[i] == (int)k;
            if (!v)
                gp(&tt, "%s%s=%s", fixed++ ? ", " : " (", short_name(t->knobs[k]),
                   t->rows[0].knob[k]);
        }
        if (fixed)
            gp(&tt, ")");
        gq(b, tt.s ? tt.s : "");
        free(tt.s);
    }
    gp(b, "\n");
}

static void fmt_size(uint64_t size, char *sz, size_t len)
{
    if (size >= (1ull << 30) && size % (1ull << 30) == 0)
        snprintf(sz, len, "%llu GiB", (unsigned long long)(size >> 30));
    else if (size >= (1u << 20) && size % (1u << 20) == 0)
        snprintf(sz, len, "%llu MiB", (unsigned long long)(size >> 20));
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(sz, len, "%llu KiB", (unsigned long long)(size >> 10));
    else
        snprintf(sz, len, "%llu B", (unsigned long long)size);
}

static int script_curves(gbuf *b, ptable *t, const nsim_plot_opts *o,
                         const char *to)
{
    int var[MAX_KNOBS];
    size_t nv = varying(t, var), nseries = 0;
    const char *seen_a[4096], *seen_b[4096];
    size_t na = 0, nb = 0;
    terminal(b, o, to, 1000, 620);
    char what[320];
    snprintf(what, sizeof what, "%s against message size: %s",
             o->metric == NSIM_METRIC_TIME ? "time" :
             o->metric == NSIM_METRIC_ALGBW ? "algbw" : "busbw",
             t->nfiles > 1 ? "several sweeps" : t->names[0]);
    title_of(b, t, o, what, var, nv);
    size_axis(b);
    gp(b, "set ylabel '%s'\n", metric_col(o->metric));
    if (o->metric == NSIM_METRIC_TIME)
        gp(b, "set logscale y 10\n");
    else
        gp(b, "set yrange [0:*]\n");
    /* one datablock per configuration (file, point), in the file's order */
    gbuf plot = {0};
    uint64_t top = 0;
    size_t longest = 0;
    for (size_t i = 0; i < t->n; i++)
        top = t->rows[i].size > top ? t->rows[i].size : top;
    for (size_t i = 0; i < t->n;) {
        size_t j = i;
        while (j < t->n && t->rows[j].point == t->rows[i].point &&
               t->rows[j].file == t->rows[i].file)
            j++;
        gp(b, "$s%zu << EOD\n", nseries);
        for (size_t k = i; k < j; k++)
            gp(b, "%llu %.6g\n", (unsigned long long)t->rows[k].size,
               metric(&t->rows[k], o->metric));
        gp(b, "EOD\n");
        gbuf lab = {0};
        if (t->nfiles > 1)
            gp(&lab, "%s%s", t->names[t->rows[i].file], nv ? ": " : "");
        for (size_t v = 0; v < nv; v++)
            gp(&lab, "%s%s=%s", v ? " " : "", short_name(t->knobs[var[v]]),
               t->rows[i].knob[var[v]]);
        if (lab.s == NULL)
            gp(&lab, "%s", t->names[t->rows[i].file]);
        if (t->rows[j - 1].size < top) { /* a point that failed part-way */
            char sz[32];
            fmt_size(t->rows[j - 1].size, sz, sizeof sz);
            gp(&lab, " (stops at %s)", sz);
        }
        /* two knobs: colour by the last, dashes by the first */
        size_t color = nseries, dash = 0;
        if (nv >= 2) {
            color = value_index(t, var[nv - 1], t->rows[i].knob[var[nv - 1]],
                                seen_a, &na);
            dash = value_index(t, var[0], t->rows[i].knob[var[0]], seen_b, &nb);
        } else if (t->nfiles > 1 && nv == 1) {
            color = value_index(t, var[0], t->rows[i].knob[var[0]], seen_a, &na);
            dash = t->rows[i].file;
        }
        if (lab.s != NULL && strlen(lab.s) > longest)
            longest = strlen(lab.s);
        gp(&plot, "%s$s%zu using 1:2 with linespoints lw 1.6 lc %zu dt %zu "
                  "pt 7 ps 0.45 title ",
           nseries ? ", \\\n     " : "plot ", nseries, color % 8 + 1,
           dash % 5 + 1);
        gq(&plot, lab.s ? lab.s : "");
        free(lab.s);
        nseries++;
        i = j;
        if (na >= 4096 || nb >= 4096)
            break;
    }
    /* long labels go below the plot, short ones beside it */
    gp(b, "%s\n", longest > 30 ? "set key below font ',9' spacing 0.9"
                               : "set key outside right top font ',9' "
                                 "spacing 0.9");
    gp(b, "%s\n", plot.s ? plot.s : "");
    int oom = plot.oom;
    free(plot.s);
    return oom ? NSIM_ENOMEM : NSIM_OK;
}

static int knob_index(const ptable *t, const char *name)
{
    for (size_t k = 0; k < t->nk; k++)
        if (strcmp(t->knobs[k], name) == 0)
            return (int)k;
    return -1;
}

/* A knob value as a number to order by: a plain number, or a size,
 * time or bandwidth with its unit (1M, 5ms, 100Gb/s: a fault's knobs);
 * *kind tells which, so that only values of one kind compare as
 * numbers. 0 when it is none of them. */
static int value_number(const char *v, double *out, int *kind)
{
    char *end;
    const char *why;
    uint64_t size;
    nsim_time ps;
    *out = strtod(v, &end);
    if (end != v && *end == '\0') {
        *kind = 0;
        return 1;
    }
    if (nsim_units_parse_size(v, &size, &why) == NSIM_OK) {
        *out = (double)size;
        *kind = 0; /* a size is a count of bytes, as a plain number */
        return 1;
    }
    if (nsim_units_parse_time(v, &ps, &why) == NSIM_OK) {
        *out = (double)ps;
        *kind = 1;
        return 1;
    }
    *kind = 2;
    return nsim_units_parse_bw(v, out, &why) == NSIM_OK;
}

static int cmp_values(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    double dx, dy;
    int kx, ky;
    if (value_number(x, &dx, &kx) && value_number(y, &dy, &ky) && kx == ky)
        return dx < dy ? -1 : dx > dy;
    return strcmp(x, y);
}

static size_t distinct(const ptable *t, int k, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = 0;
        while (j < n && strcmp(out[j], t->rows[i].knob[k]) != 0)
            j++;
        if (j == n && n < max)
            out[n++] = t->rows[i].knob[k];
    }
    qsort(out, n, sizeof *out, cmp_values);
    return n;
}

static size_t find_value(const char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    return n;
}

static int script_heatmap(gbuf *b, ptable *t, const nsim_plot_opts *o,
                          const char *to, nsim_err *err)
{
    int kx = o->x ? knob_index(t, o->x) : -1, ky = o->y ? knob_index(t, o->y) : -1;
    if (kx < 0 || ky < 0 || kx == ky)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--kind heatmap: expected --x KNOB and --y KNOB, two "
                        "different knobs of the results (%s%s%s)",
                        t->nk ? "knobs:" : "no knobs", t->nk ? " " : "",
                        t->nk ? t->knobs[0] : "");
    uint64_t size = o->size;
    if (size == 0)
        for (size_t i = 0; i < t->n; i++)
            size = t->rows[i].size > size ? t->rows[i].size : size;
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].size == size)
            t->rows[m++] = t->rows[i];
    if (m == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "--size %llu: no rows of that size (sizes are "
                        "nccl-tests byte counts, as in the size column)",
                        (unsigned long long)size);
    t->n = m;
    const char *xs[256], *ys[256];
    size_t nx = distinct(t, kx, xs, 256), ny = distinct(t, ky, ys, 256);
    double *cell = calloc(nx * ny, sizeof *cell);
    unsigned char *have = calloc(nx * ny, 1);
    if (cell == NULL || have == NULL) {
        free(cell);
        free(have);
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        size_t x = find_value(xs, nx, t->rows[i].knob[kx]);
        size_t y = find_value(ys, ny, t->rows[i].knob[ky]);
        if (x == nx || y == ny)
            continue;
        if (have[y * nx + x]) {
            int var[MAX_KNOBS];
            size_t nv = varying(t, var);
            char others[256] = "";
            size_t len = 0;
            for (size_t v = 0; v < nv && len < 200; v++)
                if (var[v] != kx && var[v] != ky)
                    len += (size_t)snprintf(others + len, sizeof others - len,
                                            " %s", t->knobs[var[v]]);
            free(cell);
            free(have);
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "--kind heatmap: several rows for %s=%s %s=%s at "
                            "%llu bytes: fix the other knobs (%s ) with "
                            "--where KNOB=VALUE",
                            o->x, xs[x], o->y, ys[y],
                            (unsigned long long)size, others);
        }
        have[y * nx + x] = 1;
        double v = metric(&t->rows[i], o->metric);
        cell[y * nx + x] = v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    terminal(b, o, to, 140 + 90 * (unsigned)nx + 120, 140 + 60 * (unsigned)ny);
    int var[MAX_KNOBS] = {kx, ky};
    char what[320];
    char sz[32];
    fmt_size(size, sz, sizeof sz);
    snprintf(what, sizeof what, "%s at %s: %s", metric_col(o->metric), sz,
             t->names[0]);
    title_of(b, t, o, what, var, 2);
    gp(b, "$m << EOD\n");
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++)
            if (have[y * nx + x])
                gp(b, "%zu %zu %.6g\n", x, y, cell[y * nx + x]);
    gp(b, "EOD\n");
    gp(b, "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n", nx - 0.5, ny - 0.5);
    gp(b, "set xlabel ");
    gq(b, o->x);
    gp(b, "\nset ylabel ");
    gq(b, o->y);
    gp(b, "\nset xtics (");
    for (size_t x = 0; x < nx; x++) {
        gp(b, "%s", x ? ", " : "");
        gq(b, xs[x]);
        gp(b, " %zu", x);
    }
    gp(b, ") scale 0\nset ytics (");
    for (size_t y = 0; y < ny; y++) {
        gp(b, "%s", y ? ", " : "");
        gq(b, ys[y]);
        gp(b, " %zu", y);
    }
    gp(b, ") scale 0\nunset grid\nset tics out\n");
    if (hi <= lo)
        hi = lo + 1;
    gp(b, "set cbrange [%.6g:%.6g]\nset cblabel '%s'\n", lo, hi,
       metric_col(o->metric));
    /* viridis, light text on the dark half */
    gp(b, "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', "
          "3 '#5ec962', 4 '#fde725')\n");
    gp(b, "plot $m using 1:2:3 with image notitle, \\\n"
          "     $m using 1:2:(sprintf('%%.1f', $3)):($3 > %.6g ? 0 : "
          "0xffffff) with labels tc rgb variable font ',10' notitle\n",
       lo + 0.55 * (hi - lo));
    free(cell);
    free(have);
    return NSIM_OK;
}

static int script_compare(gbuf *b, ptable *t, const nsim_plot_opts *o,
                          const char *to)
{
    terminal(b, o, to, 1000, 720);
    for (size_t f = 0; f < t->nfiles; f++) {
        gp(b, "$c%zu << EOD\n", f);
        for (size_t i = 0; i < t->n; i++)
            if (t->rows[i].file == f)
                gp(b, "%llu %.6g %.6g %.6g\n",
                   (unsigned long long)t->rows[i].size, t->rows[i].busbw,
                   t->rows[i].meas_busbw, t->rows[i].err_pct);
        gp(b, "EOD\n");
    }
    gp(b, "set multiplot\nset lmargin 10\nset rmargin 4\n");
    size_axis(b);
    gp(b, "set size 1,0.66\nset origin 0,0.34\nunset xlabel\n"
          "set format x ''\nset ylabel 'busbw (GB/s)'\nset yrange [0:*]\n"
          "set key right bottom font ',9'\n");
    gp(b, "set title ");
    char tt[300];
    snprintf(tt, sizeof tt, "simulated vs measured busbw: %s",
             t->nfiles > 1 ? "several comparisons" : t->names[0]);
    gq(b, o->title ? o->title : tt);
    gp(b, "\nplot ");
    for (size_t f = 0; f < t->nfiles; f++) {
        char lab[200];
        snprintf(lab, sizeof lab, "%s%ssimulated", t->nfiles > 1 ? t->names[f] : "",
                 t->nfiles > 1 ? ": " : "");
        gp(b, "%s$c%zu using 1:2 with lines lw 2 lc %zu title ", f ? ", " : "",
           f, f % 8 + 1);
        gq(b, lab);
        snprintf(lab, sizeof lab, "%s%smeasured", t->nfiles > 1 ? t->names[f] : "",
                 t->nfiles > 1 ? ": " : "");
        gp(b, ", $c%zu using 1:3 with points pt 7 ps 0.8 lc %zu title ", f,
           f % 8 + 1);
        gq(b, lab);
    }
    gp(b, "\nunset title\nset size 1,0.34\nset origin 0,0\n"
          "set format x '%%.0b %%BB'\nset xlabel 'message size'\n"
          "set ylabel '(sim - meas) / meas (%%)'\nset yrange [*:*]\nunset key\n"
          "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead "
          "lc rgb '#808080'\nplot ");
    for (size_t f = 0; f < t->nfiles; f++)
        gp(b, "%s$c%zu using 1:4 with linespoints lw 1.5 pt 7 ps 0.5 lc %zu",
           f ? ", " : "", f, f % 8 + 1);
    gp(b, "\nunset multiplot\n");
    return NSIM_OK;
}

static int build_script(const char *const *inputs, size_t ninputs,
                        const nsim_plot_opts *o, const char *to, char **out,
                        nsim_err *err)
{
    ptable t = {0};
    gbuf b = {0};
    int rc = NSIM_OK;
    if (ninputs == 0)
        return NSIM_ERR(err, NSIM_EINVAL, "expected a results file");
    for (size_t i = 0; i < ninputs && rc == NSIM_OK; i++)
        rc = read_input(&t, inputs[i], o->kind == NSIM_PLOT_COMPARE, err);
    if (rc == NSIM_OK && o->kind != NSIM_PLOT_COMPARE)
        rc = apply_where(&t, o, err);
    if (rc == NSIM_OK) {
        gp(&b, "# ncclsim plot: gnuplot script\n");
        switch (o->kind) {
        case NSIM_PLOT_CURVES: rc = script_curves(&b, &t, o, to); break;
        case NSIM_PLOT_HEATMAP: rc = script_heatmap(&b, &t, o, to, err); break;
        case NSIM_PLOT_COMPARE: rc = script_compare(&b, &t, o, to); break;
        }
        if (rc == NSIM_ENOMEM || b.oom)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    table_free(&t);
    if (rc != NSIM_OK) {
        free(b.s);
        return rc;
    }
    *out = b.s;
    return NSIM_OK;
}

int nsim_plot_script(const char *const *inputs, size_t ninputs,
                     const nsim_plot_opts *o, const char *render_to,
                     char **out, nsim_err *err)
{
    return build_script(inputs, ninputs, o, render_to, out, err);
}

/* gnuplot reading the script on its stdin; its messages go to a pipe
 * and come back in the error. */
static int run_gnuplot(const char *script, nsim_err *err)
{
    int in[2], er[2];
    if (pipe(in) != 0)
        return NSIM_ERR(err, NSIM_EIO, "pipe: %s", strerror(errno));
    if (pipe(er) != 0) {
        close(in[0]);
        close(in[1]);
        return NSIM_ERR(err, NSIM_EIO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]); close(in[1]); close(er[0]); close(er[1]);
        return NSIM_ERR(err, NSIM_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(er[1], 2);
        dup2(er[1], 1);
        close(in[0]); close(in[1]); close(er[0]); close(er[1]);
        execlp("gnuplot", "gnuplot", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(er[1]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    size_t len = strlen(script), off = 0;
    while (off < len) {
        ssize_t k = write(in[1], script + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    close(in[1]);
    char msg[512];
    size_t m = 0;
    ssize_t k;
    while ((k = read(er[0], msg + m, sizeof msg - 1 - m)) > 0 ||
           (k < 0 && errno == EINTR))
        if (k > 0)
            m += (size_t)k;
    msg[m] = '\0';
    close(er[0]);
    signal(SIGPIPE, old);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "gnuplot is not installed (apt-get install "
                        "gnuplot-nox), or write the script with --script FILE");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        for (char *p = msg; *p; p++)
            if (*p == '\n')
                *p = ' ';
        return NSIM_ERR(err, NSIM_EIO, "gnuplot failed: %s",
                        m ? msg : "(no message)");
    }
    return NSIM_OK;
}

int nsim_plot(const char *const *inputs, size_t ninputs,
              const nsim_plot_opts *o, nsim_err *err)
{
    char tmp[4200], *text = NULL;
    if (o->script != NULL) {
        NSIM_TRY(build_script(inputs, ninputs, o, o->out, &text, err));
        int rc = strcmp(o->script, "-") == 0
                     ? (fputs(text, stdout) < 0 || fflush(stdout) != 0
                            ? NSIM_ERR(err, NSIM_EIO, "stdout: write failed")
                            : NSIM_OK)
                     : nsim_write_file_atomic(o->script, text, strlen(text),
                                              err);
        free(text);
        return rc;
    }
    if (strlen(o->out) > 4000)
        return NSIM_ERR(err, NSIM_EINVAL, "%s: name too long", o->out);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%s", o->out, (long)getpid(),
             is_svg(o->out) ? "svg" : "png");
    NSIM_TRY(build_script(inputs, ninputs, o, tmp, &text, err));
    int rc = run_gnuplot(text, err);
    free(text);
    if (rc == NSIM_OK && rename(tmp, o->out) != 0)
        rc = NSIM_ERR(err, NSIM_EIO, "%s: %s", o->out, strerror(errno));
    if (rc != NSIM_OK)
        unlink(tmp);
    return rc;
}
