/* SPDX-License-Identifier: MIT
 *
 * test_ncclenv.c - NCCL's habits: NCCL_ALGO / NCCL_PROTO lists and ^
 * exclusions (the tuner picks only among the allowed), the shell's NCCL_*
 * variables under the scenario's own, fp8 only on sm >= 90.
 */
#include <stdio.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static nsim_scenario *load(const char *name)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(name, &s, &err));
    return s;
}

static void test_algo_lists(void)
{
    nsim_err err = {0};
    nsim_scenario *s = load(SCEN "dgx-h100-2node-allreduce.json");
    /* one name forces it, whatever the case */
    NSIM_ASSERT_OK(nsim_scenario_set_algo(s, "tree", "t", &err));
    CU_ASSERT(s->algo_set && s->algo == NSIM_ALGO_TREE && s->algo_off == 0);
    /* a list: the tuner picks among them, never another */
    NSIM_ASSERT_OK(nsim_scenario_set_algo(s, "ring,tree", "t", &err));
    CU_ASSERT(!s->algo_set);
    CU_ASSERT_EQUAL(s->algo_off, (1u << NSIM_ALGO_NVLS) |
                                     (1u << NSIM_ALGO_NVLSTREE) |
                                     (1u << NSIM_ALGO_PAT));
    s->proto_set = 0;
    for (uint64_t b = 1024; b <= (64u << 20); b *= 16) {
        nsim_plan_req req;
        double pred;
        NSIM_ASSERT_OK(nsim_run_request(s, b, &req, &pred, &err));
        CU_ASSERT(req.algo == NSIM_ALGO_RING || req.algo == NSIM_ALGO_TREE);
    }
    /* an exclusion; CollnetDirect is known to NCCL, never available */
    NSIM_ASSERT_OK(nsim_scenario_set_algo(s, "^Tree, CollnetDirect", "t",
                                          &err));
    CU_ASSERT_EQUAL(s->algo_off, 1u << NSIM_ALGO_TREE);
    NSIM_ASSERT_OK(nsim_scenario_set_proto(s, "^LL,LL128", "t", &err));
    CU_ASSERT(s->proto_set && s->proto == NSIM_PROTO_SIMPLE);
    NSIM_ASSERT_OK(nsim_scenario_set_proto(s, "LL,LL128", "t", &err));
    CU_ASSERT(!s->proto_set);
    for (uint64_t b = 1024; b <= (64u << 20); b *= 16) {
        nsim_plan_req req;
        double pred;
        NSIM_ASSERT_OK(nsim_run_request(s, b, &req, &pred, &err));
        CU_ASSERT(req.proto != NSIM_PROTO_SIMPLE);
        CU_ASSERT(req.algo != NSIM_ALGO_TREE);
    }
    /* nothing left, an unknown name */
    CU_ASSERT_EQUAL(nsim_scenario_set_algo(s, "^ring,tree,nvls,nvlstree,pat",
                                           "t", &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "none left"));
    CU_ASSERT_EQUAL(nsim_scenario_set_proto(s, "LL,fast", "t", &err),
                    NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(\"fast\")"));
    nsim_scenario_destroy(s);
}

static void test_shell_env(void)
{
    nsim_err err = {0};
    char note[1024];
    nsim_scenario *s = load(SCEN "seed-allreduce.json");
    /* the seed sets algorithm, protocol and nchannels itself */
    char *envp[] = {"PATH=/bin", "NCCL_ALGO=tree", "NCCL_DEBUG=INFO",
                    "NCCL_IB_QPS_PER_CONNECTION=4", "NCCL_MAX_NCHANNELS=1",
                    NULL};
    NSIM_ASSERT_OK(nsim_scenario_apply_shell_env(s, envp, note, sizeof note,
                                                 &err));
    CU_ASSERT_EQUAL(s->qps_per_conn, 4);
    CU_ASSERT(s->algo_set && s->algo == NSIM_ALGO_RING);
    CU_ASSERT_EQUAL(s->max_channels, 0);
    CU_ASSERT_STRING_EQUAL(note,
                           "shell NCCL_* variables: took effect: "
                           "NCCL_IB_QPS_PER_CONNECTION=4; ignored: NCCL_ALGO "
                           "(the scenario sets it), NCCL_DEBUG (not "
                           "modelled), NCCL_MAX_NCHANNELS (the scenario sets "
                           "it)");
    char *bad[] = {"NCCL_NVLS_ENABLE=7", NULL};
    CU_ASSERT_EQUAL(nsim_scenario_apply_shell_env(s, bad, note, sizeof note,
                                                  &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NCCL_NVLS_ENABLE: invalid value"));
    char *none[] = {"HOME=/root", NULL};
    NSIM_ASSERT_OK(nsim_scenario_apply_shell_env(s, none, note, sizeof note,
                                                 &err));
    CU_ASSERT_STRING_EQUAL(note, "");
    nsim_scenario_destroy(s);
}

static void test_fp8(void)
{
    nsim_err err = {0};
    nsim_scenario *s = load(SCEN "dgx-h100-allreduce.json");
    NSIM_ASSERT_OK(nsim_scenario_set_dtype(s, "f8e4m3", "t", &err));
    CU_ASSERT_EQUAL(s->type_size, 1);
    NSIM_ASSERT_OK(nsim_scenario_check_dtype(s, &err));
    nsim_scenario_destroy(s);
    s = load(NSIM_TEST_DATA "/nvlstree-a100-2node.json");
    NSIM_ASSERT_OK(nsim_scenario_set_dtype(s, "f8e5m2", "t", &err));
    CU_ASSERT_EQUAL(nsim_scenario_check_dtype(s, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs sm >= 90"));
    nsim_scenario_destroy(s);
}

CU_TestInfo nsim_test_ncclenv[] = {
    {"NCCL_ALGO / NCCL_PROTO lists and ^ exclusions", test_algo_lists},
    {"shell NCCL_* under the scenario's own", test_shell_env},
    {"fp8 data types need sm >= 90", test_fp8},
    CU_TEST_INFO_NULL,
};
