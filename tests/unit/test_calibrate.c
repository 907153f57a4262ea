/* SPDX-License-Identifier: MIT
 *
 * test_calibrate.c - calibration recovers constants from measurements the
 * simulator itself made with known values (two A100 over NV4, SendRecv),
 * names what the data cannot pin, and compare's summary arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/calibrate.h"
#include "sim/exec/compare.h"
#include "sim/exec/measure.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

#define SCEN NSIM_TEST_DATA "/measure/nv4-sendrecv.json"

static const uint64_t sizes[] = {8, 1024, 32768, 262144, 1048576, 4194304};
#define NS (sizeof sizes / sizeof *sizes)

/* A measurement of the scenario with kernel_launch_ps = launch, the A100
 * copy rate = bw, the NVLink efficiency = nvl_pct and streams of at least
 * min_pieces pieces, as an
 * ncclsim-measurement text. */
static nsim_measure *synthetic_nvl(nsim_time launch, double bw,
                                   uint64_t nvl_pct, uint64_t min_pieces)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(SCEN, &s, &err));
    s->params.kernel_launch_ps = launch;
    s->params.a100_hbm_bw = bw;
    s->params.nvlink_efficiency_pct = nvl_pct;
    s->params.stream_min_pieces = min_pieces;
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"format\": \"ncclsim-measurement\", "
                                "\"version\": 1, \"series\": [{\"tool\": "
                                "\"nccl-tests\", \"collective\": "
                                "\"sendrecv\", \"ranks\": 2, \"rows\": [");
    for (size_t i = 0; i < NS; i++) {
        nsim_run_row row;
        nsim_run_opts o = {0};
        NSIM_ASSERT_OK(nsim_run_size(s, &o, sizes[i], &row, NULL, NULL, &err));
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s{\"size\": %llu, \"out_of_place\": "
                              "{\"time_us\": %.6f}}", i ? ", " : "",
                              (unsigned long long)sizes[i], row.time_us);
    }
    snprintf(text + n, sizeof text - n, "]}]}");
    nsim_scenario_destroy(s);
    nsim_measure *m = NULL;
    NSIM_ASSERT_OK(nsim_measure_parse(text, strlen(text), "synthetic", &m,
                                      &err));
    return m;
}

static nsim_measure *synthetic(nsim_time launch, double bw)
{
    nsim_params d;
    nsim_params_defaults(&d);
    return synthetic_nvl(launch, bw, 100, d.stream_min_pieces);
}

/* A link efficiency whose default (100 %) sits on its bound: the fit
 * starts inside and finds the value the data were made with. */
static void test_recovers_link_efficiency(void)
{
    nsim_err err = {0};
    nsim_measure *m = synthetic_nvl(5000000, 2039e9, 70, 1);
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(SCEN, &s, &err));
    /* 64 KiB pieces: each of the two NVLink hops stores and forwards a
     * piece, so the rate shows in the 1-4 MiB times; cut finer, the
     * copy rate hides it and the fit rightly refuses */
    s->params.stream_min_pieces = 1;
    const nsim_measure_series *ser = nsim_measure_series_at(m, 0);
    static const char *const fit[] = {"nvlink_efficiency_pct"};
    nsim_calib_opts o = {fit, 1, 0, 0, 0, 0, -1};
    nsim_calib_result r;
    NSIM_ASSERT_OK(nsim_calibrate(&s, &ser, 1, &o, &r, &err));
    CU_ASSERT_EQUAL_FATAL(r.nfit, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.fit[0].value, 70, 1.01);
    CU_ASSERT(r.rms_before > r.rms_after);
    nsim_scenario_destroy(s);
    nsim_measure_destroy(m);
}

static void test_recovers_known_values(void)
{
    nsim_err err = {0};
    nsim_measure *m = synthetic(8000000, 1500e9);
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(SCEN, &s, &err));
    const nsim_measure_series *ser = nsim_measure_series_at(m, 0);
    static const char *const fit[] = {"kernel_launch_ps", "a100_hbm_bw"};
    nsim_calib_opts o = {fit, 2, 0, 0, 0, 0, -1};
    nsim_calib_result r;
    NSIM_ASSERT_OK(nsim_calibrate(&s, &ser, 1, &o, &r, &err));
    CU_ASSERT_EQUAL_FATAL(r.nfit, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.fit[0].value, 8e6, 0.03 * 8e6);
    CU_ASSERT_DOUBLE_EQUAL(r.fit[1].value, 1500e9, 0.03 * 1500e9);
    CU_ASSERT(r.fit[0].lo95 <= r.fit[0].value && r.fit[0].value <=
              r.fit[0].hi95);
    CU_ASSERT(r.rms_after < 0.01);
    CU_ASSERT(r.rms_before > 0.1);
    CU_ASSERT(r.cached > 0);
    /* the fitted values are left in the scenario */
    CU_ASSERT_EQUAL(s->params.kernel_launch_ps, (nsim_time)r.fit[0].value);
    nsim_scenario_destroy(s);
    nsim_measure_destroy(m);
}

static void test_refuses_unpinned(void)
{
    nsim_err err = {0};
    nsim_measure *m = synthetic(5000000, 2039e9);
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(SCEN, &s, &err));
    const nsim_measure_series *ser = nsim_measure_series_at(m, 0);
    static const char *const fit[] = {"kernel_launch_ps", "hca_wqe_fetch_ps"};
    nsim_calib_opts o = {fit, 2, 0, 0, 0, 0, -1};
    nsim_calib_result r;
    CU_ASSERT_NOT_EQUAL(nsim_calibrate(&s, &ser, 1, &o, &r, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "hca_wqe_fetch_ps"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "would pin it"));
    nsim_scenario_destroy(s);
    nsim_measure_destroy(m);
}

static void test_summary(void)
{
    nsim_compare_row rows[4];
    memset(rows, 0, sizeof rows);
    rows[0] = (nsim_compare_row){.size = 1024, .err = -0.20};
    rows[1] = (nsim_compare_row){.size = 4096, .err = 0.10};
    rows[2] = (nsim_compare_row){.size = 1 << 20, .err = 0.04};
    rows[3] = (nsim_compare_row){.size = 1 << 22, .err = -0.02};
    nsim_compare_summary s;
    nsim_compare_summarize(rows, 4, &s);
    CU_ASSERT_EQUAL(s.n_large, 2);
    CU_ASSERT_DOUBLE_EQUAL(s.med_large, 0.03, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.med_small, 0.15, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.bias, 0.01, 1e-12);
}

CU_TestInfo nsim_test_calibrate[] = {
    {"recovers known values", test_recovers_known_values},
    {"recovers a link efficiency from its bound",
     test_recovers_link_efficiency},
    {"refuses what the data do not pin", test_refuses_unpinned},
    {"compare summary", test_summary},
    CU_TEST_INFO_NULL,
};
