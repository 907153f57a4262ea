/* SPDX-License-Identifier: MIT
 *
 * main.c - CUnit runner: all suites, or the one named on the command line.
 * The exit status comes from the failure count, because CU_basic_run_*
 * return success even when tests fail (libcunit1 2.1-3).
 */
#include <stdio.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include "suites.h"

int main(int argc, char **argv)
{
    unsigned int nfail;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (CU_register_suites(nsim_suites) != CUE_SUCCESS)
        goto fail;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (argc > 1) {
        CU_pSuite s = CU_get_suite(argv[1]);
        if (s == NULL) {
            fprintf(stderr, "nsim_unit: no suite named %s\n", argv[1]);
            goto fail;
        }
        if (CU_basic_run_suite(s) != CUE_SUCCESS)
            goto fail;
    } else if (CU_basic_run_tests() != CUE_SUCCESS) {
        goto fail;
    }
    nfail = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return nfail == 0 ? 0 : 1;
fail:
    CU_cleanup_registry();
    return 2;
}
