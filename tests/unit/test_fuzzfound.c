/* SPDX-License-Identifier: MIT
 *
 * test_fuzzfound.c - defects the libFuzzer harnesses (tests/fuzz) found,
 * each kept as a test that fails without its fix (under ASan: the suite's
 * --sanitize run and CI) and as an input in the harness's corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/measure.h"

#define MD NSIM_TEST_DATA "/measure/"
#define FF NSIM_TEST_DATA "/fuzzfound/"

/* fuzz_perftest, on its first seed: a markdown summary whose tables have
 * several value columns each ("1 QP | 8 QPs") kept a pointer per column
 * into the series array while adding more series; the fifth series moved
 * the array (realloc) and the next row went to freed memory (ASan:
 * heap-use-after-free in nsim_measure__row_new from measure_md.c). The
 * file is hwdata P03: 7 series over 4 tables, every row where it
 * belongs. */
static void test_markdown_columns_survive_new_series(void)
{
    nsim_err err = {0};
    nsim_measure *m = NULL;
    char *files[] = {MD "P03_h100-cx7-400g-roce-ib_write_bw-qp-sweep-"
                        "nccl2409.txt"};
    nsim_measure_import_opts o = {0};
    NSIM_ASSERT_OK(nsim_measure_create(&m, &err));
    NSIM_ASSERT_OK(nsim_measure_import(m, files, 1, &o, &err));
    CU_ASSERT_EQUAL_FATAL(nsim_measure_nseries(m), 7);
    static const struct {
        const char *label;
        size_t rows;
        uint64_t size;
        double busbw;
    } want[] = {
        {"8 QPs", 3, 1048576, 48.94},
        {"8 QPs, depth 64", 2, 131072, 49.00},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const nsim_measure_series *found = NULL;
        for (size_t i = 0; i < nsim_measure_nseries(m); i++) {
            const nsim_measure_series *s = nsim_measure_series_at(m, i);
            if (strcmp(s->label, want[k].label) == 0)
                found = s;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(found);
        CU_ASSERT_STRING_EQUAL(found->test, "ib_write_bw");
        CU_ASSERT_EQUAL_FATAL(found->nrows, want[k].rows);
        const nsim_measure_row *r = &found->rows[found->nrows - 1];
        CU_ASSERT_EQUAL(r->size, want[k].size);
        CU_ASSERT_DOUBLE_EQUAL(r->col[NSIM_MEASURE_OOP].busbw,
                               want[k].busbw, 0.005);
    }
    nsim_measure_destroy(m);
}

/* Imports path, writes the schema JSON and reads it back; returns the
 * series read back (caller destroys). */
static nsim_measure *import_write_read(const char *path)
{
    nsim_err err = {0};
    nsim_measure *m = NULL, *back = NULL;
    char *files[] = {(char *)path};
    char *text = NULL;
    nsim_measure_import_opts o = {0};
    NSIM_ASSERT_OK(nsim_measure_create(&m, &err));
    NSIM_ASSERT_OK(nsim_measure_import(m, files, 1, &o, &err));
    NSIM_ASSERT_OK(nsim_measure_to_json(m, &text, &err));
    int rc = nsim_measure_parse(text, strlen(text), "written", &back, &err);
    if (rc != NSIM_OK)
        fprintf(stderr, "\n  %s: written, not read back: %s\n", path,
                err.msg);
    CU_ASSERT_EQUAL(rc, NSIM_OK);
    free(text);
    nsim_measure_destroy(m);
    return back;
}

/* fuzz_nccltests: "nGpus z1" in the nccl-tests header was read with atoi
 * as -g 0, which the importer wrote and the schema reader then refused
 * ("gpus_per_thread: expected an integer in [1, ...]"); the perftest
 * reader did the same with "Number of qps : 0". A count that is not a
 * positive integer is unknown (-1), and what is written reads back. */
static void test_header_counts_read_back(void)
{
    nsim_measure *m = import_write_read(FF "nccltests-ngpus-not-a-number.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(nsim_measure_nseries(m), 1);
    CU_ASSERT_EQUAL(nsim_measure_series_at(m, 0)->gpus_per_thread, -1);
    CU_ASSERT(nsim_measure_series_at(m, 0)->nrows > 0);
    nsim_measure_destroy(m);
    m = import_write_read(FF "perftest-zero-qps.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(nsim_measure_nseries(m) >= 1);
    CU_ASSERT_EQUAL(nsim_measure_series_at(m, 0)->qps, -1);
    nsim_measure_destroy(m);
    /* fuzz_nccltests: an INFO line of "0 coll channels" (its log's only
     * channel count) was written as log_channels 0, which the schema
     * reader refused ("expected an integer in [1, ...]") */
    m = import_write_read(FF "nccltests-zero-coll-channels.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(nsim_measure_nseries(m), 1);
    CU_ASSERT_EQUAL(nsim_measure_series_at(m, 0)->log_channels, -1);
    CU_ASSERT(nsim_measure_series_at(m, 0)->nrows > 0);
    nsim_measure_destroy(m);
    /* the untouched file keeps its count */
    m = import_write_read(MD "perftest_write_bw_handmade.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(nsim_measure_series_at(m, 0)->qps, 2);
    nsim_measure_destroy(m);
}

/* fuzz_nccltests and fuzz_perftest: an algbw of 3.6e19 GB/s in an
 * nccl-tests row, or a perftest bandwidth that makes the derived time
 * 3e-12 us, was imported and written, and the schema reader then refused
 * the file ("algbw: expected a number in [0, 1e+09]"). The import checks
 * the schema's ranges and names the line. */
static void test_absurd_values_refused_at_import(void)
{
    static const struct {
        const char *file, *where;
    } bad[] = {
        {FF "nccltests-absurd-algbw.txt", "nccltests-absurd-algbw.txt:24: "
                                          "size 536870912"},
        {FF "perftest-absurd-bw.txt", "perftest-absurd-bw.txt:19: size "
                                      "1048576"},
        /* fuzz_perftest: a size of 1e64 bytes was converted to uint64
         * (UBSan: outside the range of representable values) */
        {FF "perftest-size-1e64.txt", "perftest-size-1e64.txt:19: size "
                                      "1e64: expected a whole number"},
        /* fuzz_measure: a markdown size of 4e20 bytes (1e18 was checked
         * before the unit multiplied it), rounded to a power of two by
         * doubling a uint64 that wrapped to 0: a loop without end */
        {FF "markdown-size-4e20.txt", "markdown-size-4e20.txt:10: size "
                                      "\"401189802742906446K\": expected "
                                      "at most 1e+18 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nsim_err err = {0};
        nsim_measure *m = NULL;
        char *files[] = {(char *)bad[i].file};
        nsim_measure_import_opts o = {0};
        NSIM_ASSERT_OK(nsim_measure_create(&m, &err));
        CU_ASSERT_EQUAL(nsim_measure_import(m, files, 1, &o, &err),
                        NSIM_ECONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].where));
        if (strstr(err.msg, bad[i].where) == NULL)
            fprintf(stderr, "\n  %s: %s\n", bad[i].file, err.msg);
        CU_ASSERT_EQUAL(nsim_measure_nseries(m), 0); /* m unchanged */
        nsim_measure_destroy(m);
    }
}

CU_TestInfo nsim_test_fuzzfound[] = {
    {"absurd bandwidths refused at import, with the line (fuzz_nccltests)",
     test_absurd_values_refused_at_import},
    {"header counts that are not counts are unknown (fuzz_nccltests)",
     test_header_counts_read_back},
    {"markdown: columns' series survive new series (fuzz_perftest)",
     test_markdown_columns_survive_new_series},
    CU_TEST_INFO_NULL,
};
