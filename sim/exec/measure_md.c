/* SPDX-License-Identifier: MIT
 *
 * measure_md.c - markdown tables of sizes into measurement series (see
 * measure.h): a vendor's table of nccl-tests bus bandwidth ("| 65K | 2.70
 * |", the publisher's rounded size labels) and summaries of perftest runs
 * ("| Data Size (B) | ib_write_bw (MB/s) |", "| 16 KiB | 380.0 Gb/s |").
 *
 * Owns: finding tables whose first column is a size, the size labels
 * (bytes; KiB/MiB/GiB exact; a bare K/M/G or KB/MB/GB is a publisher's
 * rounded decimal label and stands for the nearest power of two), the
 * value units (GB/s, MB/s, Gb/s, Gbps, us; dimensionless x and % columns
 * are skipped; anything else is an error), and which tool a table is:
 * perftest where a column or the text just before the table names an
 * ib_* test, else a vendor busbw table where the text names NCCL.
 */
#include "measure_int.h"
#include "sim/plan/plan.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CELLS 16
#define LINE_LEN 4096

typedef struct mdcell {
    char s[128];
} mdcell;

static void trim_cell(char *dst, size_t len, const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w + 1 < len; i++)
        if (s[i] != '*' && s[i] != '`' && s[i] != '~')
            dst[w++] = s[i];
    dst[w] = '\0';
    char *a = dst;
    while (*a == ' ' || *a == '\t')
        a++;
    memmove(dst, a, strlen(a) + 1);
    w = strlen(dst);
    while (w > 0 && (dst[w - 1] == ' ' || dst[w - 1] == '\t'))
        dst[--w] = '\0';
}

/* Cells of "| a | b |"; -1 if the line is not a table row. */
static int md_cells(const char *line, mdcell *c, int max)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '|')
        return -1;
    p++;
    int n = 0;
    while (*p && n < max) {
        size_t len = strcspn(p, "|");
        if (p[len] != '|') {
            /* text after the last bar: a cell only if not blank */
            char tmp[128];
            trim_cell(tmp, sizeof tmp, p, len);
            if (tmp[0])
                snprintf(c[n++].s, sizeof c->s, "%s", tmp);
            break;
        }
        trim_cell(c[n].s, sizeof c->s, p, len);
        n++;
        p += len + 1;
    }
    return n;
}

static int is_separator(const mdcell *c, int n)
{
    for (int i = 0; i < n; i++)
        for (const char *s = c[i].s; *s; s++)
            if (*s != '-' && *s != ':' && *s != ' ')
                return 0;
    return n > 0;
}

static int has_ci(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (strncasecmp(s, w, n) == 0)
            return 1;
    return 0;
}

/* An ib_* test name in s ("ib_write_bw"), copied to out; 0 if none. */
static int test_in(const char *s, char *out, size_t len)
{
    for (const char *p = strstr(s, "ib_"); p; p = strstr(p + 1, "ib_")) {
        size_t n = 3;
        while (islower((unsigned char)p[n]) || p[n] == '_')
            n++;
        if (n > 6 && (strncmp(p + n - 3, "_bw", 3) == 0 ||
                      strncmp(p + n - 4, "_lat", 4) == 0)) {
            snprintf(out, len, "%.*s", (int)n, p);
            return 1;
        }
    }
    return 0;
}

static uint64_t nearest_pow2(double v)
{
    uint64_t p = 1;
    while ((double)p * 2 <= v)
        p *= 2;
    if (v - (double)p > (double)p * 2 - v)
        p *= 2;
    return p;
}

#define MAX_SIZE 1e18 /* bytes: past any buffer a benchmark sizes */

/* A size label; 0 ok, -1 not a size, -2 more than MAX_SIZE bytes. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0))
        return -1;
    if (v > MAX_SIZE)
        return -2;
    while (*end == ' ')
        end++;
    static const struct {
        const char *u;
        double mul;
        int exact;
    } units[] = {{"", 1, 1},         {"B", 1, 1},     {"KiB", 1024.0, 1},
                 {"MiB", 1048576.0, 1}, {"GiB", 1073741824.0, 1},
                 {"K", 1e3, 0},       {"M", 1e6, 0},   {"G", 1e9, 0},
                 {"KB", 1e3, 0},      {"MB", 1e6, 0},  {"GB", 1e9, 0}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcasecmp(end, units[i].u) == 0) {
            double b = v * units[i].mul;
            if (b > MAX_SIZE)
                return -2; /* and nearest_pow2 would run past 2^63 */
            if (units[i].exact) {
                if (b != floor(b))
                    return -1;
                *out = (uint64_t)b;
            } else {
                *out = nearest_pow2(b);
            }
            return 0;
        }
    return -1;
}

typedef enum vunit { U_NONE, U_GBS, U_MBS, U_GBITS, U_US, U_SKIP, U_BAD }
    vunit;

static vunit unit_of(const char *u)
{
    while (*u == ' ' || *u == '(')
        u++;
    char b[32];
    snprintf(b, sizeof b, "%.*s", (int)strcspn(u, ")"), u);
    size_t n = strlen(b);
    while (n > 0 && b[n - 1] == ' ')
        b[--n] = '\0';
    if (b[0] == '\0')
        return U_NONE;
    if (strcmp(b, "GB/s") == 0)
        return U_GBS;
    if (strcmp(b, "MB/s") == 0)
        return U_MBS;
    if (strcmp(b, "Gb/s") == 0 || strcasecmp(b, "Gbps") == 0)
        return U_GBITS;
    if (strcmp(b, "us") == 0 || strcmp(b, "usec") == 0)
        return U_US;
    if (strcmp(b, "x") == 0 || strcmp(b, "%") == 0)
        return U_SKIP;
    return U_BAD;
}

/* The unit a header names "name (MB/s)"; U_NONE if none. */
static vunit header_unit(const char *h, char *bad, size_t len)
{
    const char *p = strrchr(h, '(');
    if (p == NULL)
        return U_NONE;
    vunit u = unit_of(p);
    if (u == U_BAD) {
        snprintf(bad, len, "%s", p);
        return U_NONE; /* "(Bytes)", "(B)": words, not units */
    }
    return u;
}

typedef struct mdtable {
    mdcell head[MAX_CELLS];
    int ncol, line;
    char before[LINE_LEN]; /* the test named since the last table */
} mdtable;

typedef struct mdread {
    nsim_measure *m;
    const char *source;
    const char *text;
    size_t len;
    nsim_err *err;
    const nsim_measure_import_opts *o;
    char coll[24];
    int nccl, inplace; /* the text names NCCL / "in-place" */
} mdread;

static const char *coll_in(const char *text)
{
    static const struct {
        const char *w, *c;
    } names[] = {{"AllReduce", "allreduce"},         {"all_reduce", "allreduce"},
                 {"AllGather", "allgather"},         {"all_gather", "allgather"},
                 {"ReduceScatter", "reducescatter"}, {"reduce_scatter", "reducescatter"},
                 {"AllToAll", "alltoall"},           {"alltoall", "alltoall"},
                 {"Broadcast", "broadcast"},         {"SendRecv", "sendrecv"}};
    const char *best = NULL, *at = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *p = strstr(text, names[i].w);
        if (p != NULL && (at == NULL || p < at)) {
            at = p;
            best = names[i].c;
        }
    }
    return best;
}

/* One value cell: number and unit (the cell's or the header's). */
static int cell_value(const mdread *r, int line, const char *cell, vunit hu,
                      vunit *u, double *v)
{
    char *end;
    *v = strtod(cell, &end);
    if (end == cell)
        return 0; /* empty or words: no value */
    while (*end == ' ')
        end++;
    vunit cu = unit_of(end);
    if (cu == U_BAD)
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: value \"%s\": unknown "
                        "unit \"%s\" (expected GB/s, MB/s, Gb/s, Gbps or us)",
                        r->source, line, cell, end);
    *u = cu != U_NONE ? cu : hu;
    if (!(*v > 0) && *u != U_SKIP)
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: value \"%s\": expected "
                        "a value > 0", r->source, line, cell);
    return 1;
}

/* Reads the rows of table t starting at *pos into series; returns the
 * number of series added or < 0. */
static int read_table(mdread *r, mdtable *t, size_t *pos, int *lineno)
{
    char test[48] = "";
    int col_test[MAX_CELLS] = {0};
    int any_named = 0;
    char tests[MAX_CELLS][48];
    vunit hu[MAX_CELLS];
    char bad[64] = "";
    for (int j = 1; j < t->ncol; j++) {
        tests[j][0] = '\0';
        col_test[j] = test_in(t->head[j].s, tests[j], sizeof tests[j]);
        any_named |= col_test[j];
        hu[j] = header_unit(t->head[j].s, bad, sizeof bad);
    }
    test_in(t->before, test, sizeof test);
    int perftest = any_named || test[0];
    if (!perftest && !r->nccl)
        return 0;
    /* which columns become series: with named tests, the first column of
     * each test; else every column with a unit */
    /* series by index: a new series may move the others */
    size_t ser[MAX_CELLS];
    for (int j = 0; j < MAX_CELLS; j++)
        ser[j] = SIZE_MAX;
    size_t first = nsim_measure_nseries(r->m);
    int used[MAX_CELLS] = {0};
    for (int j = 1; j < t->ncol; j++) {
        if (any_named) {
            if (!col_test[j])
                continue;
            int dup = 0;
            for (int k = 1; k < j; k++)
                dup |= used[k] && strcmp(tests[k], tests[j]) == 0;
            if (dup)
                continue;
        }
        used[j] = 1;
    }
    char line[LINE_LEN];
    mdcell c[MAX_CELLS];
    int rows = 0;
    while (nsim_measure__next_line(r->text, r->len, pos, line, sizeof line)) {
        (*lineno)++;
        int n = md_cells(line, c, MAX_CELLS);
        if (n < 0)
            break;
        uint64_t size;
        char *remark = strchr(c[0].s, '(');
        if (remark != NULL) /* "128 KiB (= NCCL's step size)" */
            *remark = '\0';
        trim_cell(c[0].s, sizeof c[0].s, c[0].s, strlen(c[0].s));
        if (c[0].s[0] == '\0')
            continue;
        int sz = parse_size(c[0].s, &size);
        if (sz == -2) {
            nsim_measure__truncate(r->m, first);
            return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: size \"%s\": "
                            "expected at most %.0e bytes", r->source,
                            *lineno, c[0].s, MAX_SIZE);
        }
        if (sz != 0) {
            nsim_measure__truncate(r->m, first);
            return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: size \"%s\": "
                            "expected bytes, or a number with KiB, MiB, "
                            "GiB, K, M or G", r->source, *lineno, c[0].s);
        }
        for (int j = 1; j < n && j < t->ncol; j++) {
            if (!used[j])
                continue;
            vunit u = U_NONE;
            double v;
            char *rm = strchr(c[j].s, '(');
            if (rm != NULL) /* "392.1 Gb/s (line rate)" */
                *rm = '\0';
            trim_cell(c[j].s, sizeof c[j].s, c[j].s, strlen(c[j].s));
            int got = cell_value(r, *lineno, c[j].s, hu[j], &u, &v);
            if (got < 0) {
                nsim_measure__truncate(r->m, first);
                return got;
            }
            if (got == 0 || u == U_SKIP)
                continue;
            if (u == U_NONE) {
                nsim_measure__truncate(r->m, first);
                return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: column \"%s\": "
                                "no unit%s%s (expected GB/s, MB/s, Gb/s, "
                                "Gbps or us)", r->source, *lineno,
                                t->head[j].s, bad[0] ? ", not " : "", bad);
            }
            if (ser[j] == SIZE_MAX) {
                nsim_measure_series *s =
                    nsim_measure__series_new(r->m, r->source);
                if (s == NULL)
                    return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
                ser[j] = nsim_measure_nseries(r->m) - 1;
                s->line = *lineno;
                snprintf(s->label, sizeof s->label, "%.95s", t->head[j].s);
                if (perftest) {
                    snprintf(s->tool, sizeof s->tool, "perftest");
                    snprintf(s->test, sizeof s->test, "%s",
                             col_test[j] ? tests[j] : test);
                    s->ranks = 2;
                    s->hosts = 2;
                } else {
                    snprintf(s->tool, sizeof s->tool, "vendor-table");
                    const char *co = r->coll[0] ? r->coll : NULL;
                    nsim_coll cc;
                    if (co != NULL && nsim_coll_parse(co, &cc) == 0) {
                        snprintf(s->collective, sizeof s->collective, "%s",
                                 nsim_coll_name(cc));
                        snprintf(s->test, sizeof s->test, "%s",
                                 nsim_coll_test_name(cc));
                    }
                }
            }
            nsim_measure_row *row =
                nsim_measure__row_new(nsim_measure__series_mut(r->m, ser[j]));
            if (row == NULL)
                return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
            row->size = size;
            row->line = *lineno;
            nsim_measure_col *col =
                &row->col[!perftest && r->inplace ? NSIM_MEASURE_IP
                                                  : NSIM_MEASURE_OOP];
            col->present = 1;
            double mb = perftest ? 1048576.0 : 1e6; /* perftest: MiB */
            switch (u) {
            case U_GBS:
                col->algbw = perftest ? v : -1;
                col->busbw = v;
                break;
            case U_MBS:
                col->busbw = v * mb / 1e9;
                col->algbw = perftest ? col->busbw : -1;
                break;
            case U_GBITS:
                col->busbw = v / 8;
                col->algbw = perftest ? col->busbw : -1;
                break;
            case U_US:
                col->time_us = v;
                break;
            default:
                break;
            }
            rows++;
        }
    }
    return (int)(nsim_measure_nseries(r->m) - first);
}

int nsim_measure__read_markdown(nsim_measure *m, const char *text,
                                size_t len, const char *source,
                                const nsim_measure_import_opts *o,
                                nsim_err *err)
{
    mdread r = {m, source, text, len, err, o, "", 0, 0};
    const char *co = coll_in(text);
    if (co != NULL)
        snprintf(r.coll, sizeof r.coll, "%s", co);
    r.nccl = strstr(text, "NCCL") != NULL || has_ci(text, "busbw") ||
             has_ci(text, "bus bandwidth");
    r.inplace = has_ci(text, "in-place");
    char line[LINE_LEN];
    mdtable *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    size_t pos = 0;
    int lineno = 0, found = 0;
    mdcell c[MAX_CELLS];
    while (nsim_measure__next_line(text, len, &pos, line, sizeof line)) {
        lineno++;
        int n = md_cells(line, c, MAX_CELLS);
        if (n < 0) {
            char tmp[48];
            if (test_in(line, tmp, sizeof tmp))
                snprintf(t->before, sizeof t->before, "%s", tmp);
            continue;
        }
        /* a header row: the next line must be the separator */
        size_t save = pos;
        char sep[LINE_LEN];
        mdcell sc[MAX_CELLS];
        if (!nsim_measure__next_line(text, len, &pos, sep, sizeof sep) ||
            !is_separator(sc, md_cells(sep, sc, MAX_CELLS))) {
            pos = save;
            continue;
        }
        lineno++;
        if (!has_ci(c[0].s, "size")) {
            continue; /* not a table of sizes: its rows are skipped */
        }
        memcpy(t->head, c, sizeof c);
        t->ncol = n;
        t->line = lineno;
        int got = read_table(&r, t, &pos, &lineno);
        if (got < 0) {
            free(t);
            return got;
        }
        found += got;

    }
    free(t);
    return found > 0;
}
