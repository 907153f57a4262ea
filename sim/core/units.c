/* SPDX-License-Identifier: MIT
 *
 * units.c - quantities with units (see units.h).
 */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit {
    const char *name;
    double factor;
} unit;

static const unit bw_units[] = {
    {"B/s", 1.0},         {"Bps", 1.0},       {"KB/s", 1e3},
    {"MB/s", 1e6},        {"GB/s", 1e9},      {"TB/s", 1e12},
    {"GBps", 1e9},        {"MBps", 1e6},      {"b/s", 0.125},
    {"bps", 0.125},       {"Kb/s", 125.0},    {"Mb/s", 125e3},
    {"Gb/s", 125e6},      {"Tb/s", 125e9},    {"Kbps", 125.0},
    {"Mbps", 125e3},      {"Gbps", 125e6},    {"Tbps", 125e9},
    {"GiB/s", 1073741824.0}, {NULL, 0},
};

static const unit time_units[] = {
    {"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12},
    {NULL, 0},
};

static const unit size_units[] = {
    {"", 1.0},        {"B", 1.0},         {"K", 1024.0},
    {"KiB", 1024.0},  {"M", 1048576.0},   {"MiB", 1048576.0},
    {"G", 1073741824.0}, {"GiB", 1073741824.0}, {"KB", 1e3},
    {"MB", 1e6},      {"GB", 1e9},        {"T", 1099511627776.0},
    {"TiB", 1099511627776.0}, {NULL, 0},
};

/* Splits "12.5 GB/s" into 12.5 and "GB/s"; the unit must match a table
 * entry exactly. */
static int parse_quantity(const char *s, const unit *units, double *out,
                          const char **why)
{
    char *end;
    if (s == NULL) {
        *why = "missing value";
        return NSIM_EINVAL;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0') {
        *why = "empty value";
        return NSIM_EINVAL;
    }
    double v = strtod(s, &end);
    if (end == s || !isfinite(v)) {
        *why = "expected a number followed by a unit";
        return NSIM_EINVAL;
    }
    while (isspace((unsigned char)*end))
        end++;
    size_t n = strlen(end);
    while (n > 0 && isspace((unsigned char)end[n - 1]))
        n--;
    for (const unit *u = units; u->name != NULL; u++) {
        if (strlen(u->name) == n && strncmp(u->name, end, n) == 0) {
            *out = v * u->factor;
            return NSIM_OK;
        }
    }
    *why = "unknown or missing unit";
    return NSIM_EINVAL;
}

int nsim_units_parse_bw(const char *s, double *bytes_per_s, const char **why)
{
    double v;
    const char *w = NULL;
    if (parse_quantity(s, bw_units, &v, &w) != NSIM_OK) {
        *why = w[0] == 'u' ? "expected a bandwidth unit (Gb/s, GB/s, Mb/s, "
                             "Tb/s, B/s)"
                           : w;
        return NSIM_EINVAL;
    }
    if (!(v > 0)) {
        *why = "bandwidth must be > 0";
        return NSIM_EINVAL;
    }
    if (!(v >= NSIM_BW_MIN_BYTES) || !(v <= NSIM_BW_MAX_BYTES)) {
        *why = "bandwidth must be from 1 Mb/s to 1 PB/s";
        return NSIM_EINVAL;
    }
    *bytes_per_s = v;
    return NSIM_OK;
}

int nsim_units_parse_time(const char *s, nsim_time *ps, const char **why)
{
    double v;
    const char *w = NULL;
    if (parse_quantity(s, time_units, &v, &w) != NSIM_OK) {
        *why = w[0] == 'u' ? "expected a time unit (ps, ns, us, ms, s)" : w;
        return NSIM_EINVAL;
    }
    if (v < 0 || v > 1.8e19) {
        *why = "time must be >= 0 and below 200 days";
        return NSIM_EINVAL;
    }
    *ps = (nsim_time)llround(v);
    return NSIM_OK;
}

int nsim_units_parse_size(const char *s, uint64_t *bytes, const char **why)
{
    double v;
    const char *w = NULL;
    if (parse_quantity(s, size_units, &v, &w) != NSIM_OK) {
        *why = w[0] == 'u' ? "expected a size (4096, 64K, 4 MiB, 1G)" : w;
        return NSIM_EINVAL;
    }
    if (v < 0 || v > 9.2e18 || v != floor(v)) {
        *why = "size must be a whole number of bytes >= 0";
        return NSIM_EINVAL;
    }
    *bytes = (uint64_t)v;
    return NSIM_OK;
}

void nsim_units_format_bw(double bytes_per_s, char *buf, size_t len)
{
    double v = bytes_per_s / 1e9;
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g GB/s", prec, v);
        if (strtod(buf, NULL) * 1e9 == bytes_per_s)
            return;
    }
    snprintf(buf, len, "%.17g B/s", bytes_per_s);
}

void nsim_units_format_size(uint64_t bytes, char *buf, size_t len)
{
    if (bytes >= (1ull << 30))
        snprintf(buf, len, "%.2f GiB", (double)bytes / (double)(1ull << 30));
    else
        snprintf(buf, len, "%.1f MiB", (double)bytes / (double)(1ull << 20));
}

void nsim_units_format_time(nsim_time ps, char *buf, size_t len)
{
    if (ps % NSIM_PS_PER_US == 0 && ps != 0)
        snprintf(buf, len, "%llu us", (unsigned long long)(ps / NSIM_PS_PER_US));
    else if (ps % NSIM_PS_PER_NS == 0)
        snprintf(buf, len, "%llu ns", (unsigned long long)(ps / NSIM_PS_PER_NS));
    else
        snprintf(buf, len, "%llu ps", (unsigned long long)ps);
}
