/* SPDX-License-Identifier: MIT
 *
 * nsim_test.h - helpers shared by the unit suites: paths to the source tree
 * and test data, and a scratch directory per process.
 */
#ifndef NSIM_TEST_H
#define NSIM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "sim/topo/topo.h"

#define NSIM_ASSERT_OK(call)                                                 \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != 0)                                                        \
            fprintf(stderr, "\n  %s -> %d: %s\n", #call, rc_, err.msg);      \
        CU_ASSERT_EQUAL_FATAL(rc_, 0);                                       \
    } while (0)

/* A copy of t whose NVSwitches lack NVLink SHARP ("nvls": false), for
 * tests of choices made where NVLS is not available; t is destroyed. */
static inline nsim_topo *nsim_test_without_nvls(nsim_topo *t)
{
    nsim_err err = {0};
    nsim_topo *out = NULL;
    char *js = NULL, *s;
    NSIM_ASSERT_OK(nsim_topo_to_json(t, &js, &err));
    while ((s = strstr(js, "\"nvls\":\ttrue")) != NULL)
        memcpy(s + 7, "false", 5); /* the tab goes */
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "no-nvls", &out, &err));
    free(js);
    nsim_topo_destroy(t);
    return out;
}

#endif
