/* SPDX-License-Identifier: MIT
 *
 * stats.h - what happened inside a run, for `ncclsim run --stats` and
 * `--debug`: per connection, per link, per NIC port, per QP and per CQ
 * counters (text and JSON), and an NCCL_DEBUG=INFO-style account of the
 * plan with an ibstat/ibv_devinfo-like table of every simulated HCA and
 * its QPs. Reads results only.
 */
#ifndef NSIM_OUTPUT_STATS_H
#define NSIM_OUTPUT_STATS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "sim/exec/exec.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

void nsim_stats_print(FILE *f, const nsim_topo *t, const nsim_plan *p,
                      const nsim_exec_result *r);
/* The same as a JSON object (NULL on out of memory). */
cJSON *nsim_stats_json(const nsim_topo *t, const nsim_plan *p,
                       const nsim_exec_result *r);
/* NCCL_DEBUG=INFO-style lines for the plan (rings, connections, NICs). */
void nsim_debug_plan(FILE *f, nsim_topo *t, const nsim_plan *p);
/* ibstat-like port and QP table of the HCAs of a run. */
void nsim_debug_hcas(FILE *f, const nsim_topo *t, const nsim_plan *p,
                     const nsim_exec_result *r);

#endif
