/* SPDX-License-Identifier: MIT
 *
 * measure_nt.c - nccl-tests output and NCCL_DEBUG=INFO logs into
 * measurement series (see measure.h).
 *
 * Owns: the table scan (launcher tags removed anywhere by the ncclog
 * reader's rule; both row layouts: with root and #wrong, and the older one
 * with an error column; tables with both columns or one; a table per
 * "size count type ..." header or "Collective test starting" line; rows
 * cut short are an error, or dropped with a warning under "partial"), the
 * units header check, ranks and hosts from the "#  Rank" lines, -g from
 * "nGpus", and the facts of INFO lines: version, ranks, hosts, channels
 * (sim/topo/ncclog.c), the NCCL_* settings ("NCCL_X set by environment
 * to", "export NCCL_X=", "-x NCCL_X="), and per size what NCCL ran
 * ("N Bytes -> Algo A proto P", NCCL_DEBUG_SUBSYS=TUNING).
 */
#include "measure_int.h"
#include "sim/core/fileio.h"
#include "sim/plan/plan.h"
#include "sim/topo/ncclog.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A count as a header gives it ("nGpus 8", "Number of qps : 4"): a
 * positive integer up to INT32_MAX ended by a blank or the line's end;
 * anything else is -1, unknown (atoi read "z1" as 0, which the schema
 * refuses, and overflowed on long digit runs). */
static int32_t header_count(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno != 0 || v < 1 || v > INT32_MAX ||
        (*end != '\0' && !isspace((unsigned char)*end)))
        return -1;
    return (int32_t)v;
}

#define LINE_MAX_LEN 8192
#define MAX_TOK 32

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int is_uint(const char *s, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)s[0]))
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return 0;
    *out = v;
    return 1;
}

static int is_num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || v != v)
        return 0;
    *out = v;
    return 1;
}

static int split(char *s, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, " \t", &save); t != NULL && n < max;
         t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    return n;
}

/* The reading state of one file. */
typedef struct ntread {
    nsim_measure *m;
    const char *source;
    const nsim_measure_import_opts *o;
    nsim_err *err;
    nsim_measure_series *cur; /* the table being read, NULL between */
    char test[48];            /* the collective's binary name */
    int inplace_only;         /* the header names only "in-place" */
    int gpus;                 /* nGpus of the header, -1 */
    int line;
    int rows;                 /* rows read in all tables */
    int header_line;          /* of the last "size count type" header */
    size_t first;             /* series of this file start here */
    /* the "#  Rank" lines */
    int ranks;
    char hosts[64][64];
    int nhosts;
} ntread;

static void warn(ntread *r, const char *fmt, ...) NSIM_PRINTF(2, 3);
static void warn(ntread *r, const char *fmt, ...)
{
    if (r->o == NULL || r->o->warn == NULL)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->o->warn(r->o->warn_ctx, msg);
}

static int cut_row(ntread *r, int n, const char *why)
{
    if (r->o != NULL && r->o->partial) {
        warn(r, "%s:%d: row cut short (%d fields%s%s): dropped", r->source,
             r->line, n, why[0] ? ", " : "", why);
        return NSIM_OK;
    }
    return NSIM_ERR(r->err, NSIM_ECONFIG,
                    "%s:%d: truncated table: the row has %d fields%s%s, "
                    "expected size count type redop [root] time algbw busbw "
                    "#wrong (and the in-place four); --partial drops such "
                    "rows", r->source, r->line, n, why[0] ? ": " : "", why);
}

static int read_half(ntread *r, char **t, nsim_measure_col *c)
{
    double v[3];
    for (int i = 0; i < 3; i++)
        if (!is_num(t[i], &v[i]))
            return 0;
    if (!(v[0] > 0))
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: time %s us: expected "
                        "a time > 0", r->source, r->line, t[0]);
    if (v[1] < 0 || v[2] < 0)
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: negative bandwidth "
                        "%s / %s GB/s", r->source, r->line, t[1], t[2]);
    c->present = 1;
    c->time_us = v[0];
    c->algbw = v[1];
    c->busbw = v[2];
    uint64_t w;
    c->wrong = is_uint(t[3], &w) ? (int64_t)w : -1; /* N/A, 5e-07 */
    return 1;
}

static int new_series(ntread *r)
{
    nsim_measure_series *s = nsim_measure__series_new(r->m, r->source);
    if (s == NULL)
        return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
    snprintf(s->tool, sizeof s->tool, "nccl-tests");
    snprintf(s->test, sizeof s->test, "%s", r->test);
    nsim_coll c;
    if (r->test[0] && nsim_coll_parse(r->test, &c) == 0)
        snprintf(s->collective, sizeof s->collective, "%s",
                 nsim_coll_name(c));
    s->line = r->line;
    s->gpus_per_thread = r->gpus;
    r->cur = s;
    return NSIM_OK;
}

static int on_row(ntread *r, char **t, int n)
{
    nsim_measure_row row;
    memset(&row, 0, sizeof row);
    if (!isalpha((unsigned char)t[2][0]) || !isalpha((unsigned char)t[3][0]))
        return NSIM_OK;
    is_uint(t[0], &row.size);
    is_uint(t[1], &row.count);
    int k = 4;
    long root = -1;
    if (n == 9 || n == 13) {
        char *end;
        root = strtol(t[4], &end, 10);
        if (*end != '\0')
            return cut_row(r, n, "no root column");
        k = 5;
    } else if (n != 8 && n != 12) {
        return cut_row(r, n, "");
    }
    nsim_measure_col c[2];
    memset(c, 0, sizeof c);
    int rc = read_half(r, t + k, &c[0]);
    if (rc == 1 && n - k == 8)
        rc = read_half(r, t + k + 4, &c[1]);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return cut_row(r, n, "a value is not a number");
    r->rows++;
    if (row.size == 0)
        return NSIM_OK; /* nothing moved: count rounded to 0 */
    if (r->cur == NULL)
        NSIM_TRY(new_series(r));
    nsim_measure_series *s = r->cur;
    if (s->nrows == 0) {
        snprintf(s->dtype, sizeof s->dtype, "%s", t[2]);
        snprintf(s->redop, sizeof s->redop, "%s", t[3]);
        s->root = (int32_t)root;
        s->line = r->line;
    }
    nsim_measure_row *p = nsim_measure__row_new(s);
    if (p == NULL)
        return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
    p->size = row.size;
    p->count = row.count;
    p->line = r->line;
    if (n - k == 8) {
        p->col[0] = c[0];
        p->col[1] = c[1];
    } else {
        p->col[r->inplace_only ? 1 : 0] = c[0];
    }
    return NSIM_OK;
}

/* "#  (B)  (elements)  (us)  (GB/s)  (GB/s)": units nccl-tests prints. */
static int on_units(ntread *r, char **t, int n)
{
    static const char *const known[] = {"(B)", "(elements)", "(us)",
                                        "(GB/s)", NULL};
    for (int i = 0; i < n; i++) {
        if (t[i][0] != '(')
            continue;
        int ok = 0;
        for (int k = 0; known[k]; k++)
            ok |= strcmp(t[i], known[k]) == 0;
        if (!ok)
            return NSIM_ERR(r->err, NSIM_ECONFIG,
                            "%s:%d: unit %s: expected nccl-tests' (B), "
                            "(elements), (us) and (GB/s)", r->source,
                            r->line, t[i]);
    }
    return NSIM_OK;
}

static void on_rank(ntread *r, const char *m)
{
    /* "Rank  3 Group  0 Pid 291004 on    node005 device  3 [0xc0] ..." */
    const char *on = strstr(m, " on ");
    r->ranks++;
    if (on == NULL)
        return;
    on += 4;
    while (*on == ' ')
        on++;
    char host[64];
    size_t len = strcspn(on, " \t");
    if (len == 0 || len >= sizeof host)
        return;
    memcpy(host, on, len);
    host[len] = '\0';
    for (int i = 0; i < r->nhosts; i++)
        if (strcmp(r->hosts[i], host) == 0)
            return;
    if (r->nhosts < 64)
        memcpy(r->hosts[r->nhosts++], host, len + 1);
}

/* The column-group line: only "out-of-place" and "in-place". */
static int column_words(const char *m)
{
    int any = 0;
    while (*m) {
        while (*m == ' ' || *m == '\t' || *m == '#')
            m++;
        if (*m == '\0')
            break;
        if (starts(m, "out-of-place"))
            m += 12;
        else if (starts(m, "in-place"))
            m += 8;
        else
            return 0;
        any = 1;
    }
    return any;
}

static int on_line(ntread *r, char *s)
{
    if (strstr(s, " NCCL INFO ") != NULL || strstr(s, " NCCL WARN ") != NULL)
        return NSIM_OK;
    nsim_ncclog_strip_launcher(s);
    char *t[MAX_TOK];
    char *m = s;
    while (*m == ' ' || *m == '\t')
        m++;
    int hash = *m == '#';
    if (hash) {
        m++;
        while (*m == ' ')
            m++;
        if (starts(m, "Collective test starting: ")) {
            snprintf(r->test, sizeof r->test, "%.*s",
                     (int)strcspn(m + 26, " \r\n"), m + 26);
            r->cur = NULL;
            return NSIM_OK;
        }
        if (starts(m, "Collective test concluded")) {
            r->cur = NULL;
            return NSIM_OK;
        }
        if (starts(m, "Rank ") && strstr(m, " Group ") != NULL) {
            on_rank(r, m);
            return NSIM_OK;
        }
        if (starts(m, "nThread ")) {
            const char *g = strstr(m, "nGpus ");
            if (g != NULL)
                r->gpus = header_count(g + 6);
            return NSIM_OK;
        }
    }
    if (column_words(m)) {
        r->inplace_only = strstr(m, "in-place") && !strstr(m, "out-of-place");
        r->cur = NULL;
        return NSIM_OK;
    }
    int n = split(m, t, MAX_TOK);
    if (n >= 3 && strcmp(t[0], "size") == 0 && strcmp(t[1], "count") == 0) {
        r->cur = NULL; /* a new table */
        r->header_line = r->line;
        return NSIM_OK;
    }
    if (n >= 2 && strcmp(t[0], "(B)") == 0)
        return on_units(r, t, n);
    if (hash)
        return NSIM_OK;
    for (int k = 0; k < n && r->test[0] == '\0'; k++) {
        size_t len = strlen(t[k]);
        const char *b = strrchr(t[k], '/');
        if (len > 5 && strcmp(t[k] + len - 5, "_perf") == 0)
            snprintf(r->test, sizeof r->test, "%s", b ? b + 1 : t[k]);
    }
    uint64_t a, b;
    if (n >= 4 && is_uint(t[0], &a) && is_uint(t[1], &b))
        return on_row(r, t, n);
    return NSIM_OK;
}

/* Tables of tools that look numeric but are not nccl-tests. */
static int other_tool(const char *s, const char **name)
{
    static const struct {
        const char *sig, *name;
    } tools[] = {{"# OSU MPI", "OSU micro-benchmarks"},
                 {"Intel(R) MPI Benchmarks", "Intel MPI Benchmarks"},
                 {"iperf", "iperf"},
                 {"[ ID] Interval", "iperf"},
                 {"#bytes #iterations", "perftest"}};
    for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
        if (strstr(s, tools[i].sig) != NULL) {
            *name = tools[i].name;
            return 1;
        }
    return 0;
}

int nsim_measure__read_nccl_tests(nsim_measure *m, const char *text,
                                  size_t len, const char *source,
                                  const nsim_measure_import_opts *o,
                                  nsim_err *err)
{
    ntread r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.source = source;
    r.o = o;
    r.err = err;
    r.gpus = -1;
    r.first = nsim_measure_nseries(m);
    char *buf = malloc(LINE_MAX_LEN);
    if (buf == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    size_t pos = 0;
    int rc = NSIM_OK, other_line = 0;
    const char *other = NULL;
    while (rc == NSIM_OK &&
           nsim_measure__next_line(text, len, &pos, buf, LINE_MAX_LEN)) {
        r.line++;
        if (other == NULL && other_tool(buf, &other))
            other_line = r.line;
        rc = on_line(&r, buf);
    }
    free(buf);
    if (rc != NSIM_OK) {
        nsim_measure__truncate(m, r.first);
        return rc;
    }
    if (r.rows == 0 && other != NULL && strcmp(other, "perftest") != 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: a table of %s, not "
                        "nccl-tests: ncclsim reads nccl-tests, perftest, "
                        "NCCL_DEBUG=INFO logs and markdown tables of sizes",
                        source, other_line, other);
    if (r.rows == 0 && r.header_line > 0)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: truncated table: an "
                        "nccl-tests header and no rows", source,
                        r.header_line);
    for (size_t i = r.first; i < nsim_measure_nseries(m); i++) {
        nsim_measure_series *s = nsim_measure__series_mut(m, i);
        if (r.ranks > 0 && s->ranks < 0)
            s->ranks = r.ranks;
        if (r.nhosts > 0 && s->hosts < 0)
            s->hosts = r.nhosts;
    }
    return r.rows > 0 || nsim_measure_nseries(m) > r.first;
}

/* ---- INFO facts ----------------------------------------------------------- */

static int add_env(nsim_measure_logfacts *f, const char *k, size_t kl,
                   const char *v, size_t vl)
{
    if (kl >= sizeof f->env[0].key || vl >= sizeof f->env[0].value ||
        vl == 0)
        return 0;
    for (size_t i = 0; i < f->nenv; i++)
        if (strncmp(f->env[i].key, k, kl) == 0 && f->env[i].key[kl] == '\0')
            return 0; /* first setting wins */
    nsim_measure_env *e = realloc(f->env, (f->nenv + 1) * sizeof *e);
    if (e == NULL)
        return -1;
    f->env = e;
    e = &f->env[f->nenv++];
    memcpy(e->key, k, kl);
    e->key[kl] = '\0';
    memcpy(e->value, v, vl);
    e->value[vl] = '\0';
    return 0;
}

static size_t env_name_len(const char *s)
{
    size_t n = 5; /* "NCCL_" */
    while (isupper((unsigned char)s[n]) || isdigit((unsigned char)s[n]) ||
           s[n] == '_')
        n++;
    return n;
}

/* "NCCL_X=V" anywhere (export, mpirun -x, env dumps, lists). */
static int scan_env(nsim_measure_logfacts *f, const char *s)
{
    for (const char *p = strstr(s, "NCCL_"); p; p = strstr(p + 1, "NCCL_")) {
        if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        size_t kl = env_name_len(p);
        if (kl <= 5 || p[kl] != '=')
            continue;
        const char *v = p + kl + 1;
        size_t vl = strcspn(v, " \t\"'`;");
        while (vl > 0 && (v[vl - 1] == ',' || v[vl - 1] == '.'))
            vl--;
        if (add_env(f, p, kl, v, vl) < 0)
            return -1;
    }
    return 0;
}

static const char *const nccl_algos[] = {"Tree", "Ring", "CollNetDirect",
                                         "CollNetChain", "NVLS", "NVLSTree",
                                         "PAT"};
static const char *const nccl_protos[] = {"LL", "LL128", "Simple"};

static int on_info(nsim_measure_logfacts *f, const char *m)
{
    /* "NCCL_BUFFSIZE set by environment to 8388608." */
    const char *e = strstr(m, " set by environment to ");
    if (starts(m, "NCCL_") && e != NULL) {
        size_t kl = env_name_len(m);
        if (m + kl == e) {
            const char *v = e + 23;
            size_t vl = strcspn(v, " \t\r\n");
            if (vl > 0 && v[vl - 1] == '.')
                vl--;
            return add_env(f, m, kl, v, vl);
        }
    }
    /* "  33554432 Bytes -> Algo 1 proto 2 time 123.4" */
    unsigned long long bytes;
    int a, p;
    const char *b = strstr(m, " Bytes -> Algo ");
    if (b != NULL &&
        sscanf(m, "%llu Bytes -> Algo %d proto %d", &bytes, &a, &p) == 3 &&
        a >= 0 && a < 7 && p >= 0 && p < 3) {
        for (size_t i = 0; i < f->nalgo; i++)
            if (f->algo[i].bytes == bytes)
                return 0;
        struct nsim_measure_algo *x =
            realloc(f->algo, (f->nalgo + 1) * sizeof *x);
        if (x == NULL)
            return -1;
        f->algo = x;
        x = &f->algo[f->nalgo++];
        x->bytes = bytes;
        snprintf(x->algo, sizeof x->algo, "%s", nccl_algos[a]);
        snprintf(x->proto, sizeof x->proto, "%s", nccl_protos[p]);
    }
    return 0;
}

int nsim_measure__log_facts(const char *text, size_t len, const char *source,
                            nsim_measure_logfacts *f, nsim_err *err)
{
    memset(f, 0, sizeof *f);
    f->ranks = f->hosts = f->channels = -1;
    snprintf(f->source, sizeof f->source, "%s", source);
    char *buf = malloc(LINE_MAX_LEN);
    if (buf == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    size_t pos = 0;
    int bad = 0;
    while (!bad && nsim_measure__next_line(text, len, &pos, buf,
                                           LINE_MAX_LEN)) {
        const char *info = strstr(buf, " NCCL INFO ");
        if (info != NULL) {
            f->any = 1;
            bad = on_info(f, info + 11) < 0;
            continue;
        }
        bad = scan_env(f, buf) < 0;
        /* nccl-tests' header: "nccl-library=22902" */
        const char *lib = strstr(buf, "nccl-library=");
        const char *ver = strstr(buf, "NCCL version ");
        if (ver != NULL && f->version[0] == '\0')
            snprintf(f->version, sizeof f->version, "%.*s",
                     (int)strcspn(ver + 13, " \r\n"), ver + 13);
        else if (lib != NULL && f->version[0] == '\0') {
            long v = atol(lib + 13);
            if (v > 10000)
                snprintf(f->version, sizeof f->version, "%ld.%ld.%ld",
                         v / 10000, v % 10000 / 100, v % 100);
        }
    }
    free(buf);
    if (bad)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    if (!f->any)
        return NSIM_OK;
    nsim_ncclog *l = NULL;
    NSIM_TRY(nsim_ncclog_parse(text, len, &l, err));
    const nsim_log_info *i = nsim_ncclog_info(l);
    if (i->version[0])
        snprintf(f->version, sizeof f->version, "%s", i->version);
    f->ranks = i->nranks;
    f->hosts = i->nnodes;
    /* "0 coll channels" says nothing a run could have used: unknown */
    f->channels = nsim_ncclog_nrings(l) > 0 ? (int32_t)nsim_ncclog_nrings(l)
                  : i->coll_channels > 0    ? i->coll_channels
                                            : -1;
    nsim_ncclog_destroy(l);
    return NSIM_OK;
}

void nsim_measure__log_facts_free(nsim_measure_logfacts *f)
{
    free(f->env);
    free(f->algo);
    f->env = NULL;
    f->algo = NULL;
}

int nsim_measure__attach_log(nsim_measure_series *s, const char *path,
                             nsim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    NSIM_TRY(nsim_read_file(path, &text, &len, err));
    nsim_measure_logfacts f;
    int rc = nsim_measure__log_facts(text, len, path, &f, err);
    free(text);
    if (rc == NSIM_OK && f.any && nsim_measure__apply_facts(s, &f) < 0)
        rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    nsim_measure__log_facts_free(&f);
    return rc;
}

int nsim_measure__apply_facts(nsim_measure_series *s,
                              const nsim_measure_logfacts *f)
{
    if (strcmp(s->tool, "perftest") == 0)
        return 0;
    if (s->ranks < 0 && f->ranks > 0)
        s->ranks = f->ranks;
    if (s->hosts < 0 && f->hosts > 0)
        s->hosts = f->hosts;
    if (s->nccl_version[0] == '\0')
        snprintf(s->nccl_version, sizeof s->nccl_version, "%s", f->version);
    if (f->any && s->log[0] == '\0') {
        snprintf(s->log, sizeof s->log, "%s", f->source);
        s->log_channels = f->channels;
    }
    for (size_t i = 0; i < f->nenv; i++)
        if (nsim_measure_env_get(s, f->env[i].key) == NULL &&
            nsim_measure__env_set(s, f->env[i].key, f->env[i].value) < 0)
            return -1;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t k = 0; k < f->nalgo; k++)
            if (f->algo[k].bytes == s->rows[i].size &&
                s->rows[i].algo[0] == '\0') {
                snprintf(s->rows[i].algo, sizeof s->rows[i].algo, "%s",
                         f->algo[k].algo);
                snprintf(s->rows[i].proto, sizeof s->rows[i].proto, "%s",
                         f->algo[k].proto);
            }
    return 0;
}
