/* SPDX-License-Identifier: MIT
 *
 * presets.h - built-in node types: the common GPU systems, as builders
 * that add one node (host) to a topology.
 *
 * Owns: the figures of each system and the sources they rest on (given
 * back by nsim_preset_comment and written into the preset JSON files in
 * scenarios/). Names: dgx-a100, dgx-h100, hgx-h100, hgx-h200,
 * pcie-8xl40s, pcie-2gpu-nop2p, gb200-nvl (one compute tray of a
 * GB200 NVL72 rack; 18 consecutive trays share one NVLink domain).
 * Device names follow scenarios/dgx-h100.topo.json: "hH.gpuK", "hH.nvs",
 * "hH.cpuS", "hH.pciswK", "hH.nicK"; NIC K is on rail K.
 * Units as topo.h. Workload: called once per node by the cluster builder
 * (16k nodes in well under a second).
 */
#ifndef NSIM_TOPO_PRESETS_H
#define NSIM_TOPO_PRESETS_H

#include <stdint.h>

#include "../core/err.h"
#include "topo.h"

typedef struct nsim_preset nsim_preset; /* static description, read-only */

/* The preset called name, or NULL. */
const nsim_preset *nsim_preset_find(const char *name);
/* NULL-terminated list of the preset names. */
const char *const *nsim_preset_names(void);
const char *nsim_preset_name(const nsim_preset *p);
const char *nsim_preset_comment(const nsim_preset *p);
uint32_t nsim_preset_gpus(const nsim_preset *p); /* GPUs per node */
/* Nodes that share one NVLink domain (1 but for multi-node NVLink). */
uint32_t nsim_preset_nvl_hosts(const nsim_preset *p);

/* Adds node `host` (GPU ranks rank0 ..) to t. roce: the NICs speak RoCE
 * instead of IB. Multi-node NVLink presets add their domain's NVSwitch
 * with its first node. */
NSIM_NODISCARD int nsim_preset_add_node(const nsim_preset *p, nsim_topo *t,
                                        int32_t host, uint32_t rank0,
                                        int roce, nsim_err *err);

/* Writes t as JSON with a top-level "comment" (after "name"), atomically;
 * comment may be NULL. */
NSIM_NODISCARD int nsim_topo_save_commented(const nsim_topo *t,
                                            const char *comment,
                                            const char *path, nsim_err *err);

#endif
