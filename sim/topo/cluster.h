/* SPDX-License-Identifier: MIT
 *
 * cluster.h - cluster builder: N nodes of a preset (or hosts imported
 * from NCCL XML files) joined by a network fabric.
 *
 * Owns: the fabric shapes and their sizing.
 *   switch         one switch holding every NIC port.
 *   rail-fat-tree  rail-optimized two-level fat tree: leaves belong to one
 *                  rail each (NIC k of every node goes to a rail-k leaf;
 *                  a leaf takes whole NVLink domains where they span
 *                  hosts, as GB200 NVL72 racks, and as many uplinks as
 *                  u is of d for the ports they use), every leaf joins
 *                  every spine. With radix K and
 *                  oversubscription R, a leaf has d = floor(K R / (R+1))
 *                  ports down and u = K - d up; leaves = rails x
 *                  ceil(nodes / d); each leaf joins each spine with the
 *                  same c parallel cables, one link of that count (c the
 *                  largest divisor of u with leaves x c <= K: u / c
 *                  spines, exactly u uplinks). Two levels fit while
 *                  leaves <= K; radix 0 picks the smallest power of two
 *                  >= 64 that fits.
 *   fat-tree       the same without rail alignment: a leaf takes whole
 *                  hosts (floor(d / NICs a host) of them, all of a
 *                  host's NICs under one leaf) and as many uplinks as
 *                  u is of d for the ports it uses down; a host with more
 *                  NICs than d fills leaves NIC after NIC.
 * Routing is recorded by the link type, without new fields: "roce" links
 * mean ECMP hashing over the equal-cost paths that the routes keep (the
 * QP number enters the hash, so more QPs spread better); "ib" links mean
 * InfiniBand, each pair of NICs on one of the equal-cost paths (one LID
 * route, nsim_topo_ib_pick). NCCL's writes for adaptive routing are
 * modelled (models/ib/net.c); the switches' per-packet choice of the
 * least-loaded port is not. See README "Queue pairs, channels and
 * failover".
 * Units as topo.h. Workload: once per run; 16,384 nodes in ~0.1 s.
 */
#ifndef NSIM_TOPO_CLUSTER_H
#define NSIM_TOPO_CLUSTER_H

#include <stdint.h>

#include "../core/err.h"
#include "topo.h"

typedef enum nsim_fabric_kind {
    NSIM_FABRIC_NONE,
    NSIM_FABRIC_SWITCH,
    NSIM_FABRIC_RAIL_FAT_TREE,
    NSIM_FABRIC_FAT_TREE,
} nsim_fabric_kind;

typedef struct nsim_fabric_cfg {
    nsim_fabric_kind kind;
    uint32_t radix;      /* switch ports; 0: smallest that fits (>= 64) */
    double oversub;      /* leaf down:up ratio, >= 1 (1 = non-blocking) */
    int roce;            /* RoCE + ECMP instead of IB + adaptive routing */
    nsim_time switch_lat_ps; /* 0: 200 ns (Quantum-2, hw 3.5) */
    nsim_time cable_lat_ps;  /* 0: 60 ns (hw 3.4) */
} nsim_fabric_cfg;

/* "none", "switch", "rail-fat-tree", "fat-tree". */
NSIM_NODISCARD int nsim_fabric_parse(const char *s, nsim_fabric_kind *out);
const char *nsim_fabric_name(nsim_fabric_kind k);

/* Adds the fabric to an unfinalized topology whose NICs have hosts (and
 * rails: a NIC's rail, or its index among its host's NICs). */
NSIM_NODISCARD int nsim_cluster_add_fabric(nsim_topo *t,
                                           const nsim_fabric_cfg *cfg,
                                           nsim_err *err);

/* The fabric `topo build` gives nodes of preset when none is named: a
 * rail fat tree once the nodes outnumber what one NVLink domain of the
 * preset holds, none otherwise (NVSwitch systems: gb200-nvl). */
nsim_fabric_kind nsim_cluster_default_fabric(const char *preset,
                                             uint32_t nodes);

/* nodes x preset joined by cfg's fabric, finalized. */
NSIM_NODISCARD int nsim_cluster_build(const char *preset, uint32_t nodes,
                                      const nsim_fabric_cfg *cfg,
                                      nsim_topo **out, nsim_err *err);

#endif
