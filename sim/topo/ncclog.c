/* SPDX-License-Identifier: MIT
 *
 * ncclog.c - NCCL_DEBUG=INFO log and nccl-tests output reader (see
 * ncclog.h). Each line is either an INFO line (everything after
 * " NCCL INFO " is the message) or, once launcher prefixes are gone, a
 * candidate nccl-tests line. Parsers are small and total: a line that
 * does not match is skipped.
 */
#include "ncclog.h"
#include "sim/core/jread.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 24
#define MAX_LINE 8192

/* A growable array of elem-sized items. */
typedef struct vec {
    void *p;
    size_t n, cap;
} vec;

struct nsim_ncclog {
    nsim_log_info info;
    nsim_nt_info tests;
    vec ranks, rings, trees, conns, nics, rows, ring_ranks;
    vec ring_first; /* size_t per ring: its first index in ring_ranks */
    int line;
    int oom;
};

static void *vec_push(nsim_ncclog *l, vec *v, size_t elem)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *p = realloc(v->p, cap * elem);
        if (p == NULL) {
            l->oom = 1;
            return NULL;
        }
        v->p = p;
        v->cap = cap;
    }
    void *e = (char *)v->p + v->n++ * elem;
    memset(e, 0, elem);
    return e;
}

static int starts(const char *s, const char *pre)
{
    return strncmp(s, pre, strlen(pre)) == 0;
}

/* Consumes lit at *s if it is there (never past the string's end). */
static int eat(const char **s, const char *lit)
{
    if (!starts(*s, lit))
        return 0;
    *s += strlen(lit);
    return 1;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Reads a decimal integer (optionally signed) at *s; 0 if none. */
static int read_long(const char **s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno != 0)
        return 0;
    *out = v;
    *s = end;
    return 1;
}

static void copy_word(char *dst, size_t len, const char *s, const char *stop)
{
    size_t n = strcspn(s, stop);
    if (n >= len)
        n = len - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* ---- INFO messages ------------------------------------------------------ */

static nsim_log_rank *rank_rec(nsim_ncclog *l, long rank)
{
    nsim_log_rank *r = l->ranks.p;
    for (size_t i = 0; i < l->ranks.n; i++)
        if (r[i].rank == rank)
            return &r[i];
    nsim_log_rank *n = vec_push(l, &l->ranks, sizeof *n);
    if (n != NULL) {
        n->rank = (int32_t)rank;
        n->nranks = n->nnodes = n->local_ranks = n->local_rank = -1;
        n->cuda_dev = -1;
    }
    return n;
}

static void on_comm(nsim_ncclog *l, const char *m, const char *host)
{
    int rank, nr, nn, lr, lrank;
    if (sscanf(m, "comm %*s rank %d nRanks %d nNodes %d localRanks %d "
                  "localRank %d", &rank, &nr, &nn, &lr, &lrank) != 5)
        return;
    nsim_log_rank *r = rank_rec(l, rank);
    if (r == NULL)
        return;
    r->nranks = nr;
    r->nnodes = nn;
    r->local_ranks = lr;
    r->local_rank = lrank;
    snprintf(r->host, sizeof r->host, "%s", host);
    l->info.nranks = nr;
    l->info.nnodes = nn;
    if (lr > l->info.local_ranks)
        l->info.local_ranks = lr;
}

static void on_init_rank(nsim_ncclog *l, const char *m, const char *host)
{
    int rank, nr, dev;
    char busid[24] = "";
    const char *p = strstr(m, "ncclCommInitRank comm ");
    if (p == NULL || sscanf(p, "ncclCommInitRank comm %*s rank %d nranks %d "
                               "cudaDev %d", &rank, &nr, &dev) != 3)
        return;
    const char *b = strstr(p, " busId ");
    if (b != NULL)
        copy_word(busid, sizeof busid, b + 7, " ");
    nsim_log_rank *r = rank_rec(l, rank);
    if (r == NULL)
        return;
    r->cuda_dev = dev;
    if (r->nranks < 0)
        r->nranks = nr;
    snprintf(r->busid, sizeof r->busid, "%s", busid);
    if (r->host[0] == '\0')
        snprintf(r->host, sizeof r->host, "%s", host);
    if (l->info.nranks < 0)
        l->info.nranks = nr;
}

/* "Channel 00/16 :    0   7   6 ..." (rank 0 prints one per channel). */
static void on_ring(nsim_ncclog *l, long ch, long nch, const char *s)
{
    nsim_log_ring *rings = l->rings.p;
    for (size_t i = 0; i < l->rings.n; i++)
        if (rings[i].channel == (uint32_t)ch)
            return;
    size_t *first = vec_push(l, &l->ring_first, sizeof *first);
    nsim_log_ring *r = first ? vec_push(l, &l->rings, sizeof *r) : NULL;
    if (r == NULL)
        return;
    *first = l->ring_ranks.n; /* r->ranks is set once the array is still */
    r->channel = (uint32_t)ch;
    r->nchannels = (uint32_t)nch;
    r->line = l->line;
    long v;
    for (s = skip_ws(s); *s; s = skip_ws(s)) {
        if (starts(s, "...")) {
            r->truncated = 1;
            break;
        }
        if (!read_long(&s, &v) || v < 0)
            break;
        uint32_t *x = vec_push(l, &l->ring_ranks, sizeof *x);
        if (x == NULL)
            return;
        *x = (uint32_t)v;
        r->nranks++;
    }
}

/* "0[0] -> 1[1] [send] via NET/IB/3(6)/GDRDMA" after "Channel cc/k : ". */
static void on_conn(nsim_ncclog *l, long ch, long conn, const char *s)
{
    long a, ad = -1, b, bd = -1;
    s = skip_ws(s);
    if (!read_long(&s, &a))
        return;
    if (*s == '[' && (s++, read_long(&s, &ad)) && *s == ']')
        s++;
    s = skip_ws(s);
    if (!starts(s, "->"))
        return;
    s = skip_ws(s + 2);
    if (!read_long(&s, &b))
        return;
    if (*s == '[' && (s++, read_long(&s, &bd)) && *s == ']')
        s++;
    const char *via = strstr(s, " via ");
    if (via == NULL)
        return;
    nsim_log_conn *c = vec_push(l, &l->conns, sizeof *c);
    if (c == NULL)
        return;
    *c = (nsim_log_conn){(uint32_t)ch, (uint32_t)(conn < 0 ? 0 : conn),
                         (int32_t)a, (int32_t)b, (int32_t)ad, (int32_t)bd,
                         strstr(s, "[send]")      ? NSIM_LOG_SEND
                         : strstr(s, "[receive]") ? NSIM_LOG_RECV
                                                  : NSIM_LOG_P2P,
                         "", "", -1, -1, 0, l->line};
    via += 5;
    copy_word(c->transport, sizeof c->transport, via, "/ \r\n");
    const char *d = via + strcspn(via, "/");
    copy_word(c->detail, sizeof c->detail, *d ? d + 1 : d, "\r\n");
    if (strcmp(c->transport, "NET") != 0 || *d == '\0')
        return;
    const char *p = d + 1 + strcspn(d + 1, "/"); /* past the plugin */
    long v;
    if (*p == '/' && (p++, read_long(&p, &v))) {
        c->net_dev = (int32_t)v;
        if (*p == '(' && (p++, read_long(&p, &v)))
            c->proxy = (int32_t)v;
    }
    c->gdr = strstr(p, "GDRDMA") != NULL;
}

static void on_channel(nsim_ncclog *l, const char *m)
{
    const char *s = m + 8; /* past "Channel " */
    long ch, n = -1;
    if (!read_long(&s, &ch) || ch < 0)
        return;
    if (*s == '/' && (s++, !read_long(&s, &n)))
        return;
    s = skip_ws(s);
    if (*s != ':')
        return;
    s++;
    if (strstr(s, "->") != NULL)
        on_conn(l, ch, n, s);
    else if (n > 0)
        on_ring(l, ch, n, s);
}

/* "Trees [0] 1/-1/-1->0->-1 [1] ..." */
static void on_trees(nsim_ncclog *l, const char *s)
{
    long ch, d[3], r, up;
    while ((s = strchr(s, '[')) != NULL) {
        s++;
        if (!read_long(&s, &ch) || *s != ']')
            continue;
        s = skip_ws(s + 1);
        int ok = read_long(&s, &d[0]) && eat(&s, "/") &&
                 read_long(&s, &d[1]) && eat(&s, "/") &&
                 read_long(&s, &d[2]) && eat(&s, "->") &&
                 read_long(&s, &r) && eat(&s, "->") && read_long(&s, &up);
        if (!ok || ch < 0)
            continue;
        nsim_log_tree *t = vec_push(l, &l->trees, sizeof *t);
        if (t == NULL)
            return;
        *t = (nsim_log_tree){(int32_t)r, (uint32_t)ch,
                             {(int32_t)d[0], (int32_t)d[1], (int32_t)d[2]},
                             (int32_t)up};
    }
}

/* "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ..." */
static void on_nics(nsim_ncclog *l, const char *s)
{
    if (l->nics.n > 0)
        return; /* every rank prints the same list */
    long idx, port;
    const char *end = strchr(s, ';');
    while ((s = strchr(s, '[')) != NULL && (end == NULL || s < end)) {
        s++;
        if (!read_long(&s, &idx) || *s != ']')
            continue;
        s++;
        nsim_log_nic *n = vec_push(l, &l->nics, sizeof *n);
        if (n == NULL)
            return;
        n->index = (int32_t)idx;
        copy_word(n->name, sizeof n->name, s, ": /;");
        s += strcspn(s, ": /;");
        n->port = *s == ':' && (s++, read_long(&s, &port)) ? (int32_t)port
                                                            : -1;
        s += strcspn(s, "/ ;");
        if (*s == '/')
            copy_word(n->link_layer, sizeof n->link_layer, s + 1, " ;");
    }
}

/* "24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p
 * channels, 32 p2p channels per peer" and its older forms. */
static void on_counts(nsim_ncclog *l, const char *s)
{
    long v;
    while (read_long(&s, &v)) {
        s = skip_ws(s);
        if (starts(s, "coll channels"))
            l->info.coll_channels = (int32_t)v;
        else if (starts(s, "nvls channels"))
            l->info.nvls_channels = (int32_t)v;
        else if (starts(s, "p2p channels per peer"))
            l->info.p2p_per_peer = (int32_t)v;
        else if (starts(s, "p2p channels"))
            l->info.p2p_channels = (int32_t)v;
        s += strcspn(s, ",");
        if (*s == ',')
            s = skip_ws(s + 1);
    }
}

static void on_info(nsim_ncclog *l, const char *m, const char *host)
{
    if (starts(m, "NCCL version "))
        copy_word(l->info.version, sizeof l->info.version, m + 13, " \r\n");
    else if (starts(m, "Using network "))
        copy_word(l->info.network, sizeof l->info.network, m + 14, "\r\n");
    else if (starts(m, "comm "))
        on_comm(l, m, host);
    else if (strstr(m, "ncclCommInitRank comm ") != NULL)
        on_init_rank(l, m, host);
    else if (starts(m, "Channel "))
        on_channel(l, m);
    else if (starts(m, "Trees "))
        on_trees(l, m + 6);
    else if (starts(m, "NET/IB : Using "))
        on_nics(l, m + 15);
    else if (isdigit((unsigned char)m[0]) && strstr(m, " coll channels"))
        on_counts(l, m);
    else if (starts(m, "Connected all rings"))
        l->info.connected_rings = 1;
    else if (starts(m, "Connected all trees"))
        l->info.connected_trees = 1;
}

/* The hostname of "[1,0]<stdout>:host:pid:tid [dev] NCCL INFO". */
static void host_of(const char *line, size_t plen, char *host, size_t len)
{
    const char *s = line, *e = line + plen;
    for (const char *p = line; p + 2 < e; p++)
        if (p[0] == '>' && p[1] == ':')
            s = p + 2; /* past the last launcher tag */
    s = skip_ws(s);
    size_t n = strcspn(s, ": ");
    if (s + n > e)
        n = (size_t)(e - s);
    if (n >= len)
        n = len - 1;
    memcpy(host, s, n);
    host[n] = '\0';
}

/* ---- nccl-tests ------------------------------------------------------------ */

/* Removes launcher tags anywhere ("[1,0]<stdout>:", "[0]") and a leading
 * "0: " (srun -l), in place. */
void nsim_ncclog_strip_launcher(char *s)
{
    char *w = s;
    const char *r = s;
    while (*r) {
        if (*r == '[' && isdigit((unsigned char)r[1])) {
            const char *q = r + 1;
            while (isdigit((unsigned char)*q) || *q == ',')
                q++;
            if (*q == ']') {
                q++;
                if (starts(q, "<stdout>:") || starts(q, "<stderr>:"))
                    q += 9;
                *w++ = ' ';
                r = q;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    char *p = s;
    while (*p == ' ')
        p++;
    char *q = p;
    while (isdigit((unsigned char)*q))
        q++;
    if (q > p && *q == ':' && q[1] == ' ')
        memset(s, ' ', (size_t)(q + 1 - s));
}

static int split(char *s, char **tok, int max)
{
    int n = 0;
    for (char *t = strtok(s, " \t\r\n"); t != NULL && n < max;
         t = strtok(NULL, " \t\r\n"))
        tok[n++] = t;
    return n;
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
    if (end == s || *end != '\0' || errno != 0 || !(v == v))
        return 0;
    *out = v;
    return 1;
}

static int64_t wrong_of(const char *s)
{
    uint64_t v;
    return is_uint(s, &v) ? (int64_t)v : -1; /* N/A, or an error value */
}

/* time algbw busbw wrong */
static int read_half(char **t, double *time, double *alg, double *bus,
                     int64_t *wrong)
{
    if (!is_num(t[0], time) || !is_num(t[1], alg) || !is_num(t[2], bus))
        return 0;
    *wrong = wrong_of(t[3]);
    return 1;
}

static void on_row(nsim_ncclog *l, char **t, int n)
{
    nsim_nt_row r;
    memset(&r, 0, sizeof r);
    long root = -1;
    const char *rs = NULL;
    if (n < 8 || !is_uint(t[0], &r.size_bytes) || !is_uint(t[1], &r.count) ||
        !isalpha((unsigned char)t[2][0]) || !isalpha((unsigned char)t[3][0]))
        return;
    int k = 4;
    if (n == 9 || n == 13) { /* with the root column */
        rs = t[4];
        if (!read_long(&rs, &root) || *rs != '\0')
            return;
        k = 5;
    } else if (n != 8 && n != 12)
        return;
    if (!read_half(t + k, &r.oop_time_us, &r.oop_algbw, &r.oop_busbw,
                   &r.oop_wrong))
        return;
    r.has_inplace = n - k == 8;
    if (r.has_inplace && !read_half(t + k + 4, &r.ip_time_us, &r.ip_algbw,
                                    &r.ip_busbw, &r.ip_wrong))
        return;
    copy_word(r.type, sizeof r.type, t[2], "");
    copy_word(r.redop, sizeof r.redop, t[3], "");
    r.root = (int32_t)root;
    r.line = l->line;
    nsim_nt_row *p = vec_push(l, &l->rows, sizeof *p);
    if (p != NULL)
        *p = r;
}

static void on_test_line(nsim_ncclog *l, char *s)
{
    char *t[MAX_TOK];
    nsim_ncclog_strip_launcher(s);
    const char *m = skip_ws(s);
    double v;
    if (m[0] == '#') {
        m = skip_ws(m + 1);
        if (starts(m, "Collective test starting: "))
            copy_word(l->tests.collective, sizeof l->tests.collective,
                      m + 26, " \r\n");
        else if (starts(m, "Rank ") && strstr(m, " Group ") != NULL)
            l->tests.ranks_listed++;
        else if (starts(m, "Avg bus bandwidth")) {
            const char *c = strchr(m, ':');
            char num[64];
            if (c != NULL) {
                copy_word(num, sizeof num, skip_ws(c + 1), " \r\n");
                if (is_num(num, &v))
                    l->tests.avg_busbw = v;
            }
        }
        return;
    }
    int n = split(s, t, MAX_TOK);
    for (int k = 0; k < n && l->tests.collective[0] == '\0'; k++) {
        size_t len = strlen(t[k]);
        const char *b = strrchr(t[k], '/');
        if (len > 5 && strcmp(t[k] + len - 5, "_perf") == 0)
            copy_word(l->tests.collective, sizeof l->tests.collective,
                      b ? b + 1 : t[k], "");
    }
    on_row(l, t, n);
}

/* ---- driver ------------------------------------------------------------- */

static void on_line(nsim_ncclog *l, char *s)
{
    static const char tag[] = " NCCL INFO ";
    char *m = strstr(s, tag);
    if (m != NULL) {
        char host[64];
        host_of(s, (size_t)(m - s), host, sizeof host);
        on_info(l, m + sizeof tag - 1, host);
    } else {
        on_test_line(l, s);
    }
}

/* Points each ring at its ranks, now that the array no longer moves. */
static void fix_rings(nsim_ncclog *l)
{
    static const uint32_t none[1];
    nsim_log_ring *r = l->rings.p;
    const size_t *first = l->ring_first.p;
    const uint32_t *all = l->ring_ranks.p;
    for (size_t i = 0; i < l->rings.n; i++)
        r[i].ranks = all != NULL ? all + first[i] : none;
}

int nsim_ncclog_parse(const char *text, size_t len, nsim_ncclog **out,
                      nsim_err *err)
{
    nsim_ncclog *l = calloc(1, sizeof *l);
    char *buf = malloc(MAX_LINE + 1);
    if (l == NULL || buf == NULL) {
        free(l);
        free(buf);
        return NSIM_ERR(err, NSIM_ENOMEM, "log: out of memory");
    }
    l->info.nranks = l->info.nnodes = l->info.local_ranks = -1;
    l->info.coll_channels = l->info.nvls_channels = -1;
    l->info.p2p_channels = l->info.p2p_per_peer = -1;
    l->tests.avg_busbw = -1;
    size_t i = 0;
    while (i < len && !l->oom) {
        size_t n = 0;
        while (i + n < len && text[i + n] != '\n')
            n++;
        size_t keep = n < MAX_LINE ? n : MAX_LINE; /* longer: cut */
        memcpy(buf, text + i, keep);
        buf[keep] = '\0';
        for (size_t k = 0; k < keep; k++)
            if (buf[k] == '\0')
                buf[k] = ' ';
        l->line++;
        on_line(l, buf);
        i += n + 1;
    }
    free(buf);
    if (l->oom) {
        nsim_ncclog_destroy(l);
        return NSIM_ERR(err, NSIM_ENOMEM, "log: out of memory");
    }
    fix_rings(l);
    *out = l;
    return NSIM_OK;
}

int nsim_ncclog_load(const char *path, nsim_ncclog **out, nsim_err *err)
{
    char *buf = NULL;
    size_t n = 0;
    NSIM_TRY(nsim_read_file(path, &buf, &n, err));
    int rc = nsim_ncclog_parse(buf, n, out, err);
    free(buf);
    return rc;
}

void nsim_ncclog_destroy(nsim_ncclog *l)
{
    if (l == NULL)
        return;
    free(l->ranks.p);
    free(l->rings.p);
    free(l->trees.p);
    free(l->conns.p);
    free(l->nics.p);
    free(l->rows.p);
    free(l->ring_ranks.p);
    free(l->ring_first.p);
    free(l);
}

#define GETTERS(name, field, type)                                           \
    size_t nsim_ncclog_n##name##s(const nsim_ncclog *l) { return l->field.n; } \
    const type *nsim_ncclog_##name(const nsim_ncclog *l, size_t i)          \
    {                                                                        \
        return i < l->field.n ? (const type *)l->field.p + i : NULL;        \
    }
GETTERS(rank, ranks, nsim_log_rank)
GETTERS(ring, rings, nsim_log_ring)
GETTERS(tree, trees, nsim_log_tree)
GETTERS(conn, conns, nsim_log_conn)
GETTERS(nic, nics, nsim_log_nic)
GETTERS(row, rows, nsim_nt_row)
#undef GETTERS

const nsim_log_info *nsim_ncclog_info(const nsim_ncclog *l)
{
    return &l->info;
}

const nsim_nt_info *nsim_ncclog_tests(const nsim_ncclog *l)
{
    return &l->tests;
}
