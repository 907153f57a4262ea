/* SPDX-License-Identifier: MIT
 *
 * test_core.c - the error record and the unit parsers and formatters of
 * sim/core: every status has its own message, the record keeps where it
 * was set, and what the formatters write the parsers read back exactly.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/core/err.h"
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

CU_TestInfo nsim_test_core[] = {
    {"every status has its own message", test_status_strings},
    {"the error record: where, what, cut to size", test_error_record},
    {"times: formatted and read back", test_format_time},
    {"bandwidths: formatted exactly and read back",
     test_format_bw_round_trip},
    {"sizes: refusals leave the value", test_parse_size_refusals},
    CU_TEST_INFO_NULL,
};
