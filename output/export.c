/* SPDX-License-Identifier: MIT
 *
 * export.c - CSV, gnuplot and Chrome trace writers (see export.h).
 */
#include "export.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/core/fileio.h"

/* A growing text buffer; on failure it stays NULL and writes are dropped. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) NSIM_PRINTF(2, 3);

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s != NULL && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (ns == NULL) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
}

static int sb_write(strbuf *b, const char *path, nsim_err *err)
{
    int rc = b->oom ? NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path)
                    : nsim_write_file_atomic(path, b->s ? b->s : "", b->len,
                                             err);
    free(b->s);
    *b = (strbuf){0};
    return rc;
}

int nsim_export_csv(const char *path, const nsim_report_meta *m,
                    const nsim_run_row *rows, size_t n, nsim_err *err)
{
    strbuf b = {0};
    sb_printf(&b, "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,"
                  "time_us_inplace,algbw_GBps_inplace,busbw_GBps_inplace,"
                  "nchannels,fidelity\n");
    for (size_t i = 0; i < n; i++) {
        const nsim_run_row *r = &rows[i];
        /* fidelity: what the size ran (auto, the default, picks per
         * size), tuner for --mode analytic */
        sb_printf(&b,
                  "%llu,%llu,%s,%s,%d,%.3f,%.4f,%.4f,%.3f,%.4f,%.4f,%u,%s\n",
                  (unsigned long long)r->size, (unsigned long long)r->count,
                  m->dtype, m->redop, m->root, r->time_us, r->algbw, r->busbw,
                  r->time_ip_us, r->algbw_ip, r->busbw_ip, r->nchannels,
                  r->fidelity ? r->fidelity : "packet");
    }
    return sb_write(&b, path, err);
}

int nsim_export_run_gnuplot(const char *script)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The gnuplot script: data from dat, a PNG to png. */
static void plot_script(strbuf *b, const nsim_report_meta *m, const char *png,
                        const char *dat)
{
    sb_printf(b,
              "set terminal pngcairo noenhanced size 900,560\n"
              "set output '%s'\n"
              "set title \"%s on %s (%u ranks), %s/%s, %u channels\"\n"
              "set logscale x 2\nset format x '%%.0b%%BB'\n"
              "set xlabel 'size'\nset ylabel 'busbw (GB/s)'\nset grid\n"
              "set key left top\n"
              "plot '%s' using 1:2 with linespoints title 'busbw (simulated)'\n",
              png, m->test_name, m->topology, m->nranks, m->algo, m->proto,
              m->nchannels, dat);
}

/* Renders the plot in scratch files (gnuplot never writes an output
 * itself, so the PNG is staged like every other output); *png is the
 * image (malloc'd) or NULL when gnuplot is not there. */
static int render_png(const nsim_report_meta *m, const strbuf *data,
                      char **png, size_t *png_len, nsim_err *err)
{
    char dat[4096], gp[4096], img[4096];
    strbuf b = {0};
    *png = NULL;
    NSIM_TRY(nsim_out_scratch(".dat", data->s ? data->s : "", data->len, dat,
                              sizeof dat, err));
    int rc = nsim_out_scratch(".png", "", 0, img, sizeof img, err);
    if (rc == NSIM_OK) {
        plot_script(&b, m, img, dat);
        rc = b.oom ? NSIM_ERR(err, NSIM_ENOMEM, "plot: out of memory")
                   : nsim_out_scratch(".gp", b.s, b.len, gp, sizeof gp, err);
        free(b.s);
        if (rc == NSIM_OK) {
            if (nsim_export_run_gnuplot(gp) == 0 &&
                nsim_read_file(img, png, png_len, NULL) == NSIM_OK &&
                *png_len == 0) {
                free(*png);
                *png = NULL;
            }
            nsim_out_scratch_remove(gp);
        }
        nsim_out_scratch_remove(img);
    }
    nsim_out_scratch_remove(dat);
    return rc;
}

int nsim_export_plot(const char *path, const nsim_report_meta *m,
                     const nsim_run_row *rows, size_t n, int *rendered,
                     nsim_err *err)
{
    char dat[4096], gp[4096];
    strbuf b = {0}, script = {0};
    int to_stdout = strcmp(path, "-") == 0;
    if ((size_t)snprintf(dat, sizeof dat, "%s.dat", path) >= sizeof dat ||
        (size_t)snprintf(gp, sizeof gp, "%s.gp", path) >= sizeof gp)
        return NSIM_ERR(err, NSIM_EINVAL, "%s: path too long", path);
    sb_printf(&b, "# size_bytes busbw_GBps algbw_GBps time_us\n");
    for (size_t i = 0; i < n; i++)
        sb_printf(&b, "%llu %.4f %.4f %.3f\n", (unsigned long long)rows[i].size,
                  rows[i].busbw, rows[i].algbw, rows[i].time_us);
    if (b.oom) {
        free(b.s);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    char *png = NULL;
    size_t png_len = 0;
    int rc = render_png(m, &b, &png, &png_len, err);
    *rendered = png != NULL;
    if (rc == NSIM_OK && to_stdout && png == NULL)
        rc = NSIM_ERR(err, NSIM_ENOTSUP,
                      "--plot -: a PNG on stdout needs gnuplot (install "
                      "gnuplot-nox)");
    if (rc == NSIM_OK && png != NULL)
        rc = nsim_write_file_atomic(path, png, png_len, err);
    free(png);
    if (rc == NSIM_OK && !to_stdout) { /* the data and script beside it */
        plot_script(&script, m, path, dat);
        rc = sb_write(&b, dat, err);
        if (rc == NSIM_OK)
            rc = sb_write(&script, gp, err);
    }
    free(b.s);
    free(script.s);
    return rc;
}
