/* SPDX-License-Identifier: MIT
 *
 * test_failover.c - NET failover and channel modes that used to stop
 * themselves (issue 14 items 3 and 7), each run to the end with every byte
 * delivered exactly once: a QP error with rebind_qp while writes and
 * receive WRs of the two QPs were in flight (the two-node DGX H100, 16
 * channels); rebind_nic after a dead link with 2 and 4 QPs per
 * connection; and the grid of channel modes (shared, dedicated) x QPs per
 * connection (1, 2, 4, 8) on the seed example and the two-node DGX H100.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nsim_test.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

/* Runs a scenario's largest size; 0 and the busbw if every byte arrived
 * once, else the error code (why in msg). */
static int run_once(nsim_scenario *s, double *busbw, char *msg, size_t len)
{
    nsim_err err = {0};
    nsim_plan *plan = NULL;
    nsim_exec_result res;
    nsim_run_row row;
    nsim_run_opts o = {.keep = 1};
    int rc = nsim_run_size(s, &o, s->max_bytes, &row, &plan, &res, &err);
    if (rc != NSIM_OK) {
        snprintf(msg, len, "%s", err.msg);
        return rc;
    }
    if (!nsim_test_delivered_once(&res, msg, len))
        rc = NSIM_ESIM;
    *busbw = row.busbw;
    nsim_exec_result_free(&res);
    nsim_plan_destroy(plan);
    return rc;
}

/* The two-node DGX H100 scenario with a fault plan, from JSON. */
static int run_2node(const char *knobs, double *busbw, char *msg, size_t len)
{
    char path[] = "/tmp/nsim-failover-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f,
            "{\"format\": \"ncclsim-scenario\", \"version\": 1, \"name\": "
            "\"failover\", \"topology\": \"%sdgx-h100-2node.topo.json\", "
            "\"collective\": \"all_reduce_perf\", \"datatype\": \"float\", "
            "\"op\": \"sum\", \"protocol\": \"Simple\", \"algorithm\": "
            "\"Ring\", \"seed\": 1, %s}\n",
            SCEN, knobs);
    fclose(f);
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    int rc = nsim_scenario_load(path, &s, &err);
    remove(path);
    if (rc != NSIM_OK) {
        snprintf(msg, len, "%s", err.msg);
        return rc;
    }
    rc = run_once(s, busbw, msg, len);
    nsim_scenario_destroy(s);
    return rc;
}

/* Issue 14 item 3: QP 0 of channel 14 dies at 124.222 us; the work of
 * its pieces moves to QP 1 while QP 1's own writes and receive WRs are in
 * flight. Matching by index paired a resent piece with another slice's
 * receive WR (1 of 256 thread blocks never finished); by id it is the
 * piece the immediate names. */
static void test_rebind_qp_mid_flight(void)
{
    char msg[600] = "";
    double bw = 0;
    int rc = run_2node("\"min_bytes\": \"16M\", \"max_bytes\": \"16M\", "
                       "\"nchannels\": 16, \"qps_per_connection\": 2, "
                       "\"failover\": \"rebind_qp\", \"params\": "
                       "{\"ib_timeout_exp\": 10}, \"faults\": [{\"at\": "
                       "\"124.222 us\", \"kind\": \"qp_error\", \"channel\": "
                       "14, \"qp\": 0}]",
                       &bw, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "\n  %s\n", msg);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(bw > 100); /* one QP of one channel lost: barely slower */
}

/* Issue 14 item 3: a dead link found by timeouts, rebind_nic to another
 * NIC pair, 2 and 4 QPs: the pieces sent again must go on the QPs whose
 * receive the receiver mapped them to ("message needs a receive WR and
 * none is posted" before). */
static void test_rebind_nic_several_qps(void)
{
    for (uint32_t q = 2; q <= 4; q += 2)
        for (uint32_t t = 20; t <= 100; t += 40) {
            char knobs[512], msg[600] = "";
            double bw = 0;
            snprintf(knobs, sizeof knobs,
                     "\"min_bytes\": \"4M\", \"max_bytes\": \"4M\", "
                     "\"qps_per_connection\": %u, \"failover\": "
                     "\"rebind_nic\", \"params\": {\"ib_timeout_exp\": 8}, "
                     "\"faults\": [{\"at\": \"%u us\", \"kind\": "
                     "\"link_down\", \"a\": \"h0.nic3\", \"b\": "
                     "\"ib.rail3\"}, {\"at\": \"%u us\", \"kind\": \"loss\", "
                     "\"nic\": \"h1.nic5\", \"probability\": 0.002}]",
                     q, t, t / 2);
            int rc = run_2node(knobs, &bw, msg, sizeof msg);
            if (rc != 0)
                fprintf(stderr, "\n  %u QPs, link down at %u us: %s\n", q, t,
                        msg);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT(bw > 0);
        }
}

/* Issue 14 item 7: shared and dedicated channel modes complete on the
 * seed example and the two-node DGX H100 with 1, 2, 4 and 8 QPs per
 * connection, 16 MiB Ring Simple, every byte once. */
static void test_channel_mode_grid(void)
{
    static const char *const files[] = {"seed-allreduce.json",
                                        "dgx-h100-2node-allreduce.json"};
    static const uint32_t qps[] = {1, 2, 4, 8};
    fprintf(stderr, "\n  busbw GB/s, 16 MiB AllReduce Ring Simple "
                    "(dedicated / shared):");
    for (int f = 0; f < 2; f++) {
        fprintf(stderr, "\n  %-30s", files[f]);
        for (int q = 0; q < 4; q++)
            for (int shared = 0; shared < 2; shared++) {
                nsim_err err = {0};
                nsim_scenario *s = NULL;
                char path[512], msg[600] = "";
                double bw = 0;
                snprintf(path, sizeof path, "%s%s", SCEN, files[f]);
                NSIM_ASSERT_OK(nsim_scenario_load(path, &s, &err));
                s->min_bytes = s->max_bytes = 16u << 20;
                s->qps_per_conn = qps[q];
                s->channel_mode = shared ? NSIM_CHANNEL_SHARED
                                         : NSIM_CHANNEL_DEDICATED;
                s->net.shared_comms = shared;
                int rc = run_once(s, &bw, msg, sizeof msg);
                if (rc != 0)
                    fprintf(stderr, "\n  %s, %u QPs, %s: %s\n", files[f],
                            qps[q], shared ? "shared" : "dedicated", msg);
                CU_ASSERT_EQUAL(rc, 0);
                CU_ASSERT(bw > 10);
                fprintf(stderr, "%s%u QP %.1f", shared ? "/" : "  ", qps[q],
                        bw);
                if (shared)
                    fprintf(stderr, " ");
                nsim_scenario_destroy(s);
            }
    }
    fprintf(stderr, "\n");
}

CU_TestInfo nsim_test_failover[] = {
    {"rebind_qp while the other QP is in flight", test_rebind_qp_mid_flight},
    {"rebind_nic with 2 and 4 QPs per connection",
     test_rebind_nic_several_qps},
    {"shared and dedicated channels x 1-8 QPs complete",
     test_channel_mode_grid},
    CU_TEST_INFO_NULL,
};
