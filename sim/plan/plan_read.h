/* SPDX-License-Identifier: MIT
 *
 * plan_read.h - reading a plan back from its JSON form ("ncclsim-plan"
 * version 1, plan_json.c), so that validation plays exactly the plan
 * `ncclsim plan` wrote. The plan is checked against the scenario's
 * topology it claims (name, rank count, NICs by name) and for internal
 * consistency (connections and lanes in range, ops in the channel's
 * cut); errors name the file, the field and what was expected.
 */
#ifndef NSIM_PLAN_PLAN_READ_H
#define NSIM_PLAN_PLAN_READ_H

#include "sim/plan/plan.h"

NSIM_NODISCARD int nsim_plan_load(const char *path, const nsim_topo *t,
                                  nsim_plan **out, nsim_err *err);

#endif
