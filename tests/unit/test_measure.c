/* SPDX-License-Identifier: MIT
 *
 * test_measure.c - the measurement schema and its readers on copies of
 * hwdata files (tests/data/measure): nccl-tests values, launcher tags,
 * INFO facts, vendor size labels, perftest units, the JSON round trip,
 * and that a failed import leaves the set as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nsim_test.h"
#include "sim/exec/measure.h"
#include "sim/exec/measure_int.h"

#define MD NSIM_TEST_DATA "/measure/"

static nsim_measure *import1(const char *path, int ranks)
{
    nsim_err err = {0};
    nsim_measure *m = NULL;
    char *files[1] = {(char *)path};
    nsim_measure_import_opts o = {.ranks = ranks};
    NSIM_ASSERT_OK(nsim_measure_create(&m, &err));
    NSIM_ASSERT_OK(nsim_measure_import(m, files, 1, &o, &err));
    return m;
}

static void test_nccl_tests_values(void)
{
    nsim_measure *m = import1(MD "02_h100-1node-8gpu-allreduce-xxrjun.txt", 0);
    CU_ASSERT_EQUAL_FATAL(nsim_measure_nseries(m), 1);
    const nsim_measure_series *s = nsim_measure_series_at(m, 0);
    CU_ASSERT_STRING_EQUAL(s->test, "all_reduce_perf");
    CU_ASSERT_STRING_EQUAL(s->collective, "allreduce");
    CU_ASSERT_STRING_EQUAL(s->dtype, "double");
    CU_ASSERT_STRING_EQUAL(s->nccl_version, "2.29.2");
    CU_ASSERT_EQUAL(s->gpus_per_thread, 1);
    CU_ASSERT_EQUAL_FATAL(s->nrows, 10);
    CU_ASSERT_EQUAL(s->rows[0].size, 33554432);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[0].time_us, 182.87, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[1].busbw, 321.08, 1e-9);
    CU_ASSERT_EQUAL(s->rows[9].col[1].wrong, 0);
    CU_ASSERT_EQUAL(s->rows[9].line, 29);
    nsim_measure_destroy(m);
}

static void test_tags_and_info(void)
{
    nsim_measure *m = import1(MD "21_excerpt_aws-p5-mpirun-tags.txt", 0);
    const nsim_measure_series *s = nsim_measure_series_at(m, 0);
    CU_ASSERT_EQUAL(s->ranks, 16);
    CU_ASSERT_EQUAL(s->hosts, 2);
    CU_ASSERT_STRING_EQUAL(nsim_measure_env_get(s, "NCCL_BUFFSIZE"),
                           "8388608");
    CU_ASSERT_EQUAL_FATAL(s->nrows, 12);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[0].time_us, 85.70, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[1].time_us, 74.97, 1e-9);
    nsim_measure_destroy(m);
    m = import1(MD "43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt", 0);
    s = nsim_measure_series_at(m, 0);
    CU_ASSERT(s->log_channels > 0);
    CU_ASSERT_EQUAL(s->rows[0].col[1].wrong, -1); /* N/A */
    nsim_measure_destroy(m);
}

static void test_vendor_labels(void)
{
    nsim_measure *m =
        import1(MD "12_azure-nd-a100-v4-1node-allreduce-vendor.txt", 8);
    const nsim_measure_series *s = nsim_measure_series_at(m, 0);
    CU_ASSERT_STRING_EQUAL(s->tool, "vendor-table");
    CU_ASSERT_EQUAL_FATAL(s->nrows, 24);
    CU_ASSERT_EQUAL(s->rows[6].size, 65536);   /* "65K" */
    CU_ASSERT_EQUAL(s->rows[7].size, 131072);  /* "132K" */
    CU_ASSERT_EQUAL(s->rows[23].size, 8589934592ULL); /* "8G" */
    CU_ASSERT_FALSE(s->rows[6].col[0].present);
    /* busbw 2.70 over 2*7/8: algbw, then the time */
    CU_ASSERT_DOUBLE_EQUAL(s->rows[6].col[1].algbw, 2.70 / 1.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[6].col[1].time_us,
                           65536 / (2.70 / 1.75 * 1e3), 1e-9);
    nsim_measure_destroy(m);
}

static void test_perftest_units(void)
{
    nsim_measure *m = import1(MD "perftest_write_bw_handmade.txt", 0);
    const nsim_measure_series *s = nsim_measure_series_at(m, 0);
    CU_ASSERT_STRING_EQUAL(s->test, "ib_write_bw");
    CU_ASSERT_EQUAL(s->qps, 2);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[0].algbw,
                           23400.50 * 1048576 / 1e9, 1e-9);
    nsim_measure_destroy(m);
    m = import1(MD "P01_moc-roce400-h100host-perftest-cpu-sweep.txt", 0);
    CU_ASSERT_EQUAL_FATAL(nsim_measure_nseries(m), 3);
    s = nsim_measure_series_at(m, 1);
    CU_ASSERT_STRING_EQUAL(s->test, "ib_write_bw");
    CU_ASSERT_EQUAL(s->rows[0].size, 2);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[0].busbw, 45.91 * 1048576 / 1e9,
                           1e-12);
    nsim_measure_destroy(m);
}

static void test_round_trip(void)
{
    nsim_err err = {0};
    nsim_measure *m = import1(MD "40_h100-2node-ndr-allreduce-ring-underperf-issue290.txt", 0);
    char *a = NULL, *b = NULL;
    NSIM_ASSERT_OK(nsim_measure_to_json(m, &a, &err));
    nsim_measure *back = NULL;
    NSIM_ASSERT_OK(nsim_measure_parse(a, strlen(a), "a.json", &back, &err));
    NSIM_ASSERT_OK(nsim_measure_to_json(back, &b, &err));
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"NCCL_ALGO\":\t\"RING\""));
    free(a);
    free(b);
    nsim_measure_destroy(back);
    nsim_measure_destroy(m);
}

static void test_failed_import_keeps_set(void)
{
    nsim_err err = {0};
    nsim_measure *m = import1(MD "35_h20-2node-16gpu-ib-ndr-allreduce-nvlstree-smallmsg-issue1244.txt", 0);
    char *files[2] = {MD "02_h100-1node-8gpu-allreduce-xxrjun.txt",
                      MD "bad/dup_size.txt"};
    CU_ASSERT_NOT_EQUAL(nsim_measure_import(m, files, 2, NULL, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "appears twice"));
    CU_ASSERT_EQUAL(nsim_measure_nseries(m), 1);
    static const char bad[] =
        "{\"format\": \"ncclsim-measurement\", \"version\": 1, \"series\": "
        "[{\"tool\": \"nccl-tests\", \"rows\": [{\"size\": 8, "
        "\"out_of_place\": {\"time_us\": -1}}]}]}";
    nsim_measure *x = NULL;
    CU_ASSERT_NOT_EQUAL(nsim_measure_parse(bad, strlen(bad), "b.json", &x,
                                           &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "b.json"));
    nsim_measure_destroy(m);
}

static void test_import_text(void)
{
    nsim_err err = {0};
    nsim_measure *m = NULL;
    static const char text[] =
        "[1,0]<stdout>:#  size count type redop root time algbw busbw "
        "#wrong time algbw busbw #wrong\n"
        "[1,0]<stdout>:  1024  256  float  sum  -1[1,0]<stdout>:  10.00 "
        " 0.10  0.20  0[1,0]<stdout>:  11.00  0.09  0.19  0\n";
    NSIM_ASSERT_OK(nsim_measure_create(&m, &err));
    NSIM_ASSERT_OK(nsim_measure_import_text(m, text, strlen(text), "mem",
                                            NULL, &err));
    const nsim_measure_series *s = nsim_measure_series_at(m, 0);
    CU_ASSERT_EQUAL_FATAL(s->nrows, 1);
    CU_ASSERT_DOUBLE_EQUAL(s->rows[0].col[1].time_us, 11.0, 1e-12);
    /* bytes past len are not read: a cut text is a cut row */
    CU_ASSERT_NOT_EQUAL(nsim_measure_import_text(m, text, strlen(text) - 20,
                                                 "cut", NULL, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cut:2: truncated table"));
    CU_ASSERT_EQUAL(nsim_measure_nseries(m), 1);
    nsim_measure_destroy(m);
}

/* validate --backend nccl: NCCL's own INFO log gives each row what NCCL
 * ran (TUNING lines: "<bytes> Bytes -> Algo A proto P"), and the env it
 * reports; a log without INFO lines changes nothing; no log is an error. */
static void test_attach_log(void)
{
    static const char meas[] =
        "{\"format\": \"ncclsim-measurement\", \"version\": 1, "
        "\"series\": [{\"tool\": \"ncclsim-validate\", \"collective\": "
        "\"allreduce\", \"ranks\": 8, \"rows\": ["
        "{\"size\": 1048576, \"out_of_place\": {\"time_us\": 40}}, "
        "{\"size\": 33554432, \"out_of_place\": {\"time_us\": 180}}]}]}";
    static const char log[] =
        "gpu0:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 1.\n"
        "gpu0:1:1 [0] NCCL INFO    1048576 Bytes -> Algo 1 proto 0 time 38.1\n"
        "gpu0:1:1 [0] NCCL INFO    1048576 Bytes -> Algo 4 proto 2 time 99.0\n"
        "gpu0:1:1 [0] NCCL INFO   33554432 Bytes -> Algo 4 proto 2 time 170.2\n";
    nsim_err err = {0};
    nsim_measure *m = NULL;
    NSIM_ASSERT_OK(nsim_measure_parse(meas, strlen(meas), "t", &m, &err));
    nsim_measure_series *s = nsim_measure__series_mut(m, 0);
    char path[] = "/tmp/nsim-attach-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("no INFO here\n", f);
    fclose(f);
    NSIM_ASSERT_OK(nsim_measure__attach_log(s, path, &err));
    CU_ASSERT_STRING_EQUAL(s->rows[0].algo, "");
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(log, f);
    fclose(f);
    NSIM_ASSERT_OK(nsim_measure__attach_log(s, path, &err));
    /* the first line for a size is the collective's own choice */
    CU_ASSERT_STRING_EQUAL(s->rows[0].algo, "Ring");
    CU_ASSERT_STRING_EQUAL(s->rows[0].proto, "LL");
    CU_ASSERT_STRING_EQUAL(s->rows[1].algo, "NVLS");
    CU_ASSERT_STRING_EQUAL(s->rows[1].proto, "Simple");
    CU_ASSERT_PTR_NOT_NULL(nsim_measure_env_get(s, "NCCL_NVLS_ENABLE"));
    unlink(path);
    CU_ASSERT_NOT_EQUAL(nsim_measure__attach_log(s, path, &err), NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nsim-attach-"));
    nsim_measure_destroy(m);
}

CU_TestInfo nsim_test_measure[] = {
    {"validate's NCCL log: what NCCL ran per size", test_attach_log},
    {"import from memory", test_import_text},
    {"nccl-tests values", test_nccl_tests_values},
    {"launcher tags and INFO facts", test_tags_and_info},
    {"vendor size labels", test_vendor_labels},
    {"perftest units", test_perftest_units},
    {"JSON round trip", test_round_trip},
    {"failed import keeps the set", test_failed_import_keeps_set},
    CU_TEST_INFO_NULL,
};
