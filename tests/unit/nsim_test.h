/* SPDX-License-Identifier: MIT
 *
 * nsim_test.h - helpers shared by the unit suites: paths to the source tree
 * and test data, and a scratch directory per process.
 */
#ifndef NSIM_TEST_H
#define NSIM_TEST_H

#include <stdio.h>

#include <CUnit/CUnit.h>

#define NSIM_ASSERT_OK(call)                                                 \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != 0)                                                        \
            fprintf(stderr, "\n  %s -> %d: %s\n", #call, rc_, err.msg);      \
        CU_ASSERT_EQUAL_FATAL(rc_, 0);                                       \
    } while (0)

#endif
