/* SPDX-License-Identifier: MIT
 *
 * measure_pt.c - raw perftest output (ib_write_bw, ib_read_bw, ib_send_bw,
 * ib_write_lat, ib_read_lat, ib_send_lat) into measurement series (see
 * measure.h).
 *
 * Owns: the test banner ("RDMA_Write BW Test", "Send Latency Test"), the
 * "Number of qps" line, the table header ("#bytes #iterations BW
 * peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]", or [Gb/sec] with
 * --report_gbits; latency tests "t_min[usec] ... t_typical[usec]") and its
 * rows. Bandwidth tests: the average bandwidth (perftest's MB is 2^20
 * bytes); latency tests: t_typical, the one-way latency perftest reports.
 */
#include "measure_int.h"

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

#define LINE_LEN 4096

static const struct {
    const char *banner, *test;
} banners[] = {{"RDMA_Write BW Test", "ib_write_bw"},
               {"RDMA_Read BW Test", "ib_read_bw"},
               {"Send BW Test", "ib_send_bw"},
               {"Atomic FETCH_AND_ADD BW Test", "ib_atomic_bw"},
               {"RDMA_Write Latency Test", "ib_write_lat"},
               {"RDMA_Read Latency Test", "ib_read_lat"},
               {"Send Latency Test", "ib_send_lat"}};

typedef struct ptread {
    nsim_measure *m;
    const char *source;
    const nsim_measure_import_opts *o;
    nsim_err *err;
    char test[32];
    int qps, bidir, lat, line;
    double mul;      /* to GB/s */
    int avg_col;     /* token index of the value */
    nsim_measure_series *cur;
} ptread;

static int num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && *v == *v;
}

static int on_header(ptread *r, char *line)
{
    char *tok[32];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t && n < 32;
         t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    r->cur = NULL;
    r->lat = 0;
    r->avg_col = -1;
    /* fields of the rows, in header order: "BW peak[..]" is one field */
    int field = 0;
    for (int i = 0; i < n; i++) {
        const char *t = tok[i];
        if (strcmp(t, "BW") == 0 || strcmp(t, "99%") == 0 ||
            strcmp(t, "99.9%") == 0)
            continue; /* the first word of a two-word field */
        const char *br = strchr(t, '[');
        if (strncmp(t, "average[", 8) == 0 && br) {
            if (strcmp(br, "[MB/sec]") == 0)
                r->mul = 1048576.0 / 1e9;
            else if (strcmp(br, "[Gb/sec]") == 0)
                r->mul = 1.0 / 8;
            else
                return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: unit %s: "
                                "expected perftest's [MB/sec] or [Gb/sec]",
                                r->source, r->line, br);
            r->avg_col = field;
        } else if (strncmp(t, "t_typical[", 10) == 0 && br) {
            if (strcmp(br, "[usec]") != 0)
                return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: unit %s: "
                                "expected perftest's [usec]", r->source,
                                r->line, br);
            r->avg_col = field;
            r->lat = 1;
        }
        field++;
    }
    if (r->avg_col < 0)
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: a perftest header "
                        "without \"BW average[...]\" or \"t_typical[usec]\"",
                        r->source, r->line);
    return NSIM_OK;
}

static int on_row(ptread *r, char *line)
{
    char *tok[32];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t && n < 32;
         t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    double size, v;
    if (n == 0 || !num(tok[0], &size) || !isdigit((unsigned char)tok[0][0]))
        return NSIM_OK;
    if (n <= r->avg_col || !num(tok[r->avg_col], &v)) {
        if (r->o && r->o->partial)
            return NSIM_OK;
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: truncated table: %d "
                        "fields, expected %d or more", r->source, r->line, n,
                        r->avg_col + 1);
    }
    if (!(v > 0))
        return NSIM_ERR(r->err, NSIM_ECONFIG, "%s:%d: %s %s: expected a "
                        "value > 0", r->source, r->line,
                        r->lat ? "latency" : "bandwidth", tok[r->avg_col]);
    if (r->cur == NULL) {
        r->cur = nsim_measure__series_new(r->m, r->source);
        if (r->cur == NULL)
            return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
        snprintf(r->cur->tool, sizeof r->cur->tool, "perftest");
        snprintf(r->cur->test, sizeof r->cur->test, "%s",
                 r->test[0] ? r->test : "perftest");
        r->cur->line = r->line;
        r->cur->qps = r->qps;
        r->cur->bidirectional = r->bidir;
        r->cur->ranks = r->cur->hosts = 2;
    }
    nsim_measure_row *row = nsim_measure__row_new(r->cur);
    if (row == NULL)
        return NSIM_ERR(r->err, NSIM_ENOMEM, "out of memory");
    row->size = (uint64_t)size;
    row->line = r->line;
    nsim_measure_col *c = &row->col[NSIM_MEASURE_OOP];
    c->present = 1;
    if (r->lat) {
        c->time_us = v;
    } else {
        c->algbw = c->busbw = v * r->mul;
    }
    return NSIM_OK;
}

int nsim_measure__read_perftest(nsim_measure *m, const char *text,
                                size_t len, const char *source,
                                const nsim_measure_import_opts *o,
                                nsim_err *err)
{
    if (strstr(text, "#bytes") == NULL)
        return 0;
    ptread r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.source = source;
    r.o = o;
    r.err = err;
    r.qps = -1;
    r.bidir = -1;
    r.avg_col = -1;
    size_t first = nsim_measure_nseries(m), pos = 0;
    char line[LINE_LEN];
    int rc = NSIM_OK, headers = 0;
    while (rc == NSIM_OK &&
           nsim_measure__next_line(text, len, &pos, line, sizeof line)) {
        r.line++;
        for (size_t i = 0; i < sizeof banners / sizeof *banners; i++)
            if (strstr(line, banners[i].banner) != NULL) {
                snprintf(r.test, sizeof r.test, "%s", banners[i].test);
                r.cur = NULL;
                r.avg_col = -1;
            }
        const char *q = strstr(line, "Number of qps");
        if (q != NULL && (q = strchr(q, ':')) != NULL)
            r.qps = header_count(q + 1);
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "#bytes", 6) == 0) {
            headers++;
            rc = on_header(&r, line);
        } else if (r.avg_col >= 0 && *p != '-') {
            rc = on_row(&r, line);
        }
    }
    if (rc != NSIM_OK) {
        nsim_measure__truncate(m, first);
        return rc;
    }
    if (headers == 0)
        return 0;
    if (nsim_measure_nseries(m) == first)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: truncated table: a perftest "
                        "header and no rows", source);
    return 1;
}
