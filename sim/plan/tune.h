/* SPDX-License-Identifier: MIT
 *
 * tune.h - NCCL's tuner: the closed-form cost model that picks an
 * algorithm and a protocol per collective and size (nccl-internals 4:
 * latency tables, bandwidth model, availability filters), and the rules
 * that make a forced choice impossible (4.3, 3.5, 6.3).
 *
 * Units: time in microseconds (as NCCL), bandwidth in GB/s, sizes in
 * bytes (nBytes as NCCL counts them: AllGather/ReduceScatter the full
 * buffer).
 */
#ifndef NSIM_PLAN_TUNE_H
#define NSIM_PLAN_TUNE_H

#include "sim/plan/plan.h"

/* NCCL's predicted time of (algo, proto), or -1 when NCCL would not run
 * that pair (disabled, or bandwidth 0). */
double nsim_tune_time_us(const nsim_plan_graph *g, nsim_coll coll,
                         nsim_algo algo, nsim_proto proto, uint64_t bytes);

/* Checks that NCCL would run coll with algo / proto on this topology;
 * the error names the constraint. */
NSIM_NODISCARD int nsim_tune_check(nsim_topo *topo, nsim_coll coll,
                                   nsim_algo algo, nsim_proto proto,
                                   nsim_err *err);

/* Picks the fastest pair as NCCL does, among the pairs ncclsim can plan
 * (Ring x LL/LL128/Simple; point-to-point collectives: Simple), holding
 * the algorithm and/or protocol fixed where *_forced. *time_us gets
 * NCCL's prediction (-1 for point-to-point: NCCL has no model). */
NSIM_NODISCARD int nsim_tune_pick(nsim_topo *topo, nsim_coll coll,
                                  uint64_t bytes, int algo_forced,
                                  int proto_forced, nsim_algo *algo,
                                  nsim_proto *proto, double *time_us,
                                  nsim_err *err);
/* As nsim_tune_pick, never picking the algorithms whose bit (1u << algo)
 * is set in disabled (NCCL_PAT_ENABLE=0: PAT; NCCL_ALGO="^tree") nor the
 * protocols whose bit 1u << (16 + proto) is (NCCL_PROTO="^LL128");
 * forcing one of them is an error. */
NSIM_NODISCARD int nsim_tune_pick_without(nsim_topo *topo, nsim_coll coll,
                                          uint64_t bytes, int algo_forced,
                                          int proto_forced, uint32_t disabled,
                                          nsim_algo *algo, nsim_proto *proto,
                                          double *time_us, nsim_err *err);

#endif
