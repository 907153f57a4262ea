/* SPDX-License-Identifier: MIT
 *
 * test_sweep.c - sweep axes (lists, ranges, bad specs), the numbering of
 * points, knobs set by name on a loaded scenario (scenario fields, NCCL_*
 * variables, model parameters) and the results read back for --resume.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "nsim_test.h"
#include "sim/core/jread.h"
#include "sim/exec/scenario.h"
#include "sim/exec/sweep.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static void test_axes(void)
{
    nsim_err err = {0};
    nsim_sweep *sw = NULL;
    NSIM_ASSERT_OK(nsim_sweep_create(&sw, &err));
    NSIM_ASSERT_OK(nsim_sweep_add_axis(sw, "nchannels=2:32:x2", &err));
    NSIM_ASSERT_OK(nsim_sweep_add_axis(sw, "NCCL_IB_QPS_PER_CONNECTION=1,2,4,8",
                                       &err));
    NSIM_ASSERT_OK(nsim_sweep_add_axis(sw, "buffsize=1M:3M:+1M", &err));
    CU_ASSERT_EQUAL(nsim_sweep_axis_nvalues(sw, 0), 5);
    CU_ASSERT_EQUAL(nsim_sweep_axis_nvalues(sw, 1), 4);
    CU_ASSERT_EQUAL(nsim_sweep_axis_nvalues(sw, 2), 3);
    CU_ASSERT_EQUAL(nsim_sweep_npoints(sw), 60);
    /* the first axis varies slowest, the last fastest */
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 0, 0), "2");
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 59, 0), "32");
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 1, 2), "2097152");
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 3, 1), "2");
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 12, 0), "4");
    CU_ASSERT_STRING_EQUAL(nsim_sweep_value(sw, 12, 1), "1");
    /* bad specs name the knob */
    CU_ASSERT_NOT_EQUAL(nsim_sweep_add_axis(sw, "nchannels=1,2", &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "given twice"));
    CU_ASSERT_NOT_EQUAL(nsim_sweep_add_axis(sw, "seed", &err), 0);
    CU_ASSERT_NOT_EQUAL(nsim_sweep_add_axis(sw, "seed=1,,2", &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "seed"));
    CU_ASSERT_NOT_EQUAL(nsim_sweep_add_axis(sw, "root=8:1:+1", &err), 0);
    CU_ASSERT_NOT_EQUAL(nsim_sweep_add_axis(sw, "gpus_per_thread=1:8:x1",
                                            &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "gpus_per_thread"));
    nsim_sweep_destroy(sw);
}

static void test_set_knob(void)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(SCEN "dgx-h100-2node-allreduce.json", &s,
                                      &err));
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "nchannels", "8", "--set", &err));
    CU_ASSERT_EQUAL(s->nchannels, 8);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "NCCL_MAX_NCHANNELS", "4", "--set",
                                          &err));
    CU_ASSERT_EQUAL(s->nchannels, 4); /* clamped as NCCL does */
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "NCCL_IB_QPS_PER_CONNECTION", "4",
                                          "--set", &err));
    CU_ASSERT_EQUAL(s->qps_per_conn, 4);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "env.NCCL_NET_SHARED_COMMS", "1",
                                          "--set", &err));
    CU_ASSERT_EQUAL(s->channel_mode, NSIM_CHANNEL_SHARED);
    CU_ASSERT_EQUAL(s->net.shared_comms, 1);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "channel_mode", "dedicated",
                                          "--set", &err));
    CU_ASSERT_EQUAL(s->net.shared_comms, 0);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "buffsize", "1M", "--set", &err));
    CU_ASSERT_EQUAL(s->buffsize, 1u << 20);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "protocol", "LL128", "--set",
                                          &err));
    CU_ASSERT_EQUAL(s->proto, NSIM_PROTO_LL128);
    CU_ASSERT_EQUAL(s->proto_set, 1);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "protocol", "auto", "--set",
                                          &err));
    CU_ASSERT_EQUAL(s->proto_set, 0);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "hca_doorbell_ps", "200ns",
                                          "--set", &err));
    CU_ASSERT_EQUAL(s->params.hca_doorbell_ps, 200000);
    NSIM_ASSERT_OK(nsim_scenario_set_knob(s, "params.ib_ack_bytes", "40",
                                          "--set", &err));
    CU_ASSERT_EQUAL(s->params.ib_ack_bytes, 40);
    /* errors name the knob */
    CU_ASSERT_NOT_EQUAL(nsim_scenario_set_knob(s, "nchanels", "8", "--set",
                                               &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--set: nchanels: not a knob"));
    CU_ASSERT_NOT_EQUAL(nsim_scenario_set_knob(s, "qps_per_connection", "0",
                                               "--set", &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "qps_per_connection"));
    CU_ASSERT_NOT_EQUAL(nsim_scenario_set_knob(s, "buffsize", "1000", "--set",
                                               &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "multiple of 4096"));
    CU_ASSERT_NOT_EQUAL(nsim_scenario_set_knob(s, "NCCL_BOGUS", "1", "--set",
                                               &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NCCL_BOGUS"));
    CU_ASSERT_NOT_EQUAL(nsim_scenario_set_knob(s, "hca_doorbell_ps", "fast",
                                               "--set", &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "hca_doorbell_ps"));
    nsim_scenario_destroy(s);
}

/* Rows written as CSV and JSON read back as the same rows; a file of
 * another sweep is refused; one written before rows named their
 * fidelity reads as packet. */
static void test_read_back(void)
{
    nsim_err err = {0};
    nsim_sweep *sw = NULL, *other = NULL;
    nsim_sweep_row rows[3] = {
        {0, 4, 1024, 256, 100, 12.5, 0.08, 0.15, "Ring", "LL", "float", "sum",
         "packet"},
        {1, 8, 1024, 256, 200, 11.25, 0.09, 0.17, "Ring", "LL", "float", "sum",
         "packet"},
        {1, 8, 2048, 512, 300, 13.0, 0.16, 0.3, "Tree", "LL", "float", "sum",
         "flow"},
    };
    NSIM_ASSERT_OK(nsim_sweep_create(&sw, &err));
    NSIM_ASSERT_OK(nsim_sweep_add_axis(sw, "nchannels=4,8", &err));
    NSIM_ASSERT_OK(nsim_sweep_create(&other, &err));
    NSIM_ASSERT_OK(nsim_sweep_add_axis(other, "nchannels=4,16", &err));
    for (int json = 0; json < 2; json++) {
        char *text = NULL, *again = NULL, path[64];
        nsim_sweep_row *back = NULL;
        size_t n = 0;
        snprintf(path, sizeof path, "test_sweep_%d.%s", (int)getpid(),
                 json ? "json" : "csv");
        NSIM_ASSERT_OK(nsim_sweep_format(sw, "t", json, rows, 3, &text, &err));
        NSIM_ASSERT_OK(nsim_write_file_atomic(path, text, strlen(text), &err));
        NSIM_ASSERT_OK(nsim_sweep_read(sw, path, &back, &n, &err));
        CU_ASSERT_EQUAL(n, 3);
        CU_ASSERT_STRING_EQUAL(back[2].fidelity, "flow");
        NSIM_ASSERT_OK(nsim_sweep_format(sw, "t", json, back, n, &again, &err));
        CU_ASSERT_STRING_EQUAL(text, again);
        free(back);
        back = NULL;
        CU_ASSERT_NOT_EQUAL(nsim_sweep_read(other, path, &back, &n, &err), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--resume"));
        CU_ASSERT_PTR_NULL(back);
        remove(path);
        free(text);
        free(again);
    }
    /* a sweep written before rows named their fidelity ran packet */
    static const char *const before[] = {
        "point,nchannels,size,count,type,redop,algo,proto,channels_used,"
        "time_us,algbw_GBps,busbw_GBps,events\n"
        "0,4,1024,256,float,sum,Ring,LL,4,12.500,0.0800,0.1500,100\n",
        "{\"format\": \"ncclsim-sweep\", \"version\": 1, \"scenario\": \"t\", "
        "\"knobs\": [\"nchannels\"], \"rows\": [{\"point\": 0, \"knobs\": "
        "{\"nchannels\": \"4\"}, \"size\": 1024, \"count\": 256, \"type\": "
        "\"float\", \"redop\": \"sum\", \"algo\": \"Ring\", \"proto\": \"LL\", "
        "\"channels_used\": 4, \"time_us\": 12.5, \"algbw_GBps\": 0.08, "
        "\"busbw_GBps\": 0.15, \"events\": 100}]}\n"};
    for (int json = 0; json < 2; json++) {
        char path[64];
        nsim_sweep_row *back = NULL;
        size_t n = 0;
        snprintf(path, sizeof path, "test_sweep_old_%d.%s", (int)getpid(),
                 json ? "json" : "csv");
        NSIM_ASSERT_OK(nsim_write_file_atomic(path, before[json],
                                              strlen(before[json]), &err));
        NSIM_ASSERT_OK(nsim_sweep_read(sw, path, &back, &n, &err));
        CU_ASSERT_EQUAL(n, 1);
        if (n == 1) {
            CU_ASSERT_STRING_EQUAL(back[0].fidelity, "packet");
            CU_ASSERT_EQUAL(back[0].events, 100);
        }
        free(back);
        remove(path);
    }
    nsim_sweep_destroy(sw);
    nsim_sweep_destroy(other);
}

CU_TestInfo nsim_test_sweep[] = {
    {"axes: lists, ranges, point numbering, bad specs", test_axes},
    {"knobs by name: fields, NCCL_* variables, params", test_set_knob},
    {"results read back for --resume", test_read_back},
    CU_TEST_INFO_NULL,
};
