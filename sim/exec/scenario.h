/* SPDX-License-Identifier: MIT
 *
 * scenario.h - a scenario: the topology, the collective, the data type and
 * reduction, the size range, the knobs (channels, QPs per connection,
 * buffer size, protocol, algorithm, channel mode) with NCCL's own
 * environment variable names accepted for them, the seed, and the model
 * parameters. Format "ncclsim-scenario" version 1 (README).
 *
 * Owns: loading and checking a scenario file (errors as "FILE: FIELD:
 * expected ..."), the topology it names (a JSON file relative to the
 * scenario, or inline), and the sizes of the sweep.
 */
#ifndef NSIM_EXEC_SCENARIO_H
#define NSIM_EXEC_SCENARIO_H

#include <stdint.h>

#include "models/params.h"
#include "models/transport.h"
#include "sim/exec/exec.h"
#include "sim/plan/fold.h"
#include "sim/plan/plan.h"
#include "sim/topo/topo.h"

#define NSIM_SCENARIO_FORMAT "ncclsim-scenario"
#define NSIM_SCENARIO_VERSION 1
/* Limits on a sweep: the largest size (per rank buffer) and the number
 * of sizes one run visits. */
#define NSIM_SCENARIO_MAX_BYTES (1ull << 40)
#define NSIM_SCENARIO_MAX_SIZES 4096u

typedef struct nsim_scenario {
    char name[128];
    char source[512];  /* the file it came from */
    nsim_topo *topo;   /* owned */
    nsim_coll coll;
    char dtype[16];
    uint32_t type_size;
    char redop[8];
    uint64_t min_bytes, max_bytes;
    double step_factor;  /* > 1: multiply; else add step_bytes */
    uint64_t step_bytes;
    uint32_t nchannels;  /* resolved: explicit, or NCCL's default clamped
                          * by NCCL_MIN/MAX_NCHANNELS */
    uint32_t min_channels, max_channels;
    int nchannels_given; /* by the scenario or the command line: NVLS
                          * then uses it instead of its nvlsChannels */
    int channels_resolved;
    uint32_t qps_per_conn;
    uint64_t buffsize;
    nsim_proto proto;
    nsim_algo algo;
    nsim_channel_mode channel_mode;
    int algo_set, proto_set; /* forced by the scenario, env or CLI */
    uint32_t root;           /* Broadcast / Reduce */
    uint32_t net_peer_channels; /* NCCL_NCHANNELS_PER_NET_PEER, 0: auto */
    int32_t cross_nic;          /* NCCL_CROSS_NIC 0/1/2; -1: default */
    uint32_t pat_enable;        /* NCCL_PAT_ENABLE 0/1/2 (2: auto) */
    uint32_t nvls_enable;       /* NCCL_NVLS_ENABLE 0/1/2 (2: auto) */
    uint32_t nvls_nchannels;    /* NCCL_NVLS_NCHANNELS, 0: auto */
    uint64_t nvls_chunk;        /* NCCL_NVLS_CHUNKSIZE, 0: 128 KiB */
    uint64_t nvlstree_max_chunk; /* NCCL_NVLSTREE_MAX_CHUNKSIZE, 0: auto */
    uint64_t seed;
    uint32_t gpus_per_thread; /* nccl-tests -g: launches per host thread */
    nsim_fidelity fidelity;   /* "fidelity" / --fidelity */
    nsim_fold_mode fold;      /* "fold" / --fold (plan/fold.h) */
    nsim_params params;
    nsim_net_knobs net; /* net.shared_comms follows channel_mode */
    struct nsim_ncclgraph *graph; /* --graph: replayed rings (owned) */
    nsim_fault *faults; /* the fault plan (owned) */
    uint32_t nfaults;
    nsim_failover failover_default;
    int failover_explicit; /* "failover" given in the scenario */
    int32_t failover_channel[NSIM_MAX_CHANNELS]; /* -1: the default */
    /* NCCL_ALGO / NCCL_PROTO lists ("ring,tree", "^nvls"): what the tuner
     * may not pick (bit 1u << algo / proto), and the list as given */
    uint32_t algo_off, proto_off;
    char algo_list[64], proto_list[64];
    char algo_desc[96], proto_desc[96]; /* "auto (NCCL's tuner) of ..." */
    uint32_t env_set; /* NCCL_* knobs the scenario sets (its env or a
                       * field), by nsim_scenario_env_names index */
    /* run budgets (--max-events, --max-memory; 0: the machine's default,
     * UINT64_MAX: none), for every command over the run API */
    uint64_t max_events, max_memory;
} nsim_scenario;

/* The NCCL_* variables ncclsim models (NULL-terminated). */
extern const char *const nsim_scenario_env_names[];

/* Sets one NCCL_* variable as NCCL reads it; what names the source in
 * messages. NSIM_ENOENT (no message) for a variable ncclsim does not
 * model. */
NSIM_NODISCARD int nsim_scenario_set_env(nsim_scenario *s, const char *key,
                                         const char *value, const char *what,
                                         nsim_err *err);
/* Applies the shell's NCCL_* variables (envp as environ) under the
 * scenario's own (which win); *note (cap bytes) says which took effect
 * and which were ignored, empty when the shell has none. */
NSIM_NODISCARD int nsim_scenario_apply_shell_env(nsim_scenario *s,
                                                 char *const *envp,
                                                 char *note, size_t cap,
                                                 nsim_err *err);
/* NCCL_ALGO / NCCL_PROTO syntax: a name, a comma list of the allowed, or
 * "^" and a list of the excluded (case-insensitive). One allowed name
 * forces it; several leave the tuner to pick among them. */
NSIM_NODISCARD int nsim_scenario_set_algo(nsim_scenario *s, const char *v,
                                          const char *what, nsim_err *err);
NSIM_NODISCARD int nsim_scenario_set_proto(nsim_scenario *s, const char *v,
                                           const char *what, nsim_err *err);
/* Checks that the GPUs can run the data type (fp8 needs sm >= 90). */
NSIM_NODISCARD int nsim_scenario_check_dtype(const nsim_scenario *s,
                                             nsim_err *err);

/* The fault plan with a policy for each of the plan's channels; checks
 * that the faults and policies fit (channels that exist, QP indices below
 * the QPs per connection, rebind_qp with at least two QPs, rebind_nic
 * where a host has another NIC). */
NSIM_NODISCARD int nsim_scenario_fault_plan(const nsim_scenario *s,
                                            uint32_t nchannels,
                                            nsim_fault_plan *out,
                                            nsim_err *err);

NSIM_NODISCARD int nsim_scenario_load(const char *path, nsim_scenario **out,
                                      nsim_err *err);
void nsim_scenario_destroy(nsim_scenario *s);

/* Checks the size range against the type (used again after the command
 * line has changed it). */
NSIM_NODISCARD int nsim_scenario_check_sizes(const nsim_scenario *s,
                                             nsim_err *err);
/* The plan request for one size. */
nsim_plan_req nsim_scenario_request(const nsim_scenario *s, uint64_t bytes);
/* After the algorithm is chosen: NVLS's own channel count unless the
 * user set one. */
void nsim_scenario_fit_request(const nsim_scenario *s, nsim_plan_req *req);
/* Resolves the channel count from the knobs and the topology. */
void nsim_scenario_resolve_channels(nsim_scenario *s);

/* Sets the data type or the reduction by nccl-tests' names; errors name
 * what (the file or the option). */
NSIM_NODISCARD int nsim_scenario_set_dtype(nsim_scenario *s, const char *dt,
                                           const char *what, nsim_err *err);
NSIM_NODISCARD int nsim_scenario_set_op(nsim_scenario *s, const char *op,
                                        const char *what, nsim_err *err);

/* Sets one knob of a loaded scenario by name, through the same readers
 * and checks as the file: a scenario field (nchannels, qps_per_connection,
 * buffsize, protocol, algorithm, channel_mode, collective, datatype, op,
 * root, seed, gpus_per_thread, fidelity, fold), a fault's field
 * ("faults[K].FIELD": at, channel, from, to, qp, nic, bw, probability,
 * where fault K's kind has it), an NCCL_* variable of "env" (also as
 * "env.NAME"), or a model parameter (also as "params.NAME"). value is
 * text as on a command line ("4", "1M", "Simple"); what names the source
 * in messages ("--set"). Channels are resolved again afterwards. */
NSIM_NODISCARD int nsim_scenario_set_knob(nsim_scenario *s, const char *name,
                                          const char *value, const char *what,
                                          nsim_err *err);

/* nccl-tests' data types: size in bytes, 0 if unknown. */
uint32_t nsim_dtype_size(const char *name);

#endif
