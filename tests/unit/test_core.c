/* SPDX-License-Identifier: MIT
 *
 * test_core.c - the error record and the unit parsers and formatters of
 * sim/core: every status has its own message, the record keeps where it
 * was set, and what the formatters write the parsers read back exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/core/err.h"
#include "sim/core/memavail.h"
#include "sim/core/units.h"

static void test_status_strings(void)
{
    static const int codes[] = {NSIM_OK,     NSIM_ENOMEM,  NSIM_EINVAL,
                                NSIM_ENOTSUP, NSIM_ECONFIG, NSIM_ESTATE,
                                NSIM_EIO,    NSIM_ENOENT,  NSIM_EAGAIN,
                                NSIM_ESIM};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *m = nsim_strerror(codes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_STRING_NOT_EQUAL(m, "unknown error");
        for (size_t j = 0; j < i; j++) /* each its own */
            CU_ASSERT_STRING_NOT_EQUAL(m, nsim_strerror(codes[j]));
    }
    CU_ASSERT_STRING_EQUAL(nsim_strerror(-999), "unknown error");
    CU_ASSERT_STRING_EQUAL(nsim_strerror(1), "unknown error");
}

static void test_error_record(void)
{
    nsim_err err = {0};
    int line = __LINE__ + 1;
    int rc = NSIM_ERR(&err, NSIM_ECONFIG, "%s: field %d", "f.json", 7);
    CU_ASSERT_EQUAL(rc, NSIM_ECONFIG);
    CU_ASSERT_EQUAL(err.code, NSIM_ECONFIG);
    CU_ASSERT_EQUAL(err.line, line);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.file, "test_core.c"));
    CU_ASSERT_STRING_EQUAL(err.msg, "f.json: field 7");
    /* a message longer than the record is cut, not overrun */
    char big[4 * sizeof err.msg];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    NSIM_ERR(&err, NSIM_EIO, "%s", big);
    CU_ASSERT_EQUAL(strlen(err.msg), sizeof err.msg - 1);
    nsim_err_clear(&err);
    CU_ASSERT_EQUAL(err.code, NSIM_OK);
    CU_ASSERT_EQUAL(err.msg[0], '\0');
    nsim_err_clear(NULL); /* NULL-safe */
    /* no record: the code still comes back */
    CU_ASSERT_EQUAL(NSIM_ERR(NULL, NSIM_ENOENT, "x"), NSIM_ENOENT);
}

static void test_format_time(void)
{
    char buf[64];
    nsim_time t;
    const char *why = NULL;
    nsim_units_format_time(3000000, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "3 us");
    nsim_units_format_time(115000, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "115 ns");
    nsim_units_format_time(1234567, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "1234567 ps");
    nsim_units_format_time(0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "0 ns");
    /* each reads back as what was written */
    static const nsim_time back[] = {0, 1, 999, 1000, 115000, 1234567,
                                     3000000, 250000000000ull};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) {
        nsim_units_format_time(back[i], buf, sizeof buf);
        CU_ASSERT_EQUAL_FATAL(nsim_units_parse_time(buf, &t, &why), NSIM_OK);
        CU_ASSERT_EQUAL(t, back[i]);
    }
}

static void test_format_bw_round_trip(void)
{
    char buf[64];
    const char *why = NULL;
    static const double bws[] = {25e9, 20.6e9, 1.969e9, 50e9 / 3, 125000.25,
                                 123456789.123, 400e9 / 8};
    for (size_t i = 0; i < sizeof bws / sizeof bws[0]; i++) {
        double v = 0;
        nsim_units_format_bw(bws[i], buf, sizeof buf);
        CU_ASSERT_EQUAL_FATAL(nsim_units_parse_bw(buf, &v, &why), NSIM_OK);
        CU_ASSERT_EQUAL(v, bws[i]); /* exactly: the shortest exact text */
    }
    nsim_units_format_bw(25e9, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "25 GB/s");
}

static void test_parse_size_refusals(void)
{
    uint64_t b = 77;
    const char *why = NULL;
    static const char *const bad[] = {"", "   ", "GB", "1.5", "-4", "4 parsecs",
                                      "1e30"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        CU_ASSERT_EQUAL(nsim_units_parse_size(bad[i], &b, &why), NSIM_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(why);
        CU_ASSERT_EQUAL(b, 77); /* untouched on error */
    }
    CU_ASSERT_EQUAL(nsim_units_parse_size(NULL, &b, &why), NSIM_EINVAL);
    CU_ASSERT_EQUAL(nsim_units_parse_size(" 64K ", &b, &why), NSIM_OK);
    CU_ASSERT_EQUAL(b, 65536);
    CU_ASSERT_EQUAL(nsim_units_parse_size("4 MiB", &b, &why), NSIM_OK);
    CU_ASSERT_EQUAL(b, 4u << 20);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void mkdirs(const char *dir, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *c = path + strlen(dir) + 1; *c != '\0'; c++)
        if (*c == '/') {
            *c = '\0';
            (void)mkdir(path, 0700);
            *c = '/';
        }
    (void)mkdir(path, 0700);
}

/* The default budget's figure: MemAvailable, bounded by the room under
 * every cgroup limit on the way to the root (v2 and v1), unbounded by
 * "max", v1's unlimited and missing files. */
static void test_mem_available(void)
{
    char d[] = "/tmp/nsim-memavail-XXXXXX", mi[64], cg[64], fs[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(d));
    snprintf(mi, sizeof mi, "%s/meminfo", d);
    snprintf(cg, sizeof cg, "%s/cgroup", d);
    snprintf(fs, sizeof fs, "%s/fs", d);
    const uint64_t G = 1ull << 30;
    /* no meminfo, no cgroup: the fallback */
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 5 * G);
    put(d, "meminfo", "MemTotal:       16777216 kB\n"
                      "MemAvailable:    8388608 kB\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 8 * G);
    /* v2: the step has no limit, its job 4 GiB with 1 GiB used */
    mkdirs(d, "fs/job/step");
    put(d, "cgroup", "0::/job/step\n");
    put(d, "fs/job/step/memory.max", "max\n");
    put(d, "fs/job/step/memory.current", "1073741824\n");
    put(d, "fs/job/memory.max", "4294967296\n");
    put(d, "fs/job/memory.current", "1073741824\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 3 * G);
    /* the step's own, tighter limit */
    put(d, "fs/job/step/memory.max", "2147483648\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 1 * G);
    /* over its limit: no room */
    put(d, "fs/job/step/memory.current", "3221225472\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 0);
    /* v1, memory among other controllers; the container sees its cgroup
     * as the root (the path under it is missing): the root's limit */
    mkdirs(d, "fs/memory");
    put(d, "cgroup", "4:cpu,memory:/docker/abc\n1:name=systemd:/\n");
    put(d, "fs/memory/memory.limit_in_bytes", "2147483648\n");
    put(d, "fs/memory/memory.usage_in_bytes", "536870912\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G),
                    3 * G / 2);
    /* v1's unlimited */
    put(d, "fs/memory/memory.limit_in_bytes", "9223372036854771712\n");
    CU_ASSERT_EQUAL(nsim_mem_available_from(mi, cg, fs, 5 * G), 8 * G);
    /* this machine: something, and no more than its memory */
    uint64_t here = nsim_mem_available();
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    CU_ASSERT(here > 0);
    CU_ASSERT(here <= (uint64_t)pages * (uint64_t)psz);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

CU_TestInfo nsim_test_core[] = {
    {"memory available: meminfo and cgroup limits", test_mem_available},
    {"every status has its own message", test_status_strings},
    {"the error record: where, what, cut to size", test_error_record},
    {"times: formatted and read back", test_format_time},
    {"bandwidths: formatted exactly and read back",
     test_format_bw_round_trip},
    {"sizes: refusals leave the value", test_parse_size_refusals},
    CU_TEST_INFO_NULL,
};
