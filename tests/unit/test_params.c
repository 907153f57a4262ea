/* SPDX-License-Identifier: MIT
 *
 * test_params.c - every model constant has a range: defaults inside it,
 * the edges accepted, one past them refused with the file, the param, the
 * range and the value (stream_chunk_bytes 0 was a SIGFPE).
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nsim_test.h"
#include "models/params.h"

/* Applies {"name": value} (value as JSON text); returns the status. */
static int apply1(const char *name, const char *value, nsim_err *err)
{
    char text[256];
    nsim_params p;
    nsim_params_defaults(&p);
    snprintf(text, sizeof text, "{\"%s\": %s}", name, value);
    cJSON *obj = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
    int rc = nsim_params_apply(&p, obj, "p.json", err);
    cJSON_Delete(obj);
    return rc;
}

static void test_every_param_has_a_range(void)
{
    nsim_err err = {0};
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++) {
        const char *r = nsim_param_range_text(pi);
        CU_ASSERT_PTR_NOT_NULL(r);
        CU_ASSERT(r != NULL && strstr(r, "..") != NULL);
        /* the default, written back, is accepted */
        char v[128];
        snprintf(v, sizeof v, "\"%s\"", pi->value);
        CU_ASSERT_EQUAL(apply1(pi->name, v, &err), NSIM_OK);
    }
}

static void test_edges(void)
{
    nsim_err err = {0};
    CU_ASSERT_EQUAL(apply1("stream_chunk_bytes", "0", &err), NSIM_ECONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "p.json: params.stream_chunk_bytes: \"0\" is "
                           "outside its range 4 KiB .. 64 MiB");
    CU_ASSERT_EQUAL(apply1("stream_chunk_bytes", "4095", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("stream_chunk_bytes", "4096", &err), NSIM_OK);
    CU_ASSERT_EQUAL(apply1("stream_chunk_bytes", "\"64 MiB\"", &err), NSIM_OK);
    CU_ASSERT_EQUAL(apply1("stream_chunk_bytes", "67108865", &err),
                    NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("nvls_multimem_pct_sm90", "100", &err), NSIM_OK);
    CU_ASSERT_EQUAL(apply1("nvls_multimem_pct_sm90", "0", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("ib_retry_cnt", "7", &err), NSIM_OK);
    CU_ASSERT_EQUAL(apply1("ib_retry_cnt", "8", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("ib_timeout_exp", "0", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("pcie_mps_bytes", "64", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("h100_sm_count", "0", &err), NSIM_ECONFIG);
    CU_ASSERT_EQUAL(apply1("hca_dma_read_outstanding", "0", &err),
                    NSIM_ECONFIG);
    /* kinds' own ranges: a bandwidth below 1 Mb/s, a time above 100 s */
    CU_ASSERT_EQUAL(apply1("h100_hbm_bw", "\"0.5 Mb/s\"", &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "params.h100_hbm_bw"));
    CU_ASSERT_EQUAL(apply1("h100_hbm_bw", "\"1 Mb/s\"", &err), NSIM_OK);
    CU_ASSERT_EQUAL(apply1("kernel_launch_ps", "\"101 s\"", &err),
                    NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "0 .. 100 s"));
    CU_ASSERT_EQUAL(apply1("ib_ack_bytes", "\"2 GiB\"", &err), NSIM_ECONFIG);
}

static void test_params_json_shows_ranges(void)
{
    nsim_err err = {0};
    nsim_params p;
    char *text = NULL;
    nsim_params_defaults(&p);
    NSIM_ASSERT_OK(nsim_params_to_json(&p, &text, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"range\":\t\"4 KiB .. 64 MiB\""));
    free(text);
}

CU_TestInfo nsim_test_params[] = {
    {"every param has a range holding its default",
     test_every_param_has_a_range},
    {"range edges accepted, one past refused with the range",
     test_edges},
    {"ncclsim params shows each range", test_params_json_shows_ranges},
    CU_TEST_INFO_NULL,
};
